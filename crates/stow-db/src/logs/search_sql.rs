//! The SQL of a log search, written once for every read (pages, counts, facets): the window and
//! filters of [`logs_core::store::Filters`] as `WHERE` conditions with their binds.
//!
//! Written as SQL text rather than diesel's DSL because counts and facets need what the DSL
//! does not build (`date_bin`, a CTE, `UNION ALL`); the binds still go through diesel.

use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Array, BigInt, Jsonb, Text, Timestamptz};
use logs_core::criteria::{DataCondition, DataOp, PlayerMatch, TypeMatch};
use logs_core::plan::Bounds;
use logs_core::store::{Filters, Owner, ServerId};
use serde_json::Value;

enum Bind {
    Text(String),
    Texts(Vec<String>),
    Time(DateTime<Utc>),
    Json(Value),
    BigInt(i64),
}

/// SQL text and its binds, `$1…` in order.
#[derive(Default)]
pub struct Sql {
    text: String,
    binds: Vec<Bind>,
}

/// Escapes `\`, `%` and `_` so user text matches literally inside LIKE.
pub fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Sql {
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            binds: Vec::new(),
        }
    }

    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    fn bind(&mut self, b: Bind) -> &mut Self {
        self.binds.push(b);
        self.text.push_str(&format!("${}", self.binds.len()));
        self
    }

    pub fn text(&mut self, s: impl Into<String>) -> &mut Self {
        self.bind(Bind::Text(s.into()))
    }

    pub fn time(&mut self, t: DateTime<Utc>) -> &mut Self {
        self.bind(Bind::Time(t))
    }

    pub fn texts(&mut self, v: Vec<String>) -> &mut Self {
        self.bind(Bind::Texts(v))
    }

    pub fn bigint(&mut self, n: i64) -> &mut Self {
        self.bind(Bind::BigInt(n))
    }

    /// The statement, for tests.
    #[cfg(test)]
    pub fn sql(&self) -> &str {
        &self.text
    }

    pub fn into_query(self) -> BoxedSqlQuery<'static, Pg, SqlQuery> {
        let mut q = diesel::sql_query(self.text).into_boxed::<Pg>();
        for b in self.binds {
            q = match b {
                Bind::Text(s) => q.bind::<Text, _>(s),
                Bind::Texts(v) => q.bind::<Array<Text>, _>(v),
                Bind::Time(t) => q.bind::<Timestamptz, _>(t),
                Bind::Json(v) => q.bind::<Jsonb, _>(v),
                Bind::BigInt(n) => q.bind::<BigInt, _>(n),
            };
        }
        q
    }

    /// `AND` the filters on a level, an event type and a resource: the columns `log_events` and
    /// `log_counts_hourly` share.
    pub fn facet_filters(&mut self, f: &Filters) -> &mut Self {
        match f.levels.as_deref() {
            None => {}
            // one level: an equality the `server_level` index serves in order
            Some([one]) => {
                self.push(" AND level = ").text(one.as_str());
            }
            Some(many) => {
                self.push(" AND level = ANY(")
                    .texts(many.iter().map(|l| l.as_str().to_owned()).collect())
                    .push(")");
            }
        }
        if let Some(t) = &f.event_type {
            match t {
                TypeMatch::Exact(t) => self.push(" AND event_type = ").text(t.clone()),
                TypeMatch::Prefix(p) => self
                    .push(" AND starts_with(event_type, ")
                    .text(p.clone())
                    .push(")"),
            };
        }
        if let Some(r) = &f.resource {
            self.push(" AND resource = ").text(r.clone());
        }
        let (exact, prefixes): (Vec<_>, Vec<_>) = f
            .exclude
            .event_types
            .iter()
            .partition(|t| matches!(t, TypeMatch::Exact(_)));
        if !exact.is_empty() {
            self.push(" AND event_type <> ALL(")
                .texts(exact.iter().map(|t| t.as_written()).collect())
                .push(")");
        }
        for p in prefixes {
            if let TypeMatch::Prefix(p) = p {
                self.push(" AND NOT starts_with(event_type, ")
                    .text(p.clone())
                    .push(")");
            }
        }
        if !f.exclude.resources.is_empty() {
            // an event without a resource is not excluded by any
            self.push(" AND NOT coalesce(resource = ANY(")
                .texts(f.exclude.resources.clone())
                .push("), false)");
        }
        self
    }

    /// Whether the event's player or target is `p`, by id (the `log_people` tokens) or by an
    /// identifier written whole or without its kind (the `log_identity` indexes); each term is
    /// one an index serves, so the `OR` is a bitmap union.
    fn player(&mut self, server: &ServerId, p: &PlayerMatch) -> &mut Self {
        self.push("(log_people(server_id, player_id, target_player_id) && ")
            .texts(vec![
                format!("p:{}:{}", server.as_str(), p.id),
                format!("t:{}:{}", server.as_str(), p.id),
            ]);
        if let Some((kind, rest)) = &p.identifier {
            for column in ["player_identifiers", "target_player_identifiers"] {
                for value in [&p.id, rest] {
                    self.push(&format!(" OR log_identity(server_id, {column}) @> "))
                        .bind(Bind::Json(serde_json::json!({
                            server.to_string(): { kind.clone(): value.clone() }
                        })));
                }
            }
        }
        self.push(")")
    }

    /// `dataWhere`'s condition as a strict SQL/JSON path over `data` with the value as a
    /// variable (`$v`), so no user text is parsed as a path: keys are quoted path strings.
    /// Strict paths step through objects only; `jsonb_path_exists(…, silent => true)` answers
    /// false for a missing key or a value of another type, as [`DataCondition::matches`] does.
    fn data_condition(&mut self, c: &DataCondition) -> &mut Self {
        let mut path = String::from("strict $");
        for key in &c.path {
            path.push('.');
            // a JSON string literal is a valid SQL/JSON path string literal
            path.push_str(&Value::String(key.clone()).to_string());
        }
        path.push_str(match c.op {
            DataOp::Gt => " ? (@ > $v)",
            DataOp::Ge => " ? (@ >= $v)",
            DataOp::Lt => " ? (@ < $v)",
            DataOp::Le => " ? (@ <= $v)",
            DataOp::Prefix => " ? (@ starts with $v)",
        });
        self.push(" AND jsonb_path_exists(data, CAST(")
            .text(path)
            .push(" AS jsonpath), ")
            .bind(Bind::Json(serde_json::json!({ "v": c.value })))
            .push(", true)")
    }

    /// The search's conditions: the server and window of `bounds`, every filter, below
    /// `bounds.after` and at or above `bounds.floor` in the search's order.
    pub fn search(&mut self, bounds: Bounds<'_>, f: &Filters) -> &mut Self {
        let Bounds {
            server,
            from,
            to,
            after,
            floor,
        } = bounds;
        self.push("server_id = ")
            .text(server.to_string())
            .push(" AND occurred_at >= ")
            .time(from)
            .push(" AND occurred_at < ")
            .time(to);
        self.facet_filters(f);
        if let Some(m) = &f.message {
            self.push(" AND message ILIKE ")
                .text(format!("%{}%", like_escape(m)));
        }
        if let Some(p) = &f.player_id {
            // the player or the target, as tokens of the `log_people` index (migration 13)
            self.push(" AND log_people(server_id, player_id, target_player_id) && ")
                .texts(vec![
                    format!("p:{}:{p}", server.as_str()),
                    format!("t:{}:{p}", server.as_str()),
                ]);
        }
        if let Some(p) = &f.player {
            self.push(" AND ");
            self.player(server, p);
        }
        if let Some(i) = &f.identifier {
            // matches the `log_identity` indexes (migration 5): keyed by server and identifier
            let column = match i.owner {
                Owner::Player => " AND log_identity(server_id, player_identifiers) @> ",
                Owner::Target => " AND log_identity(server_id, target_player_identifiers) @> ",
            };
            self.push(column).bind(Bind::Json(
                serde_json::json!({ server.to_string(): { i.key.clone(): i.value.clone() } }),
            ));
        }
        if let Some(d) = &f.data {
            self.push(" AND data @> ").bind(Bind::Json(d.clone()));
        }
        for c in &f.data_where {
            self.data_condition(c);
        }
        let ex = &f.exclude;
        for p in &ex.players {
            // NULL identifiers make a term NULL: coalesce so the event is kept, not dropped
            self.push(" AND NOT coalesce(");
            self.player(server, p).push(", false)");
        }
        if let Some(m) = &ex.message {
            self.push(" AND message NOT ILIKE ")
                .text(format!("%{}%", like_escape(m)));
        }
        if let Some(d) = &ex.data {
            self.push(" AND NOT coalesce(data @> ")
                .bind(Bind::Json(d.clone()))
                .push(", false)");
        }
        if let Some((t, id)) = after {
            // `occurred_at <= t` is implied by the next condition but, unlike that `OR`, it is
            // an index condition: the scan starts at the cursor instead of at the newest event
            // and filtering its way down, and partitions newer than the cursor are pruned.
            self.push(" AND occurred_at <= ")
                .time(t)
                .push(" AND (occurred_at < ")
                .time(t)
                .push(" OR (occurred_at = ")
                .time(t)
                .push(" AND id < ")
                .bigint(id)
                .push("))");
        }
        if let Some((t, id)) = floor {
            self.push(" AND occurred_at >= ")
                .time(t)
                .push(" AND (occurred_at > ")
                .time(t)
                .push(" OR (occurred_at = ")
                .time(t)
                .push(" AND id >= ")
                .bigint(id)
                .push("))");
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logs_core::Level;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn every_filter_is_a_bound_condition() {
        let f = Filters {
            levels: Some(vec![Level::Warn, Level::Error]),
            event_type: Some(TypeMatch::Exact("chat".into())),
            resource: Some("core".into()),
            message: Some("100%".into()),
            player_id: Some("p1".into()),
            identifier: Some(logs_core::store::IdentifierFilter {
                owner: Owner::Target,
                key: "license".into(),
                value: "x".into(),
            }),
            data: Some(serde_json::json!({ "item": "x" })),
            ..Filters::default()
        };
        let (from, to) = (at("2026-11-01T00:00:00Z"), at("2026-11-02T00:00:00Z"));
        let server = ServerId::new("s");
        let window = Bounds::window(&server, (from, to));
        let mut sql = Sql::default();
        sql.search(window, &f);
        assert_eq!(
            sql.sql(),
            "server_id = $1 AND occurred_at >= $2 AND occurred_at < $3 AND level = ANY($4) \
             AND event_type = $5 AND resource = $6 AND message ILIKE $7 \
             AND log_people(server_id, player_id, target_player_id) && $8 \
             AND log_identity(server_id, target_player_identifiers) @> $9 AND data @> $10"
        );
        let mut without = Sql::default();
        without.search(window, &f.without_data());
        assert!(!without.sql().contains("data"), "{}", without.sql());
        let one = Filters {
            levels: Some(vec![Level::Warn]),
            ..Filters::default()
        };
        let mut sql = Sql::default();
        sql.search(window, &one);
        assert!(sql.sql().ends_with("AND level = $4"), "{}", sql.sql());
    }

    #[test]
    fn prefixes_players_data_conditions_and_exclusions_are_bound_conditions() {
        let f = logs_core::search::validate_filters(&logs_core::search::SearchFields {
            event_type: Some("admin.*".into()),
            player: Some("license:abc".into()),
            data_where: Some(vec![logs_core::criteria::DataConditionRequest {
                path: "to.\"acc\"".into(),
                op: DataOp::Prefix,
                value: serde_json::json!("A"),
            }]),
            exclude: Some(logs_core::criteria::ExcludeRequest {
                event_types: Some(vec!["chat".into(), "ac.*".into(), "log".into()]),
                resources: Some(vec!["phone".into()]),
                players: Some(vec!["12".into()]),
                message: Some("50%".into()),
                data: Some(serde_json::json!({ "bot": true })),
                ..Default::default()
            }),
            ..Default::default()
        })
        .unwrap();
        let server = ServerId::new("s");
        let window = Bounds::window(
            &server,
            (at("2026-11-01T00:00:00Z"), at("2026-11-02T00:00:00Z")),
        );
        let mut sql = Sql::default();
        sql.search(window, &f);
        assert_eq!(
            sql.sql(),
            "server_id = $1 AND occurred_at >= $2 AND occurred_at < $3 \
             AND starts_with(event_type, $4) AND event_type <> ALL($5) \
             AND NOT starts_with(event_type, $6) AND NOT coalesce(resource = ANY($7), false) \
             AND (log_people(server_id, player_id, target_player_id) && $8 \
             OR log_identity(server_id, player_identifiers) @> $9 \
             OR log_identity(server_id, player_identifiers) @> $10 \
             OR log_identity(server_id, target_player_identifiers) @> $11 \
             OR log_identity(server_id, target_player_identifiers) @> $12) \
             AND jsonb_path_exists(data, CAST($13 AS jsonpath), $14, true) \
             AND NOT coalesce((log_people(server_id, player_id, target_player_id) && $15), false) \
             AND message NOT ILIKE $16 AND NOT coalesce(data @> $17, false)"
        );
        let path = match &sql.binds[12] {
            Bind::Text(t) => t.clone(),
            _ => panic!("the path is text"),
        };
        assert_eq!(path, r#"strict $."to"."\"acc\"" ? (@ starts with $v)"#);
        let mut without = Sql::default();
        without.search(window, &f.without_data());
        assert!(!without.sql().contains("data"), "{}", without.sql());
    }

    /// A page after a cursor bounds `occurred_at` by a plain comparison, which Postgres uses
    /// as an index condition (and to prune partitions); the tie-breaking `OR` alone is only a
    /// filter, so every page scanned from the newest event down to its cursor.
    #[test]
    fn pages_after_a_cursor_bound_the_scan_by_an_index_condition() {
        let (from, to) = (at("2026-11-01T00:00:00Z"), at("2026-11-08T00:00:00Z"));
        let pos = (at("2026-11-05T12:00:00Z"), 7);
        let mut sql = Sql::default();
        let server = ServerId::new("s");
        let bounds = Bounds::window(&server, (from, to))
            .after(Some(pos))
            .floor(Some(pos));
        sql.search(bounds, &Filters::default());
        assert_eq!(
            sql.sql(),
            "server_id = $1 AND occurred_at >= $2 AND occurred_at < $3 \
             AND occurred_at <= $4 AND (occurred_at < $5 OR (occurred_at = $6 AND id < $7)) \
             AND occurred_at >= $8 AND (occurred_at > $9 OR (occurred_at = $10 AND id >= $11))"
        );
    }
}
