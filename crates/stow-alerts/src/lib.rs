//! Sending alerts (issue 41): destination secrets sealed at rest, an HTTP client that connects
//! only to public addresses and follows no redirect, Discord messages and Standard Webhooks
//! signed requests, and the worker that drains the outbox the batch commits fill.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod secrets;
pub mod send;
pub mod worker;

pub use secrets::Secrets;
pub use send::{check_resolves, Client};
pub use worker::{Worker, WorkerConfig};
