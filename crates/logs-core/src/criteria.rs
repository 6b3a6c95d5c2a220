//! The search terms that go past exact equality (issue 40): an event type by prefix, a player by
//! any identifier they carry, numeric and prefix conditions on a `data` path, and exclusions.
//! Each is validated here into a rule with its meaning on one event ([`TypeMatch::matches`],
//! [`PlayerMatch::matches`], [`DataCondition::matches`]), which the in-memory store and the live
//! tail apply and the Postgres store reproduces in SQL.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::Level;
use crate::store::EventRow;

/// Entries a list of exclusions may hold (each list on its own).
pub const MAX_EXCLUSIONS: usize = 20;
/// Conditions `dataWhere` may hold.
pub const MAX_DATA_CONDITIONS: usize = 8;
/// Keys a `dataWhere` path may name.
pub const MAX_PATH_KEYS: usize = 8;
/// Characters of a text term (as [`crate::search::MAX_FILTER_CHARS`]).
const MAX_CHARS: usize = crate::search::MAX_FILTER_CHARS;

/// A text term: not empty, no NUL (no stored event holds one), at most 256 characters.
pub(crate) fn text(name: &str, s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("`{name}` must not be empty"));
    }
    if s.contains('\0') {
        return Err(crate::search::nul_error(name));
    }
    if s.chars().count() > MAX_CHARS {
        return Err(format!("`{name}` must be at most {MAX_CHARS} characters"));
    }
    Ok(())
}

/// How an event type is matched: exactly, or every type starting with a prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeMatch {
    Exact(String),
    /// Written `admin.*` (the `*` is dropped) or `admin.` (a type ending in a dot).
    Prefix(String),
}

impl TypeMatch {
    /// `admin.kick` is exact; `admin.*` and `admin.` are the prefix `admin.`; `*` alone is
    /// refused (it would match everything: leave the filter out).
    pub fn parse(name: &str, s: &str) -> Result<TypeMatch, String> {
        text(name, s)?;
        if let Some(prefix) = s.strip_suffix('*') {
            if prefix.is_empty() || prefix.contains('*') {
                return Err(format!(
                    "`{name}` takes a type (`admin.kick`) or a prefix (`admin.` or `admin.*`); `*` may only end a prefix"
                ));
            }
            return Ok(TypeMatch::Prefix(prefix.to_owned()));
        }
        if s.contains('*') {
            return Err(format!(
                "`{name}` takes a type (`admin.kick`) or a prefix (`admin.` or `admin.*`); `*` may only end a prefix"
            ));
        }
        Ok(if s.ends_with('.') {
            TypeMatch::Prefix(s.to_owned())
        } else {
            TypeMatch::Exact(s.to_owned())
        })
    }

    pub fn matches(&self, event_type: &str) -> bool {
        match self {
            TypeMatch::Exact(t) => event_type == t,
            TypeMatch::Prefix(p) => event_type.starts_with(p.as_str()),
        }
    }

    /// The filter as sent in its shortest form, for digests and answers.
    pub fn as_written(&self) -> String {
        match self {
            TypeMatch::Exact(t) => t.clone(),
            TypeMatch::Prefix(p) if p.ends_with('.') => p.clone(),
            TypeMatch::Prefix(p) => format!("{p}*"),
        }
    }
}

/// A player as a search names them: an in-game player id (`12`), or an identifier
/// (`license:abc…`, `discord:123…`), which also matches an event whose `player_identifiers` or
/// `target_player_identifiers` has it under its kind, written whole (`"license": "license:abc"`)
/// or without the kind (`"license": "abc"`). Either the event's player or its target matches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlayerMatch {
    /// As sent; compared with `player_id` and `target_player_id`.
    pub id: String,
    /// `(kind, value without the kind)` when the text is `kind:value`.
    pub identifier: Option<(String, String)>,
}

impl PlayerMatch {
    /// A text with a colon after a kind of ASCII letters and digits (`license:…`, `license2:…`,
    /// `ip:…`) is an identifier; anything else is a player id.
    pub fn parse(name: &str, s: &str) -> Result<PlayerMatch, String> {
        text(name, s)?;
        let identifier = s.split_once(':').and_then(|(kind, rest)| {
            (!kind.is_empty()
                && !rest.is_empty()
                && kind.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| (kind.to_owned(), rest.to_owned()))
        });
        Ok(PlayerMatch {
            id: s.to_owned(),
            identifier,
        })
    }

