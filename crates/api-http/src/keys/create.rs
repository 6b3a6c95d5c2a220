//! `POST /v1/keys`: make a key (its secret is in this answer only).

use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::audit::Action;
use auth_core::model::NewKey;
use auth_core::roles::{check_key, KeyGrant};
use auth_core::{secret, CredentialType, Permission, PermissionSet, ServerScope};
use serde::{Deserialize, Serialize};
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use super::list::KeyOut;
use super::manager;
use crate::members::grant_out::{check_entries, folder_prefixes};
use crate::state::CdnState;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateKeyRequest {
    /// A label for the list (at most 100 characters).
    pub name: Option<String>,
    /// `developer` (default) or `server`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A server key's join code (required for `server`, refused otherwise).
    pub server: Option<String>,
    /// `cdn:read`, `cdn:write`, `cdn:delete`, `cdn:purge`, `logs:read`, `logs:write`; a server key
    /// always has `cdn:write`, `logs:read` and `logs:write` as well.
    #[serde(default)]
    pub permissions: Vec<String>,
    /// Join codes a developer key's logs are limited to; absent for every server.
    pub log_servers: Option<Vec<String>>,
    #[serde(default)]
    pub allow_paths: Vec<String>,
    #[serde(default)]
    pub deny_paths: Vec<String>,
    /// RFC 3339, in the future; absent for a key that does not expire.
    pub expires_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateKeyResponse {
    pub success: bool,
    pub key: KeyOut,
    /// The secret, shown this once: it is stored only as a hash.
    pub secret: String,
    pub request_id: String,
}

const MAX_NAME_CHARS: usize = 100;

/// What the request asks for, checked: the key to store (without its secret yet).
async fn requested(
    state: &CdnState,
    auth: &Auth,
    body: CreateKeyRequest,
) -> Result<(CredentialType, Option<auth_core::ServerId>, NewKeyParts), ApiError> {
    let bad = |m: String| ApiError::invalid_request(m);
    let kind = match body.kind.as_deref() {
        None | Some("developer") => CredentialType::Developer,
        Some("server") => CredentialType::Server,
        Some(other) => return Err(bad(format!("`type` is `{other}`; use developer or server"))),
    };
    check_entries(&[
        ("permissions", body.permissions.len()),
        ("logServers", body.log_servers.as_ref().map_or(0, Vec::len)),
        ("allowPaths", body.allow_paths.len()),
        ("denyPaths", body.deny_paths.len()),
    ])?;
    let known = state.stores.accounts.list_servers(&auth.org.id).await?;
    let server_id = match (kind, &body.server) {
        (CredentialType::Server, Some(code)) => Some(
            known
                .iter()
                .find(|s| s.cfx_id.eq_ignore_ascii_case(code))
                .map(|s| s.id.clone())
                .ok_or_else(|| {
                    bad(format!(
                        "`server`: no server with join code `{code}` in this organization"
                    ))
                })?,
        ),
        (CredentialType::Server, None) => {
            return Err(bad(
                "`server` (a join code) is required for a server key".into()
            ))
        }
        (CredentialType::Developer, Some(_)) => {
            return Err(bad(
                "`server` is for server keys; a developer key is global".into(),
            ))
        }
        (CredentialType::Developer, None) => None,
    };
    let mut permissions: PermissionSet = body
        .permissions
        .iter()
        .map(|p| {
            p.parse::<Permission>()
                .map_err(|e| bad(format!("`permissions`: {e}")))
        })
        .collect::<Result<_, _>>()?;
    if kind == CredentialType::Server {
        permissions = permissions.union(PermissionSet::server_key_baseline());
    } else if permissions.iter().next().is_none() {
        return Err(bad("`permissions` names at least one permission".into()));
    }
    let servers = match (&body.log_servers, kind) {
        (None, _) => ServerScope::All,
        (Some(_), CredentialType::Server) => {
            return Err(bad(
                "`logServers` is for developer keys; a server key acts on its own server".into(),
            ))
        }
        (Some(codes), CredentialType::Developer) => ServerScope::of_join_codes(&known, codes)
            .map_err(|e| bad(format!("`logServers`: {e}")))?,
    };
    let name = body
        .name
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty());
    if name
        .as_ref()
        .is_some_and(|n| n.chars().count() > MAX_NAME_CHARS || n.chars().any(char::is_control))
    {
        return Err(bad(format!(
            "`name` has at most {MAX_NAME_CHARS} characters and no control characters"
        )));
    }
    let expires_at = match body.expires_at {
        None => None,
        Some(t) => {
            let at = chrono::DateTime::parse_from_rfc3339(&t)
                .map_err(|_| bad(format!("`expiresAt` {t:?} is not an RFC 3339 time")))?
                .with_timezone(&chrono::Utc);
            if at <= chrono::Utc::now() {
                return Err(bad(format!(
                    "`expiresAt` {t:?} is in the past; the key would never work"
                )));
            }
            Some(at)
        }
    };
    Ok((
        kind,
        server_id,
        NewKeyParts {
            name,
            permissions,
            servers,
            allowed: folder_prefixes(&body.allow_paths, "allowPaths")?,
            denied: folder_prefixes(&body.deny_paths, "denyPaths")?,
            expires_at,
            known,
        },
    ))
}

