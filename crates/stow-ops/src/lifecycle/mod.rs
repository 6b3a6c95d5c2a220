//! Lifecycle rules enforced: the job every API host runs ([`ExpireObjects`]).

mod expire;

pub use expire::{ExpireObjects, ExpiryPass, Removal};

#[cfg(test)]
mod tests;
