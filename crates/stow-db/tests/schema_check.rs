//! One answer for the schema (docs/decisions/017): the migrations are the truth. `schema.rs`
//! (diesel's typed tables) must say what the migrated database says, column for column, and every
//! table a raw statement in this crate names must exist there. Both are checked against a
//! database built from `migrations/`, so a migration that drops or renames what the code uses, or
//! a `schema.rs` edited by hand away from it, fails here and not in production.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use diesel::sql_types::Text;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use stow_db::testing;

#[derive(QueryableByName, Debug)]
struct Column {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Text)]
    udt_name: String,
    #[diesel(sql_type = Text)]
    is_nullable: String,
}

#[derive(QueryableByName)]
struct Relation {
    #[diesel(sql_type = Text)]
    name: String,
}

/// `table → column → (Postgres type, nullable)` as `schema.rs` declares them.
type Declared = BTreeMap<String, BTreeMap<String, (String, bool)>>;

/// The Postgres type name (`udt_name`) of a diesel SQL type; `None` for one this check does not
/// know (the test then names it).
fn udt(diesel: &str) -> Option<&'static str> {
    Some(match diesel {
        "Text" => "text",
        "Int4" | "Integer" => "int4",
        "Int8" | "BigInt" => "int8",
        "Int2" | "SmallInt" => "int2",
        "Bool" => "bool",
        "Bytea" => "bytea",
        "Date" => "date",
        "Timestamptz" => "timestamptz",
        "Jsonb" => "jsonb",
        "Array<Text>" => "_text",
        _ => return None,
    })
}

/// The `diesel::table!` blocks of `schema.rs`.
fn declared(schema: &str) -> Declared {
    let mut tables = Declared::new();
    let mut current: Option<String> = None;
    for line in schema.lines().map(str::trim) {
        if let Some((name, rest)) = line.split_once(" (") {
            if rest.ends_with(") {") && !name.contains(' ') && !name.contains('!') {
                current = Some(name.to_owned());
                tables.entry(name.to_owned()).or_default();
                continue;
            }
        }
        if line == "}" {
            current = None;
            continue;
        }
        let (Some(table), Some((column, ty))) = (&current, line.split_once(" -> ")) else {
            continue;
        };
        let ty = ty.trim_end_matches(',');
        let (ty, nullable) = match ty.strip_prefix("Nullable<") {
            Some(inner) => (&inner[..inner.len() - 1], true),
            None => (ty, false),
        };
        let pg = udt(ty).unwrap_or_else(|| panic!("schema.rs {table}.{column}: type {ty}?"));
        tables
            .get_mut(table)
            .expect("the table's block")
            .insert(column.to_owned(), (pg.to_owned(), nullable));
    }
    tables
}

async fn migrated() -> AsyncPgConnection {
    let url = testing::fresh_database().await.expect("fresh database");
    AsyncPgConnection::establish(&url).await.expect("connect")
}

