#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Hostile input: bounded multipart headers and body reads, safe inline types, client numbers that
//! could overflow, bodies that stop arriving, forwarded headers, the HTTP parser's own answers.
//! (Faults are in `faults.rs`.)
//!
//! Kept as one module (over 400 lines): one test per item of the hardening issue's input list.

use std::time::{Duration, Instant};

use stowage_tests::*;

pub(crate) const BOUNDARY: &str = "hardening-boundary";

/// A multipart body with one file part whose headers are `headers` (each line without CRLF).
pub(crate) fn raw_form(headers: &[String], content: &[u8]) -> Vec<u8> {
    let mut body = format!("--{BOUNDARY}\r\n").into_bytes();
    for h in headers {
        body.extend_from_slice(h.as_bytes());
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"\r\n");
    body.extend_from_slice(content);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

pub(crate) fn multipart(req: reqwest::RequestBuilder, body: Vec<u8>) -> reqwest::RequestBuilder {
    req.header(
        "content-type",
        format!("multipart/form-data; boundary={BOUNDARY}"),
    )
    .body(body)
}

pub(crate) const DISPOSITION: &str =
    "Content-Disposition: form-data; name=\"file\"; filename=\"a.bin\"";

/// The part's `Content-Disposition` plus an `X-Pad` header making the block `total` bytes as the
/// limit counts them (`name: value` and CRLF per line).
fn headers_of_size(total: usize) -> Vec<String> {
    let fixed = DISPOSITION.len() + 2 + "x-pad: \r\n".len();
    vec![
        DISPOSITION.to_owned(),
        format!("X-Pad: {}", "p".repeat(total - fixed)),
    ]
}

#[tokio::test]
async fn part_headers_are_bounded_at_8_kib() {
    let app = spawn().await;
    for (total, ok) in [(8191, true), (8192, true), (8193, false)] {
        let body = raw_form(&headers_of_size(total), b"content");
        let res = multipart(app.post("/v1/objects", &app.dev_key), body)
            .send()
            .await
            .unwrap();
        if ok {
            assert_eq!(res.status(), 200, "{total}: {}", res.text().await.unwrap());
        } else {
            expect_error_mentioning(res, 400, "INVALID_REQUEST", "8192 bytes").await;
        }
    }
    // one header line of 4 MiB, streamed: refused without buffering it, nothing stored
    let huge = vec![format!("{DISPOSITION}; x=\"{}\"", "a".repeat(4 << 20))];
    let res = multipart(
        app.post("/v1/objects", &app.dev_key),
        raw_form(&huge, b"content"),
    )
    .send()
    .await
    .unwrap();
    expect_error_mentioning(res, 400, "INVALID_REQUEST", "headers").await;
    // a preamble without line breaks counts too
    let mut body = vec![b'z'; 1 << 20];
    body.extend(raw_form(&[DISPOSITION.to_owned()], b"content"));
    let res = multipart(app.post("/v1/objects", &app.dev_key), body)
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 400, "INVALID_REQUEST", "8192 bytes").await;
    // the two accepted uploads went to one key (the second replaced the first); no refused one
    // left bytes behind
    assert_eq!(app.settle_locations(1).await.len(), 1);
}

