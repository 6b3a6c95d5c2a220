#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Members (docs/api.md "Members"): invitations, password sign-in, roles enforced through the
//! public routes by the same policy code as keys, sessions ended on a change, and the throttles.

use auth_core::console_session::{new_token, token_hash};
use auth_core::member::{Invitation, MemberStore};
use auth_core::roles::{Grant, Role};
use auth_core::{AccountStore, InvitationId, PathScope, ServerScope};
use reqwest::header::SET_COOKIE;
use reqwest::Method;
use stowage_tests::*;

const PASSWORD: &str = "tangerine Kettle orbit 77";

/// A browser signed in to the console: its cookie and CSRF token.
struct Browser<'a> {
    app: &'a TestApp,
    cookie: String,
    csrf: String,
}

impl Browser<'_> {
    fn call(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.app
            .client
            .request(method, format!("{}/api{path}", self.app.console))
            .header("Cookie", &self.cookie)
            .header("X-CSRF-Token", &self.csrf)
    }

    /// The id (`mem_…`) of the organization's member `login`, as `GET /v1/members` lists it.
    async fn member_id(&self, login: &str) -> String {
        let (_, listed) = self.status(Method::GET, "/v1/members", None).await;
        listed["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["login"] == login)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    async fn status(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.call(method, path);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }
}

/// POST to the console's own (non-API) routes.
async fn console_post(app: &TestApp, path: &str, body: Value) -> reqwest::Response {
    app.client
        .post(format!("{}{path}", app.console))
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// A signed-in browser from a 200 answer that set the session cookie.
async fn browser(app: &TestApp, res: reqwest::Response) -> Browser<'_> {
    assert_eq!(res.status(), 200);
    let set = res.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    let body: Value = res.json().await.unwrap();
    Browser {
        app,
        cookie: set.split(';').next().unwrap().to_owned(),
        csrf: body["csrfToken"].as_str().unwrap().to_owned(),
    }
}

/// An invitation to the test organization (as `stowctl member invite` makes one); its token.
async fn invitation(app: &TestApp, grant: Grant, hours: i64) -> String {
    invitation_to(app, &app.org.id, grant, hours).await
}

/// An invitation to organization `org`; its token.
async fn invitation_to(app: &TestApp, org: &auth_core::OrgId, grant: Grant, hours: i64) -> String {
    let token = new_token();
    let now = chrono::Utc::now();
    app.accounts
        .create_invitation(
            &Invitation {
                id: InvitationId::generate(),
                org_id: org.clone(),
                grant,
                invited_by: None,
                token_hash: token_hash(&token),
                note: None,
                created_at: now - chrono::Duration::hours(1),
                expires_at: now + chrono::Duration::hours(hours),
                accepted_at: None,
            },
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    token
}

/// A member holding `grant`, signed in.
async fn member<'a>(app: &'a TestApp, login: &str, grant: Grant) -> Browser<'a> {
    let token = invitation(app, grant, 1).await;
    let res = console_post(
        app,
        "/invitation/accept",
        json!({ "token": token, "login": login, "password": PASSWORD }),
    )
    .await;
    browser(app, res).await
}

/// `login` (a member already, with [`PASSWORD`]) joins organization `org` holding `grant`.
async fn join(app: &TestApp, org: &auth_core::OrgId, login: &str, grant: Grant) {
    let token = invitation_to(app, org, grant, 1).await;
    let res = console_post(
        app,
        "/invitation/accept",
        json!({ "token": token, "login": login, "password": PASSWORD }),
    )
    .await;
    assert_eq!(res.status(), 200, "{login} joins {org}");
}

async fn sign_in(app: &TestApp, login: &str, password: &str) -> reqwest::Response {
    console_post(
        app,
        "/session",
        json!({ "login": login, "password": password }),
    )
    .await
}

#[tokio::test]
async fn an_invitation_works_once_and_only_before_it_expires() {
    let app = spawn().await;
    let token = invitation(&app, Grant::everywhere(Role::Owner), 1).await;
    let preview = console_post(&app, "/invitation/preview", json!({ "token": token })).await;
    assert_eq!(preview.status(), 200);
    let preview: Value = preview.json().await.unwrap();
    assert_eq!(preview["organization"], "Test Org");
    assert_eq!(preview["role"], "owner");

    let weak = console_post(
        &app,
        "/invitation/accept",
        json!({ "token": token, "login": "Olga@Example.com", "password": "password123" }),
    )
    .await;
    let body = expect_error(weak, 400, "INVALID_REQUEST").await;
    assert!(body.to_string().contains("password"), "{body}");

    let accepted = console_post(
        &app,
        "/invitation/accept",
        json!({ "token": token, "login": "Olga@Example.com", "password": PASSWORD, "displayName": "Olga" }),
    )
    .await;
    let olga = browser(&app, accepted).await;
    let (status, who) = olga.status(Method::GET, "/v1/whoami", None).await;
    assert_eq!(status, 200);
    assert_eq!(who["credentialType"], "member");
    assert_eq!(who["member"]["login"], "olga@example.com");
    assert_eq!(who["member"]["role"], "owner");
    assert_eq!(who["organization"]["name"], "Test Org");

    let again = console_post(
        &app,
        "/invitation/accept",
        json!({ "token": token, "login": "someone", "password": PASSWORD }),
    )
    .await;
    expect_error(again, 404, "NOT_FOUND").await;
    let expired = invitation(&app, Grant::everywhere(Role::Viewer), -1).await;
    let preview = json!({ "token": expired });
    let accept = json!({ "token": expired, "login": "late", "password": PASSWORD });
    for (path, body) in [
        ("/invitation/preview", preview),
        ("/invitation/accept", accept),
    ] {
        let res = console_post(&app, path, body).await;
        let body = expect_error(res, 404, "NOT_FOUND").await;
        assert!(
            body.to_string().contains("used, withdrawn or has expired"),
            "{body}"
        );
    }
    assert!(app.accounts.find_member("late").await.unwrap().is_none());

    // the password signs in; the stored form is Argon2id only
    let stored = app
        .accounts
        .find_member("olga@example.com")
        .await
        .unwrap()
        .unwrap();
    assert!(
        stored.password_hash.starts_with("$argon2id$"),
        "{}",
        stored.password_hash
    );
    assert_eq!(
        sign_in(&app, "OLGA@example.com", PASSWORD).await.status(),
        200
    );
}

