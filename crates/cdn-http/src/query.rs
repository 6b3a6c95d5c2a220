//! `POST /v1/logs/query` (filled in by the log-query work).

use actix_web::HttpResponse;
use stow_http::{ApiError, Auth};

#[utoipa::path(post, path = "/v1/logs/query", tag = "logs", security(("bearer" = [])), responses((status = 200, description = "Events")))]
pub async fn query(_auth: Auth) -> Result<HttpResponse, ApiError> {
    Err(ApiError::new(
        stow_http::Code::NotFound,
        "log query is not available yet",
    ))
}