    pub fn matches(&self, r: &EventRow) -> bool {
        self.is_actor(r) || self.is_target(r)
    }

    /// Whether the event's player (`player_id`, `player_identifiers`) is this one.
    pub fn is_actor(&self, r: &EventRow) -> bool {
        self.names(&r.player_id, &r.player_identifiers)
    }

    /// Whether the event's target (`target_player_id`, `target_player_identifiers`) is this one.
    pub fn is_target(&self, r: &EventRow) -> bool {
        self.names(&r.target_player_id, &r.target_player_identifiers)
    }

    fn names(&self, id: &Option<String>, identifiers: &Option<Value>) -> bool {
        if id.as_ref() == Some(&self.id) {
            return true;
        }
        let Some((kind, rest)) = &self.identifier else {
            return false;
        };
        identifiers
            .as_ref()
            .and_then(|m| m.get(kind))
            .and_then(Value::as_str)
            .is_some_and(|v| v == self.id || v == rest)
    }
}

/// A comparison of a `data` path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum DataOp {
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    /// A string starting with the value (case-sensitive).
    #[serde(rename = "prefix")]
    Prefix,
}

impl DataOp {
    pub fn as_str(self) -> &'static str {
        match self {
            DataOp::Gt => ">",
            DataOp::Ge => ">=",
            DataOp::Lt => "<",
            DataOp::Le => "<=",
            DataOp::Prefix => "prefix",
        }
    }
}

/// One `dataWhere` condition as sent.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DataConditionRequest {
    /// Keys from the top of `data`, separated by dots: `amount`, `to.account`.
    pub path: String,
    /// `>`, `>=`, `<`, `<=` (with a number) or `prefix` (with a string).
    pub op: DataOp,
    #[schema(value_type = Object)]
    pub value: Value,
}

/// A `dataWhere` condition: the value at `path` (through objects only) is a number compared
/// with `value`, or a string starting with it. A missing path, or a value of another type, does
/// not match.
#[derive(Debug, Clone, PartialEq)]
pub struct DataCondition {
    pub path: Vec<String>,
    pub op: DataOp,
    /// A JSON number for the comparisons, a string for `prefix`.
    pub value: Value,
}

impl DataCondition {
    fn parse(i: usize, c: &DataConditionRequest) -> Result<DataCondition, String> {
        let name = format!("dataWhere[{i}]");
        text(&format!("{name}.path"), &c.path)?;
        let path: Vec<String> = c.path.split('.').map(str::to_owned).collect();
        if path.iter().any(String::is_empty) {
            return Err(format!(
                "`{name}.path` must be keys separated by single dots, e.g. `to.account` (got {:?})",
                c.path
            ));
        }
        if path.len() > MAX_PATH_KEYS {
            return Err(format!(
                "`{name}.path` may name at most {MAX_PATH_KEYS} keys (got {})",
                path.len()
            ));
        }
        match (c.op, &c.value) {
            (DataOp::Prefix, Value::String(s)) => text(&format!("{name}.value"), s)?,
            (DataOp::Prefix, _) => {
                return Err(format!("`{name}.value` must be a string for `prefix`"));
            }
            (_, Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => {}
            (op, _) => {
                return Err(format!(
                    "`{name}.value` must be a number for `{}`",
                    op.as_str()
                ));
            }
        }
        Ok(DataCondition {
            path,
            op: c.op,
            value: c.value.clone(),
        })
    }

    pub fn matches(&self, data: Option<&Value>) -> bool {
        let mut at = match data {
            Some(v) => v,
            None => return false,
        };
        for key in &self.path {
            match at.as_object().and_then(|m| m.get(key.as_str())) {
                Some(v) => at = v,
                None => return false,
            }
        }
        match (self.op, at, &self.value) {
            (DataOp::Prefix, Value::String(have), Value::String(want)) => {
                have.starts_with(want.as_str())
            }
            (DataOp::Prefix, _, _) => false,
            (op, Value::Number(have), Value::Number(want)) => {
                let ord = compare(have, want);
                match op {
                    DataOp::Gt => ord.is_gt(),
                    DataOp::Ge => ord.is_ge(),
                    DataOp::Lt => ord.is_lt(),
                    DataOp::Le => ord.is_le(),
                    DataOp::Prefix => false,
                }
            }
            _ => false,
        }
    }

    pub fn digest_value(&self) -> Value {
        serde_json::json!([self.path, self.op.as_str(), self.value])
    }
}

/// Numbers by value: integers exactly, anything else as `f64`.
fn compare(a: &serde_json::Number, b: &serde_json::Number) -> std::cmp::Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    let (x, y) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
}

