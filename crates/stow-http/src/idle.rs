//! The body's pace: a request body that stops arriving, or arrives too slowly, is ended with 408.
//!
//! Slow request heads are cut by actix's client request timeout, but once the head is in, actix
//! waits for body bytes forever. [`IdleBody`] wraps every request payload (both hosts, every
//! route) and fails it with [`BodyTooSlow`] when no byte arrives for the idle timeout, or when,
//! past the idle timeout from the start, fewer bytes have arrived than the minimum rate asks
//! (a body that trickles a few bytes every few seconds never goes idle, yet would hold its
//! connection for ever). The rule is Apache `mod_reqtimeout`'s: the deadline starts at the idle
//! timeout and moves one second later for every `min_rate` bytes received. The body readers turn
//! the failure into a 408 `REQUEST_TIMEOUT` through [`crate::body::payload_error`], and whatever
//! an upload had staged is removed by its stage guard as for any other failure.
//!
//! It also records whether the body was read to its end ([`BodyEnd`]): the request-context
//! middleware closes the connection after answering a request whose body was left unread (a
//! 401 before the upload, a 404) or failed (a 408 for its pace), so a client that never stops
//! sending, or stops sending for good, cannot keep it open.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use futures::Stream;
use tokio::time::{sleep, Instant, Sleep};

/// The configured body pace, in app data.
#[derive(Debug, Clone, Copy)]
pub struct BodyPace {
    /// The longest gap between two chunks (and the grace before the minimum rate applies).
    pub idle: Duration,
    /// Bytes per second a body must average once the grace is over.
    pub min_rate: u32,
}

/// Why a payload was ended (inside `PayloadError::Io`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BodyTooSlow {
    #[error("no request body bytes arrived for {} s (the body idle timeout); send the body without pauses", .0.as_secs())]
    Idle(Duration),
    #[error("the request body arrived slower than {0} bytes per second (the minimum body rate); send it faster")]
    Rate(u32),
}

/// Whether a request's body was read to its end (a failed one was not), shared with the
/// middleware.
#[derive(Debug, Clone, Default)]
pub struct BodyEnd(Arc<AtomicBool>);

impl BodyEnd {
    pub fn reached(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A payload paced by [`BodyPace`].
pub struct IdleBody<S> {
    inner: S,
    pace: BodyPace,
    started: Instant,
    received: u64,
    timer: Pin<Box<Sleep>>,
    end: BodyEnd,
}

impl<S> IdleBody<S> {
    pub fn new(inner: S, pace: BodyPace) -> Self {
        let started = Instant::now();
        Self {
            inner,
            pace,
            started,
            received: 0,
            timer: Box::pin(sleep(pace.idle)),
            end: BodyEnd::default(),
        }
    }

    /// The flag this body sets when it is read to its end.
    pub fn end(&self) -> BodyEnd {
        self.end.clone()
    }

    /// When the minimum rate is next missed: the idle timeout from the start, plus a second per
    /// `min_rate` bytes received.
    fn rate_deadline(&self) -> Instant {
        let earned = self.received as f64 / f64::from(self.pace.min_rate.max(1));
        self.started + self.pace.idle + Duration::from_secs_f64(earned.min(1e9))
    }
}

impl<S> Stream for IdleBody<S>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(item) => {
                match &item {
                    Some(Ok(chunk)) => this.received += chunk.len() as u64,
                    // a failed body was not read to its end: the connection closes after the
                    // answer (the rest of it may still be coming, or never)
                    Some(Err(_)) => {}
                    None => this.end.0.store(true, Ordering::Relaxed),
                }
                let idle = Instant::now() + this.pace.idle;
                let deadline = idle.min(this.rate_deadline());
                this.timer.as_mut().reset(deadline);
                Poll::Ready(item)
            }
            Poll::Pending => match this.timer.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    let why = if Instant::now() >= this.rate_deadline() {
                        BodyTooSlow::Rate(this.pace.min_rate)
                    } else {
                        BodyTooSlow::Idle(this.pace.idle)
                    };
                    // not read to its end: the middleware closes the connection after the 408
                    // (marked as ended, the connection stayed open for as long as the client
                    // liked, waiting for the rest of a chunked body)
                    Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        why,
                    )))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// What ended a body too slow to wait for, when that is what ended it.
pub fn too_slow(e: &PayloadError) -> Option<BodyTooSlow> {
    match e {
        PayloadError::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<BodyTooSlow>())
            .copied(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn chunk(s: &'static str) -> Result<Bytes, PayloadError> {
        Ok(Bytes::from_static(s.as_bytes()))
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_fails_after_the_timeout() {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        let mut body = IdleBody::new(rx, pace(5, 1));
        tx.unbounded_send(chunk("a")).unwrap();
        assert_eq!(body.next().await.unwrap().unwrap(), "a");
        let started = Instant::now();
        let err = body.next().await.unwrap().unwrap_err();
        assert_eq!(
            too_slow(&err),
            Some(BodyTooSlow::Idle(Duration::from_secs(5)))
        );
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        assert!(
            !body.end().reached(),
            "a body ended for its pace was not read to its end: its connection closes"
        );
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn every_chunk_restarts_the_clock() {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        let mut body = IdleBody::new(rx, pace(5, 1));
        for _ in 0..4 {
            // 4 s between chunks: 16 s in all, never 5 s without a byte
            tokio::time::advance(Duration::from_secs(4)).await;
            tx.unbounded_send(chunk("xxxx")).unwrap();
            assert_eq!(body.next().await.unwrap().unwrap(), "xxxx");
        }
        assert!(!body.end().reached());
        drop(tx);
        assert!(
            body.next().await.is_none(),
            "the end of the body is not an error"
        );
        assert!(body.end().reached());
    }

    fn pace(idle: u64, min_rate: u32) -> BodyPace {
        BodyPace {
            idle: Duration::from_secs(idle),
            min_rate,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_trickles_fails_once_behind_the_minimum_rate() {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        // 5 s of grace, then 100 bytes a second: 10 bytes every 2 s never goes idle, and falls
        // behind at 5 s + (bytes so far) / 100
        let mut body = IdleBody::new(rx, pace(5, 100));
        let started = Instant::now();
        for _ in 0..2 {
            tokio::time::advance(Duration::from_secs(2)).await;
            tx.unbounded_send(chunk("0123456789")).unwrap();
            assert_eq!(body.next().await.unwrap().unwrap().len(), 10);
        }
        let err = body.next().await.unwrap().unwrap_err();
        assert_eq!(too_slow(&err), Some(BodyTooSlow::Rate(100)));
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(5200),
            "5 s + 20 bytes at 100/s"
        );
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_at_the_minimum_rate_goes_on() {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        let mut body = IdleBody::new(rx, pace(5, 100));
        for _ in 0..20 {
            // exactly 100 bytes a second, for 20 s
            tokio::time::advance(Duration::from_secs(1)).await;
            tx.unbounded_send(Ok(Bytes::from(vec![b'x'; 100]))).unwrap();
            assert!(body.next().await.unwrap().is_ok());
        }
        drop(tx);
        assert!(body.next().await.is_none());
    }

    #[test]
    fn other_payload_errors_are_not_timeouts() {
        assert_eq!(too_slow(&PayloadError::Overflow), None);
        let io = PayloadError::Io(std::io::Error::new(std::io::ErrorKind::TimedOut, "x"));
        assert_eq!(too_slow(&io), None);
    }
}