#[tokio::test]
async fn an_upload_url_stops_taking_attempts_after_ten_refusals() {
    let app = spawn().await;
    let u = app.upload_url("?maxFiles=5").await;
    let url = u["uploadUrl"].as_str().unwrap().to_owned();
    let huge = vec![format!("{DISPOSITION}; x=\"{}\"", "a".repeat(64 << 10))];
    for n in 1..=10 {
        let res = multipart(app.client.post(&url), raw_form(&huge, b"x"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "attempt {n}");
    }
    // now even a good upload waits for the window to end
    let good = raw_form(&[DISPOSITION.to_owned()], b"fine");
    let res = multipart(app.client.post(&url), good).send().await.unwrap();
    let retry: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    expect_error_mentioning(res, 429, "RATE_LIMITED", "upload URL").await;
    // another URL of the same key is not affected
    let other = app.upload_url("").await;
    let res = multipart(
        app.client.post(other["uploadUrl"].as_str().unwrap()),
        raw_form(&[DISPOSITION.to_owned()], b"fine"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn backslashes_in_file_names_are_path_separators_not_escapes() {
    let app = spawn().await;
    for (filename, key) in [
        (r"C:\Users\me\shot.png", "shot.png"),
        (r"dir\sub\clip.ogg", "clip.ogg"),
        (r"plain.txt", "plain.txt"),
        (r#"quote\"d.txt"#, "quote\"d.txt"),
    ] {
        let disposition =
            format!("Content-Disposition: form-data; name=\"file\"; filename=\"{filename}\"");
        let res = multipart(
            app.post("/v1/objects", &app.dev_key),
            raw_form(&[disposition], b"bytes"),
        )
        .send()
        .await
        .unwrap();
        let status = res.status();
        let body: Value = res.json().await.unwrap();
        assert_eq!(status, 200, "{filename}: {body}");
        assert_eq!(body["object"]["key"], key, "{filename}");
    }
}

#[tokio::test]
async fn query_parameters_that_are_not_utf8_are_refused() {
    let app = spawn().await;
    let res = app
        .get("/v1/objects?path=a%FFb", &app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 400, "INVALID_PATH", "`path`").await;
    let res = app
        .delete("/v1/objects?path=shot%C3.png", &app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 400, "INVALID_PATH", "UTF-8").await;
    let res = app
        .get("/v1/presigned-url?path=%FE%FF", &app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error(res, 400, "INVALID_PATH").await;
    let res = app
        .get("/v1/objects?continuationToken=%80", &app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 400, "INVALID_REQUEST", "continuationToken").await;
    // valid UTF-8, percent-encoded, still works
    let res = app
        .get("/v1/objects?path=%C3%A9t%C3%A9", &app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn a_range_ending_at_u64_max_is_clamped_to_the_last_byte() {
    let app = spawn().await;
    let data: Vec<u8> = (0..100u8).collect();
    app.upload(&app.dev_key, "r.bin", data.clone(), None).await;
    let url = format!("{}/cdn/test-org/r.bin", app.cdn);
    for (range, first) in [
        ("bytes=0-18446744073709551615", 0usize),
        ("bytes=90-18446744073709551614", 90),
        ("bytes=-18446744073709551615", 0),
    ] {
        let res = app
            .client
            .get(&url)
            .header("Range", range)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 206, "{range}");
        assert_eq!(
            res.headers()["content-range"],
            format!("bytes {first}-99/100").as_str(),
            "{range}"
        );
        assert_eq!(res.bytes().await.unwrap().to_vec(), data[first..].to_vec());
    }
    let res = app
        .client
        .get(&url)
        .header("Range", "bytes=0-18446744073709551616")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 416);
}

/// Sends `head` and `body_start` on a raw connection, then stops sending and returns the
/// response and how long it took to come.
async fn stall(base: &str, head: String, body_start: &[u8]) -> (String, Duration) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.write_all(body_start).await.unwrap();
    let started = Instant::now();
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    // the server answers and closes; a bound on the wait keeps a regression from hanging
    let read = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let n = conn.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            response.extend_from_slice(&buf[..n]);
            if response.windows(4).any(|w| w == b"\r\n\r\n") && response.ends_with(b"}") {
                break;
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "no answer within 20 s: the body read has no idle timeout"
    );
    (
        String::from_utf8_lossy(&response).into_owned(),
        started.elapsed(),
    )
}

fn request_head(
    method: &str,
    path: &str,
    key: Option<&str>,
    content_type: &str,
    length: usize,
) -> String {
    let auth = key
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    format!("{method} {path} HTTP/1.1\r\nHost: test\r\n{auth}Content-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n")
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_answered_408_and_leaves_nothing() {
    let app = spawn_with(Options {
        tweak: |c| c.body_idle_timeout = Duration::from_secs(1),
        ..Options::default()
    })
    .await;
    let u = app.upload_url("").await;
    let token_path = format!("/v1/presigned-url/{}", u["token"].as_str().unwrap());
    let form_start = format!(
        "--{BOUNDARY}\r\n{DISPOSITION}\r\n\r\n{}",
        "x".repeat(100_000)
    );
    let form_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let cases = [
        (
            &app.cdn,
            request_head(
                "POST",
                "/v1/objects",
                Some(&app.dev_key),
                &form_type,
                1 << 20,
            ),
            form_start.clone(),
            "REQUEST_TIMEOUT",
        ),
        (
            &app.cdn,
            request_head("POST", &token_path, None, &form_type, 1 << 20),
            form_start.clone(),
            "REQUEST_TIMEOUT",
        ),
        (
            &app.cdn,
            request_head(
                "POST",
                "/v1/objects/base64",
                Some(&app.dev_key),
                "application/json",
                1000,
            ),
            "{\"data\":\"aGVsbG8".to_owned(),
            "REQUEST_TIMEOUT",
        ),
        (
            &app.logs,
            request_head(
                "POST",
                "/v1/servers/abc123/logs",
                Some(&app.server_key),
                "application/json",
                1000,
            ),
            "{\"batch_id\":\"b1\",".to_owned(),
            "request_timeout",
        ),
    ];
    for (base, head, start, code) in cases {
        let (response, waited) = stall(base, head, start.as_bytes()).await;
        assert!(response.starts_with("HTTP/1.1 408"), "{response}");
        assert!(response.contains(code), "{response}");
        assert!(
            response.to_ascii_lowercase().contains("x-request-id: req_"),
            "{response}"
        );
        assert!(waited >= Duration::from_millis(900), "{waited:?}");
    }
    assert!(
        app.settle_locations(0).await.is_empty(),
        "staged bytes are removed"
    );
}

/// A chunked body that stalls is answered 408 and its connection is then closed: it used to
/// stay open for as long as the client liked (the timed-out body counted as read to its end, so
/// the close-after-answer path never ran), and 1,500 unauthenticated sign-ins held 1,500
/// descriptors.
#[tokio::test]
async fn a_stalled_chunked_body_is_answered_408_and_its_connection_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_with(Options {
        tweak: |c| c.body_idle_timeout = Duration::from_secs(1),
        ..Options::default()
    })
    .await;
    let u = app.upload_url("").await;
    let token_path = format!("/v1/presigned-url/{}", u["token"].as_str().unwrap());
    let chunked = |path: &str, content_type: &str, key: Option<&str>| {
        let auth = key
            .map(|k| format!("Authorization: Bearer {k}\r\n"))
            .unwrap_or_default();
        format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
    };
    let form_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let cases = [
        (&app.console, chunked("/session", "application/json", None)),
        (
            &app.console,
            chunked("/invitation/accept", "application/json", None),
        ),
        (&app.cdn, chunked(&token_path, &form_type, None)),
        (
            &app.logs,
            chunked(
                "/v1/servers/abc123/logs",
                "application/json",
                Some(&app.server_key),
            ),
        ),
    ];
    for (base, head) in cases {
        let mut conn = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
            .await
            .unwrap();
        conn.write_all(head.as_bytes()).await.unwrap();
        conn.write_all(b"a\r\n{\"login\":\"").await.unwrap();
        let mut response = Vec::new();
        let mut buf = [0u8; 4096];
        // the answer, then the end of the connection; bounded so a regression fails, not hangs
        let closed = tokio::time::timeout(Duration::from_secs(15), async {
            loop {
                match conn.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => response.extend_from_slice(&buf[..n]),
                }
            }
        })
        .await;
        let response = String::from_utf8_lossy(&response).into_owned();
        assert!(response.starts_with("HTTP/1.1 408"), "{head}: {response}");
        assert!(
            closed.is_ok(),
            "{head}: the connection stayed open after the 408"
        );
    }
}

/// A body that never pauses long enough to be idle but arrives slower than the minimum rate
/// (10 bytes every 300 ms, against 100 bytes a second after 2 s of grace) is answered 408 and
/// leaves nothing. Before, it held its connection for as long as the client kept trickling.
#[tokio::test]
async fn a_body_that_trickles_below_the_minimum_rate_is_answered_408_and_leaves_nothing() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_with(Options {
        tweak: |c| {
            c.body_idle_timeout = Duration::from_secs(2);
            c.body_min_rate = 100;
        },
        ..Options::default()
    })
    .await;
    let form_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let head = request_head(
        "POST",
        "/v1/objects",
        Some(&app.dev_key),
        &form_type,
        1 << 20,
    );
    let mut conn = tokio::net::TcpStream::connect(app.cdn.trim_start_matches("http://"))
        .await
        .unwrap();
    conn.write_all(head.as_bytes()).await.unwrap();
    conn.write_all(format!("--{BOUNDARY}\r\n{DISPOSITION}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let started = Instant::now();
    let mut response = Vec::new();
    let trickle = async {
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if conn.write_all(b"0123456789").await.is_err() {
                break;
            }
            let mut buf = [0u8; 4096];
            match tokio::time::timeout(Duration::from_millis(1), conn.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => response.extend_from_slice(&buf[..n]),
                Err(_) => {}
            }
            if response.ends_with(b"}") {
                break;
            }
        }
    };
    let bounded = tokio::time::timeout(Duration::from_secs(20), trickle).await;
    assert!(bounded.is_ok(), "still reading a trickle after 20 s");
    let response = String::from_utf8_lossy(&response).into_owned();
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(response.contains("minimum body rate"), "{response}");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "not before the grace"
    );
    assert!(
        app.settle_locations(0).await.is_empty(),
        "staged bytes are removed"
    );
}

#[tokio::test]
async fn upload_urls_ignore_forwarded_hosts_from_untrusted_peers() {
    let app = spawn().await;
    let res: Value = app
        .get("/v1/presigned-url", &app.dev_key)
        .header("X-Forwarded-Host", "evil.example")
        .header("X-Forwarded-Proto", "https")
        .header("Forwarded", "host=evil2.example;proto=https")
        .json_body()
        .await;
    let url = res["uploadUrl"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/v1/presigned-url/", app.cdn)),
        "{url}"
    );

    let trusting = spawn_with(Options {
        tweak: |c| c.trusted_proxies = stow_http::config::parse_proxies("127.0.0.0/8").unwrap(),
        ..Options::default()
    })
    .await;
    let res: Value = trusting
        .get("/v1/presigned-url", &trusting.dev_key)
        .header("X-Forwarded-Host", "cdn.example.com")
        .header("X-Forwarded-Proto", "https")
        .json_body()
        .await;
    let url = res["uploadUrl"].as_str().unwrap();
    assert!(
        url.starts_with("https://cdn.example.com/v1/presigned-url/"),
        "{url}"
    );
}

/// Sends `bytes` on a raw connection and reads the whole answer (the server closes after these).
async fn raw_exchange(base: &str, bytes: &[u8]) -> (String, Duration) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut conn = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
        .await
        .unwrap();
    conn.write_all(bytes).await.unwrap();
    let started = Instant::now();
    let mut response = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), conn.read_to_end(&mut response)).await;
    assert!(read.is_ok(), "no answer within 20 s");
    (
        String::from_utf8_lossy(&response).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test]
async fn the_frameworks_own_answers_carry_the_envelope_and_a_request_id() {
    let app = spawn_with(Options {
        tweak: |c| c.request_head_timeout = Duration::from_secs(1),
        ..Options::default()
    })
    .await;
    let huge_header = format!(
        "GET /v1/whoami HTTP/1.1\r\nHost: test\r\nX-Big: {}\r\n\r\n",
        "a".repeat(stow_http::framework_error::MAX_HEAD_BYTES)
    );
    let many_headers = format!(
        "GET /v1/whoami HTTP/1.1\r\nHost: test\r\n{}\r\n",
        (0..=stow_http::framework_error::MAX_HEADER_LINES)
            .map(|i| format!("X-H{i}: v\r\n"))
            .collect::<String>()
    );
    let cases: [(&[u8], u16, &str, &str); 4] = [
        (
            b"GET /v1/whoami HTTP/1.1\r\nHost: test\r\nBad Header Line\r\n\r\n",
            400,
            "INVALID_REQUEST",
            "invalid_request",
        ),
        (
            huge_header.as_bytes(),
            431,
            "HEADERS_TOO_LARGE",
            "headers_too_large",
        ),
        (
            many_headers.as_bytes(),
            431,
            "HEADERS_TOO_LARGE",
            "headers_too_large",
        ),
        // a head that never ends: answered when the head timeout passes
        (
            b"GET /v1/whoami HTTP/1.1\r\nHost: te",
            408,
            "REQUEST_TIMEOUT",
            "request_timeout",
        ),
    ];
    for (bytes, status, cdn_code, ingest_code) in cases {
        for (base, code) in [(&app.cdn, cdn_code), (&app.logs, ingest_code)] {
            let (response, waited) = raw_exchange(base, bytes).await;
            let (head, body) = response
                .split_once("\r\n\r\n")
                .unwrap_or_else(|| panic!("no head: {response:?}"));
            assert!(
                head.starts_with(&format!("HTTP/1.1 {status}")),
                "{base}: {response}"
            );
            let head = head.to_ascii_lowercase();
            assert!(head.contains("content-type: application/json"), "{head}");
            let id = head
                .lines()
                .find_map(|l| l.strip_prefix("x-request-id: "))
                .unwrap_or_else(|| panic!("no x-request-id: {head}"));
            assert!(id.starts_with("req_"), "{head}");
            let body: Value =
                serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {head}\n\n{body}"));
            if base == &app.cdn {
                assert_eq!(body["success"], false, "{body}");
                assert_eq!(body["error"]["code"], code, "{body}");
                assert_eq!(body["requestId"], id, "{body}");
            } else {
                assert_eq!(body["error"], code, "{body}");
                assert_eq!(body["request_id"], id, "{body}");
            }
            if status == 408 {
                // answered by the 1 s timeout, not at once (actix-http's deadline is taken from a
                // clock it updates every 500 ms, so it can come up to that much early)
                assert!(waited >= Duration::from_millis(400), "{waited:?}");
            }
        }
    }
}

/// A JSON body is one value: anything after it but whitespace is refused on the API host, as
/// ingestion refuses it. Before, `{"paths":["a"]} xyz` was accepted.
#[tokio::test]
async fn trailing_data_after_a_json_body_is_refused() {
    let app = spawn().await;
    for body in [
        r#"{"paths":["a"]} xyz"#,
        r#"{"paths":["a"]}{"paths":["b"]}"#,
        r#"{"paths":["a"]}]"#,
    ] {
        let res = app
            .post("/v1/objects/purge", &app.dev_key)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        expect_error_mentioning(res, 400, "INVALID_REQUEST", "trailing").await;
    }
    // whitespace after the value is fine
    let res = app
        .post("/v1/objects/purge", &app.dev_key)
        .header("Content-Type", "application/json")
        .body("{\"paths\":[\"a\"]} \n\t ")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

/// A request whose body was read to its end keeps its connection for the next request (only a
/// body left unread closes it): uploads, JSON bodies and ingestion batches answer without
/// `Connection: close`.
#[tokio::test]
async fn requests_whose_body_was_read_keep_their_connection() {
    let app = spawn().await;
    let closes = |res: &reqwest::Response| {
        res.headers()
            .get("connection")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"))
    };
    let res = app
        .upload(&app.dev_key, "a.png", png_bytes(), Some("keep"))
        .await;
    assert_eq!(res.status(), 200);
    assert!(!closes(&res), "multipart upload: {:?}", res.headers());
    let res = app
        .post("/v1/objects/base64", &app.dev_key)
        .json(&json!({"path": "keep", "filename": "b.txt", "data": "aGVsbG8="}))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    assert!(!closes(&res), "JSON body: {:?}", res.headers());
    let res = app
        .client
        .post(format!("{}/v1/servers/abc123/logs", app.logs))
        .bearer_auth(&app.dev_key)
        .json(&json!({"batch_id": "keep-0001", "events": [{"level": "info", "message": "m"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    assert!(!closes(&res), "batch: {:?}", res.headers());
    // and one refused before its body was read closes it
    let res = app
        .client
        .post(format!("{}/v1/objects", app.cdn))
        .body(vec![b'x'; 1000])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert!(closes(&res), "{:?}", res.headers());
}
