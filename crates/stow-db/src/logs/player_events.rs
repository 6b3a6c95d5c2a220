//! One player's events over many servers in one statement
//! ([`LogStore::player_events`](logs_core::LogStore::player_events)), for the player view.
//!
//! An identifier (`license:…`) is found through the organization's identity index (migration
//! 30): one JSON path of three terms per daily partition, whatever the number of servers. A
//! player id (`12`) is found through the `log_people` tokens, which name their server: the
//! tokens of every server go in one `&&` array, so each partition's index is scanned once for
//! all of them.

use auth_core::StoreError;
use diesel::sql_types::{Array, BigInt, Text, Timestamptz};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use logs_core::criteria::PlayerMatch;
use logs_core::store::{EventRow, OrgId, PlayerEventsQuery, ServerId};
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
    let (after_time, after_id) = q.after.unwrap_or((q.to, i64::MAX));
    let identity = identity_path(&q.org, &q.player);
    let matches = if identity.is_some() {
        "log_org_identity(org_id, player_id, target_player_id, player_identifiers, \
         target_player_identifiers) @@ CAST($7 AS jsonpath)"
    } else {
        "log_people(server_id, player_id, target_player_id) && $7"
    };
    let query = diesel::sql_query(format!(
        "SELECT {COLUMNS} FROM log_events WHERE server_id = ANY($1) \
         AND occurred_at >= $2 AND occurred_at < $3 AND (occurred_at, id) < ($4, $5) \
         AND {matches} ORDER BY occurred_at DESC, id DESC LIMIT $6"
    ))
    .into_boxed()
    .bind::<Array<Text>, _>(servers)
    .bind::<Timestamptz, _>(q.from)
    .bind::<Timestamptz, _>(q.to)
    .bind::<Timestamptz, _>(after_time)
    .bind::<BigInt, _>(after_id)
    .bind::<BigInt, _>(q.limit as i64);
    let query = match identity {
        Some(path) => query.bind::<Text, _>(path),
        None => query.bind::<Array<Text>, _>(people_tokens(&q.servers, &q.player)),
    };
    // one backend: with a player id the plan names hundreds of tokens, and starting parallel
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

/// For an identifier `kind:value`: a JSON path over `log_org_identity(…)` (migration 30) that
/// holds when, on either side of an event of the organization, the identifier of that kind is the
/// text as written or its value without the kind, or the player id is the whole text (the
/// element under the empty key). Every name and value is a JSON string literal, which is a valid
/// JSON path string literal, so no text is read as path syntax.
fn identity_path(org: &OrgId, p: &PlayerMatch) -> Option<String> {
    let (kind, rest) = p.identifier.as_ref()?;
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    let (org, kind, whole) = (quote(org.as_str()), quote(kind), quote(&p.id));
    Some(format!(
        "$.{org}[*].{kind} == {whole} || $.{org}[*].{kind} == {} || $.{org}[*].\"\" == {whole}",
        quote(rest)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_quotes_every_name_and_value() {
        let p = PlayerMatch::parse("player", "discord:1\" || $.x == \"y").unwrap();
        assert_eq!(
            identity_path(&OrgId::from("org\"a"), &p).unwrap(),
            r#"$."org\"a"[*]."discord" == "discord:1\" || $.x == \"y" || $."org\"a"[*]."discord" == "1\" || $.x == \"y" || $."org\"a"[*]."" == "discord:1\" || $.x == \"y""#
        );
        assert_eq!(
            identity_path(
                &OrgId::from("org_a"),
                &PlayerMatch::parse("player", "12").unwrap()
            ),
            None,
            "a player id has no identifier"
        );
        assert_eq!(
            people_tokens(&[ServerId::from("srv_a")], &p)[0],
            "p:srv_a:discord:1\" || $.x == \"y"
        );
    }
}
