//! `DELETE /v1/logs/saved-searches/{id}`: delete a saved search.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::{find, reader};
use crate::state::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteSavedSearchResponse {
    pub success: bool,
    /// The id deleted.
    pub deleted: String,
    pub request_id: String,
}

/// Delete a saved search.
#[utoipa::path(
    delete, path = "/v1/logs/saved-searches/{savedSearchId}", tag = "logs", security(("bearer" = [])),
    params(("savedSearchId" = String, Path, description = "`ss_…`")),
    responses(
        (status = 200, description = "Deleted", body = DeleteSavedSearchResponse),
        (status = 404, description = "NOT_FOUND: no such saved search the caller may read (deleting twice: the second is 404)", body = stow_http::error::ApiErrorBody),
        super::SavedSearchErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn delete_saved_search(
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    reader(&auth)?;
    let s = find(&state, &auth, &path).await?;
    let gone = state
        .stores
        .saved_searches
        .delete(&auth.org.id, &s.id, &crate::audit::of(&req, &auth))
        .await?;
    if !gone {
        return Err(ApiError::new(
            Code::NotFound,
            format!("no saved search `{}` in this organization", s.id),
        ));
    }
    Ok(HttpResponse::Ok().json(DeleteSavedSearchResponse {
        success: true,
        deleted: s.id,
        request_id: current_request_id(),
    }))
}
