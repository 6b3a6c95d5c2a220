//! Integration-test harness: every test gets its own freshly migrated database (cloned from a
//! template), its own object-store directory, and the real actix applications on port 0.
//!
//! Kept whole, over 400 lines: it is the one harness every integration test module imports.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;

use auth_core::model::{NewKey, Org, Server};
use auth_core::{secret, AccountStore, CredentialType, Permission, PermissionSet};
use stow_db::{testing, Db, PgAccounts};
use stow_http::Config;
use stow_objects::Objects;

pub mod receiver;

pub use reqwest;
pub use serde_json::{json, Value};

pub struct TestApp {
    pub cdn: String,
    /// The console's origin (its own listener).
    pub console: String,
    pub logs: String,
    pub client: reqwest::Client,
    pub db: Db,
    pub db_url: String,
    pub objects: Objects,
    pub objects_dir: PathBuf,
    pub accounts: Arc<PgAccounts>,
    pub org: Org,
    pub server: Server,
    /// Developer key with every permission.
    pub dev_key: String,
    /// Server key bound to `server` (baseline permissions plus cdn:read and cdn:delete).
    pub server_key: String,
    pub cdn_state: actix_web::web::Data<api_http::ApiState>,
    pub config: Config,
}

/// The messages of the events of query answers, in order.
pub fn event_messages(pages: &[Value]) -> Vec<String> {
    pages
        .iter()
        .flat_map(|p| p["events"].as_array().unwrap().iter())
        .map(|e| e["message"].as_str().unwrap().to_owned())
        .collect()
}

/// Options for [`spawn_with`].
#[derive(Clone)]
pub struct Options {
    pub tweak: fn(&mut Config),
    /// `publicUrl`s name this app's own delivery (a browser can load them) instead of
    /// `http://cdn.test`.
    pub local_delivery: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            tweak: |_| {},
            local_delivery: false,
        }
    }
}

pub async fn spawn() -> TestApp {
    spawn_with(Options::default()).await
}

