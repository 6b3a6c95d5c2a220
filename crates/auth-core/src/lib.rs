//! Pure authentication and authorization policy for Stowage.
//!
//! Nothing here does I/O: keys are looked up through the [`store::AccountStore`] trait, implemented
//! in memory ([`memory::MemoryAccounts`]) for tests and in Postgres by the `stow-db` adapter.
//! Both run the same suite ([`testsuite`], behind the `testsuite` feature).

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod audit;
pub mod backoff;
pub mod canonical;
pub mod console_session;
pub mod credential;
pub mod error;
pub mod ids;
pub mod join_code;
pub mod key;
pub mod log_access;
pub mod member;
pub mod memory;
pub mod model;
pub mod password;
pub mod permission;
pub mod policy;
pub mod rate;
pub mod roles;
pub mod second_factor;
pub mod secret;
pub mod server_scope;
pub mod signing;
pub mod signing_secrets;
pub mod store;
#[cfg(any(test, feature = "testsuite"))]
#[allow(clippy::too_many_lines)] // a suite case reads as one story
pub mod testsuite;

pub use ids::{InvitationId, KeyId, MemberId, OrgId, ServerId};
pub use key::{ApiKey, AuthContext, AuthError, CredentialType};
pub use model::{NewKey, Org, Plan, Server};
pub use permission::{Permission, PermissionSet};
pub use policy::{mime_allowed, prefix_matches, PathScope};
pub use server_scope::ServerScope;
pub use store::{AccountStore, Cause, StoreError};
