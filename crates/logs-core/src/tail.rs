//! `GET /v1/logs/tail`: positions in the order batches became visible, and their SSE form.
//!
//! A position is `(seq, id)`: the batch's place in that order (the Postgres store uses the
//! inserting transaction's id, read only below the oldest running transaction, so no batch can
//! turn up later behind a position already passed) and the event's id within the batch. It is
//! the SSE `id:` of each event, `"<seq>.<id>"`; a client that reconnects with it as
//! `Last-Event-ID` gets every later event once.

/// How far back a `Last-Event-ID` may point and still resume without loss.
pub const RESUME_MINUTES: i64 = 15;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TailPosition {
    pub seq: i64,
    /// The last event read of batch `seq`; [`TailPosition::WHOLE_BATCH`] when it was read whole.
    pub id: i64,
}

impl TailPosition {
    pub const WHOLE_BATCH: i64 = i64::MAX;

    /// After every event of batch `seq`.
    pub fn after_batch(seq: i64) -> Self {
        Self {
            seq,
            id: Self::WHOLE_BATCH,
        }
    }

    /// The SSE event id.
    pub fn event_id(&self) -> String {
        format!("{}.{}", self.seq, self.id)
    }

    /// A `Last-Event-ID` read back.
    pub fn parse(s: &str) -> Option<Self> {
        let (seq, id) = s.trim().split_once('.')?;
        let digits =
            |p: &str| !p.is_empty() && p.len() <= 19 && p.bytes().all(|b| b.is_ascii_digit());
        if !digits(seq) || !digits(id) {
            return None;
        }
        Some(Self {
            seq: seq.parse().ok()?,
            id: id.parse().ok()?,
        })
    }
}

crate::search_params! {
    /// `GET /v1/logs/tail`.
    pub struct TailParams {
        /// Resume after this event id, as `Last-Event-ID` does (for clients that cannot set
        /// headers); the header wins when both are sent.
        pub last_event_id: Option<String>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_read_back() {
        let p = TailPosition { seq: 7_361, id: 42 };
        assert_eq!(p.event_id(), "7361.42");
        assert_eq!(TailPosition::parse("7361.42"), Some(p));
        assert_eq!(TailPosition::parse(" 7361.42\n"), Some(p));
        let whole = TailPosition::after_batch(9);
        assert_eq!(TailPosition::parse(&whole.event_id()), Some(whole));
        for bad in [
            "",
            "1",
            "1.",
            ".1",
            "a.1",
            "1.-2",
            "-1.2",
            "1.2.3",
            "99999999999999999999.1",
            "１.2",
        ] {
            assert_eq!(TailPosition::parse(bad), None, "{bad}");
        }
    }
}
