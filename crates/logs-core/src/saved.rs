//! Saved searches: a named log search of an organization — its servers and filters, never a time
//! — that anyone who reads logs lists, opens over the range they pick, renames, changes and
//! deletes. Alert rules build on them.
//!
//! The filters are kept as sent (the query's filter fields, a JSON object) after they validate,
//! so opening one sends exactly what was saved; the servers are kept as registered ids and shown
//! as join codes.

use async_trait::async_trait;
use auth_core::audit::{Action, Audit, AuditEntry};
use auth_core::{OrgId, ServerId, StoreError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::search::{validate_filters, Filters};

/// Saved searches an organization may have.
pub const MAX_SAVED_SEARCHES: usize = 200;
/// Characters of a name.
pub const MAX_NAME_CHARS: usize = 100;
/// Servers a saved search may name.
pub const MAX_SERVERS: usize = 50;

crate::filter_request! {
    /// The filters of a saved search: the query's filter fields. No window (it is chosen when
    /// the search is opened) and no server (the saved search's `serverIds`).
    pub struct SavedFilters {}
}

/// `POST /v1/logs/saved-searches` and `PATCH /v1/logs/saved-searches/{id}`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SavedSearchRequest {
    /// 1 to 100 characters, unique in the organization (either case); spaces around are dropped.
    /// Required to create.
    pub name: Option<String>,
    /// Join codes (1 to 50), or `["*"]`: every server the reader may read when it is opened.
    /// Default `["*"]` when created.
    pub server_ids: Option<Vec<String>>,
    /// The filters (default none: every event of the servers).
    pub search: Option<SavedFilters>,
}

/// Which servers a saved search reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SavedServers {
    /// Every server the reader may read whose Logs source is active, when it is opened.
    All,
    /// These servers (registered ids).
    Named(Vec<ServerId>),
}

/// The servers of a request, as join codes to resolve, before the caller checks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerCodes {
    All,
    Named(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SavedSearch {
    /// `ss_…`.
    pub id: String,
    pub org_id: OrgId,
    pub name: String,
    pub servers: SavedServers,
    /// The filter fields as sent (a JSON object that [`SavedFilters`] reads and validates).
    pub search: Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Who made it (the member's sign-in name or the key's name, at the time).
    pub created_by: String,
}

impl SavedSearch {
    /// The filters, as a search applies them.
    pub fn filters(&self) -> Result<Filters, String> {
        parse_filters(&self.search).map_err(|e| format!("saved search `{}`: {e}", self.id))
    }
}

/// Stored filter fields (a saved search's `search`), as a search applies them.
pub fn parse_filters(search: &Value) -> Result<Filters, String> {
    let f: SavedFilters = serde_json::from_value(search.clone()).map_err(|e| e.to_string())?;
    validate_filters(&f.filters())
}

/// A request's changes, validated; `None` leaves the field as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidSaved {
    pub name: Option<String>,
    pub servers: Option<ServerCodes>,
    pub search: Option<Value>,
}

/// A name trimmed, 1 to [`MAX_NAME_CHARS`] characters, without control characters.
pub fn validate_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS {
        return Err(format!(
            "`name` must be 1 to {MAX_NAME_CHARS} characters (got {n})"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("`name` may not hold control characters (line breaks, tabs)".into());
    }
    Ok(name.to_owned())
}

fn validate_servers(codes: &[String]) -> Result<ServerCodes, String> {
    match codes {
        [one] if one == "*" => Ok(ServerCodes::All),
        _ if codes.iter().any(|c| c == "*") => {
            Err("`serverIds` is either `[\"*\"]` (every server) or join codes, not both".into())
        }
        _ if codes.is_empty() || codes.len() > MAX_SERVERS => Err(format!(
            "`serverIds` must name 1 to {MAX_SERVERS} servers, or be `[\"*\"]` (got {})",
            codes.len()
        )),
        _ => {
            let mut named = codes.to_vec();
            named.sort();
            named.dedup();
            Ok(ServerCodes::Named(named))
        }
    }
}

/// Checks a request; `create` needs a name, and fills the servers (`["*"]`) and the search
/// (none) it leaves out. A change must change something.
pub fn validate(req: &SavedSearchRequest, create: bool) -> Result<ValidSaved, String> {
    let name = match &req.name {
        Some(n) => Some(validate_name(n)?),
        None if create => return Err("`name` is required: 1 to 100 characters".into()),
        None => None,
    };
    let servers = match &req.server_ids {
        Some(codes) => Some(validate_servers(codes)?),
        None if create => Some(ServerCodes::All),
        None => None,
    };
    let search = match &req.search {
        Some(f) => {
            validate_filters(&f.filters()).map_err(|e| format!("`search`: {e}"))?;
            Some(serde_json::to_value(f).map_err(|e| e.to_string())?)
        }
        None if create => Some(Value::Object(Default::default())),
        None => None,
    };
    if !create && name.is_none() && servers.is_none() && search.is_none() {
        return Err("send at least one of `name`, `serverIds` and `search`".into());
    }
    Ok(ValidSaved {
        name,
        servers,
        search: search.map(strip_nulls),
    })
}

/// The filters without the `null` fields of their own and of `exclude` (what was not sent), so
/// a saved search reads back as the filters it has. A `null` inside `data` is a value and stays.
fn strip_nulls(v: Value) -> Value {
    let fields = |m: serde_json::Map<String, Value>| -> serde_json::Map<String, Value> {
        m.into_iter().filter(|(_, v)| !v.is_null()).collect()
    };
    match v {
        Value::Object(m) => Value::Object(
            fields(m)
                .into_iter()
                .map(|(k, v)| match v {
                    Value::Object(ex) if k == "exclude" => (k, Value::Object(fields(ex))),
                    v => (k, v),
                })
                .collect(),
        ),
        other => other,
    }
}

/// What a change to the store came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavedPut {
    Done,
    /// Another saved search of the organization has the name (compared in lower case).
    NameTaken,
    /// The organization has the limit's number already (creating only).
    LimitReached,
    /// No such saved search in the organization (changing only).
    Missing,
}

