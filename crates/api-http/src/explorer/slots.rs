//! An organization's limited slots for log reads, and streamed answers that give theirs up when
//! the client stops taking them.
//!
//! [`SlotLease`]: a running search (the plan's concurrent searches) or an open live tail
//! (`LOGS_TAIL_LIMIT`) holds a lease of the [`ReadSlotStore`] (rows in Postgres), so each limit
//! holds across instances. A task renews the lease while it is held; dropping it releases
//! the row, and the lease of an instance that died expires.
//!
//! [`watched`]: a streamed answer (export, tail) keeps its slot (the export lock, the tail's
//! lease) only while the client takes the stream. A client that stops reading fills the socket's
//! buffers, after which actix stops polling the body: a body not polled for the stall deadline
//! (`LOGS_STREAM_STALL_SECONDS`) gives its slot up, and ends with an error if it is polled again.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use auth_core::OrgId;
use bytes::Bytes;
use chrono::Utc;
use futures::future::BoxFuture;
use futures::Stream;
use logs_core::slots::{ExportGuard, Lease, LeaseKind, LeaseRequest, ReadSlotStore};

/// How long a lease lasts without renewal (an instance that died frees its slots by then).
pub const LEASE: Duration = Duration::from_secs(30);

fn lease_end() -> chrono::DateTime<Utc> {
    Utc::now() + chrono::Duration::from_std(LEASE).unwrap_or(chrono::Duration::seconds(30))
}

/// A held slot: renewed in the background, released when dropped.
pub struct SlotLease {
    slots: Arc<dyn ReadSlotStore>,
    /// `None` once released.
    lease: Option<Lease>,
    lost: Arc<AtomicBool>,
    renewer: tokio::task::JoinHandle<()>,
}

impl SlotLease {
    /// A slot of `kind` for `org_id`, or `None` while `limit` are held.
    pub async fn acquire(
        slots: &Arc<dyn ReadSlotStore>,
        kind: LeaseKind,
        org_id: &OrgId,
        limit: usize,
    ) -> Result<Option<Self>, auth_core::StoreError> {
        let req = LeaseRequest {
            kind,
            limit,
            expires_at: lease_end(),
        };
        let Some(lease) = slots.acquire(org_id, &req).await? else {
            return Ok(None);
        };
        let lost = Arc::new(AtomicBool::new(false));
        let renewer = tokio::spawn({
            let (slots, lease, lost) = (Arc::clone(slots), lease.clone(), Arc::clone(&lost));
            async move {
                loop {
                    tokio::time::sleep(LEASE / 3).await;
                    match slots.renew(&lease, lease_end()).await {
                        Ok(true) => {}
                        Ok(false) => {
                            lost.store(true, Ordering::Relaxed);
                            return;
                        }
                        // the database is away: try again at the next turn
                        Err(_) => {}
                    }
                }
            }
        });
        Ok(Some(Self {
            slots: Arc::clone(slots),
            lease: Some(lease),
            lost,
            renewer,
        }))
    }

    /// Set once the lease is gone (expired and taken back, or released): the holder stops.
    pub fn lost(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.lost)
    }

    /// Releases the lease now (dropping it releases it in the background).
    pub async fn release(mut self) {
        self.renewer.abort();
        self.lost.store(true, Ordering::Relaxed);
        if let Some(lease) = self.lease.take() {
            release_row(Arc::clone(&self.slots), lease).await;
        }
    }
}

/// Deletes a lease's row; a failure is logged and left to the lease's expiry.
async fn release_row(slots: Arc<dyn ReadSlotStore>, lease: Lease) {
    if let Err(e) = slots.release(&lease).await {
        tracing::warn!(error = %e, "a lease was not released; it expires");
    }
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        self.renewer.abort();
        self.lost.store(true, Ordering::Relaxed);
        let Some(lease) = self.lease.take() else {
            return; // released already
        };
        let slots = Arc::clone(&self.slots);
        // best effort: a lease not released (no runtime left, database away) expires in LEASE
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(release_row(slots, lease));
        }
    }
}

/// What a streamed answer holds while the client takes it.
pub trait Slot: Send + 'static {
    /// Gives the slot up, finished when the next request can have it.
    fn release(self: Box<Self>) -> BoxFuture<'static, ()>;
}

impl Slot for SlotLease {
    fn release(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(SlotLease::release(*self))
    }
}

/// The export lock ([`ReadSlotStore::try_export_lock`]).
pub struct ExportSlot(pub Box<dyn ExportGuard>);

impl Slot for ExportSlot {
    fn release(self: Box<Self>) -> BoxFuture<'static, ()> {
        self.0.unlock()
    }
}

/// What a watched body and its watchdog share.
struct Watch {
    /// The slot, until the body ends, is dropped, or stalls.
    slot: Mutex<Option<Box<dyn Slot>>>,
    last_poll: Mutex<Instant>,
}

impl Watch {
    fn take(&self) -> Option<Box<dyn Slot>> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn held(&self) -> bool {
        self.slot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }
}

/// A response body that holds a [`Slot`] while the client takes it: the slot is given up when
/// the body ends (before the end is sent, so a client that saw the end can have the slot at
/// once), when it is dropped, or when it is not polled for `deadline` (the client stopped
/// reading).
pub struct Watched<S> {
    inner: S,
    watch: Arc<Watch>,
    releasing: Option<BoxFuture<'static, ()>>,
    over: bool,
}

pub fn watched<S>(inner: S, slot: impl Slot, deadline: Duration) -> Watched<S> {
    let watch = Arc::new(Watch {
        slot: Mutex::new(Some(Box::new(slot))),
        last_poll: Mutex::new(Instant::now()),
    });
    let dog = Arc::clone(&watch);
    tokio::spawn(async move {
        let step = (deadline / 4).max(Duration::from_millis(50));
        loop {
            tokio::time::sleep(step).await;
            if !dog.held() {
                return;
            }
            let idle = dog
                .last_poll
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed();
            if idle >= deadline {
                if let Some(slot) = dog.take() {
                    tracing::info!(
                        stalled_secs = idle.as_secs(),
                        "a streamed answer stopped being read; its slot is free"
                    );
                    slot.release().await;
                }
                return;
            }
        }
    });
    Watched {
        inner,
        watch,
        releasing: None,
        over: false,
    }
}

impl<S> Stream for Watched<S>
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Unpin,
{
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(release) = this.releasing.as_mut() {
            if release.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.releasing = None;
            this.over = true;
        }
        if this.over {
            return Poll::Ready(None);
        }
        *this
            .watch
            .last_poll
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Instant::now();
        if !this.watch.held() {
            // the watchdog gave the slot up: end the answer (the connection closes)
            this.over = true;
            return Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client stopped reading this answer",
            ))));
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(None) => {
                this.releasing = this.watch.take().map(Slot::release);
                this.over = this.releasing.is_none();
                if this.over {
                    Poll::Ready(None)
                } else {
                    self.poll_next(cx)
                }
            }
            other => other,
        }
    }
}

impl<S> Drop for Watched<S> {
    fn drop(&mut self) {
        // the client went away: the slot's own drop releases it in the background
        drop(self.watch.take());
    }
}
