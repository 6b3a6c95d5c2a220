//! The read path every explorer route shares: the search opened over the servers a caller may read
//! (with the plan's retention), the organization's search slot, the fan-out over servers, and
//! signed cursors.

use super::*;

/// A validated read request: the search it runs.
pub(crate) trait Searches {
    fn search(&self) -> &Search;
}

impl Searches for logs_core::query::ValidQuery {
    fn search(&self) -> &Search {
        &self.search
    }
}

impl Searches for logs_core::counts::ValidCounts {
    fn search(&self) -> &Search {
        &self.search
    }
}

impl Searches for logs_core::facets::ValidFacets {
    fn search(&self) -> &Search {
        &self.search
    }
}

impl Searches for logs_core::patterns::ValidPatterns {
    fn search(&self) -> &Search {
        &self.search
    }
}

impl Searches for Search {
    fn search(&self) -> &Search {
        self
    }
}

/// A read ready to run: its server, the request as validated (window as asked), and the window
/// to search, `from` raised to the plan's retention.
pub(crate) struct Opened<T> {
    pub server: Server,
    pub valid: T,
    pub search: Search,
    /// The effective window, as answered.
    pub range: Range,
}

impl<T> Opened<T> {
    /// No event can be in the window (it ends before retention starts).
    pub(crate) fn empty(&self) -> bool {
        self.search.is_empty()
    }
}

/// The checks every read makes, in order: `logs:read`, the server the key may read (`server_id`
/// as sent), the request (`validate`); then the plan's retention applied to `from`.
pub(crate) async fn open<T: Searches>(
    state: &ApiState,
    auth: &Auth,
    server_id: Option<&str>,
    validate: impl FnOnce() -> Result<T, String>,
) -> Result<Opened<T>, ApiError> {
    auth.require(Permission::LogsRead)?;
    let server = target_server(state, auth, server_id).await?;
    let valid = validate().map_err(ApiError::invalid_request)?;
    let search = valid
        .search()
        .clone()
        .within_retention(auth.plan.retention_days, Utc::now());
    Ok(Opened {
        range: Range {
            from: ts(search.from),
            to: ts(search.to),
        },
        server,
        valid,
        search,
    })
}

/// The signed cursors of one paged read, bound to its search `digest` and the organization.
pub(crate) struct Cursors {
    keys: auth_core::signing::SigningKeys,
    org: String,
    digest: String,
    now: DateTime<Utc>,
    ttl: chrono::Duration,
}

impl Cursors {
    pub(crate) async fn new(
        state: &ApiState,
        auth: &Auth,
        digest: String,
    ) -> Result<Self, ApiError> {
        Ok(Cursors {
            keys: state.signing_keys().await?,
            org: auth.org.id.as_str().to_owned(),
            digest,
            now: Utc::now(),
            ttl: chrono::Duration::from_std(state.config.cursor_ttl)
                .unwrap_or(chrono::Duration::minutes(15)),
        })
    }

    /// Where the page after `cursor` starts (`None` without one); 400 `INVALID_CURSOR` or
    /// `CURSOR_EXPIRED`.
    pub(crate) fn position(&self, cursor: Option<&str>) -> Result<Option<Position>, ApiError> {
        use logs_core::query::{read_cursor, CursorError};
        cursor
            .map(|c| {
                read_cursor(&self.keys, &self.org, &self.digest, c, self.now).map_err(|e| {
                    let code = match e {
                        CursorError::Invalid => Code::InvalidCursor,
                        CursorError::Expired => Code::CursorExpired,
                    };
                    ApiError::new(code, e.to_string())
                })
            })
            .transpose()
    }

    /// The cursor after `last`, when there is more.
    pub(crate) fn next(&self, has_more: bool, last: Option<&EventRow>) -> Option<String> {
        let last = last.filter(|_| has_more)?;
        Some(logs_core::query::make_cursor(
            &self.keys,
            &self.org,
            &self.digest,
            (last.occurred_at, last.id),
            self.now + self.ttl,
        ))
    }
}

/// Servers one read may name in `serverIds`.
pub const MAX_SERVER_IDS: usize = 50;

