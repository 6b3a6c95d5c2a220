//! The rules the commit path evaluates: loaded with what each rule's maker still reads, and kept
//! until the rules' version moves.

use super::*;

/// The rules as last loaded, and the version they were loaded at.
#[derive(Default)]
pub struct RuleCache {
    loaded: Mutex<Option<(i64, Arc<Vec<ActiveRule>>)>>,
}

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = BigInt)]
    v: i64,
}

/// A rule with its saved search's servers and filters, and what its maker reads now.
#[derive(QueryableByName)]
struct WatchRow {
    #[diesel(embed)]
    rule: RuleRow,
    #[diesel(sql_type = Nullable<Array<Text>>)]
    server_ids: Option<Vec<String>>,
    #[diesel(sql_type = Jsonb)]
    search: serde_json::Value,
    /// The maker's membership, when the maker is a member who still belongs.
    #[diesel(sql_type = Nullable<Text>)]
    member_role: Option<String>,
    #[diesel(sql_type = Nullable<Array<Text>>)]
    member_servers: Option<Vec<String>>,
    /// The maker's key, when the maker is a key not disabled.
    #[diesel(sql_type = Nullable<Array<Text>>)]
    key_permissions: Option<Vec<String>>,
    #[diesel(sql_type = Nullable<Text>)]
    key_server: Option<String>,
    #[diesel(sql_type = Nullable<Array<Text>>)]
    key_servers: Option<Vec<String>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    key_expires: Option<DateTime<Utc>>,
}

impl WatchRow {
    /// What the rule's maker reads now (`None`: nothing, or no maker known).
    fn reach(&self) -> Option<MakerReach> {
        if let Some(role) = &self.member_role {
            let role: auth_core::roles::Role = role.parse().ok()?;
            let servers = ServerScope::from_stored(self.member_servers.clone());
            return MakerReach::of(&role.permissions(), servers, None);
        }
        let permissions = PermissionSet::from_names(self.key_permissions.as_ref()?).ok()?;
        let servers = match &self.key_server {
            Some(bound) => ServerScope::Only(vec![ServerId::new(bound.as_str())]),
            None => ServerScope::from_stored(self.key_servers.clone()),
        };
        MakerReach::of(&permissions, servers, self.key_expires)
    }
}

impl RuleCache {
    /// The rules in force for this transaction.
    pub async fn current(&self, conn: &mut AsyncPgConnection) -> QueryResult<Arc<Vec<ActiveRule>>> {
        let v: Version = diesel::sql_query("SELECT v FROM alert_rules_version")
            .get_result(conn)
            .await?;
        if let Some((at, rules)) = &*self.loaded.lock().unwrap_or_else(|e| e.into_inner()) {
            if *at == v.v {
                return Ok(Arc::clone(rules));
            }
        }
        let rows: Vec<WatchRow> = diesel::sql_query(format!(
            "SELECT {RULE_COLUMNS}, s.server_ids, s.search, \
               m.role AS member_role, m.servers AS member_servers, \
               k.permissions AS key_permissions, k.server_id AS key_server, \
               k.servers AS key_servers, k.expires_at AS key_expires \
             FROM alert_rules r JOIN saved_searches s ON s.id = r.saved_search_id \
             LEFT JOIN memberships m ON r.maker_kind = 'member' AND m.org_id = r.org_id \
               AND m.member_id = r.maker_id \
             LEFT JOIN api_keys k ON r.maker_kind = 'key' AND k.org_id = r.org_id \
               AND k.id = r.maker_id AND k.disabled_at IS NULL \
             ORDER BY r.id"
        ))
        .load(conn)
        .await?;
        let rules: Vec<ActiveRule> = rows
            .into_iter()
            .filter_map(|row| {
                let reach = row.reach();
                let rule = AlertRule::from(row.rule);
                // a saved search that no longer validates (a filter retired since) watches
                // nothing rather than everything
                let filters = match parse_filters(&row.search) {
                    Ok(f) => f,
                    Err(e) => {
                        tracing::warn!(rule = %rule.id, error = %e, "alert rule's saved search does not validate; rule skipped");
                        return None;
                    }
                };
                Some(ActiveRule {
                    trigger: rule.spec.trigger,
                    group_by: rule.spec.group_by,
                    id: rule.id,
                    org_id: rule.org_id,
                    name: rule.spec.name,
                    saved_search_id: rule.spec.saved_search_id,
                    servers: match row.server_ids {
                        None => SavedServers::All,
                        Some(ids) => {
                            SavedServers::Named(ids.into_iter().map(ServerId::new).collect())
                        }
                    },
                    reach,
                    filters,
                    muted_until: rule.muted_until,
                })
            })
            .collect();
        let rules = Arc::new(rules);
        *self.loaded.lock().unwrap_or_else(|e| e.into_inner()) = Some((v.v, Arc::clone(&rules)));
        Ok(rules)
    }
}
