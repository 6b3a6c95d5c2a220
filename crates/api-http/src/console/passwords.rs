//! Password hashing and checking off the async workers: each runs on the blocking pool, at most
//! `PASSWORD_HASH_WORKERS` at once, and waits at most [`QUEUE_WAIT`] for its turn. A flood of
//! sign-ins queues here (and is refused with 503 and `Retry-After` past the wait); requests that
//! need no password never wait for it.

use std::sync::Arc;
use std::time::Duration;

use stow_http::{ApiError, Code};
use tokio::sync::Semaphore;

/// Longest a password check waits for a free worker.
pub const QUEUE_WAIT: Duration = Duration::from_secs(5);

pub struct PasswordWork {
    permits: Arc<Semaphore>,
}

impl PasswordWork {
    pub fn new(workers: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(workers.max(1))),
        }
    }

    /// Runs `work` (hashing or verifying) on the blocking pool once a worker is free.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let busy = || {
            ApiError::new(
                Code::Unavailable,
                "sign-in is busy right now; try again in a few seconds",
            )
            .with_retry_after(2)
        };
        let permit = tokio::time::timeout(QUEUE_WAIT, Arc::clone(&self.permits).acquire_owned())
            .await
            .map_err(|_| busy())?
            .map_err(|_| busy())?;
        tokio::task::spawn_blocking(move || {
            let _turn = permit;
            work()
        })
        .await
        .map_err(|e| ApiError::internal(format!("password work failed: {e}")))
    }

    /// [`auth_core::password::hash`] off the workers.
    pub async fn hash(&self, password: String) -> Result<String, ApiError> {
        self.run(move || auth_core::password::hash(&password)).await
    }

    /// [`auth_core::password::verify_or_waste`] off the workers: as slow for no such member as for
    /// a wrong password.
    pub async fn verify(&self, password: String, stored: Option<String>) -> Result<bool, ApiError> {
        self.run(move || auth_core::password::verify_or_waste(&password, stored.as_deref()))
            .await
    }
}