/// A read over one or several servers: `serverId` (one; what a server key defaults to) or
/// `serverIds` (join codes, or `["*"]` for every server the key may read whose Logs source is
/// active), each checked as `serverId` is.
pub(crate) struct OpenedMany<T> {
    pub servers: Vec<Server>,
    /// Whether the servers were named by `serverIds` (the cursor binds the list then).
    pub many: bool,
    pub valid: T,
    pub search: Search,
    pub range: Range,
}

impl<T> OpenedMany<T> {
    /// No event can be in the window, or no server to read.
    pub(crate) fn empty(&self) -> bool {
        self.search.is_empty() || self.servers.is_empty()
    }
}

/// [`open`] for the reads that take `serverIds` as well as `serverId`.
pub(crate) async fn open_many<T: Searches>(
    state: &ApiState,
    auth: &Auth,
    server_id: Option<&str>,
    server_ids: Option<&[String]>,
    validate: impl FnOnce() -> Result<T, String>,
) -> Result<OpenedMany<T>, ApiError> {
    let Some(codes) = server_ids else {
        let one = open(state, auth, server_id, validate).await?;
        return Ok(OpenedMany {
            servers: vec![one.server],
            many: false,
            valid: one.valid,
            search: one.search,
            range: one.range,
        });
    };
    auth.require(Permission::LogsRead)?;
    if server_id.is_some() {
        return Err(ApiError::invalid_request(
            "`serverId` and `serverIds` are alternatives; send one of them",
        ));
    }
    if codes.is_empty() || codes.len() > MAX_SERVER_IDS {
        return Err(ApiError::invalid_request(format!(
            "`serverIds` must name 1 to {MAX_SERVER_IDS} servers, or be [\"*\"] for every server the key may read (got {})",
            codes.len()
        )));
    }
    let servers = if codes.len() == 1 && codes[0] == "*" {
        readable_servers(state, auth).await?
    } else {
        named_servers(state, auth, codes).await?
    };
    let valid = validate().map_err(ApiError::invalid_request)?;
    let search = valid
        .search()
        .clone()
        .within_retention(auth.plan.retention_days, Utc::now());
    Ok(OpenedMany {
        range: Range {
            from: ts(search.from),
            to: ts(search.to),
        },
        servers,
        many: true,
        valid,
        search,
    })
}

/// `read` of each of `queries` (one per server or group), a bounded number at a time
/// (`stow_ops::explorer::each_server`), the answers in their order.
pub(crate) async fn each_server<Q, T, Fut>(
    queries: Vec<Q>,
    read: impl Fn(Q) -> Fut,
) -> Result<Vec<T>, ApiError>
where
    Fut: std::future::Future<Output = Result<T, SearchError>>,
{
    stow_ops::explorer::each_server(queries, read)
        .await
        .map_err(search_error)
}

pub(crate) fn search_error(e: SearchError) -> ApiError {
    match e {
        SearchError::TooBroad { .. } => ApiError::new(Code::SearchTooBroad, e.to_string()),
        SearchError::Store(e) => e.into(),
    }
}

/// Runs `search` in a slot of the organization's concurrent-search limit (across instances; 429
/// when none is free). The slot is released before the answer goes out, so the client's next
/// search finds it free; a search cut short (the client left) releases it in the background.
pub(crate) async fn in_search_slot<T>(
    state: &web::Data<ApiState>,
    auth: &Auth,
    search: impl std::future::Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    let slot = search_slot(state, auth).await?;
    let found = search.await;
    slot.release().await;
    found
}

/// A slot of the organization's concurrent-search limit (across instances), or 429.
async fn search_slot(
    state: &web::Data<ApiState>,
    auth: &Auth,
) -> Result<slots::SlotLease, ApiError> {
    let limit = usize::try_from(auth.plan.concurrent_searches.max(1)).unwrap_or(1);
    slots::SlotLease::acquire(
        &state.stores.read_slots,
        logs_core::LeaseKind::Search,
        &auth.org.id,
        limit,
    )
    .await?
    .ok_or_else(|| {
        ApiError::new(
            Code::RateLimited,
            "too many concurrent searches for this organization; retry shortly",
        )
        .with_retry_after(1)
    })
}
