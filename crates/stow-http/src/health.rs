//! `GET /healthz` (process up) and `GET /readyz` (database and object store reachable; degraded
//! while the object store is out of space).

use actix_web::{web, HttpResponse};
use serde_json::json;

use stow_db::Db;
use stow_objects::Objects;

/// What `/readyz` probes.
#[derive(Clone)]
pub struct Readiness {
    pub db: Db,
    pub objects: Option<Objects>,
    /// Conditions the host sets itself (e.g. `logPartitions` once the day's partitions exist):
    /// not ready while one is false.
    pub gates: Vec<(&'static str, tokio::sync::watch::Receiver<bool>)>,
}

#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "The process is up")))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

#[utoipa::path(
    get,
    path = "/readyz",
    tag = "health",
    responses(
        (status = 200, description = "Database and object store reachable (`status` is `degraded`, `checks.objectStore` `out_of_space`, while the store refuses writes for lack of space)"),
        (status = 503, description = "A dependency is unreachable; see `checks`")
    )
)]
pub async fn readyz(readiness: web::Data<Readiness>) -> HttpResponse {
    let db_ok = readiness.db.ping().await.is_ok();
    let store = match &readiness.objects {
        Some(o) if o.ping().await.is_err() => Some("unavailable"),
        // reads still work, so the instance stays in rotation, but writes fail: degraded
        Some(o) if !o.probe_space().await => Some("out_of_space"),
        Some(_) => Some("ok"),
        None => None,
    };
    let mut ready = db_ok && store != Some("unavailable");
    let degraded = store == Some("out_of_space");
    let mut checks = json!({ "database": if db_ok { "ok" } else { "unavailable" } });
    if let Some(state) = store {
        checks["objectStore"] = json!(state);
    }
    for (name, gate) in &readiness.gates {
        let ok = *gate.borrow();
        ready &= ok;
        checks[*name] = json!(if ok { "ok" } else { "pending" });
    }
    let status = match (ready, degraded) {
        (false, _) => "unavailable",
        (true, true) => "degraded",
        (true, false) => "ready",
    };
    let body = json!({ "status": status, "checks": checks });
    if ready {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable()
            .insert_header(("Retry-After", "1"))
            .json(body)
    }
}