#[async_trait]
pub trait SavedSearchStore: Send + Sync {
    /// The organization's saved searches, by name (case-insensitively).
    async fn list(&self, org: &OrgId) -> Result<Vec<SavedSearch>, StoreError>;
    async fn get(&self, org: &OrgId, id: &str) -> Result<Option<SavedSearch>, StoreError>;
    /// Stores a new one, unless its name is taken or the organization has `max`.
    async fn create(
        &self,
        s: &SavedSearch,
        max: usize,
        audit: &Audit,
    ) -> Result<SavedPut, StoreError>;
    /// Replaces the name, servers and search of the saved search `s.id` of `s.org_id`, and its
    /// `updated_at`, unless the new name is another's.
    async fn update(&self, s: &SavedSearch, audit: &Audit) -> Result<SavedPut, StoreError>;
    /// Whether it was there.
    async fn delete(&self, org: &OrgId, id: &str, audit: &Audit) -> Result<bool, StoreError>;
}

/// A shared store is the store (memory adapters share one with the alert rules that name its
/// searches).
#[async_trait]
impl<T: SavedSearchStore + ?Sized> SavedSearchStore for std::sync::Arc<T> {
    async fn list(&self, org: &OrgId) -> Result<Vec<SavedSearch>, StoreError> {
        (**self).list(org).await
    }

    async fn get(&self, org: &OrgId, id: &str) -> Result<Option<SavedSearch>, StoreError> {
        (**self).get(org, id).await
    }

    async fn create(
        &self,
        s: &SavedSearch,
        max: usize,
        audit: &Audit,
    ) -> Result<SavedPut, StoreError> {
        (**self).create(s, max, audit).await
    }

    async fn update(&self, s: &SavedSearch, audit: &Audit) -> Result<SavedPut, StoreError> {
        (**self).update(s, audit).await
    }

    async fn delete(&self, org: &OrgId, id: &str, audit: &Audit) -> Result<bool, StoreError> {
        (**self).delete(org, id, audit).await
    }
}

/// Sorts saved searches as [`SavedSearchStore::list`] answers them: by name in lower case (Rust's
/// rule, whatever the database's collation), then id.
pub fn sort_by_name(list: &mut [SavedSearch]) {
    list.sort_by_key(|r| (r.name.to_lowercase(), r.id.clone()));
}

/// Whether `a` and `b` have the same name, servers and filters (a change to them is no change).
pub fn same_content(a: &SavedSearch, b: &SavedSearch) -> bool {
    a.name == b.name && a.servers == b.servers && a.search == b.search
}

/// The audit entry of a saved search made.
pub fn created_entry(audit: &Audit, s: &SavedSearch) -> AuditEntry {
    audit.entry(
        &s.org_id,
        Action::SavedSearchCreate,
        s.id.as_str(),
        serde_json::json!({ "name": s.name, "search": s.search }),
    )
}

/// The audit entry of a saved search changed (`before`: as it was).
pub fn changed_entry(audit: &Audit, before: &SavedSearch, after: &SavedSearch) -> AuditEntry {
    let mut details = serde_json::json!({ "name": after.name });
    if before.name != after.name {
        details["previousName"] = before.name.clone().into();
    }
    if before.search != after.search {
        details["search"] = after.search.clone();
    }
    if before.servers != after.servers {
        details["serversChanged"] = true.into();
    }
    audit.entry(
        &after.org_id,
        Action::SavedSearchChange,
        after.id.as_str(),
        details,
    )
}

/// The audit entry of a saved search deleted.
pub fn deleted_entry(audit: &Audit, s: &SavedSearch) -> AuditEntry {
    audit.entry(
        &s.org_id,
        Action::SavedSearchDelete,
        s.id.as_str(),
        serde_json::json!({ "name": s.name }),
    )
}

/// A new saved search's id.
pub fn new_id() -> String {
    auth_core::model::new_id("ss")
}

#[cfg(test)]
#[path = "saved_tests.rs"]
mod tests;
