//! Stowage's operations: the use cases every front end runs — the API host's handlers, `stowctl`
//! and the background jobs — written once. An operation decides who may (the caller's role,
//! organization, servers and paths), checks what is asked against the domain rules, makes the
//! change through the stores and has it audited; front ends parse, call and render.
//!
//! Protocol-free like the cores below it (no web framework, database driver, network or runtime:
//! `scripts/check-boundaries.sh` proves it), so every rule here is tested on the memory adapters.
//! Each operation is a typed request with one `run`, one module per area; errors are
//! [`OpError`], which the API maps once to its envelope and `stowctl` once to its output.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod alerts;
mod context;
mod error;
pub mod explorer;
pub mod fields;
pub mod keys;
pub mod lifecycle;
pub mod members;
pub mod objects;
mod stores;

pub use context::{outside_paths_text, Caller, Ctx};
pub use error::OpError;
pub use stores::Stores;

#[cfg(test)]
mod testing;
