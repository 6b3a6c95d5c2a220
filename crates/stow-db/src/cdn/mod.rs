//! Postgres implementations of the CDN storage traits, one module per trait.

mod folder_view;
mod idempotency;
mod records;
mod upload_urls;

pub use idempotency::PgIdempotency;
pub use records::PgObjectRecords;
pub use upload_urls::PgUploadUrls;
