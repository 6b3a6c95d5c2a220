//! Who is signing in: the address and name throttles, the password, the second factor. Every
//! wrong answer is the same whatever was wrong.

use super::*;

fn throttled(what: &str, wait: std::time::Duration) -> ApiError {
    ApiError::new(
        Code::RateLimited,
        format!(
            "too many sign-in attempts {what}; try again in {} s",
            retry_after_secs(wait)
        ),
    )
    .with_retry_after(retry_after_secs(wait))
}

/// The wait after repeated wrong passwords for one sign-in name.
fn throttled_failures(wait: std::time::Duration) -> ApiError {
    let secs = retry_after_secs(wait);
    ApiError::new(
        Code::RateLimited,
        format!("too many wrong passwords for this sign-in name; try again in {secs} s"),
    )
    .with_retry_after(secs)
}

/// The per-address sign-in throttle (keys and passwords alike).
pub(in crate::console) async fn check_address(
    req: &HttpRequest,
    console: &Console,
) -> Result<(), ApiError> {
    let address = address_of(req);
    console
        .sign_ins
        .check(&format!("signin:{address}"))
        .await
        .map_err(|wait| throttled("from this address", wait))
}

/// The client's address as the sign-in throttles count it (an IPv6 client by its /64: each of
/// its addresses is not a fresh allowance).
fn address_of(req: &HttpRequest) -> String {
    let trusted = req
        .app_data::<web::Data<crate::state::ApiState>>()
        .map(|s| s.config.trusted_proxies.clone())
        .unwrap_or_default();
    stow_http::request::client_ip(req, &trusted)
        .map_or_else(|| "unknown".to_owned(), stow_http::request::address_bucket)
}

/// Whether a failure of `login` from `address` still makes its next attempt wait
/// (`auth_core::backoff::subjects`: this name from this address, or this name from anywhere).
async fn failures_wait(console: &Console, login: &str, address: &str) -> Result<(), ApiError> {
    let now = chrono::Utc::now();
    for (subject, _) in auth_core::backoff::subjects(login, address) {
        if let Some(until) = console.failures.blocked_until(&subject, now).await? {
            let wait = (until - now).to_std().unwrap_or_default();
            return Err(throttled_failures(wait));
        }
    }
    Ok(())
}

/// Counts a failed sign-in of `login` from `address` in both of its counts.
async fn count_failure(console: &Console, login: &str, address: &str) -> Result<(), ApiError> {
    let now = chrono::Utc::now();
    for (subject, free) in auth_core::backoff::subjects(login, address) {
        console.failures.fail(&subject, now, free).await?;
    }
    Ok(())
}

/// A whole sign-in of `login` from `address`: both of its counts start again.
async fn clear_failures(console: &Console, login: &str, address: &str) -> Result<(), ApiError> {
    for (subject, _) in auth_core::backoff::subjects(login, address) {
        console.failures.clear(&subject).await?;
    }
    Ok(())
}

/// The one answer to a wrong password and to a sign-in name nobody has.
pub(super) fn wrong_password() -> ApiError {
    ApiError::new(Code::Unauthorized, "wrong sign-in name or password")
}

/// Checks a member's password (as slowly for an unknown name as for a wrong password); the
/// member when it matches. A right password does not clear the name's failures: the caller does
/// once the whole sign-in holds ([`check_second_factor`]), so wrong second-factor codes keep
/// adding up however often the password is right.
pub(crate) async fn check_password(
    req: &HttpRequest,
    console: &Console,
    login: &str,
    password: String,
) -> Result<auth_core::member::Member, ApiError> {
    let address = address_of(req);
    failures_wait(console, login, &address).await?;
    let member = console.members.find_member(login).await?;
    let stored = member.as_ref().map(|m| m.password_hash.clone());
    let matches = console.passwords.verify(password, stored).await?;
    match member {
        Some(member) if matches => Ok(member),
        _ => {
            count_failure(console, login, &address).await?;
            Err(wrong_password())
        }
    }
}

/// What a member sends besides their password when their second factor is on.
#[derive(Default)]
pub(in crate::console) struct SecondProof {
    pub code: Option<String>,
    pub recovery_code: Option<String>,
}

fn wrong_code() -> ApiError {
    ApiError::new(
        Code::Unauthorized,
        "wrong code: type the code the app shows now (each works once), or a recovery code",
    )
}

/// After a right password: a member whose second factor is on proves it with a current code
/// of their app (never one used before) or an unused recovery code. A wrong one counts as a
/// failed sign-in of the name (the same growing waits as wrong passwords).
pub(in crate::console) async fn check_second_factor(
    req: &HttpRequest,
    console: &Console,
    member: &auth_core::member::Member,
    proof: SecondProof,
) -> Result<(), ApiError> {
    let address = address_of(req);
    let Some(factor) = console
        .members
        .second_factor(&member.id)
        .await?
        .filter(|f| f.confirmed_at.is_some())
    else {
        clear_failures(console, &member.login, &address).await?;
        return Ok(());
    };
    let accepted = match (proof.code, proof.recovery_code) {
        (Some(code), None) => {
            let key = console.seal.as_ref().ok_or_else(|| {
                ApiError::new(
                    Code::Unavailable,
                    "this service cannot check second factors now (SECOND_FACTOR_KEY is not set); use a recovery code or ask its operator",
                )
            })?;
            let secret = crate::account::second_factor::open(key, &member.id, &factor)?;
            let now = crate::account::second_factor::now_unix();
            match auth_core::second_factor::check_code(&secret, &code, now, factor.last_step) {
                Some(step) => console.members.use_step(&member.id, step).await?,
                None => false,
            }
        }
        (None, Some(recovery)) => {
            let hash = auth_core::second_factor::recovery_hash(&recovery);
            let audit =
                crate::audit::signed_out(req, member.id.clone(), member.login.clone());
            console
                .members
                .use_recovery_code(&member.id, &hash, &audit)
                .await?
        }
        (None, None) => {
            return Err(ApiError::new(
                Code::SecondFactorRequired,
                "your second factor is on: send the code your authenticator app shows (`code`) or a recovery code (`recoveryCode`)",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_request(
                "send `code` or `recoveryCode`, not both",
            ))
        }
    };
    if accepted {
        clear_failures(console, &member.login, &address).await?;
        Ok(())
    } else {
        count_failure(console, &member.login, &address).await?;
        Err(wrong_code())
    }
}
