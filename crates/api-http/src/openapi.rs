//! The API host's routes and its OpenAPI 3.1 document, from one table (`stow_http::api_routes!`)
//! and the handlers' annotations.

use stow_http::api_routes::BearerAuth;
use stow_http::error::{ApiErrorBody, ApiErrorDetail};
use stow_http::BodyLimit;

use crate::{
    account, alerts, audit, delivery, explorer, keys, lifecycle, members, objects, placeholders,
    presigned, saved_searches,
};

stow_http::api_routes! {
    /// The API host's document.
    pub struct ApiDoc(
        info(title = "Stowage API", description = "CDN objects, upload URLs, key inspection and log queries."),
        modifiers(&BearerAuth),
        components(schemas(ApiErrorBody, ApiErrorDetail))
    );
    // served by the `/cdn` scope, which parses workspace and key itself (see `crate::routes`)
    also_documented(delivery::deliver);
    pub fn api_routes;
    "/healthz" => { get: stow_http::health::healthz }
    "/readyz" => { get: stow_http::health::readyz }
    "/v1/whoami" => { get: stow_http::whoami::whoami }
    "/v1/overview" => { get: crate::overview::overview }
    "/v1/objects" => { get: objects::list, post: objects::upload, delete: objects::delete_one }
    "/v1/objects/details" => { get: objects::details }
    "/v1/objects/base64" [.app_data(BodyLimit(objects::BASE64_BODY_LIMIT))] => { post: objects::upload_base64 }
    "/v1/objects/bulk" => { post: objects::upload_bulk }
    "/v1/objects/bulk-delete" => { post: objects::bulk_delete }
    "/v1/objects/delete-folder" => { post: objects::delete_folder }
    "/v1/objects/keep" => { post: objects::keep }
    "/v1/objects/move" => { post: objects::move_objects }
    "/v1/objects/purge" => { post: objects::purge }
    "/v1/objects/search" => { post: objects::search }
    "/v1/objects/usage" => { get: objects::usage }
    "/v1/objects/zip" => { post: objects::zip }
    "/v1/lifecycle" => { get: lifecycle::list_lifecycle_rules, put: lifecycle::set_lifecycle_rule, delete: lifecycle::remove_lifecycle_rule }
    "/v1/placeholders" => { get: placeholders::list_placeholders, put: placeholders::set_placeholder, delete: placeholders::remove_placeholder }
    "/v1/presigned-url" => { get: presigned::create }
    "/v1/presigned-url/{token}" [.wrap(crate::cors())] => { post: presigned::upload }
    "/v1/logs/query" => { post: explorer::query::query }
    "/v1/logs/search" => { post: explorer::search::search }
    "/v1/logs/counts" => { post: explorer::counts::counts }
    "/v1/logs/facets" => { post: explorer::facets::facets }
    "/v1/logs/patterns" => { post: explorer::patterns::patterns }
    "/v1/logs/player" => { post: explorer::player::player }
    "/v1/logs/players" => { post: explorer::players::players }
    "/v1/logs/export" => { get: explorer::export::export }
    "/v1/logs/tail" => { get: explorer::tail::tail }
    "/v1/logs/saved-searches" => { get: saved_searches::list_saved_searches, post: saved_searches::create_saved_search }
    "/v1/logs/saved-searches/{savedSearchId}" => { patch: saved_searches::update_saved_search, delete: saved_searches::delete_saved_search }
    "/v1/logs/destinations" => { get: alerts::list_destinations, post: alerts::create_destination }
    "/v1/logs/destinations/{destinationId}" => { patch: alerts::update_destination, delete: alerts::delete_destination }
    "/v1/logs/destinations/{destinationId}/test" => { post: alerts::test_destination }
    "/v1/logs/alert-rules" => { get: alerts::list_alert_rules, post: alerts::create_alert_rule }
    "/v1/logs/alert-rules/{alertRuleId}" => { patch: alerts::update_alert_rule, delete: alerts::delete_alert_rule }
    "/v1/logs/alert-deliveries" => { get: alerts::list_alert_deliveries }
    "/v1/logs/alert-deliveries/{deliveryId}/send-again" => { post: alerts::send_delivery_again }
    "/v1/keys" => { get: keys::list::list_keys, post: keys::create::create_key }
    "/v1/keys/{keyId}" => { delete: keys::delete::delete_key }
    "/v1/keys/{keyId}/rotate" => { post: keys::rotate::rotate_key }
    "/v1/keys/{keyId}/disable" => { post: keys::disable::disable_key }
    "/v1/keys/{keyId}/enable" => { post: keys::disable::enable_key }
    "/v1/members" => { get: members::list::list_members }
    "/v1/audit" => { get: audit::list::list_audit }
    "/v1/account/password" => { post: account::password::change_password }
    "/v1/account/second-factor" => { get: account::second_factor::status, post: account::second_factor::begin }
    "/v1/account/second-factor/confirm" => { post: account::second_factor::confirm }
    "/v1/account/second-factor/disable" => { post: account::second_factor::disable }
    "/v1/members/{memberId}/second-factor" => { delete: members::second_factor::reset_second_factor }
    "/v1/audit/export" => { get: audit::export::export_audit }
    "/v1/members/invitations" => { post: members::invite::invite }
    "/v1/members/invitations/{invitationId}" => { delete: members::revoke::revoke_invitation }
    "/v1/members/{memberId}/password-reset" => { post: members::reset::reset_password }
    "/v1/members/{memberId}" => { put: members::update::update_member, delete: members::remove::remove_member }
}

