//! `PUT /v1/lifecycle`: set a folder's lifecycle rule (creates it or changes its days).

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::lifecycle::{self, NewRule, SetError};
use chrono::{SubsecRound, Utc};
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::{refused, LifecycleRuleView};
use crate::objects::whole_folder_in_scope;
use crate::state::ApiState;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetLifecycleRuleRequest {
    /// The folder (`screenshots`); `""` for every object of the workspace.
    pub path: String,
    /// 1–3650: objects under the folder last modified more than this many days ago are deleted.
    pub days: i64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetLifecycleRuleResponse {
    pub success: bool,
    pub rule: LifecycleRuleView,
    /// Whether the folder had no rule (false: its days were changed).
    pub created: bool,
    pub request_id: String,
}

/// Set a lifecycle rule.
#[utoipa::path(
    put, path = "/v1/lifecycle", tag = "lifecycle", security(("bearer" = [])),
    request_body = SetLifecycleRuleRequest,
    responses(
        (status = 200, description = "Set; enforced from the next maintenance pass", body = SetLifecycleRuleResponse),
        (status = 400, description = "INVALID_PATH, or INVALID_REQUEST (days outside 1–3650)", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN (no cdn:delete) or PATH_NOT_ALLOWED (any part of the folder outside the key's paths)", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: the workspace has 100 rules", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn set_lifecycle_rule(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<SetLifecycleRuleRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    // a rule deletes objects, so it takes the permission a delete does
    auth.require(Permission::CdnDelete)?;
    let new = NewRule::parse(&body.path, body.days).map_err(refused)?;
    whole_folder_in_scope(&auth, &new.folder, "delete")?;
    let now = Utc::now().trunc_subsecs(3);
    let outcome = lifecycle::set(
        state.stores.lifecycle.as_ref(),
        &auth.org.id,
        &new,
        now,
        &crate::audit::of(&req, &auth),
    )
    .await;
    let (stored, created) = match outcome {
        Ok(done) => done,
        Err(SetError::Refused(e)) => return Err(refused(e)),
        Err(SetError::Store(e)) => return Err(e.into()),
    };
    Ok(HttpResponse::Ok().json(SetLifecycleRuleResponse {
        success: true,
        rule: stored.into(),
        created,
        request_id: current_request_id(),
    }))
}
