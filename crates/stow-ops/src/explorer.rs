//! The explorer's shared path, as far as it has moved here: reading many servers at once.
//! Every read over several servers (query, counts, facets, patterns, a player's events, players
//! by name) fans out through [`each_server`], a bounded number at a time.

use futures::{stream, StreamExt, TryStreamExt};

/// Servers read at once by a read over several (each takes a pooled connection).
pub const PARALLEL_SERVERS: usize = 8;

/// `read` of each of `queries` (one per server or group of servers), at most
/// [`PARALLEL_SERVERS`] at a time, the answers in the queries' order; the first error ends it.
pub async fn each_server<Q, T, E, Fut>(
    queries: Vec<Q>,
    read: impl Fn(Q) -> Fut,
) -> Result<Vec<T>, E>
where
    Fut: std::future::Future<Output = Result<T, E>>,
{
    stream::iter(queries)
        .map(read)
        .buffered(PARALLEL_SERVERS)
        .try_collect()
        .await
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll};

    use futures::executor::block_on;

    use super::*;

    /// Pending once (waking itself), then ready: a read that does not finish when started.
    struct Later(bool);

    impl Future for Later {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                return Poll::Ready(());
            }
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn reads_run_a_bounded_number_at_once_and_answer_in_order() {
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let answers: Result<Vec<usize>, ()> = block_on(each_server((0..20).collect(), |i| {
            let (now, most) = (&now, &most);
            async move {
                let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(running, Ordering::SeqCst);
                Later(false).await;
                now.fetch_sub(1, Ordering::SeqCst);
                Ok(i * 10)
            }
        }));
        assert_eq!(
            answers.unwrap(),
            (0..20).map(|i| i * 10).collect::<Vec<_>>()
        );
        assert_eq!(
            most.load(Ordering::SeqCst),
            PARALLEL_SERVERS,
            "N at once, never N + 1"
        );
    }

    #[test]
    fn the_first_error_is_the_answer() {
        let answer: Result<Vec<u8>, String> =
            block_on(each_server(vec![1u8, 2, 3], |i| async move {
                if i == 2 {
                    Err(format!("server {i} failed"))
                } else {
                    Ok(i)
                }
            }));
        assert_eq!(answer.unwrap_err(), "server 2 failed");
    }
}
