//! Postgres implementations of the CDN storage traits, one module per trait.

mod folder_view;
mod idempotency;
mod lifecycle;
mod placeholders;
mod records;
mod search;
mod upload_urls;

pub use idempotency::PgIdempotency;
pub use lifecycle::{roll_up_usage, PgLifecycle};
pub use placeholders::PgPlaceholders;
pub use records::PgObjectRecords;
pub use upload_urls::PgUploadUrls;
