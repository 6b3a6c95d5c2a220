//! Sending alerts (issue 41): destination secrets sealed at rest, an HTTP client that connects
//! only to public addresses and follows no redirect, Discord messages and Standard Webhooks
//! signed requests, and the worker that drains the outbox the batch commits fill.

pub mod secrets;
pub mod send;
pub mod worker;

pub use secrets::Secrets;
pub use send::{check_resolves, Client};
pub use worker::{Worker, WorkerConfig};
