//! Scoped upload URLs: `GET /v1/presigned-url` creates one, `POST /v1/presigned-url/{token}`
//! uploads through it without an API key. The token's file limit is enforced by an atomic
//! reservation in Postgres after the form is read and before any row is committed, so
//! concurrent requests (on any number of instances) never store more than `maxFiles` files.
//!
//! One module per operation: [`create`] (`GET /v1/presigned-url`) and [`upload`]
//! (`POST /v1/presigned-url/{token}`).

mod create;
mod upload;

pub use create::*;
pub use upload::*;
