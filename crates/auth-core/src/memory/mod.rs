//! In-memory [`AccountStore`], for unit tests and internal tooling.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::audit::{self as audit_log, Action, Audit};
use crate::console_session::{ConsoleSessionStore, Session, Subject};
use crate::ids::{KeyId, MemberId, OrgId, ServerId};
use crate::signing::SigningKeys;
use crate::signing_secrets::{SecretInfo, SigningSecretStore};
use chrono::{DateTime, Utc};

use crate::key::{ApiKey, AuthContext};
use crate::model::{NewKey, Org, Plan, Server};
use crate::store::{AccountStore, StoreError};

mod audit;
mod members;

pub use audit::MemoryAudit;

#[derive(Default)]
struct State {
    plans: HashMap<String, Plan>,
    orgs: HashMap<OrgId, Org>,
    servers: HashMap<ServerId, Server>,
    keys: HashMap<KeyId, (ApiKey, [u8; 32])>,
    members: members::Members,
}

pub struct MemoryAccounts {
    state: Mutex<State>,
    audit: Arc<MemoryAudit>,
}

impl Default for MemoryAccounts {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryAccounts {
    /// A store holding the built-in plans, like a freshly migrated database.
    pub fn new() -> Self {
        let mut state = State::default();
        for p in Plan::builtin() {
            state.plans.insert(p.name.clone(), p);
        }
        Self {
            state: Mutex::new(state),
            audit: Arc::default(),
        }
    }

    /// The same, writing its audit entries to `audit` (shared with other memory adapters).
    pub fn with_audit(audit: Arc<MemoryAudit>) -> Self {
        Self {
            audit,
            ..Self::new()
        }
    }

