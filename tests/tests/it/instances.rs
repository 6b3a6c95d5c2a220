#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Limits that hold across instances: the per-key rate limit counts every instance's requests
//! against one bucket (the concurrent-search, export and tail limits have their tests beside
//! their routes: query.rs, explorer/export.rs, explorer/tail.rs).

use std::time::Instant;

use stowage_tests::*;

/// Two API instances and an ingestion instance on one database share each key's bucket: a key
/// with a burst of 4 and 2 a second gets about 4 + 2 per second in all, not that much from each.
/// Before, N instances allowed N times the plan.
#[tokio::test]
async fn the_per_key_rate_limit_holds_across_instances() {
    let app = spawn_with(Options {
        tweak: |c| {
            c.rate_limit_per_second = 2;
            c.rate_limit_burst = 4;
        },
        ..Options::default()
    })
    .await;
    let second = app.second_cdn();
    let bases = [app.cdn.clone(), second, app.logs.clone()];
    let started = Instant::now();
    let (mut passed, mut refused) = (0u64, 0u64);
    for i in 0..30 {
        let res = app
            .client
            .get(format!("{}/v1/whoami", bases[i % bases.len()]))
            .bearer_auth(&app.dev_key)
            .send()
            .await
            .unwrap();
        match res.status().as_u16() {
            200 => passed += 1,
            429 => {
                assert!(res.headers().contains_key("retry-after"));
                refused += 1;
            }
            other => panic!("unexpected {other}"),
        }
    }
    let elapsed = started.elapsed();
    // the burst, what refilled meanwhile, and one token of rounding
    let allowed = 4 + (elapsed.as_secs_f64() * 2.0).ceil() as u64 + 1;
    assert!(
        passed <= allowed,
        "{passed} passed in {elapsed:?} across three instances; at most {allowed} may"
    );
    assert!(passed >= 4, "the burst is there: {passed}");
    assert_eq!(passed + refused, 30);
    // another key has its own bucket
    let other = app
        .key(KeySpec::developer(auth_core::PermissionSet::all()))
        .await;
    assert_eq!(app.get("/v1/whoami", &other).sent_status().await, 200);
}
