//! One player's events over many servers in one statement
//! ([`LogStore::player_events`](logs_core::LogStore::player_events)), for the player view.
//!
//! A search of one server names its server in every index term (the `log_people` tokens and the
//! `log_identity` keys are prefixed by it), so reading 100 servers as 100 searches ran 100
//! statements of one index scan each per partition. Here each index is scanned once per
//! partition for all the servers: the people tokens of every server in one `&&` array, and the
//! identity keys of every server in one `@@` JSON path whose `||` terms the `jsonb_path_ops`
//! index turns into one scan of many keys.

use auth_core::StoreError;
use diesel::sql_types::{Array, BigInt, Text, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use logs_core::criteria::PlayerMatch;
use logs_core::store::{EventRow, PlayerEventsQuery, ServerId};
use serde_json::Value;

use super::event_row::{Row, COLUMNS};
use crate::{db_error, Conn};

pub async fn player_events(
    conn: &mut Conn,
    q: &PlayerEventsQuery,
) -> Result<Vec<EventRow>, StoreError> {
    if q.servers.is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let servers: Vec<String> = q.servers.iter().map(|s| s.to_string()).collect();
    let identity = identity_path(&q.servers, &q.player);
    let (after_time, after_id) = q.after.unwrap_or((q.to, i64::MAX));
    let mut sql = format!(
        "SELECT {COLUMNS} FROM log_events WHERE server_id = ANY($1) \
         AND occurred_at >= $2 AND occurred_at < $3 AND (occurred_at, id) < ($4, $5) \
         AND (log_people(server_id, player_id, target_player_id) && $6"
    );
    if identity.is_some() {
        // the path as a sub-select: the planner sees a parameter, not a constant, so it does not
        // evaluate a path of hundreds of terms against each partition's statistics to estimate
        // it (most of the planning time); the index scans still use it
        sql.push_str(
            " OR log_identity(server_id, player_identifiers) @@ (SELECT CAST($8 AS jsonpath)) \
             OR log_identity(server_id, target_player_identifiers) @@ (SELECT CAST($8 AS jsonpath))",
        );
    }
    sql.push_str(") ORDER BY occurred_at DESC, id DESC LIMIT $7");
    let query = diesel::sql_query(sql)
        .into_boxed()
        .bind::<Array<Text>, _>(servers)
        .bind::<Timestamptz, _>(q.from)
        .bind::<Timestamptz, _>(q.to)
        .bind::<Timestamptz, _>(after_time)
        .bind::<BigInt, _>(after_id)
        .bind::<Array<Text>, _>(people_tokens(&q.servers, &q.player))
        .bind::<BigInt, _>(q.limit as i64);
    let query = match identity {
        Some(path) => query.bind::<Text, _>(path),
        None => query,
    };
    // one backend: the plan names hundreds of tokens and path terms, and starting parallel
    // workers with it cost more than the scans they would share
    let rows: Vec<Row> = conn
        .transaction::<_, diesel::result::Error, _>(|conn| {
            async move {
                diesel::sql_query("SET LOCAL max_parallel_workers_per_gather = 0")
                    .execute(conn)
                    .await?;
                query.load(conn).await
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// The `log_people` tokens (migration 13) of the player as actor and as target on each server.
fn people_tokens(servers: &[ServerId], p: &PlayerMatch) -> Vec<String> {
    servers
        .iter()
        .flat_map(|s| [format!("p:{s}:{}", p.id), format!("t:{s}:{}", p.id)])
        .collect()
}

/// For an identifier `kind:value`: a JSON path over `log_identity(server, identifiers)`
/// (migration 5) that holds when, on any of the servers, the identifier of that kind is the
/// text as written or its value without the kind — what `@>` of each server's key matches.
/// Every name and value is a JSON string literal, which is a valid JSON path string literal, so
/// no text is read as path syntax.
fn identity_path(servers: &[ServerId], p: &PlayerMatch) -> Option<String> {
    let (kind, rest) = p.identifier.as_ref()?;
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    let kind = quote(kind);
    let values = [quote(&p.id), quote(rest)];
    let terms: Vec<String> = servers
        .iter()
        .flat_map(|s| {
            let server = quote(s.as_str());
            values
                .iter()
                .map(|v| format!("$.{server}.{kind} == {v}"))
                .collect::<Vec<_>>()
        })
        .collect();
    Some(terms.join(" || "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_quotes_every_name_and_value() {
        let p = PlayerMatch::parse("player", "discord:1\" || $.x == \"y").unwrap();
        let servers = [ServerId::from("srv_a"), ServerId::from("srv\"b")];
        assert_eq!(
            identity_path(&servers, &p).unwrap(),
            r#"$."srv_a"."discord" == "discord:1\" || $.x == \"y" || $."srv_a"."discord" == "1\" || $.x == \"y" || $."srv\"b"."discord" == "discord:1\" || $.x == \"y" || $."srv\"b"."discord" == "1\" || $.x == \"y""#
        );
        assert_eq!(
            identity_path(&servers, &PlayerMatch::parse("player", "12").unwrap()),
            None,
            "a player id has no identifier"
        );
        assert_eq!(
            people_tokens(&servers[..1], &p)[0],
            "p:srv_a:discord:1\" || $.x == \"y"
        );
    }
}