    /// The audit log this store writes to.
    pub fn audit(&self) -> &Arc<MemoryAudit> {
        &self.audit
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn unknown(what: &str, id: &str) -> StoreError {
    StoreError::NotFound(format!("unknown {what} \"{id}\""))
}

#[async_trait]
impl AccountStore for MemoryAccounts {
    async fn upsert_plan(&self, plan: &Plan) -> Result<Plan, StoreError> {
        self.lock().plans.insert(plan.name.clone(), plan.clone());
        Ok(plan.clone())
    }

    async fn get_plan(&self, name: &str) -> Result<Option<Plan>, StoreError> {
        Ok(self.lock().plans.get(name).cloned())
    }

    async fn list_plans(&self) -> Result<Vec<Plan>, StoreError> {
        let mut plans: Vec<Plan> = self.lock().plans.values().cloned().collect();
        plans.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(plans)
    }

    async fn list_orgs(&self) -> Result<Vec<Org>, StoreError> {
        let mut orgs: Vec<Org> = self.lock().orgs.values().cloned().collect();
        orgs.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        Ok(orgs)
    }

    async fn list_servers(&self, org_id: &OrgId) -> Result<Vec<Server>, StoreError> {
        let st = self.lock();
        if !st.orgs.contains_key(org_id) {
            return Err(unknown("organization", org_id));
        }
        let mut servers: Vec<Server> = st
            .servers
            .values()
            .filter(|s| s.org_id == *org_id)
            .cloned()
            .collect();
        servers.sort_by_key(|s| s.cfx_id.to_lowercase());
        Ok(servers)
    }

    async fn enable_key(&self, id: &KeyId, audit: &Audit) -> Result<ApiKey, StoreError> {
        let mut st = self.lock();
        let (key, _) = st.keys.get_mut(id).ok_or_else(|| unknown("key", id))?;
        if key.disabled_at.take().is_some() {
            self.audit.append([audit.entry(
                &key.org_id,
                Action::KeyEnable,
                key.id.as_str(),
                serde_json::json!({ "name": key.name }),
            )]);
        }
        Ok(key.clone())
    }

    async fn create_org(&self, name: &str, slug: &str, plan: &str) -> Result<Org, StoreError> {
        let mut st = self.lock();
        if !st.plans.contains_key(plan) {
            return Err(unknown("plan", plan));
        }
        if st.orgs.values().any(|o| o.slug == slug) {
            return Err(StoreError::Conflict(format!(
                "workspace slug \"{slug}\" is taken"
            )));
        }
        let org = Org {
            id: OrgId::generate(),
            name: name.to_owned(),
            slug: slug.to_owned(),
            plan: plan.to_owned(),
        };
        st.orgs.insert(org.id.clone(), org.clone());
        Ok(org)
    }

    async fn get_org(&self, id: &OrgId) -> Result<Option<Org>, StoreError> {
        Ok(self.lock().orgs.get(id).cloned())
    }

    async fn find_org_by_slug(&self, slug: &str) -> Result<Option<Org>, StoreError> {
        Ok(self.lock().orgs.values().find(|o| o.slug == slug).cloned())
    }

    async fn set_org_plan(&self, id: &OrgId, plan: &str, audit: &Audit) -> Result<Org, StoreError> {
        let mut st = self.lock();
        if !st.plans.contains_key(plan) {
            return Err(unknown("plan", plan));
        }
        let org = st
            .orgs
            .get_mut(id)
            .ok_or_else(|| unknown("organization", id))?;
        if org.plan != plan {
            let from = std::mem::replace(&mut org.plan, plan.to_owned());
            self.audit.append([audit.entry(
                id,
                Action::PlanChange,
                plan,
                serde_json::json!({ "from": from }),
            )]);
        }
        Ok(org.clone())
    }

    async fn register_server(
        &self,
        org_id: &OrgId,
        cfx_id: &str,
        name: Option<&str>,
        audit: &Audit,
    ) -> Result<Server, StoreError> {
        let mut st = self.lock();
        if !st.orgs.contains_key(org_id) {
            return Err(unknown("organization", org_id));
        }
        if st
            .servers
            .values()
            .any(|s| s.cfx_id.eq_ignore_ascii_case(cfx_id))
        {
            return Err(StoreError::Conflict(format!(
                "join code \"{cfx_id}\" is already registered"
            )));
        }
        let server = Server {
            id: ServerId::generate(),
            org_id: org_id.to_owned(),
            cfx_id: cfx_id.to_owned(),
            name: name.map(str::to_owned),
            logs_active: false,
        };
        st.servers.insert(server.id.clone(), server.clone());
        self.audit.append([audit.server_registered(&server)]);
        Ok(server)
    }

    async fn find_server_by_cfx(&self, cfx_id: &str) -> Result<Option<Server>, StoreError> {
        Ok(self
            .lock()
            .servers
            .values()
            .find(|s| s.cfx_id.eq_ignore_ascii_case(cfx_id))
            .cloned())
    }

    async fn set_logs_active(
        &self,
        cfx_id: &str,
        active: bool,
        audit: &Audit,
    ) -> Result<Server, StoreError> {
        let mut st = self.lock();
        let server = st
            .servers
            .values_mut()
            .find(|s| s.cfx_id.eq_ignore_ascii_case(cfx_id))
            .ok_or_else(|| unknown("server join code", cfx_id))?;
        if server.logs_active != active {
            server.logs_active = active;
            self.audit.append([audit.server_logs(server)]);
        }
        Ok(server.clone())
    }

    async fn create_key(&self, key: &NewKey, audit: &Audit) -> Result<ApiKey, StoreError> {
        let mut st = self.lock();
        if !st.orgs.contains_key(&key.org_id) {
            return Err(unknown("organization", &key.org_id));
        }
        let scoped = key.servers.named().unwrap_or_default();
        for server_id in key.server_id.iter().chain(scoped) {
            match st.servers.get(server_id) {
                Some(s) if s.org_id == key.org_id => {}
                _ => return Err(unknown("server", server_id)),
            }
        }
        if st.keys.values().any(|(_, h)| *h == key.secret_hash) {
            return Err(StoreError::Conflict("secret hash collision".into()));
        }
        let stored = ApiKey {
            id: key.id.clone(),
            org_id: key.org_id.clone(),
            server_id: key.server_id.clone(),
            credential_type: key.credential_type,
            name: key.name.clone(),
            hint: key.hint.clone(),
            permissions: key.permissions,
            allowed_prefixes: key.allowed_prefixes.clone(),
            denied_prefixes: key.denied_prefixes.clone(),
            allowed_mime: key.allowed_mime.clone(),
            servers: key.servers.clone(),
            created_at: Utc::now(),
            expires_at: key.expires_at,
            disabled_at: None,
            last_used_at: None,
        };
        st.keys
            .insert(stored.id.clone(), (stored.clone(), key.secret_hash));
        self.audit.append([audit.entry(
            &stored.org_id,
            Action::KeyCreate,
            stored.id.as_str(),
            crate::key::key_details(&stored),
        )]);
        Ok(stored)
    }

    async fn list_keys(&self, org_id: &OrgId) -> Result<Vec<ApiKey>, StoreError> {
        let st = self.lock();
        if !st.orgs.contains_key(org_id) {
            return Err(unknown("organization", org_id));
        }
        let mut keys: Vec<ApiKey> = st
            .keys
            .values()
            .filter(|(k, _)| k.org_id == *org_id)
            .map(|(k, _)| k.clone())
            .collect();
        keys.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(keys)
    }

    async fn get_key(&self, id: &KeyId) -> Result<Option<ApiKey>, StoreError> {
        Ok(self.lock().keys.get(id).map(|(k, _)| k.clone()))
    }

    async fn disable_key(
        &self,
        id: &KeyId,
        at: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<ApiKey, StoreError> {
        let mut st = self.lock();
        let (key, _) = st.keys.get_mut(id).ok_or_else(|| unknown("key", id))?;
        if key.disabled_at.is_none() {
            key.disabled_at = Some(at);
            self.audit.append([audit.entry(
                &key.org_id,
                Action::KeyDisable,
                key.id.as_str(),
                serde_json::json!({ "name": key.name }),
            )]);
        }
        Ok(key.clone())
    }

    async fn delete_key(&self, id: &KeyId, audit: &Audit) -> Result<(), StoreError> {
        let mut st = self.lock();
        let (key, _) = st.keys.remove(id).ok_or_else(|| unknown("key", id))?;
        self.audit.append([audit.entry(
            &key.org_id,
            Action::KeyDelete,
            key.id.as_str(),
            serde_json::json!({ "name": key.name }),
        )]);
        Ok(())
    }

    async fn find_auth_context(&self, hash: &[u8; 32]) -> Result<Option<AuthContext>, StoreError> {
        let st = self.lock();
        let Some((key, _)) = st.keys.values().find(|(_, h)| h == hash) else {
            return Ok(None);
        };
        let org = st
            .orgs
            .get(&key.org_id)
            .cloned()
            .ok_or_else(|| StoreError::Internal("key without organization".into()))?;
        let plan = st
            .plans
            .get(&org.plan)
            .cloned()
            .ok_or_else(|| StoreError::Internal("organization without plan".into()))?;
        let server = key
            .server_id
            .as_ref()
            .and_then(|id| st.servers.get(id).cloned());
        Ok(Some(AuthContext {
            key: key.clone(),
            org,
            plan,
            server,
            member: None,
        }))
    }

    async fn touch_key(&self, id: &KeyId, at: DateTime<Utc>) -> Result<(), StoreError> {
        if let Some((key, _)) = self.lock().keys.get_mut(id) {
            key.last_used_at = Some(at);
        }
        Ok(())
    }
}

/// `(id, secret, created_at, accepted_until)`.
type SecretRow = (i64, Vec<u8>, DateTime<Utc>, Option<DateTime<Utc>>);

/// Signing secrets in memory: starts with one current secret, like a migrated database.
pub struct MemorySigningSecrets {
    /// Oldest first.
    rows: Mutex<Vec<SecretRow>>,
}

impl Default for MemorySigningSecrets {
    fn default() -> Self {
        Self {
            rows: Mutex::new(vec![(
                1,
                crate::signing_secrets::generate(),
                Utc::now(),
                None,
            )]),
        }
    }
}

impl MemorySigningSecrets {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SecretRow>> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl SigningSecretStore for MemorySigningSecrets {
    async fn keys(&self, now: DateTime<Utc>) -> Result<SigningKeys, StoreError> {
        let rows = self.lock();
        crate::signing_secrets::keys_from(rows.iter().rev().map(|r| (r.1.as_slice(), r.3)), now)
    }

    async fn rotate(
        &self,
        secret: &[u8],
        now: DateTime<Utc>,
        previous_until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut rows = self.lock();
        for row in rows.iter_mut().filter(|r| r.3.is_none()) {
            row.3 = Some(previous_until);
        }
        rows.retain(|r| r.3.is_none_or(|until| until >= now));
        let id = rows.iter().map(|r| r.0).max().unwrap_or(0) + 1;
        rows.push((id, secret.to_vec(), now, None));
        Ok(())
    }

    async fn list(&self, now: DateTime<Utc>) -> Result<Vec<SecretInfo>, StoreError> {
        Ok(self
            .lock()
            .iter()
            .rev()
            .filter(|r| r.3.is_none_or(|until| until > now))
            .map(|r| SecretInfo {
                id: r.0,
                created_at: r.2,
                accepted_until: r.3,
            })
            .collect())
    }
}

/// In-memory [`crate::backoff::SignInFailureStore`].
#[derive(Default)]
pub struct MemorySignInFailures {
    failures: Mutex<HashMap<String, crate::backoff::Failures>>,
}

#[async_trait]
impl crate::backoff::SignInFailureStore for MemorySignInFailures {
    async fn blocked_until(
        &self,
        subject: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        let failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        Ok(failures
            .get(subject)
            .map(|f| f.blocked_until)
            .filter(|until| *until > now))
    }

    async fn fail(
        &self,
        subject: &str,
        now: DateTime<Utc>,
        free: u32,
    ) -> Result<crate::backoff::Failures, StoreError> {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let next = crate::backoff::after_failure(failures.get(subject).copied(), now, free);
        failures.insert(subject.to_owned(), next);
        Ok(next)
    }

    async fn clear(&self, subject: &str) -> Result<(), StoreError> {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(subject);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sign_in_failures_block_with_growing_waits_and_clear() {
        futures::executor::block_on(
            crate::backoff::suite::failures_block_with_growing_waits_and_clear(
                &super::MemorySignInFailures::default(),
            ),
        );
    }

    async fn store() -> Box<dyn crate::AccountStore> {
        Box::new(super::MemoryAccounts::new())
    }

    crate::account_store_suite!(futures::executor::block_on, store);

    async fn secrets() -> Box<dyn crate::signing_secrets::SigningSecretStore> {
        Box::new(super::MemorySigningSecrets::default())
    }

    crate::signing_secret_suite!(futures::executor::block_on, secrets);

    async fn sessions() -> (
        Box<dyn crate::console_session::ConsoleSessionStore>,
        Box<dyn crate::testsuite::members::MemberFixture>,
    ) {
        (
            Box::new(super::MemoryConsoleSessions::default()),
            Box::new(super::MemoryAccounts::new()),
        )
    }

    crate::console_session_suite!(futures::executor::block_on, sessions);

    async fn buckets() -> Box<dyn crate::rate::RateBucketStore> {
        Box::new(super::MemoryRateBuckets::default())
    }

    crate::rate_bucket_suite!(futures::executor::block_on, buckets);

    async fn members() -> Box<dyn crate::testsuite::members::MemberFixture> {
        Box::new(super::MemoryAccounts::new())
    }

    crate::member_store_suite!(futures::executor::block_on, members);
}

/// Token buckets in memory (one process: what a single instance would count).
#[derive(Default)]
pub struct MemoryRateBuckets {
    buckets: Mutex<HashMap<String, (f64, std::time::Instant)>>,
}

#[async_trait]
impl crate::rate::RateBucketStore for MemoryRateBuckets {
    async fn take(
        &self,
        bucket: &str,
        want: u32,
        quota: crate::rate::Quota,
    ) -> Result<crate::rate::Taken, StoreError> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        let before = buckets.get(bucket).copied();
        let elapsed = before.map_or(0.0, |(_, at)| now.duration_since(at).as_secs_f64());
        let taken = crate::rate::refill_and_take(before.map(|(t, _)| t), elapsed, want, quota);
        buckets.insert(bucket.to_owned(), (taken.left, now));
        Ok(taken)
    }
}

/// Console sessions in memory, by token hash.
#[derive(Default)]
pub struct MemoryConsoleSessions {
    sessions: Mutex<HashMap<[u8; 32], Session>>,
}

impl MemoryConsoleSessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Session>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the sessions whose subject matches; how many.
    fn end_where(&self, ends: impl Fn(&Subject) -> bool) -> u64 {
        let mut sessions = self.lock();
        let before = sessions.len();
        sessions.retain(|_, s| !ends(&s.subject));
        (before - sessions.len()) as u64
    }
}

#[async_trait]
impl ConsoleSessionStore for MemoryConsoleSessions {
    async fn create(&self, session: &Session) -> Result<(), StoreError> {
        let mut sessions = self.lock();
        if sessions.contains_key(&session.id_hash) {
            return Err(StoreError::Conflict("session exists".into()));
        }
        sessions.insert(session.id_hash, session.clone());
        Ok(())
    }

    async fn get(&self, id_hash: &[u8; 32]) -> Result<Option<Session>, StoreError> {
        Ok(self.lock().get(id_hash).cloned())
    }

    async fn touch(&self, id_hash: &[u8; 32], at: DateTime<Utc>) -> Result<(), StoreError> {
        if let Some(s) = self.lock().get_mut(id_hash) {
            s.last_seen_at = at;
        }
        Ok(())
    }

    async fn end(&self, id_hash: &[u8; 32]) -> Result<(), StoreError> {
        self.lock().remove(id_hash);
        Ok(())
    }

    async fn end_for_key(&self, key_id: &KeyId) -> Result<u64, StoreError> {
        Ok(self.end_where(|s| matches!(s, Subject::Key { key_id: k, .. } if k == key_id)))
    }

    async fn end_for_member(
        &self,
        member_id: &MemberId,
        org_id: Option<&OrgId>,
    ) -> Result<u64, StoreError> {
        Ok(self.end_where(|s| {
            matches!(s, Subject::Member { member_id: m, org_id: o }
                if m == member_id && org_id.is_none_or(|org| org == o))
        }))
    }

    async fn sweep(
        &self,
        idle_before: DateTime<Utc>,
        created_before: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let mut sessions = self.lock();
        let before = sessions.len();
        sessions.retain(|_, s| s.last_seen_at >= idle_before && s.created_at >= created_before);
        Ok((before - sessions.len()) as u64)
    }
}

#[async_trait]
impl audit_log::AuditStore for MemoryAccounts {
    async fn record(&self, entries: &[audit_log::AuditEntry]) -> Result<(), StoreError> {
        self.audit.record(entries).await
    }

    async fn page(
        &self,
        org: &OrgId,
        query: &audit_log::AuditQuery,
    ) -> Result<Vec<audit_log::AuditEvent>, StoreError> {
        self.audit.page(org, query).await
    }

    async fn prune(&self, org: &OrgId, before: DateTime<Utc>) -> Result<u64, StoreError> {
        self.audit.prune(org, before).await
    }
}