/// The checked settings of a key to make.
struct NewKeyParts {
    name: Option<String>,
    permissions: PermissionSet,
    servers: ServerScope,
    allowed: Vec<String>,
    denied: Vec<String>,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The organization's servers, read once for the request (join codes in and out).
    known: Vec<auth_core::Server>,
}

/// Make a key.
#[utoipa::path(
    post, path = "/v1/keys", tag = "keys", security(("bearer" = [])),
    request_body = CreateKeyRequest,
    responses(
        (status = 201, description = "Made; the secret is shown once", body = CreateKeyResponse),
        (status = 400, description = "INVALID_REQUEST: the field and what is valid", body = stow_http::error::CdnErrorBody),
        super::KeyRouteErrors,
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
        stow_http::error::JsonBodyErrors,
    )
)]
pub async fn create_key(
    auth: Auth,
    req: HttpRequest,
    body: stow_http::Json<CreateKeyRequest>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let (kind, server_id, parts) = requested(&state, &auth, body.into_inner()).await?;
    let s = secret::generate(kind);
    let new = NewKey {
        server_id,
        credential_type: kind,
        name: parts.name,
        servers: parts.servers,
        allowed_prefixes: parts.allowed,
        denied_prefixes: parts.denied,
        expires_at: parts.expires_at,
        ..NewKey::developer(auth.org.id.clone(), &s, parts.permissions)
    };
    let grant = KeyGrant::new(
        new.permissions,
        new.server_id.as_ref(),
        &new.servers,
        auth_core::PathScope::new(new.allowed_prefixes.clone(), new.denied_prefixes.clone()),
    );
    if let Err(r) = check_key(&actor.grant, &grant) {
        let details = serde_json::json!({
            "name": new.name,
            "permissions": new.permissions.names(),
            "logServers": new.servers.named(),
            "allowPaths": new.allowed_prefixes,
            "denyPaths": new.denied_prefixes,
        });
        let error = ApiError::new(Code::Forbidden, r.to_string());
        return Err(crate::audit::refused(
            &state,
            &req,
            &auth,
            Action::KeyCreate,
            "",
            details,
            error,
        )
        .await);
    }
    let key = state
        .stores
        .accounts
        .create_key(&new, &crate::audit::of(&req, &auth))
        .await?;
    Ok(HttpResponse::Created().json(CreateKeyResponse {
        success: true,
        key: KeyOut::new(&parts.known, &key),
        secret: s.secret,
        request_id: current_request_id(),
    }))
}
