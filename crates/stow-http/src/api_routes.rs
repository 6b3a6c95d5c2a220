//! Each versioned route written once: [`api_routes!`] makes a host's actix registrations and its
//! OpenAPI document from one table, so a route cannot be served undocumented or documented
//! unserved. Also the bearer-key security scheme both documents declare.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::Modify;

/// Declares `struct $doc` (the OpenAPI document: the given `#[openapi(...)]` arguments plus every
/// handler of the table as a path) and `fn $routes` (an actix resource per path, one route per
/// method, and a JSON 405 for any other method). A path may carry resource settings in brackets
/// (`[.app_data(…)]`, `[.wrap(…)]`). Handlers served outside the table (a scope with its own
/// dispatch) are listed under `also_documented`.
///
/// ```ignore
/// stow_http::api_routes! {
///     pub struct ApiDoc(info(title = "…"), modifiers(&stow_http::api_routes::BearerAuth));
///     also_documented(crate::delivery::deliver);
///     pub fn api_routes;
///     "/v1/objects" => { get: crate::objects::list, post: crate::objects::upload }
///     "/v1/objects/base64" [.app_data(BodyLimit(1 << 20))] => { post: crate::objects::upload_base64 }
/// }
/// ```
#[macro_export]
macro_rules! api_routes {
    (
        $(#[$attr:meta])*
        $vis:vis struct $doc:ident ( $($openapi:tt)* );
        also_documented( $($extra:path),* $(,)? );
        $routes_vis:vis fn $routes:ident;
        $( $path:literal $( [ $($resource:tt)* ] )? => { $( $method:ident : $handler:path ),+ $(,)? } )*
    ) => {
        $(#[$attr])*
        #[derive(utoipa::OpenApi)]
        #[openapi($($openapi)*, paths($($($handler,)+)* $($extra,)*))]
        $vis struct $doc;

        /// Every route of the table above, as its OpenAPI document describes it.
        $routes_vis fn $routes(cfg: &mut actix_web::web::ServiceConfig) {
            $(
                let resource = actix_web::web::resource($path)
                    $( .route(actix_web::web::$method().to($handler)) )+
                    .default_service(actix_web::web::to($crate::method_not_allowed));
                cfg.service(resource $( $($resource)* )?);
            )*
        }

        /// The table's paths are also written in the handlers' `#[utoipa::path]`: they must agree.
        #[cfg(test)]
        #[test]
        fn the_route_table_matches_the_documented_paths() {
            let doc = <$doc as utoipa::OpenApi>::openapi();
            $( $( $crate::api_routes::assert_documented(&doc, $path, stringify!($method)); )+ )*
        }
    };
}

/// Panics unless `doc` has a `method` operation at `path` (placeholder names aside: actix and the
/// document may name a path parameter differently).
pub fn assert_documented(doc: &utoipa::openapi::OpenApi, path: &str, method: &str) {
    let shape = |p: &str| {
        p.split('/')
            .map(|seg| if seg.starts_with('{') { "{}" } else { seg })
            .collect::<Vec<_>>()
            .join("/")
    };
    let item = doc
        .paths
        .paths
        .iter()
        .find(|(documented, _)| shape(documented) == shape(path))
        .map(|(_, item)| item);
    let Some(item) = item else {
        panic!("{path} is served but not in the OpenAPI document");
    };
    let operation = match method {
        "get" => &item.get,
        "post" => &item.post,
        "put" => &item.put,
        "delete" => &item.delete,
        "patch" => &item.patch,
        "head" => &item.head,
        other => panic!("{other} is not a method the table knows"),
    };
    assert!(
        operation.is_some(),
        "{method} {path} is served but documented without that method"
    );
}

/// The `bearer` security scheme: `Authorization: Bearer <API key>`.
pub struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("API key: `Authorization: Bearer <API_KEY>`"))
                    .build(),
            ),
        );
    }
}