#[tokio::test]
async fn a_wrong_password_and_an_unknown_name_get_the_same_answer_and_a_throttle() {
    let app = spawn().await;
    member(&app, "ana", Grant::everywhere(Role::Viewer)).await;
    let wrong = sign_in(&app, "ana", "not her password at all").await;
    let wrong = expect_error(wrong, 401, "UNAUTHORIZED").await;
    let nobody = sign_in(&app, "nobody-here", "not her password at all").await;
    let nobody = expect_error(nobody, 401, "UNAUTHORIZED").await;
    assert_eq!(wrong["error"]["message"], nobody["error"]["message"]);
    assert_eq!(wrong["error"]["message"], "wrong sign-in name or password");

    // five wrong passwords for a name, then growing waits, whether or not a member has it
    for _ in 0..4 {
        let status = sign_in(&app, "nobody-here", "still wrong, sorry")
            .await
            .status();
        assert_eq!(status, 401);
    }
    let res = sign_in(&app, "nobody-here", "still wrong, sorry").await;
    assert_eq!(res.status(), 429);
    assert!(res.headers().get("retry-after").is_some());
    let body: Value = res.json().await.unwrap();
    assert!(
        body.to_string()
            .contains("too many wrong passwords for this sign-in name"),
        "{body}"
    );
    // another name is not held back by it...
    assert_eq!(sign_in(&app, "ana", PASSWORD).await.status(), 200);
    // ...until the address has made ten attempts of any kind
    let mut statuses = Vec::new();
    for i in 0..3 {
        statuses.push(
            sign_in(&app, &format!("name{i}"), "wrong")
                .await
                .status()
                .as_u16(),
        );
    }
    assert_eq!(
        statuses,
        [401, 429, 429],
        "the eleventh attempt from one address"
    );
}

