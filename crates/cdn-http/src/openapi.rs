//! The API host's OpenAPI 3.1 document, generated from the route annotations.

use stow_http::error::{CdnErrorBody, CdnErrorDetail};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

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
    components(schemas(CdnErrorBody, CdnErrorDetail))
)]
pub struct ApiDoc;
