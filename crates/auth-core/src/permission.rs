//! The seven permissions and a compact set of them.

use std::fmt;
use std::str::FromStr;

/// One action a key may be allowed to perform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Permission {
    CdnRead,
    CdnWrite,
    CdnDelete,
    /// Drop every cached state of objects (`POST /v1/objects/purge`).
    CdnPurge,
    LogsRead,
    LogsWrite,
    /// Manage alert rules and their destinations (`/v1/logs/alert-rules`, `/v1/logs/destinations`).
    LogsAlerts,
}

impl Permission {
    pub const ALL: [Permission; 7] = [
        Permission::CdnRead,
        Permission::CdnWrite,
        Permission::CdnDelete,
        Permission::CdnPurge,
        Permission::LogsRead,
        Permission::LogsWrite,
        Permission::LogsAlerts,
    ];

    /// The wire name, e.g. `cdn:read`.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::CdnRead => "cdn:read",
            Permission::CdnWrite => "cdn:write",
            Permission::CdnDelete => "cdn:delete",
            Permission::CdnPurge => "cdn:purge",
            Permission::LogsRead => "logs:read",
            Permission::LogsWrite => "logs:write",
            Permission::LogsAlerts => "logs:alerts",
        }
    }

    /// `(service, action)`, e.g. `("cdn", "read")`.
    pub fn split(self) -> (&'static str, &'static str) {
        let s = self.as_str();
        let (service, action) = s.split_once(':').unwrap_or((s, ""));
        (service, action)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for an unknown permission name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission `{0}` (expected one of cdn:read, cdn:write, cdn:delete, cdn:purge, logs:read, logs:write, logs:alerts)")]
pub struct UnknownPermission(pub String);

impl FromStr for Permission {
    type Err = UnknownPermission;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Permission::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPermission(s.to_owned()))
    }
}

/// A set of permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PermissionSet(u8);

impl PermissionSet {
    pub fn empty() -> Self {
        Self(0)
    }
    pub fn all() -> Self {
        Permission::ALL.into_iter().collect()
    }
    /// What every server key holds, whatever else it is given.
    pub fn server_key_baseline() -> Self {
        [
            Permission::CdnWrite,
            Permission::LogsRead,
            Permission::LogsWrite,
        ]
        .into_iter()
        .collect()
    }
    pub fn insert(&mut self, p: Permission) {
        self.0 |= p.bit();
    }
    pub fn contains(self, p: Permission) -> bool {
        self.0 & p.bit() != 0
    }
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
    pub fn iter(self) -> impl Iterator<Item = Permission> {
        Permission::ALL
            .into_iter()
            .filter(move |p| self.contains(*p))
    }
    pub fn names(self) -> Vec<String> {
        self.iter().map(|p| p.as_str().to_owned()).collect()
    }
    /// Parses stored names; unknown names are an error so a typo never grants or drops silently.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self, UnknownPermission> {
        names
            .iter()
            .map(|n| n.as_ref().parse::<Permission>())
            .collect()
    }
}

impl FromIterator<Permission> for PermissionSet {
    fn from_iter<T: IntoIterator<Item = Permission>>(iter: T) -> Self {
        let mut set = Self::empty();
        for p in iter {
            set.insert(p);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Permission::ALL {
            assert_eq!(p.as_str().parse::<Permission>(), Ok(p));
        }
        assert!("cdn:READ".parse::<Permission>().is_err());
        assert!("cdn".parse::<Permission>().is_err());
        assert!("".parse::<Permission>().is_err());
    }

    #[test]
    fn set_operations() {
        let s = PermissionSet::server_key_baseline();
        assert!(s.contains(Permission::CdnWrite));
        assert!(s.contains(Permission::LogsRead));
        assert!(s.contains(Permission::LogsWrite));
        assert!(!s.contains(Permission::CdnRead));
        assert!(!s.contains(Permission::CdnDelete));
        assert_eq!(PermissionSet::all().iter().count(), 7);
        assert_eq!(PermissionSet::empty().iter().count(), 0);
        let parsed = PermissionSet::from_names(&["cdn:read", "logs:write"]).unwrap();
        assert_eq!(parsed.names(), vec!["cdn:read", "logs:write"]);
        assert!(PermissionSet::from_names(&["cdn:read", "nope"]).is_err());
        assert_eq!(Permission::LogsRead.split(), ("logs", "read"));
    }
}
