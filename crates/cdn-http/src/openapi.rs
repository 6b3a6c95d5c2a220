//! The API host's OpenAPI 3.1 document, generated from the route annotations.

use serde::Serialize;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// Error body of the API host.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CdnError {
    /// Always false.
    pub success: bool,
    pub error: CdnErrorDetail,
    pub request_id: String,
}

#[derive(Serialize, ToSchema)]
pub struct CdnErrorDetail {
    /// UNAUTHORIZED, FORBIDDEN, INVALID_PATH, PATH_NOT_ALLOWED, FILE_TOO_LARGE, TOO_MANY_FILES,
    /// CONTENT_TYPE_NOT_ALLOWED, TOKEN_INVALID, TOKEN_EXPIRED, RATE_LIMITED, CONFLICT,
    /// INVALID_REQUEST, NOT_FOUND, METHOD_NOT_ALLOWED, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE,
    /// INVALID_CURSOR, CURSOR_EXPIRED, REQUEST_TIMEOUT, INSUFFICIENT_STORAGE, INTERNAL_ERROR,
    /// SERVICE_UNAVAILABLE.
    pub code: String,
    pub message: String,
    /// Extra structure for some errors.
    #[schema(value_type = Option<Object>)]
    pub details: Option<serde_json::Value>,
}

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("Service key: `Authorization: Bearer <API_KEY>`"))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Stowage API", description = "CDN objects, upload URLs, key inspection and log queries."),
    modifiers(&Security),
    paths(
        crate::objects::list,
        crate::objects::upload,
        crate::objects::upload_base64,
        crate::objects::upload_bulk,
        crate::objects::delete_one,
        crate::objects::bulk_delete,
        crate::presigned::create,
        crate::presigned::upload,
        crate::log_query::query,
        crate::delivery::deliver,
        stow_http::whoami::whoami,
        stow_http::health::healthz,
        stow_http::health::readyz,
    ),
    components(schemas(CdnError, CdnErrorDetail))
)]
pub struct ApiDoc;