pub fn data_conditions(
    v: &Option<Vec<DataConditionRequest>>,
) -> Result<Vec<DataCondition>, String> {
    let Some(list) = v else { return Ok(Vec::new()) };
    if list.is_empty() || list.len() > MAX_DATA_CONDITIONS {
        return Err(format!(
            "`dataWhere` must hold 1 to {MAX_DATA_CONDITIONS} conditions (got {})",
            list.len()
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, c)| DataCondition::parse(i, c))
        .collect()
}

/// The `exclude` object as sent: events matching any entry are left out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExcludeRequest {
    /// Levels left out (the search keeps the others it allows).
    pub levels: Option<Vec<String>>,
    /// Event types or prefixes (`admin.*`) left out.
    pub event_types: Option<Vec<String>>,
    pub resources: Option<Vec<String>>,
    /// Players (ids or identifiers, as `player`) left out, as actor or target.
    pub players: Option<Vec<String>>,
    /// Events whose message contains this text (case-insensitive) are left out.
    pub message: Option<String>,
    /// Events whose `data` contains this object are left out.
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
}

/// The exclusions of a search, validated (levels are folded into the search's levels).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exclusions {
    pub event_types: Vec<TypeMatch>,
    pub resources: Vec<String>,
    pub players: Vec<PlayerMatch>,
    pub message: Option<String>,
    pub data: Option<Value>,
}

impl Exclusions {
    pub fn is_empty(&self) -> bool {
        *self == Exclusions::default()
    }

    /// Whether `r` is left out by none of them.
    pub fn keeps(&self, r: &EventRow) -> bool {
        !self.event_types.iter().any(|t| t.matches(&r.event_type))
            && !r
                .resource
                .as_ref()
                .is_some_and(|x| self.resources.contains(x))
            && !self.players.iter().any(|p| p.matches(r))
            && !self
                .message
                .as_ref()
                .is_some_and(|m| r.message.to_lowercase().contains(&m.to_lowercase()))
            && !self.data.as_ref().is_some_and(|d| {
                r.data
                    .as_ref()
                    .is_some_and(|have| crate::search::contains(have, d))
            })
    }

    pub fn digest_value(&self) -> Value {
        serde_json::json!({
            "eventTypes": self.event_types.iter().map(TypeMatch::as_written).collect::<Vec<_>>(),
            "resources": self.resources,
            "players": self.players.iter().map(|p| p.id.clone()).collect::<Vec<_>>(),
            "message": self.message,
            "data": self.data,
        })
    }
}

fn list<T>(
    name: &str,
    v: &Option<Vec<String>>,
    each: impl Fn(&str, &str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let Some(list) = v else { return Ok(Vec::new()) };
    if list.len() > MAX_EXCLUSIONS {
        return Err(format!(
            "`{name}` may hold at most {MAX_EXCLUSIONS} entries (got {})",
            list.len()
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, s)| each(&format!("{name}[{i}]"), s))
        .collect()
}

/// The exclusions of `req` and the levels it leaves out.
pub fn exclusions(req: &Option<ExcludeRequest>) -> Result<(Exclusions, Vec<Level>), String> {
    let Some(req) = req else {
        return Ok(Default::default());
    };
    let levels = list("exclude.levels", &req.levels, |name, s| {
        Level::parse(s).ok_or_else(|| {
            format!("`{name}` must be one of debug, info, warn, error, fatal (got {s:?})")
        })
    })?;
    let ex = Exclusions {
        event_types: list("exclude.eventTypes", &req.event_types, TypeMatch::parse)?,
        resources: list("exclude.resources", &req.resources, |name, s| {
            text(name, s).map(|()| s.to_owned())
        })?,
        players: list("exclude.players", &req.players, PlayerMatch::parse)?,
        message: match &req.message {
            None => None,
            Some(m) => {
                text("exclude.message", m)?;
                Some(m.clone())
            }
        },
        data: crate::search::data_filter("exclude.data", &req.data)?,
    };
    Ok((ex, levels))
}

#[cfg(test)]
#[path = "criteria_tests.rs"]
mod tests;
