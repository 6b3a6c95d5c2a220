#![allow(clippy::unwrap_used, clippy::expect_used)]
//! CDN objects: upload (multipart, Base64, bulk), list, delete, idempotency, delivery, storage.

pub(crate) use auth_core::{AccountStore, Permission};
pub(crate) use reqwest::multipart::{Form, Part};
pub(crate) use stowage_tests::*;

mod create_only;
mod delete_and_idempotency;
mod delete_folder;
mod delivery;
mod details;
mod folders;
mod lifecycle;
mod limits;
mod listing_and_bulk;
mod moves;
mod placeholders;
mod purge;
mod races;
mod renditions;
mod search;
mod upload;
mod zip;

pub(crate) fn file_part(bytes: Vec<u8>, name: &str) -> Part {
    Part::bytes(bytes).file_name(name.to_owned())
}

pub(crate) fn compress(encoding: &str, bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let level = flate2::Compression::best();
    match encoding {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        }
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
            e.write_all(bytes).unwrap();
            e.finish().unwrap()
        }
        other => panic!("no encoder for {other}"),
    }
}

pub(crate) async fn expect_conflict(res: reqwest::Response) {
    expect_error(res, 409, "CONFLICT").await;
}
