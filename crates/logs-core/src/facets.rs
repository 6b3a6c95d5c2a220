//! `POST /v1/logs/facets`: the most frequent levels, event types and resources of a search,
//! for an explorer's suggestions. Counted over the newest [`SAMPLE`] events matching every
//! filter but `data` (all of them when there are no more); the answer says when it sampled.
//! Any window: the plan's retention bounds it.

use crate::search::{validate_search, RangeLimit, Search};

/// How many of the newest events facets are counted over.
pub const SAMPLE: usize = 50_000;
pub const DEFAULT_TOP: usize = 10;
pub const MAX_TOP: usize = 50;

crate::search_request! {
    /// `POST /v1/logs/facets`.
    pub struct FacetsRequest {
        /// Values per facet, 1 to 50 (default 10).
        pub top: Option<i64>,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ValidFacets {
    pub search: Search,
    pub top: usize,
}

pub fn validate(req: &FacetsRequest) -> Result<ValidFacets, String> {
    let search = validate_search(&req.search(), RangeLimit::None)?;
    let top = match req.top {
        None => DEFAULT_TOP,
        Some(n) if (1..=MAX_TOP as i64).contains(&n) => n as usize,
        Some(n) => return Err(format!("`top` must be 1 to {MAX_TOP} (got {n})")),
    };
    Ok(ValidFacets { search, top })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_is_bounded() {
        let req = |top| FacetsRequest {
            from: Some("2026-11-20T00:00:00Z".into()),
            to: Some("2026-11-21T00:00:00Z".into()),
            top,
            ..Default::default()
        };
        assert_eq!(validate(&req(None)).unwrap().top, 10);
        for (n, ok) in [(0, false), (1, true), (49, true), (50, true), (51, false)] {
            assert_eq!(validate(&req(Some(n))).is_ok(), ok, "{n}");
        }
        assert!(validate(&req(Some(51)))
            .unwrap_err()
            .contains("`top` must be 1 to 50"));
    }
}
