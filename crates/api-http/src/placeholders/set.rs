//! `PUT /v1/placeholders`: set the fallback of a pattern (creates or replaces).

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::Permission;
use cdn_core::placeholder::{self, NewPlaceholder, SetError};
use chrono::{SubsecRound, Utc};
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::{pattern_in_scope, refused, PlaceholderView};
use crate::state::ApiState;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPlaceholderRequest {
    /// A key pattern: `*` within a segment, `**` across segments, `?`, `[abc]`, `{a,b}`.
    pub pattern: String,
    /// The key of an existing object to serve for a missing key the pattern matches.
    pub fallback: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetPlaceholderResponse {
    pub success: bool,
    pub placeholder: PlaceholderView,
    /// Whether the pattern is new (false: its fallback was replaced).
    pub created: bool,
    pub request_id: String,
}

/// Set a placeholder.
#[utoipa::path(
    put, path = "/v1/placeholders", tag = "placeholders", security(("bearer" = [])),
    request_body = SetPlaceholderRequest,
    responses(
        (status = 200, description = "Set; served by every instance within 10 s", body = SetPlaceholderResponse),
        (status = 400, description = "INVALID_PATH (pattern or fallback) or INVALID_REQUEST (the fallback is not an object)", body = stow_http::error::ApiErrorBody),
        (status = 403, description = "FORBIDDEN (no cdn:write) or PATH_NOT_ALLOWED (pattern or fallback outside the key's paths)", body = stow_http::error::ApiErrorBody),
        (status = 409, description = "CONFLICT: the workspace has 100 placeholders", body = stow_http::error::ApiErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = stow_http::error::ApiErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = stow_http::error::ApiErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn set_placeholder(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<SetPlaceholderRequest>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::CdnWrite)?;
    let body = body.into_inner();
    let new = NewPlaceholder::parse(&body.pattern, &body.fallback).map_err(refused)?;
    let scope = auth.key.path_scope();
    pattern_in_scope(&auth, &new.pattern)?;
    if !scope.allows(&new.fallback) {
        return Err(ApiError::new(
            Code::PathNotAllowed,
            format!(
                "fallback `{}` is outside the paths {} may read",
                new.fallback,
                auth.holder()
            ),
        ));
    }
    let now = Utc::now().trunc_subsecs(3);
    let outcome = placeholder::set(
        state.stores.records.as_ref(),
        state.stores.placeholders.as_ref(),
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
    state.forget_placeholders(&auth.org.id);
    Ok(HttpResponse::Ok().json(SetPlaceholderResponse {
        success: true,
        placeholder: PlaceholderView::new(&state, &auth.org.slug, stored),
        created,
        request_id: current_request_id(),
    }))
}
