//! `GET /healthz` (process up) and `GET /readyz` (database and object store reachable).

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
        (status = 200, description = "Database and object store reachable"),
        (status = 503, description = "A dependency is unreachable; see `checks`")
    )
)]
pub async fn readyz(readiness: web::Data<Readiness>) -> HttpResponse {
    let db_ok = readiness.db.ping().await.is_ok();
    let store_ok = match &readiness.objects {
        Some(o) => Some(o.ping().await.is_ok()),
        None => None,
    };
    let mut ready = db_ok && store_ok.unwrap_or(true);
    let mut checks = json!({ "database": if db_ok { "ok" } else { "unavailable" } });
    if let Some(ok) = store_ok {
        checks["objectStore"] = json!(if ok { "ok" } else { "unavailable" });
    }
    for (name, gate) in &readiness.gates {
        let ok = *gate.borrow();
        ready &= ok;
        checks[*name] = json!(if ok { "ok" } else { "pending" });
    }
    let body = json!({ "status": if ready { "ready" } else { "unavailable" }, "checks": checks });
    if ready {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable()
            .insert_header(("Retry-After", "1"))
            .json(body)
    }
}