#[tokio::test]
async fn a_moderator_of_one_server_reads_only_that_servers_logs_and_changes_nothing() {
    let app = spawn().await;
    let other = app
        .accounts
        .register_server(
            &app.org.id,
            "other1",
            None,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    app.accounts
        .set_logs_active("other1", true, &auth_core::audit::Audit::operator("test"))
        .await
        .unwrap();
    let res = app
        .upload(&app.dev_key, "a.png", png_bytes(), Some("shots"))
        .await;
    assert_eq!(res.status(), 200);
    let moderator = member(
        &app,
        "mod",
        Grant {
            role: Role::Moderator,
            servers: ServerScope::only([other.id.clone()]).unwrap(),
            paths: PathScope::unrestricted(),
        },
    )
    .await;
    let now = chrono::Utc::now();
    let window = |server: &str| json!({ "serverId": server, "from": (now - chrono::Duration::hours(1)).to_rfc3339(), "to": now.to_rfc3339() });
    for path in [
        "/v1/logs/query",
        "/v1/logs/search",
        "/v1/logs/counts",
        "/v1/logs/facets",
        "/v1/logs/patterns",
    ] {
        let (status, _) = moderator
            .status(Method::POST, path, Some(window("other1")))
            .await;
        assert_eq!(status, 200, "{path}");
        let (status, body) = moderator
            .status(Method::POST, path, Some(window("abc123")))
            .await;
        assert_eq!(status, 403, "{path}: {body}");
    }
    let (status, body) = moderator
        .status(Method::GET, "/v1/logs/tail?serverId=abc123", None)
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, overview) = moderator.status(Method::GET, "/v1/overview", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        overview["servers"].as_array().unwrap().len(),
        1,
        "{overview}"
    );
    // files: read, never delete or write
    let (status, _) = moderator
        .status(Method::GET, "/v1/objects?path=shots", None)
        .await;
    assert_eq!(status, 200);
    let (status, body) = moderator
        .status(Method::DELETE, "/v1/objects?path=shots/a.png", None)
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["error"]["message"],
        "your role (moderator) does not allow `cdn:delete`; ask an owner or admin"
    );
    let (status, _) = moderator.status(Method::GET, "/v1/members", None).await;
    assert_eq!(status, 403, "moderators do not manage members");

    // a viewer reads but does not export; a moderator exports
    let viewer = member(&app, "viewer", Grant::everywhere(Role::Viewer)).await;
    let export = format!(
        "/v1/logs/export?serverId=abc123&from={}&to={}",
        urlencode(&(now - chrono::Duration::hours(1)).to_rfc3339()),
        urlencode(&now.to_rfc3339())
    );
    let (status, body) = viewer.status(Method::GET, &export, None).await;
    assert_eq!(status, 403, "{body}");
    let res = moderator
        .call(Method::GET, &export.replace("abc123", "other1"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.bytes().await.unwrap();

    // API keys never manage members, whatever they hold
    let res = app.get("/v1/members", &app.dev_key).send().await.unwrap();
    let body = expect_error(res, 403, "FORBIDDEN").await;
    assert!(body.to_string().contains("API keys may not"), "{body}");
}

#[tokio::test]
async fn owners_and_admins_invite_change_and_remove_within_their_own_reach() {
    let app = spawn().await;
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    let (status, made) = owner
        .status(
            Method::POST,
            "/v1/members/invitations",
            Some(json!({ "role": "admin", "note": "Adam" })),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    // the note rule every front end shares (stowctl's test has the same two)
    for note in ["x".repeat(5000), "ring\u{7}".to_owned()] {
        let (status, refused) = owner
            .status(
                Method::POST,
                "/v1/members/invitations",
                Some(json!({ "role": "viewer", "note": note })),
            )
            .await;
        assert_eq!(status, 400, "{refused}");
        assert_eq!(
            refused["error"]["message"],
            "`note` has at most 200 characters and no control characters"
        );
    }
    assert_eq!(
        made["acceptPath"],
        format!("/invite#{}", made["token"].as_str().unwrap())
    );
    let res = console_post(
        &app,
        "/invitation/accept",
        json!({ "token": made["token"], "login": "adam", "password": PASSWORD }),
    )
    .await;
    let admin = browser(&app, res).await;
    let (_, listed) = owner.status(Method::GET, "/v1/members", None).await;
    let ids: Vec<(String, String)> = listed["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["login"].as_str().unwrap().to_owned(),
                m["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        ids.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
        ["adam", "olga"]
    );
    let (adam, olga) = (ids[0].1.clone(), ids[1].1.clone());

    // an admin cannot make an owner, promote themselves, or touch the owner
    let (status, _) = admin
        .status(
            Method::POST,
            "/v1/members/invitations",
            Some(json!({ "role": "owner" })),
        )
        .await;
    assert_eq!(status, 403);
    let (status, body) = admin
        .status(
            Method::PUT,
            &format!("/v1/members/{adam}"),
            Some(json!({ "role": "owner" })),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.to_string().contains("only an owner"), "{body}");
    let (status, _) = admin
        .status(Method::DELETE, &format!("/v1/members/{olga}"), None)
        .await;
    assert_eq!(status, 403);
    let (status, body) = admin
        .status(
            Method::POST,
            "/v1/members/invitations",
            Some(json!({ "role": "viewer", "servers": ["nosuch1"] })),
        )
        .await;
    assert_eq!(status, 400, "{body}");

    // the owner's change ends the admin's session at once
    let (status, changed) = owner
        .status(
            Method::PUT,
            &format!("/v1/members/{adam}"),
            Some(json!({ "role": "viewer", "servers": ["abc123"] })),
        )
        .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["member"]["role"], "viewer");
    assert_eq!(changed["member"]["servers"], json!(["abc123"]));
    assert_eq!(changed["sessionsEnded"], 1);
    let (status, _) = admin.status(Method::GET, "/v1/whoami", None).await;
    assert_eq!(status, 401, "the session ended with the role change");
    let again = browser(&app, sign_in(&app, "adam", PASSWORD).await).await;
    let (_, who) = again.status(Method::GET, "/v1/whoami", None).await;
    assert_eq!(who["member"]["role"], "viewer");

    // the last owner stays; removal ends the member's sessions
    let (status, body) = owner
        .status(Method::DELETE, &format!("/v1/members/{olga}"), None)
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = owner
        .status(Method::DELETE, &format!("/v1/members/{adam}"), None)
        .await;
    assert_eq!(
        (status, body["sessionsEnded"].as_u64()),
        (200, Some(1)),
        "{body}"
    );
    let (status, _) = again.status(Method::GET, "/v1/whoami", None).await;
    assert_eq!(status, 401);
    let res = sign_in(&app, "adam", PASSWORD).await;
    let body = expect_error(res, 403, "FORBIDDEN").await;
    assert!(
        body.to_string()
            .contains("not a member of any organization"),
        "{body}"
    );

    // an invitation is withdrawn once
    let (_, made) = owner
        .status(
            Method::POST,
            "/v1/members/invitations",
            Some(json!({ "role": "viewer" })),
        )
        .await;
    let id = made["invitation"]["id"].as_str().unwrap();
    let path = format!("/v1/members/invitations/{id}");
    assert_eq!(owner.status(Method::DELETE, &path, None).await.0, 200);
    assert_eq!(owner.status(Method::DELETE, &path, None).await.0, 404);
    let res = console_post(
        &app,
        "/invitation/preview",
        json!({ "token": made["token"] }),
    )
    .await;
    expect_error(res, 404, "NOT_FOUND").await;
}

/// Owners and admins make, rotate, disable and delete keys from the console, never beyond their
/// own reach; the secret is in the answer that makes it only.
#[tokio::test]
async fn keys_are_managed_by_members_within_their_reach() {
    let app = spawn().await;
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    let (status, made) = owner
        .status(
            Method::POST,
            "/v1/keys",
            Some(json!({ "name": "bans bot", "permissions": ["logs:read"], "logServers": ["ABC123"] })),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let secret = made["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("stw_dev_"));
    assert_eq!(made["key"]["logServers"], json!(["abc123"]));
    let id = made["key"]["id"].as_str().unwrap().to_owned();
    // the new key works, for its server only
    let who = app.get_json("/v1/whoami", &secret).await;
    assert_eq!(who["permissions"]["logs"], json!(["read"]));
    let (_, listed) = owner.status(Method::GET, "/v1/keys", None).await;
    let mine = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id.as_str())
        .unwrap()
        .clone();
    assert!(!mine.to_string().contains(&secret), "never listed");
    assert_eq!(mine["state"], "active");
    // list fields are bounded like a grant's: 100 prefixes pass, 101 are refused by name
    let prefixes = |n: usize| (0..n).map(|i| format!("p{i}")).collect::<Vec<_>>();
    let (status, body) = owner
        .status(
            Method::POST,
            "/v1/keys",
            Some(json!({ "permissions": ["cdn:read"], "allowPaths": prefixes(100) })),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = owner
        .status(
            Method::POST,
            "/v1/keys",
            Some(json!({ "permissions": ["cdn:read"], "allowPaths": prefixes(101) })),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`allowPaths` has 101 entries; at most 100"),
        "{body}"
    );

    for (body, expected) in [
        (json!({ "permissions": [] }), "at least one permission"),
        (json!({ "permissions": ["cdn:root"] }), "unknown permission"),
        (
            json!({ "permissions": ["cdn:read"], "logServers": ["nope"] }),
            "`logServers`",
        ),
        (
            json!({ "type": "server", "permissions": [] }),
            "`server` (a join code) is required",
        ),
        (
            json!({ "permissions": ["cdn:read"], "expiresAt": "2020-01-01T00:00:00Z" }),
            "in the past",
        ),
        (
            json!({ "permissions": ["cdn:read"], "allowPaths": ["../x"] }),
            "`allowPaths`",
        ),
    ] {
        let (status, answer) = owner
            .status(Method::POST, "/v1/keys", Some(body.clone()))
            .await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert!(answer.to_string().contains(expected), "{body}: {answer}");
    }

    // rotation: a new secret, the same settings; the old one stops when disabled
    let (status, rotated) = owner
        .status(
            Method::POST,
            &format!("/v1/keys/{id}/rotate?disableOld=true"),
            None,
        )
        .await;
    assert_eq!(status, 201, "{rotated}");
    assert_eq!(rotated["key"]["logServers"], json!(["abc123"]));
    assert_eq!(rotated["oldDisabled"], true);
    let res = app.get("/v1/whoami", &secret).send().await.unwrap();
    assert_eq!(res.status(), 401, "the old secret no longer works");
    let new_id = rotated["key"]["id"].as_str().unwrap();
    let (status, _) = owner
        .status(Method::POST, &format!("/v1/keys/{new_id}/disable"), None)
        .await;
    assert_eq!(status, 200);
    let (status, enabled) = owner
        .status(Method::POST, &format!("/v1/keys/{new_id}/enable"), None)
        .await;
    assert_eq!(
        (status, enabled["key"]["state"].as_str()),
        (200, Some("active"))
    );
    assert_eq!(
        owner
            .status(Method::DELETE, &format!("/v1/keys/{new_id}"), None)
            .await
            .0,
        200
    );
    assert_eq!(
        owner
            .status(Method::DELETE, &format!("/v1/keys/{new_id}"), None)
            .await
            .0,
        404
    );

    // an admin of one server cannot make a key for every server, nor touch the global key
    let admin = member(
        &app,
        "adam",
        Grant {
            role: Role::Admin,
            servers: ServerScope::only([app.server.id.clone()]).unwrap(),
            paths: PathScope::unrestricted(),
        },
    )
    .await;
    let (status, body) = admin
        .status(
            Method::POST,
            "/v1/keys",
            Some(json!({ "permissions": ["logs:read"] })),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.to_string().contains("servers outside your own"),
        "{body}"
    );
    let (status, _) = admin
        .status(
            Method::POST,
            "/v1/keys",
            Some(json!({ "permissions": ["logs:read"], "logServers": ["abc123"] })),
        )
        .await;
    assert_eq!(status, 201);
    let (_, listed) = owner.status(Method::GET, "/v1/keys", None).await;
    let global = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["logServers"].is_null() && k["credentialType"] == "developer")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _) = admin
        .status(Method::POST, &format!("/v1/keys/{global}/disable"), None)
        .await;
    assert_eq!(status, 403);
    // moderators and keys manage no keys
    let moderator = member(&app, "mod", Grant::everywhere(Role::Moderator)).await;
    assert_eq!(moderator.status(Method::GET, "/v1/keys", None).await.0, 403);
    let res = app.get("/v1/keys", &app.dev_key).send().await.unwrap();
    expect_error(res, 403, "FORBIDDEN").await;
}

/// An owner makes a reset link for a member who forgot their password; it works once and ends
/// the member's sessions. An admin cannot reset an owner.
#[tokio::test]
async fn a_reset_link_sets_a_new_password_once() {
    let app = spawn().await;
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    let admin = member(&app, "adam", Grant::everywhere(Role::Admin)).await;
    let (adam, olga) = (owner.member_id("adam").await, owner.member_id("olga").await);
    let (status, body) = admin
        .status(
            Method::POST,
            &format!("/v1/members/{olga}/password-reset"),
            None,
        )
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, made) = owner
        .status(
            Method::POST,
            &format!("/v1/members/{adam}/password-reset"),
            None,
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().unwrap();
    assert_eq!(made["resetPath"], format!("/reset#{token}"));

    let preview = console_post(&app, "/password-reset/preview", json!({ "token": token })).await;
    assert_eq!(preview.status(), 200);
    assert_eq!(preview.json::<Value>().await.unwrap()["login"], "adam");
    let weak = console_post(
        &app,
        "/password-reset",
        json!({ "token": token, "password": "adam12345678" }),
    )
    .await;
    expect_error(weak, 400, "INVALID_REQUEST").await;
    let new = "violet Harbor lantern 42";
    let done = console_post(
        &app,
        "/password-reset",
        json!({ "token": token, "password": new }),
    )
    .await;
    assert_eq!(done.status(), 200, "the weak attempt left the link open");
    assert_eq!(
        admin.status(Method::GET, "/v1/whoami", None).await.0,
        401,
        "sessions ended"
    );
    expect_error(sign_in(&app, "adam", PASSWORD).await, 401, "UNAUTHORIZED").await;
    assert_eq!(sign_in(&app, "adam", new).await.status(), 200);
    let again = console_post(
        &app,
        "/password-reset",
        json!({ "token": token, "password": "another Fine passphrase 9" }),
    )
    .await;
    expect_error(again, 404, "NOT_FOUND").await;
}

/// Docs/api.md "Audit log": each change appears exactly once with who made it and through which
/// door; a refused member change is recorded as refused; the log is for owners and admins.
#[tokio::test]
async fn every_audited_change_appears_once_with_its_actor() {
    let app = spawn().await;
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    for name in ["a.png", "b.png", "c.png"] {
        let res = app
            .upload(&app.dev_key, name, vec![1, 2, 3], Some("shots"))
            .await;
        assert!(res.status().is_success());
    }
    for name in ["x.png", "y.png"] {
        let res = app
            .upload(&app.dev_key, name, vec![1, 2, 3], Some("old"))
            .await;
        assert!(res.status().is_success());
    }
    let (_, before) = owner.status(Method::GET, "/v1/audit?limit=500", None).await;
    let seen = before["events"].as_array().unwrap().len();

    // an admin of olga's, who then tries to invite an owner (refused, recorded)
    let (status, made) = owner
        .status(
            Method::POST,
            "/v1/members/invitations",
            Some(json!({ "role": "admin" })),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let res = console_post(
        &app,
        "/invitation/accept",
        json!({ "token": made["token"], "login": "adam", "password": PASSWORD }),
    )
    .await;
    let admin = browser(&app, res).await;
    let (status, _) = admin
        .status(
            Method::POST,
            "/v1/members/invitations",
            Some(json!({ "role": "owner" })),
        )
        .await;
    assert_eq!(status, 403);

    let calls: [(Method, &str, Option<Value>); 9] = [
        (Method::DELETE, "/v1/objects?path=shots/a.png", None),
        (
            Method::POST,
            "/v1/objects/bulk-delete",
            Some(json!({ "paths": ["shots/b.png", "shots/none.png"] })),
        ),
        (
            Method::POST,
            "/v1/objects/move",
            Some(json!({ "from": "shots/c.png", "to": "shots/d.png" })),
        ),
        (
            Method::POST,
            "/v1/objects/delete-folder",
            Some(json!({ "path": "old" })),
        ),
        (
            Method::POST,
            "/v1/objects/purge",
            Some(json!({ "paths": ["shots/d.png"] })),
        ),
        (
            Method::PUT,
            "/v1/placeholders",
            Some(json!({ "pattern": "shots/*.png", "fallback": "shots/d.png" })),
        ),
        (Method::DELETE, "/v1/placeholders?pattern=shots/*.png", None),
        // deleting what is not there changes nothing: no entry
        (Method::DELETE, "/v1/objects?path=shots/a.png", None),
        (
            Method::POST,
            "/v1/keys",
            Some(json!({ "name": "bot", "permissions": ["cdn:read"] })),
        ),
    ];
    let mut key_id = String::new();
    for (method, path, body) in calls {
        let (status, answer) = owner.status(method, path, body).await;
        assert!((200..300).contains(&status), "{path}: {status} {answer}");
        if path == "/v1/keys" {
            key_id = answer["key"]["id"].as_str().unwrap().to_owned();
            assert!(!answer["secret"].as_str().unwrap().is_empty());
        }
    }
    for step in ["disable", "enable"] {
        let (status, _) = owner
            .status(Method::POST, &format!("/v1/keys/{key_id}/{step}"), None)
            .await;
        assert_eq!(status, 200);
    }
    let (status, _) = owner
        .status(Method::DELETE, &format!("/v1/keys/{key_id}"), None)
        .await;
    assert_eq!(status, 200);
    let adam = owner.member_id("adam").await;
    let (status, _) = owner
        .status(
            Method::PUT,
            &format!("/v1/members/{adam}"),
            Some(json!({ "role": "moderator" })),
        )
        .await;
    assert_eq!(status, 200);
    // an API key's delete, through the API
    let res = app
        .client
        .delete(format!("{}/v1/objects?path=shots/d.png", app.cdn))
        .bearer_auth(&app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    let (status, page) = owner.status(Method::GET, "/v1/audit?limit=500", None).await;
    assert_eq!(status, 200, "{page}");
    let events = page["events"].as_array().unwrap();
    let mut got: Vec<String> = events[..events.len() - seen]
        .iter()
        .rev()
        .map(|e| {
            format!(
                "{} {} {} {} {}",
                e["action"].as_str().unwrap(),
                e["target"].as_str().unwrap(),
                e["actor"]["label"].as_str().unwrap(),
                e["via"].as_str().unwrap(),
                e["outcome"].as_str().unwrap()
            )
        })
        .collect();
    // the invitation's target is its id
    got[0] = got[0].replacen(made["invitation"]["id"].as_str().unwrap_or("?"), "INV", 1);
    let folder_deletes: Vec<&str> = ["old/x.png", "old/y.png"].to_vec();
    let mut want = vec![
        "member.invite INV olga console done".to_owned(),
        "member.join adam adam console done".to_owned(),
        "member.invite  adam console refused".to_owned(),
        "object.delete shots/a.png olga console done".to_owned(),
        "object.delete shots/b.png olga console done".to_owned(),
        "object.move shots/c.png olga console done".to_owned(),
    ];
    want.extend(
        folder_deletes
            .iter()
            .map(|k| format!("object.delete {k} olga console done")),
    );
    want.extend([
        "object.purge shots/d.png olga console done".to_owned(),
        "placeholder.set shots/*.png olga console done".to_owned(),
        "placeholder.remove shots/*.png olga console done".to_owned(),
        format!("key.create {key_id} olga console done"),
        format!("key.disable {key_id} olga console done"),
        format!("key.enable {key_id} olga console done"),
        format!("key.delete {key_id} olga console done"),
        "member.change adam olga console done".to_owned(),
        "object.delete shots/d.png test api done".to_owned(),
    ]);
    assert_eq!(got, want);
    // the refusal says why; the delete names its size; no entry carries a secret
    let refused = &events[events.len() - seen - 3];
    assert!(
        refused["reason"].as_str().unwrap().contains("owner"),
        "{refused}"
    );
    assert!(!page.to_string().contains(made["token"].as_str().unwrap()));
    let ip = events[0]["address"].as_str().unwrap();
    assert_eq!(ip, "127.0.0.1");

    // filters: one actor, one family, a target prefix, refusals only
    let count = |q: &'static str| {
        let owner = &owner;
        async move {
            let (status, page) = owner.status(Method::GET, q, None).await;
            assert_eq!(status, 200, "{q}: {page}");
            page["events"].as_array().unwrap().len()
        }
    };
    assert_eq!(count("/v1/audit?action=key.*").await, 4 + 2);
    assert_eq!(count("/v1/audit?action=object.delete&target=old/").await, 2);
    assert_eq!(count("/v1/audit?outcome=refused").await, 1);
    let (_, first) = owner.status(Method::GET, "/v1/audit?limit=1", None).await;
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let (_, second) = owner
        .status(
            Method::GET,
            &format!("/v1/audit?limit=1&cursor={cursor}"),
            None,
        )
        .await;
    assert_ne!(first["events"][0]["id"], second["events"][0]["id"]);
    let (status, bad) = owner
        .status(Method::GET, "/v1/audit?action=object.nope", None)
        .await;
    assert_eq!(status, 400);
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`action`"),
        "{bad}"
    );

    // the export has every entry, one per line
    let res = owner
        .call(Method::GET, "/v1/audit/export")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    assert_eq!(text.lines().count(), events.len());

    // moderators and API keys may not read it
    let (status, _) = admin.status(Method::GET, "/v1/audit", None).await;
    assert_eq!(status, 401, "the role change ended adam's session");
    let moderator = browser(&app, sign_in(&app, "adam", PASSWORD).await).await;
    let (status, _) = moderator.status(Method::GET, "/v1/audit", None).await;
    assert_eq!(status, 403, "adam is a moderator now");
    let res = app.get("/v1/audit", &app.dev_key).send().await.unwrap();
    assert_eq!(res.status(), 403);
}

/// The code `ann`'s app would show at `step` (the tests' SECOND_FACTOR_KEY is `[42; 32]`).
async fn app_code(app: &TestApp, id: &auth_core::MemberId, step: u64) -> String {
    let factor = app.accounts.second_factor(id).await.unwrap().unwrap();
    let secret = auth_core::second_factor::SealKey::new([42; 32])
        .open(id, &factor.sealed_secret)
        .unwrap();
    auth_core::second_factor::code_at(&secret, step)
}

fn step_now() -> u64 {
    auth_core::second_factor::step_of(chrono::Utc::now().timestamp() as u64)
}

/// Docs/api.md "Second factor": setting it up (confirmed by a code), then sign-in asks for a
/// code (each works once) or a recovery code (each works once). Ten sign-in attempts in all: the
/// per-address throttle allows ten at once.
#[tokio::test]
async fn a_second_factor_guards_sign_in_and_recovery_codes_work_once() {
    let app = spawn().await;
    let ann = member(&app, "ann", Grant::everywhere(Role::Viewer)).await;
    let (_, me) = ann.status(Method::GET, "/v1/whoami", None).await;
    let id = auth_core::MemberId::new(me["member"]["id"].as_str().unwrap());
    let (status, off) = ann
        .status(Method::GET, "/v1/account/second-factor", None)
        .await;
    assert_eq!((status, off["state"].as_str()), (200, Some("off")));
    // API keys have no account
    let res = app
        .get("/v1/account/second-factor", &app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);

    let (status, setup) = ann
        .status(Method::POST, "/v1/account/second-factor", None)
        .await;
    assert_eq!(status, 201, "{setup}");
    let uri = setup["otpauthUri"].as_str().unwrap();
    assert!(uri.starts_with("otpauth://totp/Stowage:ann?"), "{uri}");
    assert!(uri.contains(setup["secret"].as_str().unwrap()));
    assert!(setup["qrSvg"].as_str().unwrap().contains("<svg"));
    // not on until confirmed: the password alone still signs in
    assert_eq!(sign_in(&app, "ann", PASSWORD).await.status(), 200);

    let now = step_now();
    let valid: Vec<String> =
        futures::future::join_all([now - 1, now, now + 1].map(|s| app_code(&app, &id, s))).await;
    let wrong = (0..1000)
        .map(|n| format!("{n:06}"))
        .find(|c| !valid.contains(c))
        .unwrap();
    let (status, body) = ann
        .status(
            Method::POST,
            "/v1/account/second-factor/confirm",
            Some(json!({ "code": wrong })),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, confirmed) = ann
        .status(
            Method::POST,
            "/v1/account/second-factor/confirm",
            Some(json!({ "code": app_code(&app, &id, now).await })),
        )
        .await;
    assert_eq!(status, 200, "{confirmed}");
    let recovery: Vec<String> = confirmed["recoveryCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(recovery.len(), 10);
    let (_, on) = ann
        .status(Method::GET, "/v1/account/second-factor", None)
        .await;
    assert_eq!(on["state"], "on");
    assert_eq!(on["recoveryCodesLeft"], 10);

    // sign-in: the password alone is not enough; the code used to confirm is spent
    let res = sign_in(&app, "ann", PASSWORD).await;
    assert_eq!(res.status(), 401);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], "SECOND_FACTOR_REQUIRED", "{body}");
    let with = |extra: Value| {
        let app = &app;
        async move {
            let mut b = json!({ "login": "ann", "password": PASSWORD });
            b.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            console_post(app, "/session", b).await.status().as_u16()
        }
    };
    let spent = app_code(&app, &id, now).await;
    assert_eq!(with(json!({ "code": spent })).await, 401, "used to confirm");
    let next = app_code(&app, &id, now + 1).await;
    assert_eq!(with(json!({ "code": next })).await, 200);
    assert_eq!(
        with(json!({ "code": next })).await,
        401,
        "a code works once"
    );
    assert_eq!(
        with(json!({ "code": next, "recoveryCode": recovery[0] })).await,
        400
    );
    // a wrong password with a right code is still a wrong password
    let res = console_post(
        &app,
        "/session",
        json!({ "login": "ann", "password": "not the password at all", "code": next }),
    )
    .await;
    assert_eq!(res.status(), 401);
    // a recovery code, as typed from paper, works once
    let typed = recovery[0].to_uppercase().replace('-', " ");
    assert_eq!(with(json!({ "recoveryCode": typed })).await, 200);
    assert_eq!(with(json!({ "recoveryCode": recovery[0] })).await, 401);
}

/// Turns ann's second factor on through the API; the step its confirming code was for.
async fn turn_on(app: &TestApp, ann: &Browser<'_>, id: &auth_core::MemberId) -> u64 {
    let (status, _) = ann
        .status(Method::POST, "/v1/account/second-factor", None)
        .await;
    assert_eq!(status, 201);
    let now = step_now();
    let (status, _) = ann
        .status(
            Method::POST,
            "/v1/account/second-factor/confirm",
            Some(json!({ "code": app_code(app, id, now).await })),
        )
        .await;
    assert_eq!(status, 200);
    now
}

/// An owner takes a member's second factor away (a viewer may not), the member turns a new one
/// off with a code; the audit log has each change once.
#[tokio::test]
async fn owners_reset_a_second_factor_and_members_turn_theirs_off() {
    let app = spawn().await;
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    let ann = member(&app, "ann", Grant::everywhere(Role::Viewer)).await;
    let (_, me) = ann.status(Method::GET, "/v1/whoami", None).await;
    let id = auth_core::MemberId::new(me["member"]["id"].as_str().unwrap());
    turn_on(&app, &ann, &id).await;
    let recovery_left = app
        .accounts
        .second_factor(&id)
        .await
        .unwrap()
        .unwrap()
        .recovery_left;
    assert_eq!(recovery_left, 10);

    // a viewer may not take anyone's away; the owner takes ann's
    let olga = owner.member_id("olga").await;
    let viewer = member(&app, "vic", Grant::everywhere(Role::Viewer)).await;
    let (status, _) = viewer
        .status(
            Method::DELETE,
            &format!("/v1/members/{olga}/second-factor"),
            None,
        )
        .await;
    assert_eq!(status, 403);
    let (status, reset) = owner
        .status(
            Method::DELETE,
            &format!("/v1/members/{id}/second-factor"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{reset}");
    assert!(reset["sessionsEnded"].as_u64().unwrap() >= 1);
    let (status, _) = owner
        .status(
            Method::DELETE,
            &format!("/v1/members/{id}/second-factor"),
            None,
        )
        .await;
    assert_eq!(status, 404, "none left");
    assert_eq!(sign_in(&app, "ann", PASSWORD).await.status(), 200);
    // found by schemathesis as a member: one's own (even one only being set up) was removed
    // through this route, which ended the session; one's own is turned off with a code
    let (status, _) = owner
        .status(Method::POST, "/v1/account/second-factor", None)
        .await;
    assert_eq!(status, 201);
    let (status, body) = owner
        .status(
            Method::DELETE,
            &format!("/v1/members/{olga}/second-factor"),
            None,
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Account page"));
    let (status, _) = owner.status(Method::GET, "/v1/whoami", None).await;
    assert_eq!(status, 200);

    // ann sets up a new one and turns it off herself, with a code
    let ann = browser(&app, sign_in(&app, "ann", PASSWORD).await).await;
    // …one only being set up is not there for an owner to remove
    let (status, _) = ann
        .status(Method::POST, "/v1/account/second-factor", None)
        .await;
    assert_eq!(status, 201);
    let (status, body) = owner
        .status(
            Method::DELETE,
            &format!("/v1/members/{id}/second-factor"),
            None,
        )
        .await;
    assert_eq!(status, 404, "{body}");
    let now = turn_on(&app, &ann, &id).await;
    let (status, _) = ann
        .status(
            Method::POST,
            "/v1/account/second-factor/disable",
            Some(json!({ "code": app_code(&app, &id, now).await })),
        )
        .await;
    assert_eq!(status, 400, "a spent code does not turn it off");
    let (status, _) = ann
        .status(
            Method::POST,
            "/v1/account/second-factor/disable",
            Some(json!({ "code": app_code(&app, &id, now + 1).await })),
        )
        .await;
    assert_eq!(status, 200);
    let (_, off) = ann
        .status(Method::GET, "/v1/account/second-factor", None)
        .await;
    assert_eq!(off["state"], "off");

    // the audit log has each change once
    let (_, page) = owner
        .status(Method::GET, "/v1/audit?action=member.*&target=ann", None)
        .await;
    let actions: Vec<&str> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|e| e["action"].as_str().unwrap())
        .filter(|a| a.contains("second_factor") || a.contains("recovery"))
        .collect();
    assert_eq!(
        actions,
        [
            "member.second_factor_enable",
            "member.second_factor_reset",
            "member.second_factor_enable",
            "member.second_factor_disable"
        ]
    );
}

/// Docs/api.md "Members": a member changes their own password with the current one; their
/// sessions end, the old password stops working, the change is in the audit log.
#[tokio::test]
async fn members_change_their_own_password() {
    let app = spawn().await;
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    let ann = member(&app, "ann", Grant::everywhere(Role::Viewer)).await;
    const NEW: &str = "marble Otter lantern 42";
    let change =
        |current: &str, new: &str| json!({ "currentPassword": current, "newPassword": new });
    let (status, body) = ann
        .status(
            Method::POST,
            "/v1/account/password",
            Some(change("wrong password!", NEW)),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`currentPassword`"));
    let (status, body) = ann
        .status(
            Method::POST,
            "/v1/account/password",
            Some(change(PASSWORD, "password123")),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`newPassword`"));
    let (status, body) = ann
        .status(
            Method::POST,
            "/v1/account/password",
            Some(change(PASSWORD, NEW)),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["sessionsEnded"].as_u64().unwrap() >= 1);
    let (status, _) = ann.status(Method::GET, "/v1/whoami", None).await;
    assert_eq!(status, 401, "this session ended too");
    assert_eq!(sign_in(&app, "ann", PASSWORD).await.status(), 401);
    assert_eq!(sign_in(&app, "ann", NEW).await.status(), 200);
    let (_, page) = owner
        .status(Method::GET, "/v1/audit?action=member.password_change", None)
        .await;
    let events = page["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{page}");
    assert_eq!(events[0]["actor"]["label"], "ann");
    assert_eq!(events[0]["via"], "console");
    // API keys have no password
    let res = app
        .post("/v1/account/password", &app.dev_key)
        .json(&change(PASSWORD, NEW))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
}

/// Found by schemathesis as a member: putting a member's own grant again (unchanged) ended their
/// session. The same grant changes nothing, so nothing ends; a changed one ends them.
#[tokio::test]
async fn the_same_grant_again_ends_no_session() {
    let app = spawn().await;
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    let ann = member(&app, "ann", Grant::everywhere(Role::Viewer)).await;
    let same = json!({ "role": "owner", "servers": [], "allowPaths": [], "denyPaths": [] });
    let (status, body) = owner
        .status(
            Method::PUT,
            &format!("/v1/members/{}", owner.member_id("olga").await),
            Some(same),
        )
        .await;
    assert_eq!(
        (status, body["sessionsEnded"].as_u64()),
        (200, Some(0)),
        "{body}"
    );
    let (status, _) = owner.status(Method::GET, "/v1/whoami", None).await;
    assert_eq!(status, 200, "olga is still signed in");
    let (_, body) = owner
        .status(
            Method::PUT,
            &format!("/v1/members/{}", owner.member_id("ann").await),
            Some(json!({ "role": "moderator" })),
        )
        .await;
    assert_eq!(body["sessionsEnded"], 1, "{body}");
    let (status, _) = ann.status(Method::GET, "/v1/whoami", None).await;
    assert_eq!(status, 401);
}

/// Wrong second-factor codes add up on the sign-in name even though the password is right each
/// time (a right password used to clear the count, so codes could be guessed without waits).
#[tokio::test]
async fn wrong_codes_add_up_even_with_the_right_password() {
    let app = spawn().await;
    let ann = member(&app, "ann", Grant::everywhere(Role::Viewer)).await;
    let (_, me) = ann.status(Method::GET, "/v1/whoami", None).await;
    let id = auth_core::MemberId::new(me["member"]["id"].as_str().unwrap());
    let step = turn_on(&app, &ann, &id).await;
    let valid: Vec<String> = futures::future::join_all(
        [step - 1, step, step + 1, step + 2].map(|s| app_code(&app, &id, s)),
    )
    .await;
    let wrong = (0..1000)
        .map(|n| format!("{n:06}"))
        .find(|c| !valid.contains(c))
        .unwrap();
    let attempt = |code: String| {
        let app = &app;
        async move {
            console_post(
                app,
                "/session",
                json!({ "login": "ann", "password": PASSWORD, "code": code }),
            )
            .await
            .status()
            .as_u16()
        }
    };
    // five wrong codes, as five wrong passwords, and the name waits
    for _ in 0..5 {
        assert_eq!(attempt(wrong.clone()).await, 401);
    }
    assert_eq!(
        attempt(app_code(&app, &id, step + 1).await).await,
        429,
        "even a right code waits its turn"
    );
}

/// A password and a second factor are the person's, not one membership's: an admin or owner of
/// one organization may not change them for someone who also belongs to an organization they do
/// not manage (the reported takeover: an admin of A reset the second factor and the password of an
/// owner of A and B, then signed in to B as them). Someone who manages them everywhere may.
#[tokio::test]
async fn credentials_of_a_member_of_another_organization_are_out_of_reach() {
    let app = spawn().await;
    let other = app
        .accounts
        .create_org("Other", "other", "pro")
        .await
        .unwrap();
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    let admin = member(&app, "adam", Grant::everywhere(Role::Admin)).await;
    let vic = member(&app, "vic", Grant::everywhere(Role::Viewer)).await;
    join(&app, &other.id, "vic", Grant::everywhere(Role::Owner)).await;
    let (_, me) = vic.status(Method::GET, "/v1/whoami", None).await;
    let vic_id = auth_core::MemberId::new(me["member"]["id"].as_str().unwrap());
    turn_on(&app, &vic, &vic_id).await;

    for (who, actor) in [("admin", &admin), ("owner", &owner)] {
        let (status, body) = actor
            .status(
                Method::DELETE,
                &format!("/v1/members/{vic_id}/second-factor"),
                None,
            )
            .await;
        assert_eq!(status, 403, "{who}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("another organization"),
            "{body}"
        );
        let (status, body) = actor
            .status(
                Method::POST,
                &format!("/v1/members/{vic_id}/password-reset"),
                None,
            )
            .await;
        assert_eq!(status, 403, "{who}: {body}");
    }
    assert!(
        app.accounts.second_factor(&vic_id).await.unwrap().is_some(),
        "vic's second factor stays"
    );
    // the list says where the credential actions work
    let (_, listed) = admin.status(Method::GET, "/v1/members", None).await;
    let in_reach = |login: &str| {
        listed["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["login"] == login)
            .unwrap()["credentialsInReach"]
            .clone()
    };
    assert_eq!(in_reach("vic"), false, "{listed}");
    assert_eq!(
        in_reach("adam"),
        true,
        "one's own: a reset link works for oneself"
    );
    assert_eq!(in_reach("olga"), false, "an admin and an owner");
    let (_, listed_by_owner) = owner.status(Method::GET, "/v1/members", None).await;
    let adam = listed_by_owner["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["login"] == "adam")
        .unwrap()
        .clone();
    assert_eq!(adam["credentialsInReach"], true, "{adam}");

    // a link made while the person belonged here alone stops working when they join elsewhere
    let ann = member(&app, "ann", Grant::everywhere(Role::Viewer)).await;
    let ann_id = owner.member_id("ann").await;
    let (status, made) = admin
        .status(
            Method::POST,
            &format!("/v1/members/{ann_id}/password-reset"),
            None,
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().unwrap().to_owned();
    join(&app, &other.id, "ann", Grant::everywhere(Role::Viewer)).await;
    let preview = console_post(&app, "/password-reset/preview", json!({ "token": token })).await;
    expect_error(preview, 403, "FORBIDDEN").await;
    let used = console_post(
        &app,
        "/password-reset",
        json!({ "token": token, "password": "violet Harbor lantern 42" }),
    )
    .await;
    expect_error(used, 403, "FORBIDDEN").await;
    assert_eq!(sign_in(&app, "ann", PASSWORD).await.status(), 200);
    drop(ann);

    // an owner of both organizations reaches vic in each: allowed
    join(&app, &other.id, "olga", Grant::everywhere(Role::Owner)).await;
    let (status, body) = owner
        .status(
            Method::DELETE,
            &format!("/v1/members/{vic_id}/second-factor"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = owner
        .status(
            Method::POST,
            &format!("/v1/members/{vic_id}/password-reset"),
            None,
        )
        .await;
    assert_eq!(status, 201, "{body}");
    // the refusals are in the audit log, as attempts
    let refused = app
        .count(
            "SELECT count(*) AS n FROM audit_events WHERE refused IS NOT NULL AND target = 'vic'",
        )
        .await;
    assert_eq!(refused, 4, "two actors × two routes");
}

/// A member's refused upload names their role, as every other refusal does (it said "this key");
/// a query parameter of the wrong type is named (`GET /v1/audit?limit=ten` named nothing).
#[tokio::test]
async fn refusals_name_the_role_and_the_field() {
    let app = spawn().await;
    let grant = Grant {
        paths: PathScope::new(vec!["mugshots".into()], vec![]),
        ..Grant::everywhere(Role::Admin)
    };
    let ada = member(&app, "ada", grant).await;
    let (status, body) = ada
        .status(
            Method::POST,
            "/v1/objects/base64",
            Some(json!({ "path": "screenshots", "filename": "a.txt", "data": "aGk=" })),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["message"],
        "`screenshots/a.txt` is outside the paths your role (admin) may write",
        "{body}"
    );
    let (status, body) = ada.status(Method::GET, "/v1/audit?limit=ten", None).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("`limit`: invalid digit"),
        "{body}"
    );
}

async fn sign_in_from(
    app: &TestApp,
    address: &str,
    login: &str,
    password: &str,
) -> reqwest::Response {
    app.client
        .post(format!("{}/session", app.console))
        .header("X-Forwarded-For", address)
        .json(&json!({ "login": login, "password": password }))
        .send()
        .await
        .unwrap()
}

/// Wrong passwords for a name make *their* address wait, not the name's owner signing in from
/// elsewhere (anyone who knew a sign-in name could keep its owner out for good); and an IPv6
/// client is one client per /64 for the per-address limit (each of its addresses was a fresh
/// allowance).
#[tokio::test]
async fn a_guesser_does_not_lock_out_the_owner_and_an_ipv6_64_is_one_client() {
    let app = spawn_with(Options {
        tweak: |c| c.trusted_proxies = stow_http::config::parse_proxies("127.0.0.0/8").unwrap(),
        ..Options::default()
    })
    .await;
    member(&app, "ana", Grant::everywhere(Role::Viewer)).await;
    let guesser = "203.0.113.7";
    for _ in 0..5 {
        let res = sign_in_from(&app, guesser, "ana", "a wrong guess, again").await;
        assert_eq!(res.status(), 401);
    }
    let held = sign_in_from(&app, guesser, "ana", "a wrong guess, again").await;
    expect_error_mentioning(held, 429, "RATE_LIMITED", "too many wrong passwords").await;
    // ana, from home, with her password
    let home = sign_in_from(&app, "198.51.100.20", "ana", PASSWORD).await;
    assert_eq!(home.status(), 200, "the owner is not locked out");

    // ten attempts from one /64, each from another of its addresses, then 429
    let mut statuses = Vec::new();
    for i in 1..=11 {
        let res = sign_in_from(&app, &format!("2001:db8:1:2::{i:x}"), &format!("n{i}"), "x").await;
        statuses.push(res.status().as_u16());
    }
    assert_eq!(statuses[..10], [401; 10]);
    assert_eq!(statuses[10], 429, "{statuses:?}");
}

/// An alert rule made by a member follows the member's servers: when an owner narrows the
/// member's grant to one server, the rule (on a saved search of every server) stops sending the
/// other server's events from the next commit on.
#[tokio::test]
async fn a_members_alert_rule_follows_their_servers_when_they_shrink() {
    let app = spawn().await;
    let other = app.second_server("srvb").await;
    let mut hook = stowage_tests::receiver::Receiver::start();
    let owner = member(&app, "olga", Grant::everywhere(Role::Owner)).await;
    let adam = member(&app, "adam", Grant::everywhere(Role::Admin)).await;
    let made = |body: Value, path: &'static str, pointer: &'static str| {
        let adam = &adam;
        async move {
            let (status, answer) = adam.status(Method::POST, path, Some(body)).await;
            assert_eq!(status, 201, "{answer}");
            answer
                .pointer(pointer)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let search = made(
        json!({ "name": "Bans", "search": { "eventType": "admin.ban" } }),
        "/v1/logs/saved-searches",
        "/savedSearch/id",
    )
    .await;
    let dst = made(
        json!({ "name": "Hook", "kind": "webhook", "url": hook.url }),
        "/v1/logs/destinations",
        "/destination/id",
    )
    .await;
    made(
        json!({ "name": "Bans", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
        "/v1/logs/alert-rules",
        "/alertRule/id",
    )
    .await;
    let ban = |message: &str| json!({ "level": "warn", "message": message, "event_type": "admin.ban", "player_id": "7" });
    app.ingest_logs_on(&other.cfx_id, "shrink-batch-b1", vec![ban("b before")])
        .await;
    assert_eq!(hook.next().await.body["events"][0]["message"], "b before");
    // olga narrows adam to the first server
    let adam_id = owner.member_id("adam").await;
    let (status, body) = owner
        .status(
            Method::PUT,
            &format!("/v1/members/{adam_id}"),
            Some(json!({ "role": "admin", "servers": ["abc123"] })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    app.ingest_logs_on(&other.cfx_id, "shrink-batch-b2", vec![ban("b after")])
        .await;
    app.ingest_logs("shrink-batch-a1", vec![ban("a after")])
        .await;
    assert_eq!(
        hook.next().await.body["events"][0]["message"],
        "a after",
        "the other server's ban was not sent"
    );
    assert!(hook.drain().is_empty());
}
