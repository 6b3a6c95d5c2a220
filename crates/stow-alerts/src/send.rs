//! One HTTP request of a delivery. The client resolves names itself and connects only when
//! every address of the name is public ([`logs_core::alert_delivery::ip_allowed`]), so a name
//! that resolves (or re-resolves) to an internal address is refused at connect time; it
//! follows no redirect and gives a receiver [`REQUEST_TIMEOUT`] to answer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use logs_core::alert_delivery::{check_url, discord_rate_limit, ip_allowed, Allow, RateLimit};
use logs_core::alert_store::DestinationKind;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::Secrets;

/// How long a receiver has to answer (a hanging one is a failed attempt).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Bytes of an answer read (Discord's 429 body).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

/// Resolves a name and answers its addresses only when all are allowed.
struct Guarded {
    allow: Allow,
}

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        let allow = self.allow;
        Box::pin(async move {
            let addrs = allowed_addrs(name.as_str(), allow)
                .await
                .map_err(|e| Box::new(Refused(e)) as Box<dyn std::error::Error + Send + Sync>)?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The addresses `host` resolves to, when every one may be connected to.
async fn allowed_addrs(host: &str, allow: Allow) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
        .await
        .map_err(|e| format!("`{host}` does not resolve: {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("`{host}` does not resolve"));
    }
    if let Some(bad) = addrs.iter().find(|a| !ip_allowed(a.ip(), allow)) {
        return Err(format!(
            "`{host}` resolves to {}, a private, loopback, link-local or otherwise internal address",
            bad.ip()
        ));
    }
    Ok(addrs)
}

/// Checks a destination address as the API takes it: the address's rules, then what its host
/// resolves to now (it is checked again on every connection).
pub async fn check_resolves(
    kind: DestinationKind,
    raw: &str,
    allow: Allow,
) -> Result<url::Url, String> {
    let url = check_url(kind, raw, allow)?;
    if let Some(url::Host::Domain(host)) = url.host() {
        allowed_addrs(host, allow)
            .await
            .map_err(|e| format!("`url`: {e}"))?;
    }
    Ok(url)
}

/// What a receiver answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// `None`: no answer (refused, unreachable, timed out).
    pub status: Option<u16>,
    /// Why it failed, for the delivery log (never the address or a secret).
    pub error: Option<String>,
    /// Discord's rate-limit instructions.
    pub rate: RateLimit,
}

impl Answer {
    pub fn delivered(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    allow: Allow,
}

impl Client {
    pub fn new(allow: Allow) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            // never through a proxy (HTTPS_PROXY and the like): the guard must judge the
            // receiver's own address, and through a proxy it would judge the proxy's (a name
            // pointing at 169.254.169.254 went out as a CONNECT)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .dns_resolver(Arc::new(Guarded { allow }))
            .user_agent("Stowage-Alerts/1")
            .build()
            .map_err(|e| format!("alert HTTP client: {e}"))?;
        Ok(Self { http, allow })
    }

    /// Sends `body` (JSON) to the destination: to Discord as it is, to a generic webhook
    /// signed the Standard Webhooks way with `webhook_id` and the time now.
    pub async fn send(
        &self,
        kind: DestinationKind,
        secrets: &Secrets,
        webhook_id: &str,
        body: Vec<u8>,
    ) -> Answer {
        let failed = |error: String| Answer {
            status: None,
            error: Some(error),
            rate: RateLimit::None,
        };
        // an address literal is connected to without resolving: checked here as well
        let url = match check_url(kind, &secrets.url, self.allow) {
            Ok(url) => url,
            Err(e) => return failed(e),
        };
        let mut request = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        if kind == DestinationKind::Webhook {
            let Some(secret) = secrets.signing_secret.as_deref() else {
                return failed("the destination has no signing secret".into());
            };
            let timestamp = chrono::Utc::now().timestamp();
            let signature = match standardwebhooks::Webhook::new(secret)
                .and_then(|w| w.sign(webhook_id, timestamp, &body))
            {
                Ok(s) => s,
                Err(_) => return failed("the signing secret is not valid".into()),
            };
            request = request
                .header(standardwebhooks::HEADER_WEBHOOK_ID, webhook_id)
                .header(
                    standardwebhooks::HEADER_WEBHOOK_TIMESTAMP,
                    timestamp.to_string(),
                )
                .header(standardwebhooks::HEADER_WEBHOOK_SIGNATURE, signature);
        }
        let response = match request.body(body).send().await {
            Ok(r) => r,
            Err(e) => return failed(describe(e)),
        };
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let remaining = header("x-ratelimit-remaining");
        let reset_after = header("x-ratelimit-reset-after");
        let retry_after = header("retry-after");
        let global = header("x-ratelimit-global").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || header("x-ratelimit-scope").is_some_and(|v| v == "global");
        let answer_body = if status == 429 {
            read_capped(response).await
        } else {
            None
        };
        let rate = if kind == DestinationKind::Discord || status == 429 {
            discord_rate_limit(
                status,
                remaining.as_deref(),
                reset_after.as_deref(),
                retry_after.as_deref(),
                global,
                answer_body.as_ref(),
            )
        } else {
            RateLimit::None
        };
        let error = match status {
            200..=299 => None,
            300..=399 => Some(format!("answered {status}: redirects are not followed")),
            _ => Some(format!("answered {status}")),
        };
        Answer {
            status: Some(status),
            error,
            rate,
        }
    }
}

async fn read_capped(mut response: reqwest::Response) -> Option<serde_json::Value> {
    let mut buf = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        buf.extend_from_slice(&chunk);
        if buf.len() > MAX_ANSWER_BYTES {
            return None;
        }
    }
    serde_json::from_slice(&buf).ok()
}

/// A failed request in words for the delivery log, without the address (a Discord address
/// holds its token).
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    if e.is_timeout() {
        return format!("no answer within {} s", REQUEST_TIMEOUT.as_secs());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a proxy in the environment, a delivery still goes (or is refused) by the receiver's
    /// own address: the proxy sees nothing. Through the proxy, the guard judged the proxy's
    /// address and a name pointing inside went out as a CONNECT.
    #[tokio::test]
    async fn deliveries_never_go_through_a_proxy() {
        let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = format!("http://{}", proxy.local_addr().unwrap());
        for var in [
            "HTTPS_PROXY",
            "https_proxy",
            "HTTP_PROXY",
            "http_proxy",
            "ALL_PROXY",
        ] {
            std::env::set_var(var, &address);
        }
        let client = Client::new(Allow { insecure: false }).unwrap();
        let secrets = Secrets {
            url: "https://localhost:9/hook".into(),
            signing_secret: Some(crate::secrets::new_signing_secret()),
        };
        let answer = client
            .send(DestinationKind::Webhook, &secrets, "msg_1", b"{}".to_vec())
            .await;
        assert_eq!(answer.status, None, "refused: {answer:?}");
        let knocked = tokio::time::timeout(Duration::from_millis(200), proxy.accept()).await;
        assert!(knocked.is_err(), "the proxy was asked to connect");
    }
}
