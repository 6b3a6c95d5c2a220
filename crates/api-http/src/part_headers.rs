//! A bound on what actix-multipart buffers while it looks for a part's headers.
//!
//! actix-multipart reads a part's header block (and the boundary line and any preamble before it)
//! by buffering the body until it finds the blank line that ends the block, with no limit: one
//! `Content-Disposition` line of 200 MiB was held whole, and the search for the blank line ran
//! over the whole buffer on every chunk. [`HeaderBounded`] sits between the request payload and
//! the parser. While the form reader waits for the next part ([`HeaderBudget::start_part`]), it
//! hands the parser the body one small slice per poll (the parser pulls until its stream is
//! pending, so after each slice the stream reports pending and wakes itself at once, which lets
//! the parser look for the end of the headers before it takes more) and counts them; past the
//! header limit plus the boundary line and one slice, it fails the payload, and the form answers
//! 400 naming the limit. While a part's content is read it passes chunks through untouched.
//!
//! Bytes the parser had already buffered with the end of the previous part are not counted (at
//! most one received chunk), so the exact limit is checked on the parsed headers as well
//! ([`header_block_len`]).

use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use actix_web::error::PayloadError;
use actix_web::http::header::HeaderMap;
use actix_web::web::Bytes;
use futures::Stream;

/// The most bytes of one part's header lines (`name: value` and CRLF each), e.g. its
/// `Content-Disposition` and `Content-Type`.
pub const MAX_PART_HEADER_BYTES: usize = 8 * 1024;
/// Pieces handed to the parser while it looks for headers.
const SLICE: usize = 1024;
/// Room for the boundary line before the headers (`--` + a boundary of at most 70 characters
/// (RFC 2046) + CRLF, rounded up) and a few bytes of the transport padding RFC 2046 allows.
const BOUNDARY_LINE: usize = 128;

/// Shared between the form reader and [`HeaderBounded`]: whether the parser is looking for a
/// part's headers, and how many bytes it has been given since it started.
#[derive(Default)]
pub struct HeaderBudget {
    reading_headers: Cell<bool>,
    given: Cell<usize>,
}

impl HeaderBudget {
    /// The form reader asks for the next part.
    pub fn start_part(&self) {
        self.reading_headers.set(true);
        self.given.set(0);
    }

    /// The next part's headers are in; its content passes through unbounded here (the file and
    /// field limits apply to it).
    pub fn end_part(&self) {
        self.reading_headers.set(false);
    }
}

/// The payload error that stops a header block over the limit (inside `PayloadError::Io`).
#[derive(Debug, thiserror::Error)]
#[error("multipart part headers are larger than {MAX_PART_HEADER_BYTES} bytes")]
struct PartHeadersTooLarge;

/// Whether a payload error is this module's.
pub fn part_headers_overflow(e: &PayloadError) -> bool {
    matches!(e, PayloadError::Io(io) if io.get_ref().is_some_and(|inner| inner.is::<PartHeadersTooLarge>()))
}

/// The size of a parsed header block as sent without optional whitespace: each line's name,
/// `: `, value and CRLF.
pub fn header_block_len(headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum()
}

/// See the module docs.
pub struct HeaderBounded<S> {
    inner: S,
    /// The rest of a chunk cut into slices.
    held: Option<Bytes>,
    budget: Rc<HeaderBudget>,
    /// The last poll handed over a header slice: this one yields (see the module docs).
    just_sliced: bool,
}

impl<S> HeaderBounded<S> {
    pub fn new(inner: S, budget: Rc<HeaderBudget>) -> Self {
        Self {
            inner,
            held: None,
            budget,
            just_sliced: false,
        }
    }
}

impl<S> Stream for HeaderBounded<S>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.just_sliced && this.budget.reading_headers.get() {
            this.just_sliced = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        this.just_sliced = false;
        let mut chunk = match this.held.take() {
            Some(held) => held,
            None => match Pin::new(&mut this.inner).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => chunk,
                other => return other,
            },
        };
        if !this.budget.reading_headers.get() {
            return Poll::Ready(Some(Ok(chunk)));
        }
        if chunk.len() > SLICE {
            this.held = Some(chunk.split_off(SLICE));
        }
        let given = this.budget.given.get() + chunk.len();
        this.budget.given.set(given);
        if given > MAX_PART_HEADER_BYTES + BOUNDARY_LINE + SLICE {
            this.held = None;
            return Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                PartHeadersTooLarge,
            )))));
        }
        this.just_sliced = true;
        Poll::Ready(Some(Ok(chunk)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::{stream, StreamExt};

    fn bounded(
        chunks: Vec<Vec<u8>>,
    ) -> (
        HeaderBounded<impl Stream<Item = Result<Bytes, PayloadError>> + Unpin>,
        Rc<HeaderBudget>,
    ) {
        let budget = Rc::new(HeaderBudget::default());
        let s = stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from(c))));
        (HeaderBounded::new(s, Rc::clone(&budget)), budget)
    }

    #[actix_web::test]
    async fn content_passes_through_whole() {
        let (mut s, _budget) = bounded(vec![vec![1; 100_000], vec![2; 10]]);
        assert_eq!(s.next().await.unwrap().unwrap().len(), 100_000);
        assert_eq!(s.next().await.unwrap().unwrap().len(), 10);
        assert!(s.next().await.is_none());
    }

    #[actix_web::test]
    async fn headers_are_handed_over_in_slices_and_bounded() {
        let (mut s, budget) = bounded(vec![vec![b'x'; 64 * 1024]]);
        budget.start_part();
        // a parser that pulls until pending gets one slice at a time
        assert_eq!(s.next().await.unwrap().unwrap().len(), SLICE);
        assert!(futures::poll!(s.next()).is_pending());
        let mut given = SLICE;
        let err = loop {
            match s.next().await.unwrap() {
                Ok(slice) => {
                    assert!(slice.len() <= SLICE);
                    given += slice.len();
                }
                Err(e) => break e,
            }
        };
        assert!(part_headers_overflow(&err));
        assert!(
            given <= MAX_PART_HEADER_BYTES + BOUNDARY_LINE + SLICE,
            "{given}"
        );
        assert!(given >= MAX_PART_HEADER_BYTES, "{given}");
    }

    #[actix_web::test]
    async fn the_count_starts_again_at_each_part() {
        let (mut s, budget) = bounded(vec![vec![b'x'; 6 * 1024], vec![b'y'; 6 * 1024]]);
        budget.start_part();
        for _ in 0..6 {
            s.next().await.unwrap().unwrap();
        }
        budget.end_part();
        budget.start_part();
        for _ in 0..6 {
            s.next().await.unwrap().unwrap();
        }
        assert!(s.next().await.is_none());
    }

    #[test]
    fn the_block_length_counts_names_values_and_separators() {
        let mut h = HeaderMap::new();
        h.insert(
            actix_web::http::header::CONTENT_TYPE,
            actix_web::http::header::HeaderValue::from_static("image/png"),
        );
        assert_eq!(header_block_len(&h), "content-type: image/png\r\n".len());
        assert!(!part_headers_overflow(&PayloadError::Overflow));
    }
}
