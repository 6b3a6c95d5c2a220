//! The folder view on Postgres: a loose index scan over the `(org_id, key)` primary key. Each
//! step of a recursive query finds the next key after the previous entry with one index probe;
//! after a key inside a sub-folder it jumps past the whole sub-folder (`'0'` follows `'/'` in
//! the "C" collation of `key`). A page of N entries costs N probes, whether a sub-folder holds
//! one object or a million, and one more query reads the rows of the page's objects.

use cdn_core::folder::{self, FolderEntry, FolderQuery, Slot};
use cdn_core::store::ObjectRecord;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::records::ObjectRow;
use crate::schema::objects;

#[derive(QueryableByName)]
struct Step {
    #[diesel(sql_type = Text)]
    k: String,
}

/// The recursive walk; `{upper}` bounds it to the folder (absent at the root).
const WALK: &str = r#"
WITH RECURSIVE walk(k, n) AS (
    (SELECT key, 1 FROM objects
      WHERE org_id = $1 AND key >= $2 AND key > $3 {upper}
      ORDER BY key LIMIT 1)
  UNION ALL
    SELECT (SELECT o.key FROM objects o
             WHERE o.org_id = $1 {upper_o} AND o.key > w.k
               AND o.key >= (CASE WHEN strpos(substr(w.k, $5), '/') > 0
                                  THEN $6 || split_part(substr(w.k, $5), '/', 1) || '0'
                                  ELSE w.k END) COLLATE "C"
             ORDER BY o.key LIMIT 1),
           w.n + 1
      FROM walk w
     WHERE w.k IS NOT NULL AND w.n < $7
)
SELECT k FROM walk WHERE k IS NOT NULL"#;

/// Up to `steps` keys, one per entry, from `(bound, inclusive)` on.
async fn walk(
    conn: &mut AsyncPgConnection,
    org_id: &str,
    folder: &str,
    (bound, inclusive): (&str, bool),
    steps: i64,
) -> QueryResult<Vec<String>> {
    let prefix = if folder.is_empty() {
        String::new()
    } else {
        format!("{folder}/")
    };
    let (lower, greater) = if inclusive {
        (bound.max(prefix.as_str()).to_owned(), String::new())
    } else {
        (prefix.clone(), bound.to_owned())
    };
    let (upper, upper_o) = if folder.is_empty() {
        ("AND $4 = $4", "AND $4 = $4")
    } else {
        ("AND key < $4", "AND o.key < $4")
    };
    let sql = WALK.replace("{upper}", upper).replace("{upper_o}", upper_o);
    let position = prefix.chars().count() as i32 + 1;
    let steps: Vec<Step> = diesel::sql_query(sql)
        .bind::<Text, _>(org_id)
        .bind::<Text, _>(&lower)
        .bind::<Text, _>(&greater)
        .bind::<Text, _>(format!("{folder}0"))
        .bind::<Integer, _>(position)
        .bind::<Text, _>(&prefix)
        .bind::<BigInt, _>(steps)
        .load(conn)
        .await?;
    Ok(steps.into_iter().map(|s| s.k).collect())
}

/// One page of the folder view (see [`cdn_core::store::ObjectRecordStore::list_folder`]).
pub(super) async fn list_folder(
    conn: &mut AsyncPgConnection,
    org_id: &str,
    q: &FolderQuery,
) -> QueryResult<Vec<FolderEntry>> {
    // the entries, as (object key) or (folder path), hidden and denied ones skipped
    let mut picked: Vec<(String, bool)> = Vec::new();
    let mut resume = q
        .after
        .as_deref()
        .map(folder::resume_bound)
        .unwrap_or_default();
    let steps = q.limit as i64 + 1;
    while picked.len() < q.limit {
        let keys = walk(conn, org_id, &q.folder, (&resume.0, resume.1), steps).await?;
        let exhausted = (keys.len() as i64) < steps;
        for key in &keys {
            let (path, is_folder) = match folder::slot(&q.folder, key) {
                Some(Slot::Object) => (key.as_str(), false),
                Some(Slot::Folder(path)) => (path, true),
                None => continue,
            };
            resume = if is_folder {
                folder::resume_bound(&format!("{path}/"))
            } else {
                (key.clone(), false)
            };
            let hidden = folder::hidden_entry(&q.folder, path)
                || q.denied.iter().any(|d| auth_core::prefix_matches(d, path));
            if !hidden && picked.len() < q.limit {
                picked.push((path.to_owned(), is_folder));
            }
        }
        if exhausted {
            break;
        }
    }
    let object_keys: Vec<&str> = picked
        .iter()
        .filter(|(_, is_folder)| !is_folder)
        .map(|(k, _)| k.as_str())
        .collect();
    let mut rows: std::collections::HashMap<cdn_core::ObjectKey, ObjectRecord> = objects::table
        .filter(objects::org_id.eq(org_id))
        .filter(objects::key.eq_any(&object_keys))
        .select(ObjectRow::as_select())
        .load::<ObjectRow>(conn)
        .await?
        .into_iter()
        .map(|r| {
            let r: ObjectRecord = r.into();
            (r.key.clone(), r)
        })
        .collect();
    Ok(picked
        .into_iter()
        .filter_map(|(path, is_folder)| {
            if is_folder {
                Some(FolderEntry::Folder(path))
            } else {
                // a row deleted between the walk and this read is left out
                rows.remove(path.as_str()).map(FolderEntry::Object)
            }
        })
        .collect())
}
