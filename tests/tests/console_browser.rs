#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The console in headless Chromium through ChromeDriver (`just e2e`, part of `just test`): a test
//! per flow of docs/console.md, each on a fresh app and browser, so a failure names its flow; and a
//! screenshot of every page at desktop and phone width under `target/console-screenshots/`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use auth_core::{Permission, PermissionSet};
use fantoccini::{Client, ClientBuilder, Locator};
use stowage_tests::*;

const DESKTOP: (u32, u32) = (1280, 800);
/// How many times a condition is polled, 50 ms apart (30 s: generous for a loaded CI machine).
const POLLS: u32 = 600;
const PHONE: (u32, u32) = (390, 844);

struct Browser {
    client: Client,
    _driver: tokio::process::Child,
    shots: PathBuf,
    downloads: PathBuf,
}

impl Browser {
    async fn start() -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = tokio::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver is installed (`just e2e` installs it)");
        let downloads =
            std::env::temp_dir().join(format!("stowage-downloads-{}", ulid::Ulid::new()));
        std::fs::create_dir_all(&downloads).unwrap();
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                             "--window-size=1280,800", "--no-first-run", "--disable-background-networking"],
                    "prefs": { "download.default_directory": downloads.display().to_string(),
                               "download.prompt_for_download": false } }),
        );
        // ChromeDriver takes a moment to listen: retry the session until it answers (bounded)
        let mut client = None;
        for _ in 0..100 {
            match ClientBuilder::rustls()
                .unwrap()
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
            {
                Ok(c) => {
                    client = Some(c);
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
        let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/console-screenshots");
        std::fs::create_dir_all(&shots).unwrap();
        Self {
            client: client.expect("a ChromeDriver session within 10 s"),
            _driver: driver,
            shots,
            downloads,
        }
    }

    /// The one finished download whose name ends with `suffix` (waits for it, bounded).
    async fn downloaded(&self, suffix: &str) -> (String, String) {
        let (name, bytes) = self.downloaded_bytes(suffix).await;
        (name, String::from_utf8(bytes).unwrap())
    }

    /// [`Self::downloaded`] as bytes (an archive).
    async fn downloaded_bytes(&self, suffix: &str) -> (String, Vec<u8>) {
        for _ in 0..POLLS {
            let done = std::fs::read_dir(&self.downloads)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .find(|n| n.ends_with(suffix));
            if let Some(name) = done {
                let body = std::fs::read(self.downloads.join(&name)).unwrap();
                return (name, body);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no download ending with {suffix} within 30 s");
    }

    /// Waits until `expr` (a JavaScript expression) is truthy; its last value.
    async fn until(&self, expr: &str) -> Value {
        for _ in 0..POLLS {
            let value = self
                .client
                .execute(&format!("return ({expr}) || null;"), vec![])
                .await
                .unwrap();
            if !value.is_null() && value != Value::Bool(false) {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("not true within 30 s: {expr}");
    }

    async fn js(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    async fn text(&self, css: &str) -> String {
        self.until(&format!("document.querySelector({css:?})"))
            .await;
        self.js(&format!(
            "return document.querySelector({css:?}).innerText;"
        ))
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
    }

    async fn click(&self, css: &str) {
        self.until(&format!("document.querySelector({css:?})"))
            .await;
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }

    /// Clicks the first button whose text is `label` (dialogs' buttons have no ids).
    async fn button(&self, label: &str) {
        let expr = format!("[...document.querySelectorAll('button, a.button, label.button')].find(b => b.innerText.trim() === {label:?})");
        self.until(&expr).await;
        self.client
            .execute(&format!("({expr}).click();"), vec![])
            .await
            .unwrap();
    }

    /// The page at desktop and phone width, saved as `<name>-desktop.png` and `<name>-phone.png`.
    async fn shoot(&self, name: &str) {
        self.shoot_at(name, None).await;
    }

    /// [`Self::shoot`] with `css` scrolled into view at each width.
    async fn shoot_at(&self, name: &str, css: Option<&str>) {
        // every visible control has a name a screen reader can say
        let unlabelled = self
            .js(
                "return [...document.querySelectorAll('input, select, textarea, button, a[href]')]
                   .filter(e => e.offsetParent !== null && e.type !== 'hidden' && e.type !== 'file')
                   .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')
                                && !(e.innerText || '').trim())
                   .map(e => e.outerHTML.slice(0, 80));",
            )
            .await;
        assert_eq!(unlabelled, json!([]), "{name}: unlabelled controls");
        for ((w, h), size) in [(DESKTOP, "desktop"), (PHONE, "phone")] {
            self.client.set_window_size(w, h).await.unwrap();
            if let Some(css) = css {
                self.js(&format!(
                    "document.querySelector({css:?}).scrollIntoView(); return true;"
                ))
                .await;
            }
            // layout settles on the next frame
            self.client
                .execute_async(
                    "requestAnimationFrame(() => requestAnimationFrame(arguments[0]));",
                    vec![],
                )
                .await
                .unwrap();
            let png = self.client.screenshot().await.unwrap();
            std::fs::write(self.shots.join(format!("{name}-{size}.png")), png).unwrap();
        }
        self.client
            .set_window_size(DESKTOP.0, DESKTOP.1)
            .await
            .unwrap();
    }

    /// Chooses `files` (name, bytes) in the page's file picker.
    async fn pick(&self, files: &[(&str, &[u8])]) {
        let paths: Vec<String> = files.iter().map(|(n, b)| fixture(n, b)).collect();
        self.client
            .find(Locator::Css("#file-picker"))
            .await
            .unwrap()
            .send_keys(&paths.join("\n"))
            .await
            .unwrap();
    }

    /// Waits until the listing shows an entry named `name`.
    /// Types `text` into the input `css` names.
    async fn type_into(&self, css: &str, text: &str) {
        self.click(css).await;
        let input = self.client.find(Locator::Css(css)).await.unwrap();
        input.send_keys(text).await.unwrap();
    }

    async fn listed(&self, name: &str) {
        self.until(&format!(
            "[...document.querySelectorAll('#listing td')].some(t => t.innerText === {name:?})"
        ))
        .await;
    }

    async fn sign_in(&self, console: &str, key: &str) {
        self.client.goto(&format!("{console}/")).await.unwrap();
        self.button("Use an API key instead").await;
        self.click("input[name=key]").await;
        let input = self
            .client
            .find(Locator::Css("input[name=key]"))
            .await
            .unwrap();
        input.send_keys(key).await.unwrap();
        self.click("form button[type=submit]").await;
        self.until("document.querySelector('#nav') && !document.querySelector('#nav').hidden")
            .await;
    }
}

fn fixture(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("stowage-console-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

/// A 2×2 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a,
    0x73, 0x00, 0x00, 0x00, 0x16, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x9f, 0x81, 0x81, 0xe1, 0x3f, 0x03, 0x03, 0xc3, 0x7f, 0x06, 0x00, 0x1f, 0xed, 0x04, 0xfc, 0x9a,
    0x50, 0x45, 0x4e, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A valid `w` × `h` PNG (image's encoder; [`PNG`] is a browser-tolerated one whose checksums
/// are wrong, which renditions refuse to decode).
fn picture(w: u32, h: u32) -> Vec<u8> {
    use stow_images::fixtures::{halves, png};
    png(&halves(w, h, [200, 40, 40], [40, 40, 200]))
}

/// A fresh app (public delivery on its own origin) and a browser on nothing yet.
async fn started() -> (TestApp, Browser, String) {
    let app = spawn_with(Options {
        local_delivery: true,
        ..Options::default()
    })
    .await;
    let console = app.console.clone();
    (app, Browser::start().await, console)
}

/// An invitation to the test organization for `role`, open for an hour (as `stowctl member
/// invite` makes one); its token.
async fn invitation(app: &TestApp, role: auth_core::roles::Role) -> String {
    invitation_in(app, &app.org.id, role).await
}

/// An invitation to organization `org` holding `role`; its token.
async fn invitation_in(
    app: &TestApp,
    org: &auth_core::OrgId,
    role: auth_core::roles::Role,
) -> String {
    use auth_core::member::MemberStore;
    let token = auth_core::console_session::new_token();
    let now = chrono::Utc::now();
    app.accounts
        .create_invitation(
            &auth_core::member::Invitation {
                id: auth_core::InvitationId::generate(),
                org_id: org.clone(),
                grant: auth_core::roles::Grant::everywhere(role),
                invited_by: None,
                token_hash: auth_core::console_session::token_hash(&token),
                note: None,
                created_at: now,
                expires_at: now + chrono::Duration::hours(1),
                accepted_at: None,
            },
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    token
}

/// A fresh app and a browser signed in to its console with the developer key.
async fn signed_in() -> (TestApp, Browser, String) {
    let (app, b, console) = started().await;
    b.sign_in(&console, &app.dev_key).await;
    (app, b, console)
}

/// An owner accepts the first invitation, invites a moderator for one server from the Members
/// page, and the moderator's console shows only that server and no Members page.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn members_invite_accept_and_a_moderators_view() {
    use auth_core::member::MemberStore;
    use auth_core::AccountStore;
    let (app, b, console) = started().await;
    app.accounts
        .register_server(
            &app.org.id,
            "other1",
            Some("Second"),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let token = invitation(&app, auth_core::roles::Role::Owner).await;
    const PASSWORD: &str = "tangerine Kettle orbit 77";
    let accept = |link: String, login: &'static str| {
        let b = &b;
        async move {
            b.client.goto(&link).await.unwrap();
            b.until("document.querySelector('input[autocomplete=new-password]')")
                .await;
            b.type_into("input[autocomplete=username]", login).await;
            b.type_into("input[autocomplete=name]", &login.to_uppercase())
                .await;
            b.type_into("input[autocomplete=new-password]", PASSWORD)
                .await;
        }
    };
    accept(format!("{console}/invite#{token}"), "olga").await;
    assert!(b.text("main h1").await.contains("Join Test Org"));
    b.shoot("invite").await;
    b.button("Accept and sign in").await;
    b.until(
        "document.querySelector('#nav-members') && !document.querySelector('#nav-members').hidden",
    )
    .await;
    assert!(b.text("#who").await.contains("OLGA (owner)"));

    // the owner invites a moderator of abc123 only
    b.click("#nav-members").await;
    b.until("document.querySelector('select[name=role]')").await;
    b.js("const r = document.querySelector('select[name=role]'); r.value = 'moderator'; return true;")
        .await;
    b.click("input[type=checkbox][value=abc123]").await;
    b.type_into("input[placeholder='screenshots, mugshots']", "team")
        .await;
    b.button("Make an invitation link").await;
    let link = b.text("code.secret").await;
    assert!(link.starts_with(&format!("{console}/invite#")), "{link}");
    b.shoot("members").await;

    // a reset link for a member, shown in a dialog
    b.button("Reset password").await;
    let reset = b.text("dialog code.secret").await;
    assert!(reset.starts_with(&format!("{console}/reset#")), "{reset}");
    b.button("Done").await;

    // a member who also belongs to another organization: their credentials are not the
    // owner's to reset here, and the row says so instead of offering the buttons
    let vic = invitation(&app, auth_core::roles::Role::Viewer).await;
    let accepted = app
        .client
        .post(format!("{console}/invitation/accept"))
        .json(&json!({ "token": vic, "login": "vic", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 200);
    let elsewhere = app
        .accounts
        .create_org("Elsewhere", "elsewhere", "pro")
        .await
        .unwrap();
    let there = invitation_in(&app, &elsewhere.id, auth_core::roles::Role::Owner).await;
    let joined = app
        .client
        .post(format!("{console}/invitation/accept"))
        .json(&json!({ "token": there, "login": "vic", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    assert_eq!(joined.status(), 200);
    b.client.goto(&format!("{console}/members")).await.unwrap();
    b.until("document.querySelectorAll('main table tbody tr').length >= 2")
        .await;
    let vic_row = b
        .js("return [...document.querySelectorAll('main table tbody tr')].find(r => r.textContent.includes('vic')).textContent;")
        .await;
    let vic_row = vic_row.as_str().unwrap_or_default().to_owned();
    assert!(vic_row.contains("Not in your reach"), "{vic_row}");
    assert!(!vic_row.contains("Reset password"), "{vic_row}");
    b.shoot("members-other-organization").await;
    // vic leaves this organization again (the member count below is the flow's own)
    let vic_id = app.accounts.find_member("vic").await.unwrap().unwrap().id;
    app.accounts
        .remove_member(
            &app.org.id,
            &vic_id,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();

    // the owner makes a read key for abc123 and sees its secret once
    b.click("#nav-keys").await;
    b.until("document.querySelector('input[type=checkbox][value=\"logs:read\"]')")
        .await;
    b.type_into("form input[type=text]", "bans bot").await;
    b.click("input[type=checkbox][value=\"logs:read\"]").await;
    b.click("form input[type=checkbox][value=abc123]").await;
    b.button("Make the key").await;
    let secret = b.text("form code.secret").await;
    assert!(secret.starts_with("stw_dev_"), "{secret}");
    b.shoot_at("keys", Some("form code.secret")).await;
    b.client.goto(&format!("{console}/keys")).await.unwrap();
    b.until("document.querySelector('main table')").await;
    assert!(!b.text("main").await.contains(&secret), "shown once");
    // the test's server key acts on its own server only, and its row says so (it said "all")
    let table = b.text("main table").await;
    assert!(table.contains("abc123 only"), "{table}");
    b.shoot_at("keys-list", Some("main table")).await;
    let who = app.get_json("/v1/whoami", &secret).await;
    assert_eq!(who["permissions"]["logs"], json!(["read"]));
    assert_eq!(who["logServerIds"], json!([app.server.id]));

    // the moderator accepts in a fresh session and sees one server, no Members
    b.button("Sign out").await;
    accept(link, "mod").await;
    b.button("Accept and sign in").await;
    b.until("document.querySelector('.stat')").await;
    assert!(b.text("#who").await.contains("(moderator)"));
    let servers = b.text("main table").await;
    assert!(
        servers.contains("abc123") && !servers.contains("other1"),
        "{servers}"
    );
    assert!(
        b.js("return document.querySelector('#nav-members').hidden;")
            .await
            == Value::Bool(true)
    );
    b.shoot("moderator-overview").await;
    // …and their paths only: the Files page offers their folder, and another is refused
    for (name, folder) in [("a.png", "team"), ("b.png", "secret")] {
        let res = app
            .upload(&app.dev_key, name, PNG.to_vec(), Some(folder))
            .await;
        assert!(res.status().is_success());
    }
    b.client.goto(&format!("{console}/objects")).await.unwrap();
    let offered = b.text("ul.folders").await;
    assert_eq!(offered.trim(), "team/");
    b.click("a.folder").await;
    b.listed("a.png").await;
    b.client
        .goto(&format!("{console}/objects?path=secret"))
        .await
        .unwrap();
    let refused = b.text("#listing .error-box").await;
    assert!(
        refused.contains("outside the paths your role (moderator) may read"),
        "{refused}"
    );
    assert!(
        !refused.contains("Try again"),
        "a refusal cannot succeed: {refused}"
    );
    let members = app.accounts.list_members(&app.org.id).await.unwrap();
    assert_eq!(members.len(), 2);
    b.client.close().await.unwrap();
}

/// A member (an owner who joined through an invitation) deletes a file in the console; the
/// audit log page shows that delete with their name, and filters to it.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn the_audit_log_shows_a_delete_by_a_member() {
    let (app, b, console) = started().await;
    let token = invitation(&app, auth_core::roles::Role::Owner).await;
    for name in ["gone.png", "kept.png"] {
        let res = app
            .upload(&app.dev_key, name, PNG.to_vec(), Some("shots"))
            .await;
        assert!(res.status().is_success(), "{}", res.status());
    }
    b.client
        .goto(&format!("{console}/invite#{token}"))
        .await
        .unwrap();
    b.until("document.querySelector('input[autocomplete=new-password]')")
        .await;
    b.type_into("input[autocomplete=username]", "olga").await;
    b.type_into(
        "input[autocomplete=new-password]",
        "tangerine Kettle orbit 77",
    )
    .await;
    b.button("Accept and sign in").await;
    b.until("document.querySelector('#nav-audit') && !document.querySelector('#nav-audit').hidden")
        .await;

    // olga deletes one file
    b.client
        .goto(&format!("{console}/objects?path=shots"))
        .await
        .unwrap();
    b.click("input[aria-label='Select gone.png']").await;
    b.button("Delete selected (1)").await;
    b.until("document.querySelector('dialog')?.innerText.includes('shots/gone.png')")
        .await;
    b.button("Delete").await;
    b.until("![...document.querySelectorAll('#listing td')].some(t => t.innerText === 'gone.png')")
        .await;

    // the audit log names her, the door, the action and the key
    b.click("#nav-audit").await;
    b.until("document.querySelector('main tbody tr td code')")
        .await;
    let first = b.text("main tbody tr").await;
    assert!(first.contains("olga"), "{first}");
    assert!(first.contains("member · console"), "{first}");
    assert!(first.contains("object.delete"), "{first}");
    assert!(first.contains("shots/gone.png"), "{first}");
    b.shoot("audit").await;
    // exactly one delete entry, and filtering by target finds it
    b.client
        .goto(&format!(
            "{console}/audit?action=object.delete&target=shots%2F"
        ))
        .await
        .unwrap();
    b.until("document.querySelector('main tbody tr td code')")
        .await;
    let rows = b
        .js("return document.querySelectorAll('main tbody tr').length;")
        .await;
    assert_eq!(rows, json!(1));
    assert!(b.text("main tbody").await.contains("shots/gone.png"));
    b.client.close().await.unwrap();
}

/// A member turns on two-step sign-in on their Account page (QR code, a code from the app,
/// recovery codes shown once), and the next sign-in asks for a code after the password.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn a_member_turns_on_two_step_sign_in() {
    use auth_core::member::MemberStore;
    let (app, b, console) = started().await;
    let token = invitation(&app, auth_core::roles::Role::Viewer).await;
    const PASSWORD: &str = "tangerine Kettle orbit 77";
    b.client
        .goto(&format!("{console}/invite#{token}"))
        .await
        .unwrap();
    b.until("document.querySelector('input[autocomplete=new-password]')")
        .await;
    b.type_into("input[autocomplete=username]", "vera").await;
    b.type_into("input[autocomplete=new-password]", PASSWORD)
        .await;
    b.button("Accept and sign in").await;
    b.until(
        "document.querySelector('#nav-account') && !document.querySelector('#nav-account').hidden",
    )
    .await;
    let member = app.accounts.find_member("vera").await.unwrap().unwrap();
    let code_at = |step: u64| {
        let app = &app;
        let id = member.id.clone();
        async move {
            let factor = app.accounts.second_factor(&id).await.unwrap().unwrap();
            let secret = auth_core::second_factor::SealKey::new([42; 32])
                .open(&id, &factor.sealed_secret)
                .unwrap();
            auth_core::second_factor::code_at(&secret, step)
        }
    };
    let step_now = || auth_core::second_factor::step_of(chrono::Utc::now().timestamp() as u64);

    b.click("#nav-account").await;
    b.button("Set up two-step sign-in").await;
    b.until("document.querySelector('svg.qr') && document.querySelector('#totp-secret')")
        .await;
    b.shoot("account-setup").await;
    let step = step_now();
    b.type_into("input[autocomplete=one-time-code]", &code_at(step).await)
        .await;
    b.button("Turn on").await;
    b.until("document.querySelector('#recovery-codes')").await;
    let codes = b.text("#recovery-codes").await;
    assert_eq!(codes.lines().count(), 10, "{codes}");
    b.shoot_at("account-recovery-codes", Some("#recovery-codes"))
        .await;
    b.button("I saved them").await;
    b.until("document.querySelector('main')?.innerText.includes('Recovery codes left: 10')")
        .await;

    // the next sign-in asks for a code after the password
    b.button("Sign out").await;
    b.until("document.querySelector('input[name=password]')")
        .await;
    b.type_into("input[name=username]", "vera").await;
    b.type_into("input[name=password]", PASSWORD).await;
    b.click("form button[type=submit]").await;
    b.until("document.querySelector('#sign-in-code') && !document.querySelector('#sign-in-code').closest('.field').hidden")
        .await;
    assert!(b.text("form").await.contains("second factor"));
    b.shoot("sign-in-code").await;
    b.type_into("#sign-in-code", &code_at(step + 1).await).await;
    b.click("form button[type=submit]").await;
    b.until("document.querySelector('#nav') && !document.querySelector('#nav').hidden")
        .await;
    assert!(b.text("#who").await.contains("vera"));

    // a new password from the Account page ends the session; a recovery code signs in after it
    const NEW: &str = "marble Otter lantern 42";
    b.click("#nav-account").await;
    b.type_into(
        "#change-password input[autocomplete=current-password]",
        PASSWORD,
    )
    .await;
    b.type_into("#change-password input[autocomplete=new-password]", NEW)
        .await;
    b.button("Change password").await;
    b.until(
        "document.querySelector('.form-error')?.innerText.includes('Your password was changed')",
    )
    .await;
    b.type_into("input[name=username]", "vera").await;
    b.type_into("input[name=password]", NEW).await;
    b.click("form button[type=submit]").await;
    b.until("document.querySelector('#sign-in-code') && !document.querySelector('#sign-in-code').closest('.field').hidden")
        .await;
    b.button("Use a recovery code instead").await;
    let first = codes.lines().next().unwrap().trim().to_owned();
    b.type_into("#sign-in-code", &first).await;
    b.click("form button[type=submit]").await;
    b.until("document.querySelector('#nav') && !document.querySelector('#nav').hidden")
        .await;
    b.client.close().await.unwrap();
}

/// Signing in with a key, the overview, and the first page's weight.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn sign_in_and_the_overview() {
    let (app, b, console) = started().await;
    app.ingest_logs(
        "overview-errors",
        vec![json!({ "level": "error", "message": "boom", "occurred_at": chrono::Utc::now().to_rfc3339() })],
    )
    .await;
    // sign in
    b.client.goto(&format!("{console}/")).await.unwrap();
    b.until("document.querySelector('input[name=password]')")
        .await;
    b.shoot("sign-in").await;
    b.button("Use an API key instead").await;
    b.until("document.querySelector('input[name=key]')").await;
    b.shoot("sign-in-key").await;
    b.sign_in(&console, &app.dev_key).await;
    b.text("main h1").await;
    b.until("document.querySelector('.stat')").await;
    // the errors of the last 24 hours, a link to them
    assert_eq!(b.text("main a.errors").await, "1");
    assert!(b
        .js("return document.querySelector('main a.errors').getAttribute('href');")
        .await
        .as_str()
        .unwrap()
        .ends_with("range=24h&levels=error,fatal"));
    b.shoot("overview").await;
    // at phone width "Search logs" stays on screen
    b.client.set_window_size(PHONE.0, PHONE.1).await.unwrap();
    let inside = b
        .js("const a = [...document.querySelectorAll('main a')].find(a => a.innerText === 'Search logs');
             const r = a.getBoundingClientRect(); return r.right <= window.innerWidth && r.width > 0;")
        .await;
    assert_eq!(inside, json!(true), "Search logs at phone width");
    b.client
        .set_window_size(DESKTOP.0, DESKTOP.1)
        .await
        .unwrap();
    // page weight and first render of a fresh load (docs/benchmarks.md quotes these)
    b.client.goto(&format!("{console}/overview")).await.unwrap();
    let rendered = b
        .until("document.querySelector('.stat') && performance.now()")
        .await;
    let bytes = b
        .js("return performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))
                .filter(e => !e.name.includes('/api/') && !e.name.includes('/session'))
                .reduce((n, e) => n + e.transferSize, 0);")
        .await;
    eprintln!("console first page: {bytes} bytes transferred (compressed), overview rendered at {rendered} ms");
    assert!(bytes.as_f64().unwrap() < 100_000.0, "{bytes}");
    assert!(b.text("main").await.contains("Test Org"));
    b.client.close().await.unwrap();
}

/// The search box finds files anywhere under the folder on the server (not among loaded rows),
/// the column heads sort them, the row whose details are open is marked, and the grid shows
/// thumbnails.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn files_search_sort_and_grid() {
    let (app, b, console) = signed_in().await;
    // in upload order (so by modification time): jay_1 first, notes last
    for (path, name, mime) in [
        ("shots/2026", "jay_1.png", "image/png"),
        ("shots", "JAY_2.png", "image/png"),
        ("shots", "mia.png", "image/png"),
        ("other", "jay.png", "image/png"),
        ("shots", "jay-notes.txt", "text/plain"),
    ] {
        let bytes = if mime == "text/plain" {
            b"notes".to_vec()
        } else {
            picture(64, 48)
        };
        app.put_file(path, name, bytes, mime, "{}").await;
    }
    b.client
        .goto(&format!("{console}/objects?path=shots"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#listing tbody tr').length === 4")
        .await;
    // the text is searched on the server, below every sub-folder
    b.type_into("#name-filter", "jay\n").await;
    b.until("new URLSearchParams(location.search).get('q') === 'jay'")
        .await;
    let names = "return [...document.querySelectorAll('#listing tbody tr button.link')].map(b => b.innerText);";
    b.until("document.querySelectorAll('#listing tbody tr').length === 3")
        .await;
    assert_eq!(
        b.js(names).await,
        json!(["2026/jay_1.png", "JAY_2.png", "jay-notes.txt"])
    );
    assert!(b
        .text("#search-scope")
        .await
        .contains("Every file under shots/ whose path contains “jay”"));
    // newest first, then oldest first
    b.click("th a.sort[title='Sort by modified']").await;
    b.until("new URLSearchParams(location.search).get('sort') === 'lastModified'")
        .await;
    b.until(
        "document.querySelector('#listing tbody tr button.link')?.innerText === 'jay-notes.txt'",
    )
    .await;
    assert_eq!(
        b.js(names).await,
        json!(["jay-notes.txt", "JAY_2.png", "2026/jay_1.png"])
    );
    b.click("th a.sort[title='Sort by modified']").await;
    b.until("new URLSearchParams(location.search).get('order') === 'asc'")
        .await;
    b.until(
        "document.querySelector('#listing tbody tr button.link')?.innerText === '2026/jay_1.png'",
    )
    .await;
    // the row whose details are open is marked
    b.click("#listing tbody tr:nth-child(2) button.link").await;
    b.until("document.querySelector('#details h2')?.innerText.includes('JAY_2.png') || document.querySelector('#details')?.innerText.includes('JAY_2.png')")
        .await;
    assert_eq!(
        b.js("return [...document.querySelectorAll('#listing tr.selected')].map(r => r.dataset.key);")
            .await,
        json!(["shots/JAY_2.png"])
    );
    b.shoot("files-search").await;
    // the grid: thumbnails made by delivery for the pictures, the name for the rest
    b.click("#view-grid").await;
    b.until("new URLSearchParams(location.search).get('view') === 'grid'")
        .await;
    b.until("document.querySelectorAll('#file-tiles .tile img').length === 2 && [...document.querySelectorAll('#file-tiles .tile img')].every(i => i.complete && i.naturalWidth > 0)")
        .await;
    assert_eq!(
        b.js("return document.querySelectorAll('#file-tiles .tile .tile-name').length;")
            .await,
        json!(1)
    );
    b.shoot("files-grid").await;
    // back to the folder: the folder view again
    b.click("#search-scope a").await;
    b.until("location.search === '?path=shots'").await;
    b.until("document.querySelectorAll('#listing tbody tr').length === 4")
        .await;
    // two files ticked, downloaded as one archive holding them under their paths
    b.click("#listing tbody tr[data-key='shots/JAY_2.png'] input[type=checkbox]")
        .await;
    b.click("#listing tbody tr[data-key='shots/mia.png'] input[type=checkbox]")
        .await;
    b.button("Download selected (2)").await;
    let (name, archive) = b.downloaded_bytes(".zip").await;
    assert_eq!(name, "stowage-files.zip");
    let reader = async_zip::base::read::mem::ZipFileReader::new(archive)
        .await
        .unwrap();
    let names: Vec<String> = reader
        .file()
        .entries()
        .iter()
        .map(|e| e.filename().as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["shots/JAY_2.png", "shots/mia.png"]);
    b.client.close().await.unwrap();
}

/// An upload never replaces a file silently: the console uploads create-only and asks — keep
/// both (a free name), replace, or skip.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn an_upload_over_an_existing_file_asks_first() {
    let (app, b, console) = signed_in().await;
    app.put_file("shots", "dup.txt", b"first".to_vec(), "text/plain", "{}")
        .await;
    b.client
        .goto(&format!("{console}/objects?path=shots"))
        .await
        .unwrap();
    b.listed("dup.txt").await;
    // keep both: the new one under the first free name
    b.pick(&[("dup.txt", b"second!")]).await;
    b.until("document.querySelector('dialog h2')?.innerText === 'Replace the existing file?'")
        .await;
    b.shoot("files-upload-exists").await;
    b.button("Keep both").await;
    b.listed("dup (2).txt").await;
    // replace: the same name, the new bytes
    b.pick(&[("dup.txt", b"third, longer")]).await;
    b.until("document.querySelector('dialog h2')?.innerText === 'Replace the existing file?'")
        .await;
    b.button("Replace").await;
    b.until("[...document.querySelectorAll('#listing tbody tr')].some(r => r.innerText.includes('dup.txt') && r.innerText.includes('13 B'))")
        .await;
    // skip: nothing changes
    b.pick(&[("dup.txt", b"fourth")]).await;
    b.until("document.querySelector('dialog h2')?.innerText === 'Replace the existing file?'")
        .await;
    b.button("Skip").await;
    b.until("[...document.querySelectorAll('#uploads .upload')].some(r => r.innerText.includes('skipped'))")
        .await;
    b.until("[...document.querySelectorAll('#toasts .toast')].some(t => t.innerText === '0 files uploaded, 1 skipped.')")
        .await;
    let body = app
        .client
        .get(format!("{}/cdn/test-org/shots/dup.txt", app.cdn))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, "third, longer");
    assert_eq!(
        b.js("return document.querySelectorAll('#listing tbody tr').length;")
            .await,
        json!(2)
    );
    // a text file's details show its text, framed from the delivery origin with no script
    b.click("#listing tbody tr[data-key='shots/dup.txt'] button.link")
        .await;
    let frame = b
        .until("document.querySelector('#details iframe.text-preview')?.getAttribute('src')")
        .await;
    assert!(
        frame
            .as_str()
            .unwrap()
            .ends_with("/cdn/test-org/shots/dup.txt"),
        "{frame}"
    );
    assert_eq!(
        b.js("return document.querySelector('#details iframe.text-preview').getAttribute('sandbox');")
            .await,
        json!("")
    );
    b.shoot("files-text-preview").await;
    // a new folder opens empty, ready for uploads
    b.button("New folder").await;
    b.type_into("dialog input[name=folder]", "2027").await;
    b.button("Open it").await;
    b.until("new URLSearchParams(location.search).get('path') === 'shots/2027'")
        .await;
    b.until("document.querySelector('#listing')?.innerText.includes('This folder is empty.')")
        .await;
    b.client.close().await.unwrap();
}

/// Uploads by picker and by drop, browsing folders, the details pane with its preview, purge, a placeholder and a rename.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn files_upload_browse_preview_placeholder_and_rename() {
    let (app, b, console) = signed_in().await;
    // files: empty state, upload by picker (two files) into a folder
    b.client.goto(&format!("{console}/objects")).await.unwrap();
    b.until("document.querySelector('#listing .empty')").await;
    b.shoot("files-empty").await;
    b.client
        .goto(&format!("{console}/objects?path=shots"))
        .await
        .unwrap();
    b.until("document.querySelector('#file-picker')").await;
    b.pick(&[("one.png", PNG), ("two.txt", b"hello")]).await;
    b.listed("two.txt").await;
    // drag-and-drop: a drop event carrying a file, as the browser makes one
    b.js("const dt = new DataTransfer(); dt.items.add(new File(['dropped bytes'], 'dropped.txt', {type: 'text/plain'}));
          document.querySelector('#listing').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
          return true;").await;
    b.listed("dropped.txt").await;
    assert_eq!(
        app.list_keys(&app.dev_key, Some("shots")).await,
        vec!["shots/dropped.txt", "shots/one.png", "shots/two.txt"]
    );
    // a per-file error: a file over the plan's limit is not possible here, so a refused type
    // shows on its own row — through an upload URL below instead

    // browse: root shows the folder, the folder link and the breadcrumbs lead back
    b.client.goto(&format!("{console}/objects")).await.unwrap();
    b.click("a.folder[href='/objects?path=shots']").await;
    b.until("document.querySelector('.crumbs [aria-current=page]')?.innerText === 'shots'")
        .await;
    b.shoot("files-folder").await;

    // preview and details: the image loads from the delivery origin
    b.button("one.png").await;
    b.until("document.querySelector('#details img.preview')?.naturalWidth === 2")
        .await;
    let url = b
        .js("return document.querySelector('#public-url').value;")
        .await;
    assert_eq!(
        url,
        json!(format!("{}/cdn/test-org/shots/one.png", app.cdn))
    );
    b.shoot("files-details").await;
    b.button("Purge caches").await;
    b.until("document.querySelector('#toasts')?.innerText.includes('purged')")
        .await;

    // a placeholder from its dialog
    b.button("Placeholders").await;
    b.until("document.querySelector('dialog input')").await;
    b.js("const i = document.querySelectorAll('dialog input'); i[0].value = 'shots/missing/*.png'; i[1].value = 'shots/one.png'; return true;")
        .await;
    b.button("Save").await;
    b.until("document.querySelector('#toasts')?.innerText.includes('Placeholder saved')")
        .await;
    let placeholders: Value = app.get("/v1/placeholders", &app.dev_key).json_body().await;
    assert_eq!(
        placeholders["placeholders"][0]["pattern"],
        "shots/missing/*.png"
    );
    assert_eq!(placeholders["placeholders"][0]["fallback"], "shots/one.png");
    // removed by its own row's button (not by typing the pattern again)
    b.button("Placeholders").await;
    b.click("dialog button[aria-label='Remove the placeholder shots/missing/*.png']")
        .await;
    b.until("document.querySelector('#toasts')?.innerText.includes('Placeholder shots/missing/*.png removed')")
        .await;
    let placeholders: Value = app.get("/v1/placeholders", &app.dev_key).json_body().await;
    assert_eq!(placeholders["placeholders"], json!([]));

    // a move onto a taken path says which box to tick, not the API's field
    app.put_file("shots", "taken.png", picture(8, 8), "image/png", "{}")
        .await;
    b.button("Rename or move").await;
    b.until("document.querySelector('dialog input[type=text]')")
        .await;
    b.js("const i = document.querySelector('dialog input[type=text]'); i.value = 'shots/taken.png'; return true;")
        .await;
    b.button("Move").await;
    let said = b
        .until("[...document.querySelectorAll('#toasts .toast')].map(t => t.innerText).find(t => t.includes('already at'))")
        .await;
    assert!(
        said.as_str()
            .unwrap()
            .contains("“Replace a file that already has this path” ticked")
            && !said.as_str().unwrap().contains("\"replace\""),
        "{said}"
    );

    // rename
    b.button("Rename or move").await;
    b.until("document.querySelector('dialog input[type=text]')")
        .await;
    b.js("const i = document.querySelector('dialog input[type=text]'); i.value = 'shots/renamed.png'; return true;")
        .await;
    b.button("Move").await;
    b.listed("renamed.png").await;
    b.client.close().await.unwrap();
}

/// An upload URL made in the console and used by a script, deleting selected files, deleting a folder.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn files_upload_url_and_deletes() {
    let (app, b, console) = signed_in().await;
    for (name, bytes) in [
        ("renamed.png", PNG),
        ("two.txt", &b"hello"[..]),
        ("dropped.txt", &b"dropped bytes"[..]),
    ] {
        let res = app
            .upload(&app.dev_key, name, bytes.to_vec(), Some("shots"))
            .await;
        assert_eq!(res.status(), 200);
    }
    b.client
        .goto(&format!("{console}/objects?path=shots"))
        .await
        .unwrap();
    b.listed("renamed.png").await;
    // an upload URL from the form, used by a "script"
    b.button("New upload URL").await;
    b.until("document.querySelector('dialog')").await;
    b.js("const i = [...document.querySelectorAll('dialog input')]; i[0].value = 'shots/from-script'; return true;")
        .await;
    b.button("Create").await;
    let upload_url = b
        .until("document.querySelector('#upload-url')?.value")
        .await;
    b.shoot("files-upload-url").await;
    b.button("Done").await;
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"from a script".to_vec()).file_name("script.txt"),
    );
    let res = app
        .client
        .post(upload_url.as_str().unwrap())
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    b.client
        .goto(&format!("{console}/objects?path=shots/from-script"))
        .await
        .unwrap();
    b.listed("script.txt").await;

    // delete two selected files
    b.client
        .goto(&format!("{console}/objects?path=shots"))
        .await
        .unwrap();
    for name in ["dropped.txt", "two.txt"] {
        b.click(&format!("input[aria-label='Select {name}']")).await;
    }
    b.button("Delete selected (2)").await;
    b.until("document.querySelector('dialog')?.innerText.includes('shots/two.txt')")
        .await;
    b.button("Delete").await;
    b.until("![...document.querySelectorAll('#listing td')].some(t => t.innerText === 'two.txt')")
        .await;
    assert_eq!(
        app.list_keys(&app.dev_key, Some("shots")).await,
        vec!["shots/from-script/script.txt", "shots/renamed.png"]
    );

    // delete the folder, after a confirmation that gives its count
    b.button("Delete this folder").await;
    let confirm = b.until("document.querySelector('dialog')?.innerText").await;
    assert!(
        confirm.as_str().unwrap().contains("2 files"),
        "the count is in the confirmation: {confirm}"
    );
    b.shoot("files-delete-folder").await;
    b.button("Delete 2 files").await;
    b.until("location.search === ''").await;
    assert!(app.list_keys(&app.dev_key, Some("shots")).await.is_empty());
    b.client.close().await.unwrap();
}

/// The log search: results, the histogram and its zoom, filters in the URL, an event's detail, export.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn logs_search_histogram_filters_and_export() {
    let (app, b, console) = signed_in().await;
    // logs: events of every level, the histogram counts them, filters, event detail
    let now = chrono::Utc::now();
    let events: Vec<Value> = (0..12)
        .map(|i| {
            let level = ["debug", "info", "warn", "error"][i % 4];
            json!({ "level": level, "event_type": if i % 2 == 0 { "player.join" } else { "chat" },
                    "message": format!("event number {i}"), "player_id": format!("p{i}"),
                    "occurred_at": (now - chrono::Duration::minutes(i as i64 * 3)).to_rfc3339() })
        })
        .collect();
    app.ingest_logs("console-batch-1", events).await;
    // and 100 older debug events, so the results need "Load more"
    let older: Vec<Value> = (0..100)
        .map(|i| json!({ "level": "debug", "message": format!("older {i}"),
                         "occurred_at": (now - chrono::Duration::minutes(55) + chrono::Duration::seconds(i)).to_rfc3339() }))
        .collect();
    app.ingest_logs("console-batch-0", older).await;
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=1h"))
        .await
        .unwrap();
    let total = b.until("document.querySelector('#total')?.innerText").await;
    assert!(total.as_str().unwrap().starts_with("112 events"), "{total}");
    b.until("document.querySelectorAll('#event-rows tr').length === 100")
        .await;
    // the histogram's bars add up to what was ingested, level by level
    let per_level = b
        .js(
            "const n = {}; for (const r of document.querySelectorAll('#histogram rect.bar'))
               n[r.dataset.level] = (n[r.dataset.level] || 0) + Number(r.dataset.count);
             return n;",
        )
        .await;
    assert_eq!(
        per_level,
        json!({ "debug": 103, "info": 3, "warn": 3, "error": 3 })
    );
    // the axis has ticks inside the window, the scale the tallest bucket's count
    let ticks = b
        .js("return document.querySelectorAll('#histogram .axis .tick').length;")
        .await;
    assert!((2..=9).contains(&ticks.as_i64().unwrap()), "{ticks}");
    assert_eq!(
        b.js("return Number(document.querySelector('#histogram .scale span').innerText) > 0;")
            .await,
        json!(true)
    );
    b.shoot("logs").await;
    b.button("Load more").await;
    b.until("document.querySelectorAll('#event-rows tr').length === 112 && !document.querySelector('#results .more')")
        .await;
    // selecting a span of the histogram zooms the range to it: the newest bar holds event 0 (the
    // bar, not the right edge: a bucket boundary may have passed since the events were made,
    // leaving the newest bucket empty)
    b.js("const svg = document.querySelector('#histogram svg'); const r = svg.getBoundingClientRect();
          const bars = [...document.querySelectorAll('#histogram rect.bar')].map(e => e.getBoundingClientRect());
          const x = Math.max(...bars.map(q => q.left + q.width / 2));
          const at = {clientX: x, clientY: r.top + r.height / 2, bubbles: true, pointerId: 1};
          svg.dispatchEvent(new PointerEvent('pointerdown', at)); svg.dispatchEvent(new PointerEvent('pointerup', at));
          return true;").await;
    b.until("location.search.includes('range=custom')").await;
    b.until("document.querySelectorAll('#event-rows tr').length === 1 && document.querySelector('#total')?.innerText.startsWith('1 event ')").await;
    assert_eq!(b.text("#event-rows td.msg").await, "event number 0");
    b.client.back().await.unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 100")
        .await;
    // a filter: warn and above ticks the level boxes, the one level control (the form puts the
    // search in the URL)
    b.client
        .find(Locator::Css("select[name=minLevel]"))
        .await
        .unwrap()
        .select_by_value("warn")
        .await
        .unwrap();
    assert_eq!(
        b.js("return [...document.querySelectorAll('input[name=level]:checked')].map(i => i.value).join(',');")
            .await,
        json!("warn,error,fatal")
    );
    b.button("Search").await;
    b.until("new URLSearchParams(location.search).get('levels') === 'warn,error,fatal' && !location.search.includes('minLevel')").await;
    b.until("document.querySelectorAll('#event-rows tr').length === 6")
        .await;
    let filtered_url = b.client.current_url().await.unwrap();
    // open an event (its message: the player cell is a link of its own)
    b.click("#event-rows tr td.msg").await;
    let detail = b
        .until("document.querySelector('dialog pre')?.textContent")
        .await;
    assert!(
        detail.as_str().unwrap().contains("\"event_id\""),
        "{detail}"
    );
    b.shoot("logs-event").await;
    b.button("Close").await;
    // back returns to the unfiltered search; the shared URL reproduces the filtered one
    b.client.back().await.unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 100")
        .await;
    b.client.goto(filtered_url.as_str()).await.unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 6")
        .await;
    assert_eq!(
        b.js("return [...document.querySelectorAll('input[name=level]:checked')].map(i => i.value).join(',');")
            .await,
        json!("warn,error,fatal")
    );
    // export downloads the current search (the session's cookie goes with the link)
    b.click("#export-ndjson").await;
    let (name, exported) = b.downloaded(".ndjson").await;
    assert!(name.starts_with("stowage-logs_abc123_"), "{name}");
    assert_eq!(exported.lines().count(), 6, "{exported}");
    assert!(exported
        .lines()
        .all(|l| l.contains(r#""level":"warn""#) || l.contains(r#""level":"error""#)));
    b.client.close().await.unwrap();
}

/// A long range: the 90-day preset (the `pro` plan keeps 90 days) finds an event of 40 days ago
/// and counts it; "Zoom out" widens the range a step at a time up to what the plan keeps; and at
/// 1280×800 the first results show without scrolling.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn logs_long_ranges_zoom_out_and_results_above_the_fold() {
    use diesel::sql_types::{Text, Timestamptz};
    use diesel_async::RunQueryDsl;
    let (app, b, console) = signed_in().await;
    let now = chrono::Utc::now();
    let events: Vec<Value> = (0..30)
        .map(|i| (i, ["info", "warn", "error"][i % 3]))
        .map(|(i, level)| json!({ "level": level, "event_type": "player.join", "resource": "core",
                         "message": format!("Player {i} joined"), "player_id": format!("{i}"),
                         "occurred_at": (now - chrono::Duration::minutes(i as i64 + 1)).to_rfc3339() }))
        .collect();
    app.ingest_logs("console-recent", events).await;
    // an event of 40 days ago, older than ingestion accepts: written as a long-lived server's
    // table holds it, with what ingestion keeps beside it
    let mut conn = app.db.conn().await.unwrap();
    diesel::sql_query(
        "INSERT INTO log_events (org_id, server_id, cfx_id, batch_id, ingested_at, event_id, level, \
         event_type, occurred_at, message) VALUES ($1, $2, 'abc123', 'history', now(), 'old-1', \
         'error', 'admin.ban', $3, 'banned forty days ago')",
    )
    .bind::<Text, _>(app.org.id.as_str())
    .bind::<Text, _>(app.server.id.as_str())
    .bind::<Timestamptz, _>(now - chrono::Duration::days(40))
    .execute(&mut conn)
    .await
    .unwrap();
    app.rebuild_log_summaries().await;
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=1h"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 30")
        .await;
    b.shoot("logs-first-screen").await;
    // the results start on the first screen: the first rows are visible without scrolling
    let fold = b
        .js("const rows = document.querySelectorAll('#event-rows tr');
             return [rows[0].getBoundingClientRect().top, rows[4].getBoundingClientRect().bottom, innerWidth, innerHeight];")
        .await;
    let fold: Vec<f64> = serde_json::from_value(fold).unwrap();
    assert!(fold[2] >= 1200.0, "a desktop window: {fold:?}");
    assert!(fold[1] <= fold[3], "five rows above the fold: {fold:?}");
    // the presets reach as far as the plan keeps
    let presets = b
        .js("return [...document.querySelectorAll('select[name=range] option')].map(o => o.value);")
        .await;
    assert_eq!(
        presets,
        json!(["15m", "1h", "6h", "24h", "7d", "30d", "90d", "custom"])
    );
    // zoom out: a preset grows to the next one
    b.click("#zoom-out").await;
    b.until("new URLSearchParams(location.search).get('range') === '6h'")
        .await;
    b.until("document.querySelector('#total')?.innerText.startsWith('30 events')")
        .await;
    // 90 days: the old event is searched and counted, in day buckets
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=90d"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 31")
        .await;
    assert_eq!(
        b.text("#event-rows tr:last-child td.msg").await,
        "banned forty days ago"
    );
    let total = b.until("document.querySelector('#total')?.innerText").await;
    assert_eq!(total, json!("31 events · 1d buckets"));
    assert_eq!(
        b.js("return document.querySelector('#zoom-out').disabled;")
            .await,
        json!(true),
        "nothing older is kept"
    );
    b.shoot("logs-90-days").await;
    // a custom range doubles around its middle
    let from =
        (now - chrono::Duration::hours(4)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let to = (now - chrono::Duration::hours(2)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    b.client
        .goto(&format!(
            "{console}/logs?server=abc123&range=custom&from={from}&to={to}"
        ))
        .await
        .unwrap();
    b.until("document.querySelector('#total')?.innerText").await;
    b.click("#zoom-out").await;
    let widened = b
        .until("location.search.includes('range=custom') && (Date.parse(new URLSearchParams(location.search).get('to')) - Date.parse(new URLSearchParams(location.search).get('from'))) / 3600000")
        .await;
    assert_eq!(widened, json!(4));
    b.client.close().await.unwrap();
}

/// A refusal reads in the console's words with the one action that can succeed: "Load more" of a
/// search whose cursor the service no longer takes offers "Search again", never "Try again".
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn a_stale_load_more_offers_search_again() {
    let (app, b, console) = signed_in().await;
    let now = chrono::Utc::now();
    let events: Vec<Value> = (0..105)
        .map(|i| {
            json!({ "level": "info", "message": format!("event {i}"),
                         "occurred_at": (now - chrono::Duration::seconds(i * 10)).to_rfc3339() })
        })
        .collect();
    app.ingest_logs("console-stale", events).await;
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=1h"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 100")
        .await;
    // the next page's cursor as a service that no longer takes it sees it (expired, or from
    // another search): changed on its way out
    b.js("const real = window.fetch;
          window.fetch = (url, init) => {
            if (init && typeof init.body === 'string' && init.body.includes('\"cursor\"'))
              init = { ...init, body: init.body.replace(/\"cursor\":\"[^\"]*\"/, '\"cursor\":\"stale\"') };
            return real(url, init);
          };
          return true;")
        .await;
    b.button("Load more").await;
    let text = b
        .until("document.querySelector('#results .error-box')?.innerText")
        .await;
    let text = text.as_str().unwrap();
    assert!(
        text.contains("can no longer be continued") && text.contains("Search again"),
        "{text}"
    );
    assert!(!text.contains("Try again"), "{text}");
    assert_eq!(
        b.js("return document.querySelectorAll('#event-rows tr').length;")
            .await,
        json!(100),
        "the rows loaded stay"
    );
    b.shoot_at("logs-stale-cursor", Some("#results .error-box"))
        .await;
    b.button("Search again").await;
    b.until("document.querySelectorAll('#event-rows tr').length === 100")
        .await;
    b.client.close().await.unwrap();
}

/// Top values beside the results filter or exclude with a click; exclusions show as chips that
/// undo them; the patterns view groups messages and opens a pattern's events.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn logs_facets_exclusions_and_patterns() {
    let (app, b, console) = signed_in().await;
    let now = chrono::Utc::now();
    let at = |i: i64| (now - chrono::Duration::minutes(i)).to_rfc3339();
    let mut events: Vec<Value> = (0..6)
        .map(|i| json!({ "level": "error", "event_type": "resource.error", "resource": "phone",
                         "message": format!("read ECONNRESET at 10.0.0.{i}:30120"), "occurred_at": at(i + 1) }))
        .collect();
    events.extend((0..3).map(|i| json!({ "level": "info", "event_type": "player.join", "resource": "core",
        "message": format!("Player {i} joined"), "player_id": format!("{i}"), "occurred_at": at(i + 10) })));
    events.extend((0..2).map(|i| {
        json!({ "level": "info", "event_type": "chat", "resource": "chat",
        "message": format!("gg {i}"), "occurred_at": at(i + 20) })
    }));
    app.ingest_logs("console-facets", events).await;
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=1h"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 11")
        .await;
    b.until("document.querySelectorAll('#facets .facet-value').length > 0")
        .await;
    let resources = b
        .js("return [...document.querySelectorAll('#facets .facet')].find(f => f.querySelector('h3').textContent === 'Resources')
               .querySelector('li').innerText;")
        .await;
    assert!(
        resources.as_str().unwrap().starts_with("phone"),
        "the most frequent resource first: {resources}"
    );
    b.shoot_at("logs-facets", Some("#facets")).await;
    // exclude the phone resource: its six events go, a chip says so and brings them back
    b.click("#facets a.facet-exclude[aria-label='Exclude phone']")
        .await;
    b.until("location.search.includes('exclude=')").await;
    b.until("document.querySelectorAll('#event-rows tr').length === 5")
        .await;
    assert_eq!(b.text("#exclusions .chip").await, "not resource: phone ×");
    b.until("document.querySelector('#total')?.innerText.startsWith('5 events')")
        .await;
    // a new search from the form keeps the exclusion
    b.type_into("input[name=message]", "joined").await;
    b.button("Search").await;
    b.until("location.search.includes('message=joined') && location.search.includes('exclude=')")
        .await;
    b.until("document.querySelectorAll('#event-rows tr').length === 3")
        .await;
    b.click("#exclusions .chip").await;
    b.until("!location.search.includes('exclude=')").await;
    // "Clear filters" keeps the range
    b.button("Clear filters").await;
    b.until("location.search === '?server=abc123&range=1h'")
        .await;
    b.until("document.querySelectorAll('#event-rows tr').length === 11")
        .await;
    // the players who acted or were acted on: a click searches one of them
    let players = b
        .until("[...document.querySelectorAll('#facets .facet')].find(f => f.querySelector('h3').textContent === 'Players')
                  ?.querySelectorAll('.facet-name').length")
        .await;
    assert_eq!(players, json!(3));
    b.click("#facets a.facet-value[title='Only 1']").await;
    b.until("new URLSearchParams(location.search).get('player') === '1'")
        .await;
    b.until("document.querySelectorAll('#event-rows tr').length === 1")
        .await;
    assert_eq!(b.text("#event-rows td.msg").await, "Player 1 joined");
    b.client.back().await.unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 11")
        .await;
    // patterns: six messages are one template; opening it searches its events
    b.click("#view-patterns").await;
    b.until("document.querySelectorAll('#pattern-rows tr').length === 3")
        .await;
    assert_eq!(
        b.text("#pattern-rows tr td.msg").await,
        "read ECONNRESET at <*>"
    );
    assert_eq!(b.text("#pattern-rows tr td.num").await, "6");
    b.shoot_at("logs-patterns", Some("#patterns")).await;
    b.click("#pattern-rows tr").await;
    b.until("location.search.includes('resource=phone') && location.search.includes('message=read+ECONNRESET+at')")
        .await;
    b.until("document.querySelectorAll('#event-rows tr').length === 6")
        .await;
    // the last server and preset range come back when a link names none
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=6h"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 11")
        .await;
    b.client.goto(&format!("{console}/logs")).await.unwrap();
    b.until("document.querySelector('select[name=range]')?.value === '6h'")
        .await;
    assert_eq!(
        b.js("return document.querySelector('select[name=server]').value;")
            .await,
        json!("abc123")
    );
    b.client.close().await.unwrap();
}

/// A player id in the results opens the player view: names, identifiers (each a link to the
/// same player by it), sessions and one timeline across servers.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn the_player_view_shows_one_player_across_servers() {
    let (app, b, console) = signed_in().await;
    app.second_server("other1").await;
    let now = chrono::Utc::now();
    let at = |i: i64| (now - chrono::Duration::minutes(i)).to_rfc3339();
    let jay = json!({ "license": "license:abc", "discord": "discord:77" });
    app.ingest_logs(
        "console-player-1",
        vec![
            json!({ "level": "info", "event_type": "player.join", "message": "Jay joined", "occurred_at": at(50),
                    "player_id": "12", "player_identifiers": jay, "data": { "playerName": "Jay" } }),
            json!({ "level": "warn", "event_type": "admin.kick", "message": "Jay was kicked for RDM", "occurred_at": at(30),
                    "player_id": "3", "target_player_id": "12", "target_player_identifiers": { "license": "abc" } }),
            json!({ "level": "info", "event_type": "player.leave", "message": "Jay left", "occurred_at": at(29),
                    "player_id": "12", "player_identifiers": jay }),
        ],
    )
    .await;
    let res = app
        .client
        .post(format!("{}/v1/servers/other1/logs", app.logs))
        .bearer_auth(&app.dev_key)
        .json(&json!({ "batch_id": "console-player-2", "events": [
            { "level": "info", "event_type": "player.join", "message": "Jay joined other1", "occurred_at": at(10),
              "player_id": "40", "player_identifiers": jay } ] }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    // screenshots whose metadata names Jay by either identifier, and one of someone else
    for (name, metadata) in [
        ("jay-1.png", r#"{"license":"license:abc"}"#),
        ("jay-2.png", r#"{"discord":"discord:77"}"#),
        ("mia.png", r#"{"license":"license:def"}"#),
    ] {
        app.put_file("screenshots", name, picture(64, 48), "image/png", metadata)
            .await;
    }
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=1h"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 3")
        .await;
    b.click("#event-rows a[href='/players/12']").await;
    b.until("location.pathname === '/players/12'").await;
    b.until("document.querySelectorAll('#player-rows tr').length === 3")
        .await;
    // on abc123 the in-game id 12 is Jay; the identifiers lead across servers
    b.click(".player-summary a[href='/players/license%3Aabc']")
        .await;
    b.until("location.pathname === '/players/license%3Aabc'")
        .await;
    b.until("document.querySelectorAll('#player-rows tr').length === 4")
        .await;
    assert_eq!(
        b.text("#player-rows tr td:nth-child(2)").await,
        "other1",
        "the newest event, on the other server"
    );
    let kicked = b
        .js("return [...document.querySelectorAll('#player-rows tr')].find(r => r.innerText.includes('kicked')).children[4].innerText;")
        .await;
    assert_eq!(kicked, json!("target"));
    let names = b.text(".player-summary").await;
    assert_eq!(
        b.js("return document.querySelectorAll(\".player-summary a[href='/players/license%3Aabc']\").length;")
            .await,
        json!(1),
        "both forms of the license are one identifier"
    );
    assert!(
        names.contains("Jay") && names.contains("discord:77"),
        "{names}"
    );
    assert_eq!(
        b.js("return document.querySelectorAll('#sessions tbody tr').length;")
            .await,
        json!(2)
    );
    // the files that name Jay, newest first, as pictures that load from public delivery
    b.until("document.querySelectorAll('#player-files .tile img').length === 2 && [...document.querySelectorAll('#player-files .tile img')].every(i => i.complete && i.naturalWidth > 0)")
        .await;
    // thumbnails are renditions (64 × 48 cropped to the tile's 4:3, as JPEG), not the originals
    assert_eq!(
        b.js("return [...document.querySelectorAll('#player-files .tile img')].map(i => [i.currentSrc.includes('?w=264&h=198&fit=cover&format=jpeg'), i.naturalWidth, i.naturalHeight]);")
            .await,
        json!([[true, 64, 48], [true, 64, 48]])
    );
    assert_eq!(
        b.js("return [...document.querySelectorAll('#player-files .tile img')].map(i => i.alt);")
            .await,
        json!(["screenshots/jay-2.png", "screenshots/jay-1.png"])
    );
    b.shoot("player").await;
    b.shoot_at("player-files", Some("#player-files")).await;
    // a name finds the players seen under it; one of them opens their view
    b.button("Find another").await;
    b.until("location.pathname === '/players'").await;
    b.type_into("input[name=who]", "jay\n").await;
    b.until("location.search === '?name=jay'").await;
    b.until("document.querySelectorAll('#name-matches li').length === 1")
        .await;
    assert!(b
        .text("#name-matches li")
        .await
        .contains("Jay · 1 event on abc123"));
    b.shoot("player-lookup").await;
    b.click("#name-matches a[href='/players/license%3Aabc']")
        .await;
    b.until("location.pathname === '/players/license%3Aabc'")
        .await;
    // an identifier typed in the box opens the player directly
    b.button("Find another").await;
    b.type_into("input[name=who]", "discord:77\n").await;
    b.until("location.pathname === '/players/discord%3A77'")
        .await;
    b.client.close().await.unwrap();
}

/// An event's detail reads as fields: the message first with its line breaks, `data` as a tree
/// whose leaves filter or exclude, a player link, and the events around it.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn an_event_reads_as_fields_with_its_data_and_neighbours() {
    let (app, b, console) = signed_in().await;
    let now = chrono::Utc::now();
    let at = |s: i64| (now - chrono::Duration::seconds(s)).to_rfc3339();
    app.ingest_logs(
        "console-detail",
        vec![
            json!({ "level": "error", "event_type": "economy.transfer", "resource": "bank", "occurred_at": at(300),
                    "message": "SCRIPT ERROR: transfer failed\n  at bank/server.lua:42\n  at citizen:/scripting",
                    "player_id": "12", "player_identifiers": { "license": "license:abc" },
                    "data": { "amount": 150000, "to": { "account": "ACC-7" } } }),
            json!({ "level": "info", "message": "just before", "occurred_at": at(330) }),
            json!({ "level": "info", "message": "just after", "occurred_at": at(270) }),
            json!({ "level": "info", "message": "long before", "occurred_at": at(1500) }),
        ],
    )
    .await;
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=1h"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 4")
        .await;
    b.js("[...document.querySelectorAll('#event-rows tr')].find(r => r.innerText.includes('SCRIPT ERROR')).click(); return true;")
        .await;
    let message = b.text("dialog .event-detail .message").await;
    assert_eq!(
        message, "SCRIPT ERROR: transfer failed\n  at bank/server.lua:42\n  at citizen:/scripting",
        "line breaks shown, not escaped"
    );
    let tree = b.text("dialog ul.tree").await;
    assert!(tree.contains("account: \"ACC-7\""), "{tree}");
    assert!(b
        .text("dialog .event-detail dl")
        .await
        .contains("license:abc"));
    b.shoot("logs-event-detail").await;
    // a leaf of the data filters the search to events whose data holds it
    b.js("[...document.querySelectorAll('dialog ul.tree li')].find(l => l.innerText.startsWith('account')).querySelector('a').click(); return true;")
        .await;
    b.until("!document.querySelector('dialog[open]') && new URLSearchParams(location.search).get('data') === '{\"to\":{\"account\":\"ACC-7\"}}'")
        .await;
    b.until("document.querySelectorAll('#event-rows tr').length === 1")
        .await;
    // the events around it: the same server, a minute either side, no filters
    b.js("document.querySelector('#event-rows tr td.msg').click(); return true;")
        .await;
    b.click("dialog #around").await;
    b.until("location.search.includes('range=custom') && !location.search.includes('data=')")
        .await;
    b.until("document.querySelectorAll('#event-rows tr').length === 3")
        .await;
    let around = b
        .js("return [...document.querySelectorAll('#event-rows td.msg')].map(t => t.innerText.slice(0, 12));")
        .await;
    assert_eq!(around, json!(["just after", "SCRIPT ERROR", "just before"]));
    b.client.close().await.unwrap();
}

/// The live tail: a new event shows up; one that arrives while paused comes on resume, once.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn logs_live_tail_pauses_and_resumes() {
    let (app, b, console) = signed_in().await;
    app.ingest_logs(
        "console-batch-before",
        vec![json!({ "level": "warn", "message": "before the tail", "occurred_at": chrono::Utc::now().to_rfc3339() })],
    )
    .await;
    b.client
        .goto(&format!(
            "{console}/logs?server=abc123&range=1h&minLevel=warn"
        ))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 1")
        .await;
    // live tail: an event ingested during the test shows up
    b.click("#tail-toggle").await;
    b.until("document.querySelector('#tail-state').innerText.startsWith('Live')")
        .await;
    app.ingest_logs(
        "console-batch-2",
        vec![json!({ "level": "error", "message": "tail marker", "occurred_at": chrono::Utc::now().to_rfc3339() })],
    )
    .await;
    b.until("document.querySelector('#event-rows tr td.msg')?.innerText === 'tail marker'")
        .await;
    // the histogram follows the tail: its total counts the new event
    assert!(b.text("#total").await.starts_with("1 event "));
    b.until("document.querySelector('#total')?.innerText.startsWith('2 events')")
        .await;
    b.shoot_at("logs-tail", Some("#tail-toggle")).await;
    b.click("#tail-toggle").await;
    b.until("document.querySelector('#tail-state').innerText === 'Paused.'")
        .await;
    // an event that arrives while paused comes on resume (from the last event id), once
    app.ingest_logs(
        "console-batch-3",
        vec![json!({ "level": "warn", "message": "while paused", "occurred_at": chrono::Utc::now().to_rfc3339() })],
    )
    .await;
    b.click("#tail-toggle").await;
    b.until("document.querySelector('#event-rows tr td.msg')?.innerText === 'while paused'")
        .await;
    let seen = b
        .js("return [...document.querySelectorAll('#event-rows td.msg')].filter(t => ['while paused', 'tail marker'].includes(t.innerText)).length;")
        .await;
    assert_eq!(seen, json!(2), "each tailed event once");
    b.click("#tail-toggle").await;
    b.client.close().await.unwrap();
}

/// A page on another site cannot make the signed-in browser change anything.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn a_cross_site_page_changes_nothing() {
    let (app, b, console) = signed_in().await;
    // a cross-site page cannot make the signed-in browser change anything
    let attack = attacker_page(&console).await;
    let res = app
        .upload(&app.dev_key, "keep.png", PNG.to_vec(), Some("victim"))
        .await;
    assert_eq!(res.status(), 200);
    b.client.goto(&attack).await.unwrap();
    b.until("document.readyState === 'complete' && location.href.includes('/api/')")
        .await;
    assert_eq!(
        app.list_keys(&app.dev_key, Some("victim")).await,
        vec!["victim/keep.png"],
        "the cross-site form post deleted nothing"
    );
    b.client.close().await.unwrap();
}

/// Signing out ends the session on the server, not only in the browser.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn signing_out_ends_the_session() {
    let (app, b, console) = signed_in().await;
    // sign out ends the session server-side
    b.client.goto(&format!("{console}/overview")).await.unwrap();
    b.until("document.querySelector('.stat')").await;
    let cookie = b
        .client
        .get_named_cookie("stowage_console")
        .await
        .unwrap()
        .value()
        .to_owned();
    b.click("#signout").await;
    b.until("document.querySelector('input[name=password]')")
        .await;
    let replay = app
        .client
        .get(format!("{console}/api/v1/whoami"))
        .header("Cookie", format!("stowage_console={cookie}"))
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 401);
    b.client.close().await.unwrap();
}

/// A path- and type-restricted key: the folders it may use, per-file upload errors, refusals.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn a_restricted_key_sees_its_folders_and_its_errors() {
    let (app, b, console) = started().await;
    // a path-restricted key sees only its prefixes
    for (name, folder) in [("a.png", "team"), ("b.png", "secret")] {
        assert_eq!(
            app.upload(&app.dev_key, name, PNG.to_vec(), Some(folder))
                .await
                .status(),
            200
        );
    }
    let restricted = app
        .key(KeySpec {
            allow: vec!["team".into()],
            mime: Some(vec!["image/*".into()]),
            ..KeySpec::developer(
                [Permission::CdnRead, Permission::CdnWrite]
                    .into_iter()
                    .collect::<PermissionSet>(),
            )
        })
        .await;
    b.sign_in(&console, &restricted).await;
    b.client.goto(&format!("{console}/objects")).await.unwrap();
    let offered = b.text("ul.folders").await;
    assert_eq!(offered.trim(), "team/");
    b.shoot("files-restricted").await;
    b.click("a.folder").await;
    b.listed("a.png").await;
    assert!(!b.text("#listing").await.contains("b.png"));
    // uploads fail one by one: the image is stored, the text file (not an image) shows its error
    b.pick(&[("ok.png", PNG), ("notes.txt", b"no")]).await;
    let failed = b
        .until("document.querySelector('.upload.failed[data-name=\"notes.txt\"]')?.innerText")
        .await;
    assert!(
        failed.as_str().unwrap().contains("not allowed"),
        "the file's own error: {failed}"
    );
    b.listed("ok.png").await;
    b.shoot("files-upload-errors").await;
    b.client
        .goto(&format!("{console}/objects?path=secret"))
        .await
        .unwrap();
    let refused = b.text("#listing .error-box").await;
    assert!(refused.contains("This key may not do that"), "{refused}");
    b.client.goto(&format!("{console}/logs")).await.unwrap();
    b.until("document.querySelector('main .empty')").await;
    b.shoot("logs-no-permission").await;
    b.client.close().await.unwrap();
}

/// A page on another origin that posts a form to the console's delete-folder route; its URL.
async fn attacker_page(console: &str) -> String {
    let page = format!(
        r#"<!doctype html><html><body><form id="f" method="POST" enctype="text/plain" action="{console}/api/v1/objects/delete-folder"><input name='{{"path":"victim","x":"' value='"}}'></form><script>document.getElementById('f').submit();</script></body></html>"#
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        let page = page.clone();
        App::new().route(
            "/attack.html",
            web::get().to(move || {
                let page = page.clone();
                async move { HttpResponse::Ok().content_type("text/html").body(page) }
            }),
        )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    // `localhost` is another site than 127.0.0.1 for the browser
    format!("http://localhost:{port}/attack.html")
}

#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn a_search_is_saved_opened_renamed_and_deleted() {
    let (app, b, console) = signed_in().await;
    let now = chrono::Utc::now();
    let at = |i: i64| (now - chrono::Duration::minutes(i)).to_rfc3339();
    app.ingest_logs(
        "console-saved",
        vec![
            json!({ "level": "warn", "event_type": "admin.ban", "message": "Jay banned", "occurred_at": at(3) }),
            json!({ "level": "info", "event_type": "admin.kick", "message": "Mia kicked", "occurred_at": at(2) }),
            json!({ "level": "info", "event_type": "chat", "message": "gg", "occurred_at": at(1) }),
        ],
    )
    .await;
    b.client
        .goto(&format!(
            "{console}/logs?server=abc123&range=1h&eventType=admin.*"
        ))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 2")
        .await;
    // save it
    b.button("Save search").await;
    b.until("document.querySelector('dialog input')").await;
    b.type_into("dialog input", "Admin actions").await;
    b.shoot_at("logs-save-search", Some("dialog")).await;
    b.button("Save").await;
    b.until("location.search.includes('saved=ss_')").await;
    b.until("[...document.querySelectorAll('.saved-pick option')].some(o => o.selected && o.textContent === 'Admin actions')")
        .await;
    // a plain search, then the saved one from the list: its filters come back, the range stays
    b.client
        .goto(&format!("{console}/logs?server=abc123&range=6h"))
        .await
        .unwrap();
    b.until("document.querySelectorAll('#event-rows tr').length === 3")
        .await;
    b.until("[...document.querySelectorAll('.saved-pick option')].some(o => o.textContent === 'Admin actions')")
        .await;
    b.js("const s = document.querySelector('.saved-pick');
          s.value = [...s.options].find(o => o.textContent === 'Admin actions').value;
          s.dispatchEvent(new Event('change'));")
        .await;
    b.until(
        "location.search.includes('eventType=admin.*') && location.search.includes('range=6h')",
    )
    .await;
    b.until("document.querySelectorAll('#event-rows tr').length === 2")
        .await;
    b.shoot("logs-saved-search").await;
    // rename, then delete, from the dialog
    b.js("const s = document.querySelector('.saved-pick');
          s.value = '#manage'; s.dispatchEvent(new Event('change'));")
        .await;
    b.until("document.querySelector('.saved-list input')").await;
    b.js("const i = document.querySelector('.saved-list input'); i.value = 'Staff actions';")
        .await;
    b.button("Rename").await;
    b.until("[...document.querySelectorAll('.toast')].some(t => t.innerText.includes('Renamed to “Staff actions”'))")
        .await;
    assert_eq!(saved_names(&app).await, ["Staff actions"]);
    b.button("Delete").await;
    b.until("!document.querySelector('.saved-list li')").await;
    b.button("Done").await;
    b.until("!location.search.includes('saved=')").await;
    assert!(saved_names(&app).await.is_empty());
}

/// The names of the organization's saved searches, through the API.
async fn saved_names(app: &TestApp) -> Vec<String> {
    let listed: Value = app
        .get("/v1/logs/saved-searches", &app.dev_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    listed["savedSearches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A lifecycle rule set from the files page: the folder says what it does, a file's details say
/// when it goes and keep it, the rule is removed from its row, and the Overview shows storage per
/// folder with the folder's rule.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn a_lifecycle_rule_is_set_a_file_kept_and_the_rule_removed() {
    let (app, b, console) = signed_in().await;
    app.put_file("shots", "old.png", picture(8, 8), "image/png", "{}")
        .await;
    app.put_file("voice", "a.ogg", b"OggS voice".to_vec(), "audio/ogg", "{}")
        .await;
    b.client
        .goto(&format!("{console}/objects?path=shots"))
        .await
        .unwrap();
    b.listed("old.png").await;
    b.button("Lifecycle").await;
    b.until("document.querySelector('dialog #rule-path')?.value === 'shots'")
        .await;
    b.js("document.querySelector('dialog #rule-days').value = '30'; return true;")
        .await;
    b.shoot("files-lifecycle-dialog").await;
    b.button("Save rule").await;
    b.until("document.querySelector('#toasts')?.innerText.includes('deleted after 30 days')")
        .await;
    let note = b
        .until("document.querySelector('#lifecycle-note')?.innerText")
        .await;
    assert!(
        note.as_str()
            .unwrap()
            .contains("deleted 30 days after their last change"),
        "{note}"
    );
    b.button("old.png").await;
    let said = b
        .until("document.querySelector('#lifecycle-state')?.innerText")
        .await;
    assert!(said.as_str().unwrap().contains("Deleted from"), "{said}");
    b.shoot_at("files-details-lifecycle", Some("#lifecycle-state"))
        .await;
    b.click("#keep-toggle").await;
    b.until("document.querySelector('#lifecycle-state')?.innerText.startsWith('Kept')")
        .await;
    let details = app
        .get_json("/v1/objects/details?path=shots/old.png", &app.dev_key)
        .await;
    assert_eq!(details["object"]["keep"], true, "{details}");

    // the Overview: storage per folder, with the folder's rule
    b.client.goto(&format!("{console}/overview")).await.unwrap();
    b.until(
        "[...document.querySelectorAll('main h2')].some(h => h.innerText === 'Storage by folder')",
    )
    .await;
    let rows = b
        .js("const h = [...document.querySelectorAll('main h2')].find(h => h.innerText === 'Storage by folder');
             return h.nextElementSibling.innerText;")
        .await;
    let rows = rows.as_str().unwrap();
    assert!(rows.contains("shots/\t1\t148 B\t30 days"), "{rows}");
    assert!(rows.contains("voice/\t1\t10 B\tno rule"), "{rows}");
    b.shoot_at("overview-folders", Some("main table:last-of-type"))
        .await;

    // removed from its own row
    b.client
        .goto(&format!("{console}/objects?path=shots"))
        .await
        .unwrap();
    b.listed("old.png").await;
    b.button("Lifecycle").await;
    b.click("dialog button[aria-label='Remove the rule on shots/']")
        .await;
    b.until(
        "document.querySelector('#toasts')?.innerText.includes('The rule on shots/ is removed')",
    )
    .await;
    let rules = app.get_json("/v1/lifecycle", &app.dev_key).await;
    assert_eq!(rules["rules"], json!([]));
    b.until("!document.querySelector('#lifecycle-note')").await;
    b.client.close().await.unwrap();
}

/// A destination is added (its signing secret shown once), a rule made from the logs page's
/// "Alert on this search", a matching event delivered and logged, a test message sent; an
/// alert's "open in console" link (the saved search alone) opens its filters.
#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver; run with `just e2e`"]
async fn an_alert_rule_is_made_from_a_saved_search_and_its_delivery_logged() {
    let (app, b, console) = signed_in().await;
    let mut hook = stowage_tests::receiver::Receiver::start();
    let made: Value = app
        .post("/v1/logs/saved-searches", &app.dev_key)
        .json(&json!({ "name": "Bans", "serverIds": ["abc123"], "search": { "eventType": "admin.ban" } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let search = made["savedSearch"]["id"].as_str().unwrap().to_owned();

    // a destination, from the Alerts page
    b.client.goto(&format!("{console}/alerts")).await.unwrap();
    b.button("New destination").await;
    b.until("document.querySelector('dialog input')").await;
    b.js(&format!(
        "const d = document.querySelector('dialog');
         d.querySelector('input[type=text]').value = 'Staff hook';
         const k = d.querySelector('select'); k.value = 'webhook'; k.dispatchEvent(new Event('change'));
         d.querySelector('input[type=url]').value = {:?}; return true;",
        hook.url
    ))
    .await;
    b.shoot_at("alerts-destination-dialog", Some("dialog"))
        .await;
    b.button("Add destination").await;
    let secret = b
        .until("document.querySelector('dialog code.secret')?.innerText")
        .await;
    assert!(secret.as_str().unwrap().starts_with("whsec_"), "{secret}");
    b.shoot_at("alerts-signing-secret", Some("dialog")).await;
    b.button("Done").await;
    b.until("document.querySelector('[data-destination]')")
        .await;

    // an alert's link names only the saved search: its server and filters are opened
    b.client
        .goto(&format!("{console}/logs?saved={search}&range=1h"))
        .await
        .unwrap();
    b.until("location.search.includes('eventType=admin.ban') && location.search.includes('server=abc123')")
        .await;
    b.button("Alert on this search").await;
    b.until("location.pathname === '/alerts' && document.querySelector('dialog select')")
        .await;
    let picked = b
        .js("return document.querySelector('dialog select').selectedOptions[0].innerText;")
        .await;
    assert_eq!(picked, "Bans");
    b.js("document.querySelector('dialog input[type=text]').value = 'Bans to staff'; return true;")
        .await;
    b.shoot_at("alerts-rule-dialog", Some("dialog")).await;
    b.button("Create rule").await;
    b.until("document.querySelector('[data-rule]')").await;

    // a ban: delivered, and the log says so
    let at = chrono::Utc::now().to_rfc3339();
    app.ingest_logs(
        "console-alert-1",
        vec![json!({ "level": "warn", "event_type": "admin.ban", "message": "Jay banned", "occurred_at": at })],
    )
    .await;
    let got = hook.next().await;
    assert_eq!(got.body["events"][0]["message"], "Jay banned");
    let rules: Value = app.get_json("/v1/logs/alert-rules", &app.dev_key).await;
    let rule = rules["alertRules"][0]["id"].as_str().unwrap().to_owned();
    loop {
        let log: Value = app
            .get_json(
                &format!("/v1/logs/alert-deliveries?ruleId={rule}"),
                &app.dev_key,
            )
            .await;
        if log["deliveries"][0]["status"] == "delivered" {
            break;
        }
        tokio::task::yield_now().await;
    }
    b.client.goto(&format!("{console}/alerts")).await.unwrap();
    b.until("[...document.querySelectorAll('[data-delivery] .pill')].some(p => p.innerText === 'delivered')")
        .await;
    b.button("Send test message").await;
    assert_eq!(hook.next().await.body["type"], "alert.test");
    b.client.goto(&format!("{console}/alerts")).await.unwrap();
    b.until("document.querySelectorAll('[data-delivery]').length === 2")
        .await;
    b.shoot("alerts-page").await;
    b.client.close().await.unwrap();
}
