//! [`CredentialType`]: what kind of key a credential is. Its own module, below the keys, the
//! stored models and the secrets that all name it.

/// A key's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CredentialType {
    /// Bound to one registered server.
    Server,
    /// A global developer key of an organization.
    Developer,
}

impl CredentialType {
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialType::Server => "server",
            CredentialType::Developer => "developer",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "server" => Some(Self::Server),
            "developer" => Some(Self::Developer),
            _ => None,
        }
    }
}
