//! The adapter against the local filesystem and memory (S3 runs in `scripts/s3-tests.sh`).

use super::*;
use crate::error::local_error;

#[test]
fn a_full_disk_is_out_of_space_not_a_plain_error() {
    use std::io::{Error, ErrorKind};
    for kind in [ErrorKind::StorageFull, ErrorKind::QuotaExceeded] {
        assert!(
            matches!(local_error(Error::from(kind)), ObjectsError::NoSpace(_)),
            "{kind:?}"
        );
    }
    // ENOSPC as the OS reports it
    assert!(matches!(
        local_error(Error::from_raw_os_error(28)),
        ObjectsError::NoSpace(_)
    ));
    assert!(matches!(
        local_error(Error::from(ErrorKind::PermissionDenied)),
        ObjectsError::Other(_)
    ));
}

#[tokio::test]
async fn small_and_large_writes_round_trip() {
    let dir = std::env::temp_dir().join(format!("stow-objects-{}", ulid::Ulid::new()));
    let url = format!("file://{}", dir.display());
    for objects in [Objects::memory(), Objects::from_url(&url).unwrap()] {
        for size in [
            0usize,
            10,
            local::BATCH_BYTES,
            local::BATCH_BYTES + 1,
            3 * local::BATCH_BYTES + 3,
            SINGLE_PUT_LIMIT,
            SINGLE_PUT_LIMIT + 1,
            3 * PART_SIZE + 7,
        ] {
            let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let loc = Objects::fresh_location("org_t");
            let mut w = objects.writer(loc.clone(), Some("application/octet-stream".into()));
            for chunk in data.chunks(64 * 1024) {
                w.write(Bytes::copy_from_slice(chunk)).await.unwrap();
            }
            assert!(
                !objects.exists(&loc).await.unwrap(),
                "visible before finish"
            );
            w.finish().await.unwrap();
            let listed: Vec<String> = objects.list("o").map(|i| i.unwrap().0).collect().await;
            assert_eq!(listed, vec![loc.to_string()], "staged leftovers");
            assert_eq!(
                objects.read_all(&loc).await.unwrap().as_ref(),
                data.as_slice()
            );
            if size > 10 {
                let mut s = objects.get(&loc, Some(2..9)).await.unwrap();
                let mut got = Vec::new();
                while let Some(c) = s.next().await {
                    got.extend_from_slice(&c.unwrap());
                }
                assert_eq!(got, data[2..9].to_vec());
            }
            let whole: Vec<Bytes> = objects
                .get(&loc, None)
                .await
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            assert_eq!(whole.concat(), data, "streamed read of {size} bytes");
            objects.delete(&loc).await.unwrap();
            assert!(!objects.exists(&loc).await.unwrap());
            assert!(
                matches!(objects.get(&loc, None).await, Err(ObjectsError::NotFound)),
                "a deleted object reads as not found"
            );
            objects.delete(&loc).await.unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn aborted_large_write_leaves_nothing() {
    let dir = std::env::temp_dir().join(format!("stow-objects-{}", ulid::Ulid::new()));
    let objects = Objects::from_url(&format!("file://{}", dir.display())).unwrap();
    let loc = Objects::fresh_location("org_t");
    let mut w = objects.writer(loc.clone(), None);
    w.write(Bytes::from(vec![1u8; SINGLE_PUT_LIMIT + PART_SIZE + 1]))
        .await
        .unwrap();
    w.abort().await;
    assert!(!objects.exists(&loc).await.unwrap());
    let listed: Vec<_> = objects.list("o").collect().await;
    assert!(listed.is_empty(), "{listed:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Deleting an organization's last object keeps its directory. While deletes removed empty
/// directories, an upload starting at that moment could find its directory gone between
/// checking for it and creating its file: an intermittent 500 (seen in `just test`).
#[tokio::test]
async fn deleting_the_last_object_keeps_its_directory() {
    let dir = std::env::temp_dir().join(format!("stow-objects-{}", ulid::Ulid::new()));
    let objects = Objects::from_url(&format!("file://{}", dir.display())).unwrap();
    let only = Objects::fresh_location("org_r");
    objects
        .put(&only, Bytes::from_static(b"x"), None)
        .await
        .unwrap();
    objects.delete(&only).await.unwrap();
    assert!(
        dir.join("o/org_r").is_dir(),
        "the organization's directory was removed"
    );
    let listed: Vec<_> = objects.list("o").collect().await;
    assert!(listed.is_empty(), "{listed:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_urls_are_config_errors() {
    assert!(matches!(
        Objects::from_url("ftp://x"),
        Err(ObjectsError::Config(_))
    ));
    assert!(matches!(
        Objects::from_url("not a url"),
        Err(ObjectsError::Config(_))
    ));
    assert!(Objects::from_url("memory://").is_ok());
}
