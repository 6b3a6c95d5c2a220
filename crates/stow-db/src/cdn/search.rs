//! One page of an object search ([`cdn_core::search`]) in one statement: the folder as a key
//! range, the text through the trigram index on `key || ''`, metadata values through the index on
//! `object_metadata_values(metadata)`, and the order walked by `(org_id, key)`,
//! `(org_id, updated_at, key)` or `(org_id, size, key)` from the page's start.

use auth_core::{OrgId, StoreError};
use cdn_core::search::{Position, SearchQuery, SortField};
use cdn_core::store::ObjectRecord;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::records::{visible_in, ObjectRow};
use crate::db_error;
use crate::schema::objects;

/// `text` as a LIKE pattern that matches it anywhere, its `%`, `_` and `\` literal.
fn anywhere(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

pub(super) async fn search(
    conn: &mut AsyncPgConnection,
    org_id: &OrgId,
    q: &SearchQuery,
) -> Result<Vec<ObjectRecord>, StoreError> {
    let mut query = objects::table
        .filter(objects::org_id.eq(org_id.as_str()))
        .select(ObjectRow::as_select())
        .limit(q.limit as i64)
        .into_boxed();
    query = visible_in(query, &q.folder, &q.denied);
    if let Some(text) = &q.contains {
        // the trigram index is on `key || ''` (migration 28), so that no equality on `key`
        // can be planned through it
        query = query.filter(sql::<Bool>("(key || '') ILIKE ").bind::<Text, _>(anywhere(text)));
    }
    if !q.metadata_values.is_empty() {
        query = query.filter(
            sql::<Bool>("object_metadata_values(metadata) && ")
                .bind::<Array<Text>, _>(q.metadata_values.clone()),
        );
    }
    let desc = q.sort.descending;
    query = match (&q.after, desc) {
        (None, _) => query,
        (Some(Position::Key { key }), false) => query.filter(objects::key.gt(key.clone())),
        (Some(Position::Key { key }), true) => query.filter(objects::key.lt(key.clone())),
        (Some(p @ Position::LastModified { key, .. }), _) => {
            let t = p.last_modified().unwrap_or_default();
            if desc {
                query.filter(
                    objects::updated_at
                        .lt(t)
                        .or(objects::updated_at.eq(t).and(objects::key.lt(key.clone()))),
                )
            } else {
                query.filter(
                    objects::updated_at
                        .gt(t)
                        .or(objects::updated_at.eq(t).and(objects::key.gt(key.clone()))),
                )
            }
        }
        (Some(Position::Size { size, key }), _) => {
            if desc {
                query.filter(
                    objects::size
                        .lt(*size)
                        .or(objects::size.eq(*size).and(objects::key.lt(key.clone()))),
                )
            } else {
                query.filter(
                    objects::size
                        .gt(*size)
                        .or(objects::size.eq(*size).and(objects::key.gt(key.clone()))),
                )
            }
        }
    };
    query = match (q.sort.field, desc) {
        (SortField::Key, false) => query.order(objects::key.asc()),
        (SortField::Key, true) => query.order(objects::key.desc()),
        (SortField::LastModified, false) => {
            query.order((objects::updated_at.asc(), objects::key.asc()))
        }
        (SortField::LastModified, true) => {
            query.order((objects::updated_at.desc(), objects::key.desc()))
        }
        (SortField::Size, false) => query.order((objects::size.asc(), objects::key.asc())),
        (SortField::Size, true) => query.order((objects::size.desc(), objects::key.desc())),
    };
    let rows: Vec<ObjectRow> = query.load(conn).await.map_err(db_error)?;
    Ok(rows.into_iter().map(Into::into).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_text_is_found_anywhere_with_its_wildcards_literal() {
        assert_eq!(super::anywhere("jay"), "%jay%");
        assert_eq!(super::anywhere("100%_a\\b"), "%100\\%\\_a\\\\b%");
    }
}
