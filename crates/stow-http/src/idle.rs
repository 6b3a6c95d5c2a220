//! The body idle timeout: a request body that stops arriving is ended with 408.
//!
//! Slow request heads are cut by actix's client request timeout, but once the head is in, actix
//! waits for body bytes forever. [`IdleBody`] wraps every request payload (both hosts, every
//! route) and fails it with [`BodyIdle`] when no byte arrives for the configured time; the body
//! readers turn that into a 408 `REQUEST_TIMEOUT` through [`crate::body::payload_error`], and
//! whatever an upload had staged is removed by its stage guard as for any other failure.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::error::PayloadError;
use actix_web::web::Bytes;
use futures_util::Stream;
use tokio::time::{sleep, Instant, Sleep};

/// The configured body idle timeout, in app data.
#[derive(Debug, Clone, Copy)]
pub struct BodyIdleTimeout(pub Duration);

/// The error a payload fails with after the idle timeout (inside `PayloadError::Io`).
#[derive(Debug, thiserror::Error)]
#[error("no request body bytes arrived for {} s", .0.as_secs())]
pub struct BodyIdle(pub Duration);

/// A payload that fails when no chunk arrives within `timeout` of the previous one (or of the
/// start).
pub struct IdleBody<S> {
    inner: S,
    timeout: Duration,
    timer: Pin<Box<Sleep>>,
}

impl<S> IdleBody<S> {
    pub fn new(inner: S, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            timer: Box::pin(sleep(timeout)),
        }
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
                let deadline = Instant::now() + this.timeout;
                this.timer.as_mut().reset(deadline);
                Poll::Ready(item)
            }
            Poll::Pending => match this.timer.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    BodyIdle(this.timeout),
                ))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

/// The idle timeout behind a payload error, when that is what ended the body.
pub fn idle_timeout_of(e: &PayloadError) -> Option<Duration> {
    match e {
        PayloadError::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<BodyIdle>())
            .map(|idle| idle.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn chunk(s: &'static str) -> Result<Bytes, PayloadError> {
        Ok(Bytes::from_static(s.as_bytes()))
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_fails_after_the_timeout() {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        let mut body = IdleBody::new(rx, Duration::from_secs(5));
        tx.unbounded_send(chunk("a")).unwrap();
        assert_eq!(body.next().await.unwrap().unwrap(), "a");
        let started = Instant::now();
        let err = body.next().await.unwrap().unwrap_err();
        assert_eq!(idle_timeout_of(&err), Some(Duration::from_secs(5)));
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn every_chunk_restarts_the_clock() {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        let mut body = IdleBody::new(rx, Duration::from_secs(5));
        for _ in 0..4 {
            // 4 s between chunks: 16 s in all, never 5 s without a byte
            tokio::time::advance(Duration::from_secs(4)).await;
            tx.unbounded_send(chunk("x")).unwrap();
            assert_eq!(body.next().await.unwrap().unwrap(), "x");
        }
        drop(tx);
        assert!(
            body.next().await.is_none(),
            "the end of the body is not an error"
        );
    }

    #[test]
    fn other_payload_errors_are_not_timeouts() {
        assert_eq!(idle_timeout_of(&PayloadError::Overflow), None);
        let io = PayloadError::Io(std::io::Error::new(std::io::ErrorKind::TimedOut, "x"));
        assert_eq!(idle_timeout_of(&io), None);
    }
}