#[cfg(test)]
mod tests {
    use utoipa::OpenApi;

    #[test]
    fn the_document_lists_every_route_of_the_table() {
        let doc = super::ApiDoc::openapi();
        let mut paths: Vec<&str> = doc.paths.paths.keys().map(String::as_str).collect();
        paths.sort_unstable();
        assert_eq!(
            paths,
            [
                "/cdn/{workspace}/{key}",
                "/healthz",
                "/readyz",
                "/v1/account/password",
                "/v1/account/second-factor",
                "/v1/account/second-factor/confirm",
                "/v1/account/second-factor/disable",
                "/v1/audit",
                "/v1/audit/export",
                "/v1/keys",
                "/v1/keys/{keyId}",
                "/v1/keys/{keyId}/disable",
                "/v1/keys/{keyId}/enable",
                "/v1/keys/{keyId}/rotate",
                "/v1/lifecycle",
                "/v1/logs/alert-deliveries",
                "/v1/logs/alert-deliveries/{deliveryId}/send-again",
                "/v1/logs/alert-rules",
                "/v1/logs/alert-rules/{alertRuleId}",
                "/v1/logs/counts",
                "/v1/logs/destinations",
                "/v1/logs/destinations/{destinationId}",
                "/v1/logs/destinations/{destinationId}/test",
                "/v1/logs/export",
                "/v1/logs/facets",
                "/v1/logs/patterns",
                "/v1/logs/player",
                "/v1/logs/players",
                "/v1/logs/query",
                "/v1/logs/saved-searches",
                "/v1/logs/saved-searches/{savedSearchId}",
                "/v1/logs/search",
                "/v1/logs/tail",
                "/v1/members",
                "/v1/members/invitations",
                "/v1/members/invitations/{invitationId}",
                "/v1/members/{memberId}",
                "/v1/members/{memberId}/password-reset",
                "/v1/members/{memberId}/second-factor",
                "/v1/objects",
                "/v1/objects/base64",
                "/v1/objects/bulk",
                "/v1/objects/bulk-delete",
                "/v1/objects/delete-folder",
                "/v1/objects/details",
                "/v1/objects/keep",
                "/v1/objects/move",
                "/v1/objects/purge",
                "/v1/objects/search",
                "/v1/objects/usage",
                "/v1/objects/zip",
                "/v1/overview",
                "/v1/placeholders",
                "/v1/presigned-url",
                "/v1/presigned-url/{token}",
                "/v1/whoami",
            ]
        );
        let objects = &doc.paths.paths["/v1/objects"];
        assert!(objects.get.is_some() && objects.post.is_some() && objects.delete.is_some());
        // the shared answers are in every route's list, described
        let upload = objects.post.as_ref().unwrap();
        for status in [
            "200", "400", "401", "403", "408", "409", "413", "415", "429", "503", "507",
        ] {
            assert!(upload.responses.responses.contains_key(status), "{status}");
        }
        let json = serde_json::to_value(&doc).unwrap();
        let described = &json["paths"]["/v1/objects"]["get"]["responses"]["401"]["description"];
        assert!(
            described.as_str().unwrap().starts_with("UNAUTHORIZED"),
            "{described}"
        );
    }
}
