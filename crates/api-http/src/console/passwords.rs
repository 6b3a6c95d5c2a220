//! Password hashing and checking off the async workers: each runs on one of
//! `PASSWORD_HASH_WORKERS` threads of its own, at the lowest CPU priority (nice 19), so a flood of
//! sign-ins takes only the CPU that serving the API and delivery leaves over; a check waits at
//! most [`QUEUE_WAIT`] for a free thread (past that: 503 with `Retry-After`). Requests that need
//! no password never wait for it.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stow_http::{ApiError, Code};
use tokio::sync::Semaphore;

/// Longest a password check waits for a free worker.
pub const QUEUE_WAIT: Duration = Duration::from_secs(5);

type Job = Box<dyn FnOnce() + Send>;

pub struct PasswordWork {
    /// One per worker thread: a job is sent only with one in hand, so the queue never fills.
    permits: Arc<Semaphore>,
    jobs: SyncSender<Job>,
}

/// The calling thread yields the CPU to every normal-priority thread (Linux: nice 19 for this
/// thread alone). Elsewhere, or if refused, it runs at normal priority.
fn lowest_priority() {
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(Some(rustix::thread::gettid()), 19) {
        tracing::warn!(error = %e, "could not lower the password workers' priority");
    }
}

fn work(jobs: &Mutex<Receiver<Job>>) {
    lowest_priority();
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        match job {
            // a panicking job answers its caller with an error (its channel drops) and the
            // worker stays
            Ok(job) => {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            }
            // the PasswordWork is gone: the process is shutting down
            Err(_) => return,
        }
    }
}

impl PasswordWork {
    pub fn new(workers: usize) -> Self {
        let workers = workers.max(1);
        let (jobs, rx) = sync_channel::<Job>(workers);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..workers {
            let rx = Arc::clone(&rx);
            if let Err(e) = std::thread::Builder::new()
                .name(format!("password-{i}"))
                .spawn(move || work(&rx))
            {
                tracing::error!(error = %e, "could not start a password worker");
            }
        }
        Self {
            permits: Arc::new(Semaphore::new(workers)),
            jobs,
        }
    }

    /// Runs `work` (hashing or verifying) on a password worker once one is free.
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
        let (done, answer) = tokio::sync::oneshot::channel();
        self.jobs
            .try_send(Box::new(move || {
                let _turn = permit;
                let _ = done.send(work());
            }))
            .map_err(|e| ApiError::internal(format!("password workers unavailable: {e}")))?;
        answer
            .await
            .map_err(|e| ApiError::internal(format!("password work failed: {e}")))
    }

    /// [`auth_core::password::hash`] on a password worker.
    pub async fn hash(&self, password: String) -> Result<String, ApiError> {
        self.run(move || auth_core::password::hash(&password)).await
    }

    /// [`auth_core::password::verify_or_waste`] on a password worker: as slow for no such member
    /// as for a wrong password.
    pub async fn verify(&self, password: String, stored: Option<String>) -> Result<bool, ApiError> {
        self.run(move || auth_core::password::verify_or_waste(&password, stored.as_deref()))
            .await
    }
}
