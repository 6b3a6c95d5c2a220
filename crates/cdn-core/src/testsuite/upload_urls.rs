//! Upload URLs: storage and file reservations.

use chrono::{Duration, Utc};

use super::Fixture;
use crate::upload_url::{Reservation, UploadUrlRecord};

pub async fn upload_urls_are_stored_and_read_back(f: &Fixture) {
    stored_url(f).await;
}

async fn stored_url(f: &Fixture) -> (UploadUrlRecord, chrono::DateTime<Utc>) {
    let (repo, org_id, key_id) = (f.upload_urls.as_ref(), &f.org_a, &f.key_id);
    use chrono::SubsecRound;
    let now = Utc::now().trunc_subsecs(6); // Postgres keeps microseconds
    let rec = UploadUrlRecord {
        token_hash: [1u8; 32],
        org_id: org_id.clone(),
        key_id: key_id.clone(),
        path: "uploads".into(),
        max_files: 3,
        files_used: 0,
        max_file_size: 1000,
        allowed_mime: Some(vec!["image/*".into()]),
        allow_custom_metadata: true,
        randomize_name: false,
        expires_at: now + Duration::seconds(60),
    };
    repo.create(&rec).await.unwrap();
    assert_eq!(repo.get(&rec.token_hash).await.unwrap(), Some(rec.clone()));
    (rec, now)
}

pub async fn upload_url_reservations_count_files_and_expire(f: &Fixture) {
    let (rec, now) = stored_url(f).await;
    let repo = f.upload_urls.as_ref();
    assert_eq!(repo.get(&[9u8; 32]).await.unwrap(), None);
    assert_eq!(
        repo.reserve(&[9u8; 32], 1, now).await.unwrap(),
        Reservation::NotFound
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 4, now).await.unwrap(),
        Reservation::TooMany { remaining: 3 }
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 2, now).await.unwrap(),
        Reservation::Reserved
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 2, now).await.unwrap(),
        Reservation::TooMany { remaining: 1 }
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 1, now).await.unwrap(),
        Reservation::Reserved
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 1, now).await.unwrap(),
        Reservation::Exhausted
    );
    repo.release(&rec.token_hash, 1).await.unwrap();
    assert_eq!(
        repo.get(&rec.token_hash).await.unwrap().unwrap().files_used,
        2
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 1, now).await.unwrap(),
        Reservation::Reserved
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 1, now + Duration::seconds(61))
            .await
            .unwrap(),
        Reservation::Expired
    );
}
