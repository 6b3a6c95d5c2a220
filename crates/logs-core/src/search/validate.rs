//! Checking a search's fields: levels, times, text filters, identifiers and data containment, each
//! refused with the field's name and its limit.

use super::*;

fn level(field: &str, name: &str) -> Result<Level, String> {
    Level::parse(name)
        .ok_or_else(|| format!("`{field}` must be one of {LEVEL_NAMES} (got {name:?})"))
}

/// The level filter of `level`, `levels` or `minLevel` (one of them at most): the allowed levels
/// ascending, or `None` when every level is.
fn levels(s: &SearchFields, excluded: &[Level]) -> Result<Option<Vec<Level>>, String> {
    let mut chosen = match (&s.level, &s.levels, &s.min_level) {
        (None, None, None) if excluded.is_empty() => return Ok(None),
        (None, None, None) => Level::ALL.to_vec(),
        (Some(l), None, None) => vec![level("level", l)?],
        (None, Some(list), None) => {
            if list.is_empty() || list.len() > Level::ALL.len() {
                return Err(format!(
                    "`levels` must name 1 to {} levels (got {})",
                    Level::ALL.len(),
                    list.len()
                ));
            }
            list.iter()
                .enumerate()
                .map(|(i, l)| level(&format!("levels[{i}]"), l))
                .collect::<Result<Vec<_>, _>>()?
        }
        (None, None, Some(min)) => {
            let min = level("minLevel", min)?;
            Level::ALL.into_iter().filter(|l| *l >= min).collect()
        }
        _ => {
            return Err(
                "`level`, `levels` and `minLevel` are alternatives; send one of them".into(),
            )
        }
    };
    chosen.sort();
    chosen.dedup();
    chosen.retain(|l| !excluded.contains(l));
    if chosen.is_empty() {
        return Err(
            "`exclude.levels` leaves out every level the search allows; exclude fewer levels"
                .into(),
        );
    }
    Ok((chosen.len() < Level::ALL.len()).then_some(chosen))
}

fn time(name: &str, v: &Option<String>) -> Result<DateTime<Utc>, String> {
    let s = v
        .as_deref()
        .ok_or_else(|| format!("`{name}` is required (RFC 3339)"))?;
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("`{name}` must be an RFC 3339 timestamp, e.g. 2026-01-01T00:00:00Z"))
}

/// No stored event contains U+0000 (Postgres text and jsonb cannot hold it), so a filter with
/// one is refused.
pub(crate) fn nul_error(name: &str) -> String {
    format!("`{name}` must not contain NUL (U+0000) characters")
}

fn filter(name: &str, v: &Option<String>) -> Result<Option<String>, String> {
    v.as_ref()
        .map(|s| criteria::text(name, s).map(|()| s.clone()))
        .transpose()
}

fn identifier(i: &Option<IdentifierRequest>) -> Result<Option<IdentifierFilter>, String> {
    let Some(i) = i else { return Ok(None) };
    let owner = match i.owner.as_str() {
        "player" => Owner::Player,
        "target" => Owner::Target,
        _ => return Err("`identifier.owner` must be `player` or `target`".into()),
    };
    if i.key.is_empty() || i.value.is_empty() {
        return Err("`identifier.key` and `identifier.value` must not be empty".into());
    }
    if i.key.contains('\0') {
        return Err(nul_error("identifier.key"));
    }
    if i.value.contains('\0') {
        return Err(nul_error("identifier.value"));
    }
    Ok(Some(IdentifierFilter {
        owner,
        key: i.key.clone(),
        value: i.value.clone(),
    }))
}

/// Depth of nesting and whether any key or string holds NUL.
fn shape(v: &Value) -> (usize, bool) {
    let nul = |s: &str| s.contains('\0');
    match v {
        Value::Object(m) => m.iter().fold((1, false), |(d, n), (k, v)| {
            let (vd, vn) = shape(v);
            (d.max(vd + 1), n || vn || nul(k))
        }),
        Value::Array(a) => a.iter().fold((1, false), |(d, n), v| {
            let (vd, vn) = shape(v);
            (d.max(vd + 1), n || vn)
        }),
        Value::String(s) => (0, nul(s)),
        _ => (0, false),
    }
}

/// A containment filter on `data` (the `data` field, or `exclude.data` as `name`).
pub(crate) fn data_filter(name: &str, v: &Option<Value>) -> Result<Option<Value>, String> {
    let Some(v) = v else { return Ok(None) };
    let Value::Object(m) = v else {
        return Err(format!(
            "`{name}` must be a JSON object, e.g. {{\"item\":\"WEAPON_PISTOL\"}}"
        ));
    };
    if m.is_empty() {
        return Err(format!("`{name}` must name at least one key"));
    }
    let bytes = serde_json::to_string(v)
        .map(|s| s.len())
        .unwrap_or(usize::MAX);
    if bytes > MAX_DATA_FILTER_BYTES {
        return Err(format!(
            "`{name}` must be at most {MAX_DATA_FILTER_BYTES} bytes as compact JSON (got {bytes})"
        ));
    }
    let (depth, nul) = shape(v);
    if depth > MAX_DATA_FILTER_DEPTH {
        return Err(format!(
            "`{name}` must nest at most {MAX_DATA_FILTER_DEPTH} levels deep (got {depth})"
        ));
    }
    if nul {
        return Err(nul_error(name));
    }
    Ok(Some(v.clone()))
}

/// The window and filters of `s`.
pub fn validate_search(s: &SearchFields, range: RangeLimit) -> Result<Search, String> {
    let from = time("from", &s.from)?;
    let to = time("to", &s.to)?;
    if to <= from {
        return Err("`to` must be after `from`".into());
    }
    if let RangeLimit::Days(days) = range {
        if to - from > Duration::days(days) {
            return Err(format!(
                "the range from `from` to `to` must be at most {days} days (POST /v1/logs/search takes any range within the plan's retention)"
            ));
        }
    }
    Ok(Search {
        from,
        to,
        filters: validate_filters(s)?,
    })
}

/// The filters of `s` alone (a live tail has no window).
pub fn validate_filters(s: &SearchFields) -> Result<Filters, String> {
    let (exclude, excluded_levels) = criteria::exclusions(&s.exclude)?;
    Ok(Filters {
        levels: levels(s, &excluded_levels)?,
        event_type: s
            .event_type
            .as_deref()
            .map(|t| TypeMatch::parse("eventType", t))
            .transpose()?,
        resource: filter("resource", &s.resource)?,
        message: filter("message", &s.message)?,
        player_id: filter("playerId", &s.player_id)?,
        player: s
            .player
            .as_deref()
            .map(|p| PlayerMatch::parse("player", p))
            .transpose()?,
        identifier: identifier(&s.identifier)?,
        data: data_filter("data", &s.data)?,
        data_where: criteria::data_conditions(&s.data_where)?,
        exclude,
    })
}
