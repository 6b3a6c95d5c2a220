//! `stowctl migrate`, `usage`, `gc` and `logs maintain`: the database and the store over time.

use auth_core::OrgId;
use cdn_core::store::ObjectRecordStore;
use futures::StreamExt;
use serde_json::{json, Value};
use stow_db::{Db, PgObjectRecords};

use crate::cli::*;
use crate::{CliError, Ctx};

pub(crate) async fn migrate(ctx: &Ctx) -> Result<(Value, String), CliError> {
    let applied = stow_db::migrate::run(&ctx.database_url).await?;
    let human = if applied.is_empty() {
        "database is up to date".to_owned()
    } else {
        format!(
            "applied {} migration(s): {}",
            applied.len(),
            applied.join(", ")
        )
    };
    Ok((json!({ "applied": applied }), human))
}

pub(crate) async fn usage(ctx: &Ctx, org: OrgId) -> Result<(Value, String), CliError> {
    use cdn_core::store::ObjectRecordStore;
    use logs_core::LogStore;
    ctx.org(&org).await?;
    let now = chrono::Utc::now();
    let month = now.format("%Y-%m").to_string();
    let log_events = stow_db::logs::PgLogs::new(ctx.db.clone())
        .monthly_usage(&org, now)
        .await?;
    let stored = stow_db::PgObjectRecords::new(ctx.db.clone())
        .totals(&org)
        .await?;
    Ok((
        json!({ "orgId": org, "month": month, "logEvents": log_events, "objects": stored.objects, "storageBytes": stored.bytes }),
        format!(
            "{month}: {}, {}, {} stored",
            crate::table::counted(log_events, "log event", "log events"),
            crate::table::counted(stored.objects, "object", "objects"),
            crate::table::counted(stored.bytes, "byte", "bytes")
        ),
    ))
}

pub(crate) async fn gc_command(
    ctx: &Ctx,
    object_store_url: Option<String>,
    min_age_secs: i64,
) -> Result<(Value, String), CliError> {
    let url = object_store_url.ok_or_else(|| {
        CliError(
            "gc needs the services' object store: set OBJECT_STORE_URL or pass --object-store-url"
                .into(),
        )
    })?;
    // a store that is not there would be scanned as empty ("0 removed") and, for a directory,
    // created: refuse it instead, it is a wrong URL
    let objects = stow_objects::Objects::from_existing_url(&url).map_err(|e| {
        CliError(format!(
            "{e}; check OBJECT_STORE_URL (gc must see the store the services use)"
        ))
    })?;
    let (scanned, removed) = gc(&ctx.db, &objects, chrono::Duration::seconds(min_age_secs)).await?;
    Ok((
        json!({ "scanned": scanned, "removed": removed }),
        format!("scanned {scanned} stored objects, removed {removed} unreferenced"),
    ))
}

pub(crate) async fn logs(ctx: &Ctx, cmd: LogsCmd) -> Result<(Value, String), CliError> {
    match cmd {
        LogsCmd::Maintain => {
            let r = stow_db::logs::maintain_partitions(&ctx.db).await?;
            Ok((
                json!({ "created": r.created, "dropped": r.dropped, "vacuumed": r.vacuumed, "movedFromDefault": r.moved_from_default, "batchesPruned": r.batches_pruned, "auditPruned": r.audit_pruned, "failed": r.failed }),
                format!(
                    "partitions: {} created, {} dropped, {} vacuumed, {} failed; {} events moved out of the default partition; {} expired batch ids forgotten; {} audit entries past retention deleted",
                    r.created.len(),
                    r.dropped.len(),
                    r.vacuumed.len(),
                    r.failed.len(),
                    r.moved_from_default,
                    r.batches_pruned,
                    r.audit_pruned
                ),
            ))
        }
    }
}

/// The storage location whose bytes a stored location belongs to (itself for an object's bytes).
type OriginalOf = fn(&str) -> Option<&str>;

/// Deletes stored bytes older than `min_age` that no row references, and the kept renditions
/// of such bytes. Returns (scanned, removed).
pub async fn gc(
    db: &Db,
    objects: &stow_objects::Objects,
    min_age: chrono::Duration,
) -> Result<(u64, u64), CliError> {
    let repo = PgObjectRecords::new(db.clone());
    let cutoff = chrono::Utc::now() - min_age;
    let (mut scanned, mut removed) = (0u64, 0u64);
    // an object's bytes are their own original; renditions are kept at
    // `renditions/<original's location>/<name>` and go with it
    let originals: [(&str, OriginalOf); 2] = [
        ("o", |location| Some(location)),
        ("renditions", |location| {
            location
                .strip_prefix("renditions/")
                .and_then(|rest| rest.rsplit_once('/'))
                .map(|(original, _)| original)
        }),
    ];
    for (prefix, original_of) in originals {
        let mut listing = objects.list(prefix);
        while let Some(item) = listing.next().await {
            let (location, modified) = item.map_err(|e| CliError(e.to_string()))?;
            scanned += 1;
            let Some(original) = original_of(&location) else {
                continue;
            };
            if modified > cutoff || repo.is_referenced(original).await? {
                continue;
            }
            objects
                .delete(&stow_objects::ObjectPath::from(location.as_str()))
                .await
                .map_err(|e| CliError(e.to_string()))?;
            removed += 1;
        }
    }
    Ok((scanned, removed))
}
