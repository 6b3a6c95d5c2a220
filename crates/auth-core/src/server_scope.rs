//! Which registered servers' logs a key (or, later, a member) may act on.
//!
//! Files are not per server, so the scope bounds only `logs:read` and `logs:write`. A server key is
//! bound to its own server whatever its scope says; [`crate::AuthContext::log_scope`] gives the
//! scope that is in force.

use crate::ids::ServerId;

/// Every server of the organization, or only the named ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ServerScope {
    #[default]
    All,
    /// Never empty (see [`ServerScope::only`]).
    Only(Vec<ServerId>),
}

/// Why join codes do not make a scope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadJoinCodes {
    #[error("no server with join code `{0}` in this organization")]
    Unknown(String),
    #[error(transparent)]
    Empty(#[from] EmptyServerScope),
}

/// A scope that names no server would let its holder act on nothing; it is refused where it is
/// made rather than stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a server scope names at least one server; leave it out for every server")]
pub struct EmptyServerScope;

impl ServerScope {
    /// The named servers, deduplicated and in a stable order.
    pub fn only(ids: impl IntoIterator<Item = ServerId>) -> Result<Self, EmptyServerScope> {
        let mut ids: Vec<ServerId> = ids.into_iter().collect();
        ids.sort();
        ids.dedup();
        if ids.is_empty() {
            Err(EmptyServerScope)
        } else {
            Ok(Self::Only(ids))
        }
    }

    /// From the stored form: no list means every server.
    pub fn from_stored(stored: Option<Vec<String>>) -> Self {
        match stored {
            None => Self::All,
            Some(ids) => Self::Only(ids.into_iter().map(ServerId::from).collect()),
        }
    }

    /// The stored form: `None` for every server.
    pub fn to_stored(&self) -> Option<Vec<String>> {
        match self {
            Self::All => None,
            Self::Only(ids) => Some(ids.iter().map(|id| id.to_string()).collect()),
        }
    }

    pub fn includes(&self, server: &ServerId) -> bool {
        match self {
            Self::All => true,
            Self::Only(ids) => ids.contains(server),
        }
    }

    /// Whether every server this scope admits is also admitted by `ceiling` (a member or key can
    /// never grant more than it holds).
    pub fn within(&self, ceiling: &ServerScope) -> bool {
        match (self, ceiling) {
            (_, Self::All) => true,
            (Self::All, Self::Only(_)) => false,
            (Self::Only(ids), Self::Only(_)) => ids.iter().all(|id| ceiling.includes(id)),
        }
    }

    /// The named servers, `None` for every server.
    pub fn named(&self) -> Option<&[ServerId]> {
        match self {
            Self::All => None,
            Self::Only(ids) => Some(ids),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Server;

    fn only(ids: &[&str]) -> ServerScope {
        ServerScope::only(ids.iter().map(|s| ServerId::from(*s))).unwrap()
    }

    #[test]
    fn an_empty_list_is_refused_and_duplicates_fold() {
        assert_eq!(ServerScope::only([]), Err(EmptyServerScope));
        assert_eq!(
            only(&["srv_b", "srv_a", "srv_b"]),
            only(&["srv_a", "srv_b"])
        );
    }

    #[test]
    fn inclusion() {
        let a = ServerId::from("srv_a");
        let b = ServerId::from("srv_b");
        assert!(ServerScope::All.includes(&a));
        assert!(only(&["srv_a"]).includes(&a));
        assert!(!only(&["srv_a"]).includes(&b));
        // ids compare exactly: a prefix or another case is another server
        assert!(!only(&["srv_a"]).includes(&ServerId::from("srv_ab")));
        assert!(!only(&["srv_a"]).includes(&ServerId::from("SRV_A")));
    }

    #[test]
    fn narrowing() {
        let all = ServerScope::All;
        let ab = only(&["srv_a", "srv_b"]);
        let a = only(&["srv_a"]);
        let c = only(&["srv_c"]);
        assert!(all.within(&all));
        assert!(ab.within(&all));
        assert!(!all.within(&ab), "every server is more than two");
        assert!(a.within(&ab));
        assert!(ab.within(&ab));
        assert!(!ab.within(&a), "N+1 servers in a scope of N");
        assert!(!c.within(&ab));
    }

    #[test]
    fn join_codes_name_servers_ignoring_case() {
        let server = |id: &str, code: &str| Server {
            id: ServerId::from(id),
            org_id: "org_1".into(),
            cfx_id: code.into(),
            name: None,
            logs_active: true,
        };
        let known = [server("srv_a", "Abc123"), server("srv_b", "def456")];
        let codes = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            ServerScope::of_join_codes(&known, &[]),
            Ok(ServerScope::All)
        );
        assert_eq!(
            ServerScope::of_join_codes(&known, &codes(&["ABC123", "abc123"])),
            Ok(only(&["srv_a"]))
        );
        assert_eq!(
            ServerScope::of_join_codes(&known, &codes(&["def456", "nope"])),
            Err(BadJoinCodes::Unknown("nope".into()))
        );
    }

    #[test]
    fn stored_form_round_trips() {
        for scope in [ServerScope::All, only(&["srv_a", "srv_b"])] {
            assert_eq!(ServerScope::from_stored(scope.to_stored()), scope);
        }
        assert_eq!(ServerScope::All.named(), None);
        assert_eq!(only(&["srv_a"]).named().map(<[_]>::len), Some(1));
    }
}
