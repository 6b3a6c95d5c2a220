//! `GET /v1/objects/details?path=<key>`: one object's details, without listing.

use actix_web::{web, HttpResponse};
use auth_core::Permission;
use cdn_core::metadata::Metadata;
use cdn_core::path::normalize_key;
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::{IntoParams, ToSchema};

use crate::state::ApiState;

#[derive(Deserialize, IntoParams)]
pub struct DetailsParams {
    /// The object key.
    pub path: Option<String>,
}

/// Everything known of one object.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectDetails {
    pub key: String,
    pub size: i64,
    pub content_type: Option<String>,
    pub etag: String,
    pub metadata: Metadata,
    /// When an object was first stored at this key (ISO 8601 UTC, milliseconds); a replacement
    /// keeps it.
    pub created_at: String,
    /// When the current bytes were stored (the listing's `lastModified`).
    pub updated_at: String,
    pub public_url: String,
    /// Kept whatever the lifecycle rules say (`POST /v1/objects/keep`).
    pub keep: bool,
    /// The lifecycle rule that decides for this object (the deepest folder with a rule it lies
    /// under), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<ObjectLifecycle>,
}

/// What the lifecycle rules do to one object.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectLifecycle {
    /// The rule's folder (`""`: the workspace's rule).
    pub rule: String,
    pub days: i64,
    /// From when the rule deletes the object (its last modification plus `days`; the deletion
    /// happens at the next maintenance pass after it); absent when the object is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DetailsResponse {
    pub success: bool,
    pub object: ObjectDetails,
    pub request_id: String,
}

/// One object's details.
#[utoipa::path(
    get, path = "/v1/objects/details", tag = "objects", params(DetailsParams), security(("bearer" = [])),
    responses(
        (status = 200, description = "The object", body = DetailsResponse),
        (status = 400, description = "INVALID_PATH (an invalid key, a dot-named segment included), or INVALID_REQUEST (no `path`)", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN or PATH_NOT_ALLOWED", body = stow_http::error::ApiErrorBody),
        (status = 404, description = "NOT_FOUND: no object has this key", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn details(
    auth: Auth,
    params: stow_http::Query<DetailsParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnRead)?;
    let raw = params.path.as_deref().ok_or_else(|| {
        ApiError::invalid_request("query parameter `path` (the object key) is required")
    })?;
    let key = normalize_key(raw)
        .map_err(|e| ApiError::new(Code::InvalidPath, format!("invalid path: {e}")))?;
    if !auth.key.path_scope().allows(&key) {
        return Err(ApiError::new(
            Code::PathNotAllowed,
            format!("`{key}` is outside the paths {} may read", auth.holder()),
        ));
    }
    let not_found = || ApiError::new(Code::NotFound, format!("no object has the key `{key}`"));
    let (r, rules) = futures::try_join!(
        state.stores.records.get(&auth.org.id, &key),
        state.stores.lifecycle.list(&auth.org.id)
    )?;
    let r = r.ok_or_else(not_found)?;
    let time =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Ok(HttpResponse::Ok().json(DetailsResponse {
        success: true,
        object: ObjectDetails {
            public_url: state.public_url(&auth.org.slug, &r.key),
            lifecycle: cdn_core::lifecycle::rule_for(&rules, &r.key).map(|rule| ObjectLifecycle {
                rule: rule.folder.clone(),
                days: rule.days,
                expires_at: (!r.keep)
                    .then(|| time(r.last_modified + chrono::Duration::days(rule.days))),
            }),
            keep: r.keep,
            created_at: time(r.created_at),
            updated_at: time(r.last_modified),
            key: r.key.into_string(),
            size: r.size,
            content_type: r.content_type,
            etag: r.etag,
            metadata: r.metadata,
        },
        request_id: current_request_id(),
    }))
}