#[tokio::test]
async fn schema_rs_says_what_the_migrations_made() {
    let schema = include_str!("../src/schema.rs");
    let declared = declared(schema);
    assert!(declared.len() >= 20, "schema.rs read: {declared:?}");
    let mut conn = migrated().await;
    let columns: Vec<Column> = diesel::sql_query(
        "SELECT table_name::text, column_name::text, udt_name::text, is_nullable::text \
         FROM information_schema.columns WHERE table_schema = 'public'",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let mut made: Declared = BTreeMap::new();
    for c in columns {
        made.entry(c.table_name)
            .or_default()
            .insert(c.column_name, (c.udt_name, c.is_nullable == "YES"));
    }
    let mut wrong = Vec::new();
    for (table, columns) in &declared {
        match made.get(table) {
            None => wrong.push(format!("{table}: no such table in the migrations")),
            Some(real) if real != columns => {
                for (name, want) in columns {
                    match real.get(name) {
                        Some(got) if got == want => {}
                        got => wrong.push(format!(
                            "{table}.{name}: schema.rs says {want:?}, the migrations {got:?}"
                        )),
                    }
                }
                for name in real.keys().filter(|n| !columns.contains_key(*n)) {
                    wrong.push(format!(
                        "{table}.{name}: in the migrations, not in schema.rs"
                    ));
                }
            }
            Some(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "schema.rs is not the migrations:\n{}",
        wrong.join("\n")
    );
}

/// Identifiers and single punctuation marks, in order.
fn tokens(source: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in source.char_indices() {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(&source[s..i]);
                start = None;
            }
            _ => {}
        }
        if !word && !c.is_whitespace() {
            out.push(&source[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        out.push(&source[s..]);
    }
    // an end mark, so a name at the very end has a token after it like any other
    out.push(";");
    out
}

/// The tables the SQL in `source` names: the lower-case name after `FROM`, `JOIN`, `INTO`,
/// `UPDATE` or `TABLE` (keywords are upper case in this crate), unless it is a function
/// (`unnest(`), a column (`c.at`, `IS DISTINCT FROM player_id`), a name a statement defines
/// (`WITH recent AS (`, `RECURSIVE walk (`, `CREATE TEMP TABLE stray`) or a placeholder
/// (`{table}`).
fn tables_named(source: &str) -> BTreeSet<String> {
    let t = tokens(source);
    let mut defined: BTreeSet<&str> = BTreeSet::new();
    for w in t.windows(3) {
        if w[1] == "AS" && matches!(w[2], "(" | "MATERIALIZED" | "NOT") {
            defined.insert(w[0]);
        }
        if matches!(w[0], "RECURSIVE" | "TEMP" | "TEMPORARY") {
            defined.insert(if w[1] == "TABLE" { w[2] } else { w[1] });
        }
    }
    t.windows(4)
        .filter(|w| matches!(w[1], "FROM" | "JOIN" | "INTO" | "UPDATE" | "TABLE"))
        .filter(|w| w[0] != "DISTINCT")
        .filter(|w| {
            let name = w[2];
            name.starts_with(|c: char| c.is_ascii_lowercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && !matches!(w[3], "(" | ".")
                && !defined.contains(name)
        })
        .map(|w| w[2].to_owned())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[tokio::test]
async fn every_table_a_raw_statement_names_is_in_the_migrations() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut named: BTreeMap<String, String> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for table in tables_named(&text) {
            named
                .entry(table)
                .or_insert_with(|| file.display().to_string());
        }
    }
    assert!(
        named.contains_key("alert_deliveries"),
        "raw SQL read: {named:?}"
    );
    let mut conn = migrated().await;
    // tables (plain and partitioned), views, and the catalogs a statement may read
    let known: BTreeSet<String> = diesel::sql_query(
        "SELECT relname::text AS name FROM pg_class WHERE relkind IN ('r', 'p', 'v', 'm') \
         AND relnamespace IN ('public'::regnamespace, 'pg_catalog'::regnamespace) \
         UNION SELECT table_name::text FROM information_schema.tables",
    )
    .load::<Relation>(&mut conn)
    .await
    .unwrap()
    .into_iter()
    .map(|r| r.name)
    .collect();
    let missing: Vec<String> = named
        .iter()
        .filter(|(t, _)| !known.contains(*t))
        .map(|(t, file)| format!("{t} (named in {file})"))
        .collect();
    assert!(
        missing.is_empty(),
        "raw SQL names tables the migrations do not make:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_table_reader_skips_functions_definitions_and_placeholders() {
    let sql = r#"WITH recent AS (SELECT 1 FROM log_events e JOIN servers s ON true)
        SELECT * FROM recent, unnest($1) ; DELETE FROM {table} ; INSERT INTO audit_events
        VALUES (1) ON CONFLICT DO UPDATE SET x = 1; UPDATE alert_rules SET; "copied from the docs"
        WITH s AS MATERIALIZED (SELECT 1) SELECT * FROM s; WITH RECURSIVE walk (k) AS (
        SELECT k FROM walk) ; CREATE TEMP TABLE stray (LIKE log_events); INSERT INTO stray
        WHERE a IS DISTINCT FROM player_id AND EXTRACT(EPOCH FROM c.at) > 0 FROM plans;"#;
    let named: Vec<String> = tables_named(sql).into_iter().collect();
    assert_eq!(
        named,
        [
            "alert_rules",
            "audit_events",
            "log_events",
            "plans",
            "servers"
        ]
    );
}
