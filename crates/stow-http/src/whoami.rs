//! `GET /v1/whoami`: the key inspection record (docs/api.md, section 2). Never any part of the secret.

use actix_web::http::header;
use actix_web::HttpResponse;
use serde::Serialize;
use utoipa::ToSchema;

use crate::auth::Auth;
use crate::request::{current_flavor, current_request_id, Flavor};

#[derive(Serialize, ToSchema)]
pub struct OrganizationInfo {
    pub id: Option<String>,
    pub name: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    pub id: String,
    /// The server join code.
    pub cfx_id: String,
    pub name: Option<String>,
}

/// Allowed actions grouped by service, e.g. `{"cdn": ["read","write"], "logs": ["write"]}`.
#[derive(Serialize, ToSchema)]
pub struct PermissionsInfo {
    pub cdn: Vec<String>,
    pub logs: Vec<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestrictionsInfo {
    pub allowed_prefixes: Vec<String>,
    pub denied_prefixes: Vec<String>,
}

/// The member a console session acts as.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberInfo {
    pub id: String,
    pub login: String,
    pub display_name: Option<String>,
    /// `owner`, `admin`, `moderator` or `viewer`.
    pub role: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WhoamiResponse {
    pub success: bool,
    /// `server` or `developer` for a key; `member` for a member's console session (whose
    /// `keyId` is the member's id and whose limits are their role's).
    pub credential_type: String,
    pub key_id: String,
    pub name: Option<String>,
    pub organization: OrganizationInfo,
    pub server: Option<ServerInfo>,
    pub permissions: PermissionsInfo,
    pub restrictions: RestrictionsInfo,
    /// Null when unrestricted.
    pub allowed_mime_types: Option<Vec<String>>,
    /// The ids of the servers whose logs a developer key is limited to (their join codes are in
    /// `GET /v1/overview`); absent for a key that acts on every server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_server_ids: Option<Vec<String>>,
    pub expires_at: Option<String>,
    /// Only for a member's console session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<MemberInfo>,
    pub request_id: String,
    /// The same id, in the ingestion host's spelling (only on `logs-api`).
    #[serde(skip_serializing_if = "Option::is_none", rename = "request_id")]
    pub request_id_snake: Option<String>,
}

/// Inspect the calling key.
#[utoipa::path(
    get,
    path = "/v1/whoami",
    tag = "keys",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The key inspection record", body = WhoamiResponse),
        (status = 401, description = "Missing, invalid, disabled or expired key"),
        (status = 429, description = "Rate limited"),
    )
)]
pub async fn whoami(auth: Auth) -> HttpResponse {
    let ctx = &auth.0;
    let mut cdn = Vec::new();
    let mut logs = Vec::new();
    for p in ctx.key.permissions.iter() {
        let (service, action) = p.split();
        match service {
            "cdn" => cdn.push(action.to_owned()),
            _ => logs.push(action.to_owned()),
        }
    }
    let request_id = current_request_id();
    let body = WhoamiResponse {
        success: true,
        credential_type: match &ctx.member {
            Some(_) => "member".to_owned(),
            None => ctx.key.credential_type.as_str().to_owned(),
        },
        member: ctx.member.as_ref().map(|m| MemberInfo {
            id: m.id.to_string(),
            login: m.login.clone(),
            display_name: m.display_name.clone(),
            role: m.grant.role.as_str().to_owned(),
        }),
        key_id: ctx.key.id.to_string(),
        name: ctx.key.name.clone(),
        organization: OrganizationInfo {
            id: Some(ctx.org.id.to_string()),
            name: ctx.org.name.clone(),
        },
        server: ctx.server.as_ref().map(|s| ServerInfo {
            id: s.id.to_string(),
            cfx_id: s.cfx_id.clone(),
            name: s.name.clone(),
        }),
        permissions: PermissionsInfo { cdn, logs },
        restrictions: RestrictionsInfo {
            allowed_prefixes: ctx.key.allowed_prefixes.clone(),
            denied_prefixes: ctx.key.denied_prefixes.clone(),
        },
        allowed_mime_types: ctx.key.allowed_mime.clone(),
        log_server_ids: ctx.key.servers.to_stored(),
        expires_at: ctx
            .key
            .expires_at
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        request_id_snake: (current_flavor() == Flavor::Ingest).then(|| request_id.clone()),
        request_id,
    };
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .json(body)
}
