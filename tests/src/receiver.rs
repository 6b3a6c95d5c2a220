//! A local HTTP receiver for alert deliveries that behaves like the real ones when told to:
//! Discord's rate-limit headers and 429 with `retry_after`, 500s, redirects, a request that
//! hangs. Every request is recorded, whatever it was answered.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::Value;
use tokio::sync::mpsc;

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 204, Discord's bucket with requests left.
    Ok,
    /// 204 and `X-RateLimit-Remaining: 0`, `X-RateLimit-Reset-After: {0}`.
    Drained(f64),
    /// 429 with Discord's body: `retry_after` seconds, `global`.
    Limited {
        retry_after: f64,
        global: bool,
    },
    Status(u16),
    /// 302 to this address.
    Redirect(String),
    /// No answer for a minute.
    Hang,
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    pub at: Instant,
    pub headers: actix_web::http::header::HeaderMap,
    pub raw: Vec<u8>,
    pub body: Value,
    /// What it was answered.
    pub reply: Reply,
}

impl Received {
    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    }

    /// The headers as the `http` crate's map (what `standardwebhooks` verifies).
    pub fn http_headers(&self) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (k, v) in &self.headers {
            if let (Ok(k), Ok(v)) = (
                http::HeaderName::from_bytes(k.as_str().as_bytes()),
                http::HeaderValue::from_bytes(v.as_bytes()),
            ) {
                map.insert(k, v);
            }
        }
        map
    }
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    seen: mpsc::UnboundedSender<Received>,
}

pub struct Receiver {
    /// Its address (`http://127.0.0.1:<port>/hook`).
    pub url: String,
    shared: Arc<Shared>,
    seen: mpsc::UnboundedReceiver<Received>,
}

async fn hook(req: HttpRequest, body: web::Bytes, shared: web::Data<Shared>) -> HttpResponse {
    let reply = shared
        .script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(Reply::Ok);
    let _ = shared.seen.send(Received {
        at: Instant::now(),
        headers: req.headers().clone(),
        raw: body.to_vec(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        reply: reply.clone(),
    });
    match reply {
        Reply::Ok => HttpResponse::NoContent()
            .insert_header(("X-RateLimit-Limit", "5"))
            .insert_header(("X-RateLimit-Remaining", "4"))
            .insert_header(("X-RateLimit-Reset-After", "2"))
            .finish(),
        Reply::Drained(after) => HttpResponse::NoContent()
            .insert_header(("X-RateLimit-Limit", "5"))
            .insert_header(("X-RateLimit-Remaining", "0"))
            .insert_header(("X-RateLimit-Reset-After", after.to_string()))
            .finish(),
        Reply::Limited {
            retry_after,
            global,
        } => {
            let mut r = HttpResponse::TooManyRequests();
            r.insert_header(("X-RateLimit-Remaining", "0"))
                .insert_header(("Retry-After", retry_after.ceil().to_string()));
            if global {
                r.insert_header(("X-RateLimit-Global", "true"));
            }
            r.json(serde_json::json!({
                "message": "You are being rate limited.",
                "retry_after": retry_after,
                "global": global,
            }))
        }
        Reply::Status(code) => {
            HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap()).body("no")
        }
        Reply::Redirect(to) => HttpResponse::Found()
            .insert_header(("Location", to))
            .finish(),
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            HttpResponse::NoContent().finish()
        }
    }
}

impl Receiver {
    pub fn start() -> Self {
        let (tx, seen) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            script: Mutex::new(VecDeque::new()),
            seen: tx,
        });
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let data = web::Data::from(Arc::clone(&shared));
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(web::to(hook))
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        tokio::spawn(server);
        Self {
            url: format!("http://127.0.0.1:{port}/hook"),
            shared,
            seen,
        }
    }

    /// The next requests are answered so, in order; then 204s.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.script.lock().unwrap().extend(replies);
    }

    /// The next request to arrive (panics after 30 s without one).
    pub async fn next(&mut self) -> Received {
        self.next_within(Duration::from_secs(30)).await
    }

    /// The next request to arrive (panics after `limit` without one).
    pub async fn next_within(&mut self, limit: Duration) -> Received {
        tokio::time::timeout(limit, self.seen.recv())
            .await
            .unwrap_or_else(|_| panic!("a request within {limit:?}"))
            .expect("receiver running")
    }

    /// The requests that have arrived and not been taken.
    pub fn drain(&mut self) -> Vec<Received> {
        let mut out = Vec::new();
        while let Ok(r) = self.seen.try_recv() {
            out.push(r);
        }
        out
    }
}