pub async fn spawn_with(opts: Options) -> TestApp {
    let db_url = testing::fresh_database()
        .await
        .expect("fresh test database");
    let objects_dir = std::env::temp_dir().join(format!("stowage-test-{}", ulid::Ulid::new()));
    // `STOWAGE_TEST_S3_BUCKET` runs the same tests against an S3-protocol server (see
    // scripts/s3-tests.sh); each test gets its own prefix in the bucket.
    let store_url = match std::env::var("STOWAGE_TEST_S3_BUCKET") {
        Ok(bucket) if !bucket.is_empty() => format!(
            "s3://{bucket}/t-{}",
            ulid::Ulid::new().to_string().to_lowercase()
        ),
        _ => format!("file://{}", objects_dir.display()),
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let cdn = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let mut config = Config::for_tests(db_url.clone(), store_url);
    if opts.local_delivery {
        config.public_base_url = format!("{cdn}/cdn");
    }
    (opts.tweak)(&mut config);
    let config_arc = Arc::new(config.clone());

    let state = api_http::build_state(Arc::clone(&config_arc)).expect("cdn state");
    let db = state.db.clone();
    let objects = state.blobs.clone();
    let console_listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let app = api_http::Application::with_listeners(state, listener, Some(console_listener))
        .expect("cdn app");
    let console = format!(
        "http://127.0.0.1:{}",
        app.console_port().unwrap_or_default()
    );
    let cdn_state = app.state();
    tokio::spawn(app.run_until_stopped());

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let logs_app =
        logs_http::Application::with_listener(Arc::clone(&config_arc), listener).expect("logs app");
    let logs = format!("http://127.0.0.1:{}", logs_app.port());
    tokio::spawn(logs_app.run_until_stopped());

    let accounts = Arc::new(PgAccounts::new(db.clone()));
    let org = accounts
        .create_org("Test Org", "test-org", "pro")
        .await
        .unwrap();
    let server = accounts
        .register_server(
            &org.id,
            "abc123",
            Some("Test"),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    accounts
        .set_logs_active("abc123", true, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    stow_db::logs::maintain_partitions(&db).await.unwrap();

    let mut app = TestApp {
        cdn,
        console,
        logs,
        client: reqwest::Client::new(),
        db,
        db_url,
        objects,
        objects_dir,
        accounts,
        org,
        server,
        dev_key: String::new(),
        server_key: String::new(),
        cdn_state,
        config,
    };
    app.dev_key = app.key(KeySpec::developer(PermissionSet::all())).await;
    let server_perms = PermissionSet::server_key_baseline().union(
        [Permission::CdnRead, Permission::CdnDelete]
            .into_iter()
            .collect(),
    );
    app.server_key = app
        .key(KeySpec {
            server: Some(app.server.id.clone()),
            kind: CredentialType::Server,
            ..KeySpec::developer(server_perms)
        })
        .await;
    app
}

/// What a test key may do.
#[derive(Clone)]
pub struct KeySpec {
    pub kind: CredentialType,
    pub server: Option<auth_core::ServerId>,
    pub perms: PermissionSet,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub mime: Option<Vec<String>>,
    pub org: Option<auth_core::OrgId>,
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The servers whose logs a developer key may act on.
    pub servers: auth_core::ServerScope,
}

impl KeySpec {
    pub fn developer(perms: PermissionSet) -> Self {
        Self {
            kind: CredentialType::Developer,
            server: None,
            perms,
            allow: vec![],
            deny: vec![],
            mime: None,
            org: None,
            expires_at: None,
            servers: auth_core::ServerScope::All,
        }
    }

    pub fn perms(list: &[Permission]) -> Self {
        Self::developer(list.iter().copied().collect())
    }
}

/// Another API host on `config` (same database or not), serving in the background; its base URL.
pub fn spawn_cdn(config: Config) -> String {
    let state = api_http::build_state(Arc::new(config)).expect("cdn state");
    let app =
        api_http::Application::with_listener(state, TcpListener::bind("127.0.0.1:0").unwrap())
            .expect("cdn app");
    let base = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    base
}

/// Another ingestion host on `config`, serving in the background; its base URL.
pub fn spawn_logs(config: Config) -> String {
    let app = logs_http::Application::with_listener(
        Arc::new(config),
        TcpListener::bind("127.0.0.1:0").unwrap(),
    )
    .expect("logs app");
    let base = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(app.run_until_stopped());
    base
}

impl TestApp {
    /// A fresh upload URL (`GET /v1/presigned-url{query}` with the developer key).
    pub async fn upload_url(&self, query: &str) -> Value {
        let res = self
            .get(&format!("/v1/presigned-url{query}"), &self.dev_key)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
        res.json().await.unwrap()
    }

    /// Registers another server of the test organization, its logs on (as `stowctl server
    /// register` and `activate` do).
    pub async fn second_server(&self, code: &str) -> auth_core::Server {
        let test = auth_core::audit::Audit::operator("test");
        self.accounts
            .register_server(&self.org.id, code, None, &test)
            .await
            .unwrap();
        self.accounts
            .set_logs_active(code, true, &test)
            .await
            .unwrap()
    }

    /// Creates a key and returns its secret.
    pub async fn key(&self, spec: KeySpec) -> String {
        let s = secret::generate(spec.kind);
        self.accounts
            .create_key(
                &NewKey {
                    id: auth_core::KeyId::generate(),
                    org_id: spec.org.unwrap_or_else(|| self.org.id.clone()),
                    server_id: spec.server,
                    credential_type: spec.kind,
                    name: Some("test".into()),
                    secret_hash: s.hash,
                    hint: s.hint,
                    permissions: spec.perms,
                    allowed_prefixes: spec.allow,
                    denied_prefixes: spec.deny,
                    allowed_mime: spec.mime,
                    servers: spec.servers,
                    expires_at: spec.expires_at,
                },
                &auth_core::audit::Audit::operator("test"),
            )
            .await
            .unwrap();
        s.secret
    }

    pub fn get(&self, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.client
            .get(format!("{}{path}", self.cdn))
            .bearer_auth(key)
    }

    pub fn post(&self, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.cdn))
            .bearer_auth(key)
    }

    pub fn put(&self, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.client
            .put(format!("{}{path}", self.cdn))
            .bearer_auth(key)
    }

    pub fn patch(&self, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.client
            .patch(format!("{}{path}", self.cdn))
            .bearer_auth(key)
    }

    pub fn delete(&self, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.client
            .delete(format!("{}{path}", self.cdn))
            .bearer_auth(key)
    }

    /// Multipart upload of one file to `POST /v1/objects`.
    pub async fn upload(
        &self,
        key: &str,
        name: &str,
        bytes: Vec<u8>,
        path: Option<&str>,
    ) -> reqwest::Response {
        let mut form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned()),
        );
        if let Some(p) = path {
            form = form.text("path", p.to_owned());
        }
        self.post("/v1/objects", key)
            .multipart(form)
            .send()
            .await
            .unwrap()
    }

    /// Multipart upload with the developer key of `bytes` as `name` (type `mime`) into folder
    /// `path` (`""`: the root) with `metadata` (JSON text); asserts the 200.
    pub async fn put_file(
        &self,
        path: &str,
        name: &str,
        bytes: Vec<u8>,
        mime: &str,
        metadata: &str,
    ) {
        let part = reqwest::multipart::Part::bytes(bytes)
            .file_name(name.to_owned())
            .mime_str(mime)
            .unwrap();
        let mut form = reqwest::multipart::Form::new()
            .part("file", part)
            .text("metadata", metadata.to_owned());
        if !path.is_empty() {
            form = form.text("path", path.to_owned());
        }
        let res = self
            .post("/v1/objects", &self.dev_key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{:?}", res.text().await);
    }

    /// Starts another `cdn-api` instance on the same database and object store; its base URL.
    pub fn second_cdn(&self) -> String {
        let state = api_http::build_state(Arc::new(self.config.clone())).expect("cdn state");
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let second = api_http::Application::with_listener(state, listener).expect("cdn app");
        let base = format!("http://127.0.0.1:{}", second.port());
        tokio::spawn(second.run_until_stopped());
        base
    }

    /// A `publicUrl` made reachable: the test config's public origin (`http://cdn.test`, see
    /// `Config::for_tests`) replaced by this app's address.
    pub fn local_url(&self, public_url: &str) -> String {
        public_url.replace("http://cdn.test", &self.cdn)
    }

    /// Every stored byte location (to prove nothing leaked).
    pub async fn stored_locations(&self) -> Vec<String> {
        use futures::StreamExt;
        let mut out = Vec::new();
        let mut s = self.objects.list("o");
        while let Some(item) = s.next().await {
            out.push(item.unwrap().0);
        }
        out.sort();
        out
    }

    /// Waits (bounded) until background deletions settle to `expected` stored locations.
    pub async fn settle_locations(&self, expected: usize) -> Vec<String> {
        for _ in 0..100 {
            let locs = self.stored_locations().await;
            if locs.len() == expected {
                return locs;
            }
            tokio::task::yield_now().await;
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.stored_locations().await
    }

    /// The one `bigint` a query answers (as `n`), e.g. `SELECT count(*) AS n FROM …`.
    pub async fn count(&self, sql: &str) -> i64 {
        use diesel_async::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct N {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let mut conn = self.db.conn().await.unwrap();
        let n: N = diesel::sql_query(sql).get_result(&mut conn).await.unwrap();
        n.n
    }

    /// What ingestion keeps beside the events of `abc123`, rebuilt from its events as the
    /// migrations build them: the hourly and 15-minute counts, and the runs of words (50 events
    /// a run, in time order) of the events of batch `history`. For fixtures that write events
    /// older than ingestion accepts (seven days) straight into `log_events` with that batch id.
    pub async fn rebuild_log_summaries(&self) {
        use diesel::sql_types::Text;
        use diesel_async::RunQueryDsl;
        let mut conn = self.db.conn().await.unwrap();
        for sql in [
            "DELETE FROM log_counts_hourly WHERE server_id = $1",
            "DELETE FROM log_level_counts_15m WHERE server_id = $1",
            "INSERT INTO log_counts_hourly (server_id, hour, level, event_type, resource, n) \
             SELECT server_id, date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', \
             level, event_type, coalesce(resource, ''), count(*) FROM log_events WHERE server_id = $1 \
             GROUP BY 1, 2, 3, 4, 5",
            "INSERT INTO log_level_counts_15m (server_id, slot, level, n) \
             SELECT server_id, date_bin(interval '15 minutes', occurred_at, timestamptz '1970-01-01 00:00:00+00'), \
             level, count(*) FROM log_events WHERE server_id = $1 GROUP BY 1, 2, 3",
            "INSERT INTO log_runs (server_id, occurred_from, occurred_to, words) \
             SELECT server_id, min(occurred_at), max(occurred_at), log_run_words(array_agg(message)) \
             FROM (SELECT server_id, occurred_at, message, \
                   (row_number() OVER (ORDER BY occurred_at, id) - 1) / 50 AS run \
                   FROM log_events WHERE server_id = $1 AND batch_id = 'history') e \
             GROUP BY server_id, run",
        ] {
            diesel::sql_query(sql)
                .bind::<Text, _>(self.server.id.as_str())
                .execute(&mut conn)
                .await
                .unwrap();
        }
    }

    /// Ingests one batch on `abc123` with the developer key; asserts the 202.
    pub async fn ingest_logs(&self, batch_id: &str, events: Vec<Value>) {
        self.ingest_logs_at(&self.logs, batch_id, events).await;
    }

    /// Ingests `events` as batch `batch` on the server with join code `server`, with the
    /// developer key (202 asserted).
    pub async fn ingest_logs_on(&self, server: &str, batch: &str, events: Vec<Value>) {
        self.ingest(&self.logs, server, batch, events).await;
    }

    /// [`Self::ingest_logs`] through the ingestion host at `logs_base` (another instance).
    pub async fn ingest_logs_at(&self, logs_base: &str, batch_id: &str, events: Vec<Value>) {
        self.ingest(logs_base, "abc123", batch_id, events).await;
    }

    async fn ingest(&self, logs_base: &str, server: &str, batch_id: &str, events: Vec<Value>) {
        let res = self
            .client
            .post(format!("{logs_base}/v1/servers/{server}/logs"))
            .bearer_auth(&self.dev_key)
            .json(&json!({"batch_id": batch_id, "events": events}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 202, "{:?}", res.text().await);
    }

    /// Every page of a log query with the developer key, following `nextCursor` until there is
    /// none; asserts each answer is 200.
    pub async fn query_pages(&self, body: &Value) -> Vec<Value> {
        let mut pages: Vec<Value> = Vec::new();
        let mut body = body.clone();
        loop {
            let res = self
                .post("/v1/logs/query", &self.dev_key)
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = res.status();
            let page: Value = res.json().await.unwrap();
            assert_eq!(status, 200, "{page}");
            let next = page["pagination"]["nextCursor"].as_str().map(str::to_owned);
            pages.push(page);
            match next {
                Some(c) => body["cursor"] = json!(c),
                None => return pages,
            }
        }
    }

    /// Waits (bounded) until a request's claim on `idem_key` is committed and in flight.
    pub async fn wait_in_flight(&self, idem_key: &str) {
        // keys in tests are plain literals; no quoting needed beyond refusing a quote
        assert!(!idem_key.contains('\''), "{idem_key}");
        let sql = format!(
            "SELECT count(*) AS n FROM idempotency_records WHERE idem_key = '{idem_key}' AND state = 'in_flight'"
        );
        for _ in 0..500 {
            if self.count(&sql).await == 1 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("no request claimed the idempotency key {idem_key}");
    }

    /// The JSON body of a GET on the API host with `key`, whatever the status.
    pub async fn get_json(&self, path: &str, key: &str) -> Value {
        let res = self.get(path, key).send().await.unwrap();
        res.json().await.unwrap()
    }

    pub async fn list_keys(&self, key: &str, path: Option<&str>) -> Vec<String> {
        let url = match path {
            Some(p) => format!("/v1/objects?path={}&limit=1000", urlencode(p)),
            None => "/v1/objects?limit=1000".to_owned(),
        };
        let body = self.get_json(&url, key).await;
        body["objects"]
            .as_array()
            .unwrap_or(&vec![])
            .iter()
            .map(|o| o["key"].as_str().unwrap().to_owned())
            .collect()
    }
}

pub fn urlencode(s: &str) -> String {
    url_escape(s)
}

fn url_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A minimal valid PNG header (enough for type detection).
pub fn png_bytes() -> Vec<u8> {
    let mut v = vec![
        0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, b'I', b'H', b'D', b'R',
    ];
    v.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
    v
}

pub fn webp_bytes() -> Vec<u8> {
    let mut v = b"RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00".to_vec();
    v.extend_from_slice(&[0u8; 24]);
    v
}

/// Asserts an API-host error body and returns it.
/// Sends a request and reads its JSON answer, for the many tests that look only at the body.
pub trait RequestExt {
    fn json_body(self) -> impl std::future::Future<Output = Value> + Send;
    /// Sends the request and returns the answer's body as text.
    fn text_body(self) -> impl std::future::Future<Output = String> + Send;
    /// Sends the request and returns the answer's status.
    fn sent_status(self) -> impl std::future::Future<Output = u16> + Send;
    /// Sends the request and checks it is refused with `status` and `code` ([`expect_error`]).
    fn refused(
        self,
        status: u16,
        code: &'static str,
    ) -> impl std::future::Future<Output = Value> + Send;
}

impl RequestExt for reqwest::RequestBuilder {
    #[allow(clippy::expect_used)]
    async fn json_body(self) -> Value {
        self.send()
            .await
            .expect("the request is sent")
            .json()
            .await
            .expect("a JSON answer")
    }

    #[allow(clippy::expect_used)]
    async fn text_body(self) -> String {
        self.send()
            .await
            .expect("the request is sent")
            .text()
            .await
            .expect("a text answer")
    }

    #[allow(clippy::expect_used)]
    async fn sent_status(self) -> u16 {
        self.send()
            .await
            .expect("the request is sent")
            .status()
            .as_u16()
    }

    #[allow(clippy::expect_used)]
    async fn refused(self, status: u16, code: &'static str) -> Value {
        let res = self.send().await.expect("the request is sent");
        expect_error(res, status, code).await
    }
}

pub async fn expect_error(res: reqwest::Response, status: u16, code: &str) -> Value {
    let actual = res.status().as_u16();
    let header_id = res
        .headers()
        .get("x-request-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = res.text().await.unwrap();
    assert_eq!(actual, status, "status; body: {text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["success"], false, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert_eq!(
        header_id.as_deref(),
        body["requestId"].as_str(),
        "X-Request-Id matches requestId"
    );
    body
}

/// [`expect_error`], and the message mentions `needle` (a field, a limit, an encoding...).
pub async fn expect_error_mentioning(
    res: reqwest::Response,
    status: u16,
    code: &str,
    needle: &str,
) -> Value {
    let body = expect_error(res, status, code).await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(needle),
        "the message should mention {needle:?}: {body}"
    );
    body
}
