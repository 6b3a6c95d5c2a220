//! Members' roles and what a member may grant.
//!
//! A member of an organization holds a [`Grant`]: a [`Role`], the servers whose logs it covers and
//! the CDN paths it covers. The role gives the six API permissions (the same
//! [`PermissionSet`] a key holds, checked by the same code) and the management capabilities
//! ([`Capability`]) no key has. Whoever changes a grant or makes a key is checked here: nobody
//! grants more than they hold, and only owners touch owners.

use serde_json::Value;
use std::fmt;
use std::str::FromStr;

use crate::permission::{Permission, PermissionSet};
use crate::policy::PathScope;
use crate::server_scope::ServerScope;

/// A member's role, from the most to the least trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Everything: members (owners included), keys, audit log.
    Owner,
    /// Everything an owner does except acting on owners or making one.
    Admin,
    /// Reads logs and files, and exports logs (evidence for bans).
    Moderator,
    /// Reads logs and files.
    Viewer,
}

/// What a role may do beyond the six API permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    /// Download a search (`GET /v1/logs/export`).
    ExportLogs,
    /// Invite, change and remove members (owners: only an owner).
    ManageMembers,
    /// Create, rotate, disable and delete API keys.
    ManageKeys,
    /// Read and export the audit log.
    ViewAudit,
}

impl Capability {
    pub const ALL: [Capability; 4] = [
        Capability::ExportLogs,
        Capability::ManageMembers,
        Capability::ManageKeys,
        Capability::ViewAudit,
    ];
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Owner, Role::Admin, Role::Moderator, Role::Viewer];

    /// The wire name: `owner`, `admin`, `moderator`, `viewer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Moderator => "moderator",
            Role::Viewer => "viewer",
        }
    }

    /// The API permissions the role holds (within its grant's servers and paths).
    pub fn permissions(self) -> PermissionSet {
        match self {
            Role::Owner | Role::Admin => PermissionSet::all(),
            Role::Moderator | Role::Viewer => [Permission::CdnRead, Permission::LogsRead]
                .into_iter()
                .collect(),
        }
    }

    pub fn may(self, capability: Capability) -> bool {
        use Capability::*;
        match self {
            Role::Owner | Role::Admin => true,
            Role::Moderator => capability == ExportLogs,
            Role::Viewer => false,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for an unknown role name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role `{0}` (expected one of owner, admin, moderator, viewer)")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| UnknownRole(s.to_owned()))
    }
}

/// A member's role in one organization, with the servers and paths it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub role: Role,
    pub servers: ServerScope,
    pub paths: PathScope,
}

impl Grant {
    /// The role over every server and path.
    pub fn everywhere(role: Role) -> Self {
        Self {
            role,
            servers: ServerScope::All,
            paths: PathScope::unrestricted(),
        }
    }

    pub fn permissions(&self) -> PermissionSet {
        self.role.permissions()
    }

    pub fn may(&self, capability: Capability) -> bool {
        self.role.may(capability)
    }

    /// Whether `other` gives nothing this grant lacks: no permission, capability, server or path
    /// beyond it, and not the owner role unless this is one.
    pub fn covers(&self, other: &Grant) -> bool {
        self.excess(&other.role, &other.servers, &other.paths)
            .is_none()
    }

    fn excess(&self, role: &Role, servers: &ServerScope, paths: &PathScope) -> Option<Refusal> {
        if *role == Role::Owner && self.role != Role::Owner {
            return Some(Refusal::OwnerOnly);
        }
        let beyond_permissions = role
            .permissions()
            .iter()
            .any(|p| !self.permissions().contains(p));
        let beyond_capabilities = Capability::ALL
            .into_iter()
            .any(|c| role.may(c) && !self.may(c));
        if beyond_permissions || beyond_capabilities {
            return Some(Refusal::RoleAboveOwn);
        }
        if !servers.within(&self.servers) {
            return Some(Refusal::ServersBeyondOwn);
        }
        if !paths.within(&self.paths) {
            return Some(Refusal::PathsBeyondOwn);
        }
        None
    }
}

/// Why a change to members or keys is refused. Messages are safe to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("your role may not manage members")]
    CannotManageMembers,
    #[error("your role may not manage API keys")]
    CannotManageKeys,
    #[error("only an owner may make an owner or change or remove one")]
    OwnerOnly,
    #[error("you may not give a role above your own")]
    RoleAboveOwn,
    #[error("you may not give a permission you do not hold")]
    PermissionAboveOwn,
    #[error("you may not give access to servers outside your own")]
    ServersBeyondOwn,
    #[error("you may not give access to paths outside your own")]
    PathsBeyondOwn,
    #[error("an organization keeps at least one owner")]
    LastOwner,
}

/// Whether `actor` may give a member `proposed`, replacing `current` (`None` for an invitation).
/// Changing one's own grant follows the same rule, so nobody promotes themselves.
pub fn check_grant(
    actor: &Grant,
    current: Option<&Grant>,
    proposed: &Grant,
) -> Result<(), Refusal> {
    if !actor.may(Capability::ManageMembers) {
        return Err(Refusal::CannotManageMembers);
    }
    // the member as they are and as they would be both lie within the actor's own grant
    for grant in current.into_iter().chain([proposed]) {
        if let Some(refusal) = actor.excess(&grant.role, &grant.servers, &grant.paths) {
            return Err(refusal);
        }
    }
    Ok(())
}

/// The last-owner rule every store applies in the step of the change: whether giving a member
/// who holds `current` the role `next` (`None`: removing them) leaves the organization, which has
/// `owners` owners now, without one.
pub fn leaves_no_owner(current: Role, next: Option<Role>, owners: usize) -> bool {
    current == Role::Owner && next != Some(Role::Owner) && owners <= 1
}

/// Whether `actor` may remove a member holding `target` (one whose grant lies within the
/// actor's). `owners` counts the organization's owners now; the last one stays.
pub fn check_removal(actor: &Grant, target: &Grant, owners: usize) -> Result<(), Refusal> {
    if !actor.may(Capability::ManageMembers) {
        return Err(Refusal::CannotManageMembers);
    }
    if let Some(refusal) = actor.excess(&target.role, &target.servers, &target.paths) {
        return Err(refusal);
    }
    if leaves_no_owner(target.role, None, owners) {
        return Err(Refusal::LastOwner);
    }
    Ok(())
}

/// What a key to be made (or rotated) would give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyGrant {
    pub permissions: PermissionSet,
    pub servers: ServerScope,
    pub paths: PathScope,
}

impl KeyGrant {
    /// What a key with these settings gives (a server key: its own server).
    pub fn new(
        permissions: PermissionSet,
        bound: Option<&crate::ServerId>,
        servers: &ServerScope,
        paths: PathScope,
    ) -> Self {
        Self {
            permissions,
            servers: match bound {
                Some(bound) => ServerScope::Only(vec![bound.clone()]),
                None => servers.clone(),
            },
            paths,
        }
    }

    /// What an existing key gives.
    pub fn of(key: &crate::ApiKey) -> Self {
        Self::new(
            key.permissions,
            key.server_id.as_ref(),
            &key.servers,
            key.path_scope(),
        )
    }
}

/// Whether `actor` may make a key giving `key`: never a permission, server or path beyond the
/// actor's own.
pub fn check_key(actor: &Grant, key: &KeyGrant) -> Result<(), Refusal> {
    if !actor.may(Capability::ManageKeys) {
        return Err(Refusal::CannotManageKeys);
    }
    if key
        .permissions
        .iter()
        .any(|p| !actor.permissions().contains(p))
    {
        return Err(Refusal::PermissionAboveOwn);
    }
    if !key.servers.within(&actor.servers) {
        return Err(Refusal::ServersBeyondOwn);
    }
    if !key.paths.within(&actor.paths) {
        return Err(Refusal::PathsBeyondOwn);
    }
    Ok(())
}

/// What an entry says of a grant.
pub fn grant_details(g: &Grant) -> Value {
    serde_json::json!({
        "role": g.role.as_str(),
        "servers": g.servers.named(),
        "allowPaths": g.paths.allowed,
        "denyPaths": g.paths.denied,
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_last_owner_stays_whatever_the_change() {
        use Role::*;
        // the last owner: demoted or removed → refused; kept an owner → fine
        for next in [Some(Admin), Some(Moderator), Some(Viewer), None] {
            assert!(leaves_no_owner(Owner, next, 1), "{next:?}");
            assert!(
                !leaves_no_owner(Owner, next, 2),
                "{next:?} with another owner"
            );
        }
        assert!(!leaves_no_owner(Owner, Some(Owner), 1));
        // changing anyone else never does
        for current in [Admin, Moderator, Viewer] {
            for next in [Some(Owner), Some(Viewer), None] {
                assert!(!leaves_no_owner(current, next, 1));
                assert!(!leaves_no_owner(current, next, 0));
            }
        }
    }

    use super::*;
    use crate::ids::ServerId;
    use Capability::*;
    use Permission::*;

    fn srv(id: &str) -> ServerId {
        ServerId::from(id)
    }

    fn only(ids: &[&str]) -> ServerScope {
        ServerScope::only(ids.iter().map(|id| srv(id))).unwrap()
    }

    fn paths(allowed: &[&str]) -> PathScope {
        PathScope::new(allowed.iter().map(|p| p.to_string()).collect(), vec![])
    }

    fn grant(role: Role, servers: ServerScope, paths: PathScope) -> Grant {
        Grant {
            role,
            servers,
            paths,
        }
    }

    #[test]
    fn role_names_round_trip() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>(), Ok(role));
        }
        for bad in ["Owner", "root", "", "owner "] {
            assert!(bad.parse::<Role>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_role_holds_exactly_its_permissions_and_capabilities() {
        let permissions: &[(Role, &[Permission])] = &[
            (Role::Owner, &Permission::ALL),
            (Role::Admin, &Permission::ALL),
            (Role::Moderator, &[CdnRead, LogsRead]),
            (Role::Viewer, &[CdnRead, LogsRead]),
        ];
        for (role, held) in permissions {
            for p in Permission::ALL {
                assert_eq!(
                    role.permissions().contains(p),
                    held.contains(&p),
                    "{role} {p}"
                );
            }
        }
        let capabilities: &[(Role, &[Capability])] = &[
            (Role::Owner, &Capability::ALL),
            (Role::Admin, &Capability::ALL),
            (Role::Moderator, &[ExportLogs]),
            (Role::Viewer, &[]),
        ];
        for (role, held) in capabilities {
            for c in Capability::ALL {
                assert_eq!(role.may(c), held.contains(&c), "{role} {c:?}");
            }
        }
    }

    /// Every role × permission × server scope × path scope: a grant allows an action on a
    /// server's logs or a path exactly when the role holds the permission and the target lies in
    /// the scope that bounds it (servers for logs, paths for files).
    #[test]
    fn every_role_permission_server_and_path_scope() {
        let (a, b) = (srv("srv_a"), srv("srv_b"));
        for role in Role::ALL {
            for servers in [ServerScope::All, only(&["srv_a"])] {
                for scope in [PathScope::unrestricted(), paths(&["shots"])] {
                    let g = grant(role, servers.clone(), scope.clone());
                    for p in Permission::ALL {
                        let held = g.permissions().contains(p);
                        let (service, _) = p.split();
                        if service == "logs" {
                            assert_eq!(held && g.servers.includes(&a), held, "{role} {p} on A");
                            let on_b = held && g.servers.includes(&b);
                            let expected = held && servers == ServerScope::All;
                            assert_eq!(on_b, expected, "{role} {p} on B with {servers:?}");
                        } else {
                            let inside = held && g.paths.allows("shots/a.png");
                            let outside = held && g.paths.allows("mugshots/a.png");
                            assert_eq!(inside, held, "{role} {p} inside");
                            assert_eq!(
                                outside,
                                held && !scope.is_restricted(),
                                "{role} {p} outside"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn who_may_give_which_role() {
        for actor in Role::ALL {
            for target in Role::ALL {
                let result =
                    check_grant(&Grant::everywhere(actor), None, &Grant::everywhere(target));
                let expected = match (actor, target) {
                    (Role::Moderator | Role::Viewer, _) => Err(Refusal::CannotManageMembers),
                    (Role::Admin, Role::Owner) => Err(Refusal::OwnerOnly),
                    _ => Ok(()),
                };
                assert_eq!(result, expected, "{actor} gives {target}");
            }
        }
    }

    #[test]
    fn an_admin_cannot_promote_themselves_or_touch_an_owner() {
        let admin = Grant::everywhere(Role::Admin);
        let owner = Grant::everywhere(Role::Owner);
        assert_eq!(
            check_grant(&admin, Some(&admin), &owner),
            Err(Refusal::OwnerOnly)
        );
        let demoted = Grant::everywhere(Role::Viewer);
        assert_eq!(
            check_grant(&admin, Some(&owner), &demoted),
            Err(Refusal::OwnerOnly)
        );
        assert_eq!(check_removal(&admin, &owner, 2), Err(Refusal::OwnerOnly));
        assert_eq!(check_grant(&owner, Some(&admin), &owner), Ok(()));
        assert_eq!(check_grant(&owner, Some(&owner), &demoted), Ok(()));
    }

    #[test]
    fn a_grant_never_reaches_past_its_givers_servers_or_paths() {
        let admin_a = grant(Role::Admin, only(&["srv_a"]), paths(&["shots"]));
        let ok = grant(Role::Moderator, only(&["srv_a"]), paths(&["shots/2026"]));
        assert_eq!(check_grant(&admin_a, None, &ok), Ok(()));
        let wider_servers = [
            ServerScope::All,
            only(&["srv_a", "srv_b"]),
            only(&["srv_b"]),
        ];
        for servers in wider_servers {
            let g = grant(Role::Viewer, servers, paths(&["shots"]));
            assert_eq!(
                check_grant(&admin_a, None, &g),
                Err(Refusal::ServersBeyondOwn)
            );
        }
        for scope in [
            PathScope::unrestricted(),
            paths(&["shots", "clips"]),
            paths(&["shots2"]),
        ] {
            let g = grant(Role::Viewer, only(&["srv_a"]), scope);
            assert_eq!(
                check_grant(&admin_a, None, &g),
                Err(Refusal::PathsBeyondOwn)
            );
        }
        // a member outside the giver's own servers is not the giver's to change or remove
        let moderator_b = grant(Role::Moderator, only(&["srv_b"]), paths(&["shots"]));
        assert_eq!(
            check_grant(&admin_a, Some(&moderator_b), &ok),
            Err(Refusal::ServersBeyondOwn)
        );
        assert_eq!(
            check_removal(&admin_a, &moderator_b, 1),
            Err(Refusal::ServersBeyondOwn)
        );
        assert_eq!(check_removal(&admin_a, &ok, 1), Ok(()));
        assert!(admin_a.covers(&ok));
        assert!(!ok.covers(&admin_a));
    }

    #[test]
    fn the_last_owner_stays() {
        let owner = Grant::everywhere(Role::Owner);
        assert_eq!(check_removal(&owner, &owner, 1), Err(Refusal::LastOwner));
        assert_eq!(check_removal(&owner, &owner, 2), Ok(()));
        assert_eq!(
            check_removal(
                &Grant::everywhere(Role::Moderator),
                &Grant::everywhere(Role::Viewer),
                1
            ),
            Err(Refusal::CannotManageMembers)
        );
    }

    #[test]
    fn a_key_never_holds_more_than_its_maker() {
        let key = |permissions: &[Permission], servers: ServerScope, scope: PathScope| KeyGrant {
            permissions: permissions.iter().copied().collect(),
            servers,
            paths: scope,
        };
        let everything = key(
            &Permission::ALL,
            ServerScope::All,
            PathScope::unrestricted(),
        );
        for role in Role::ALL {
            let expected = if role.may(ManageKeys) {
                Ok(())
            } else {
                Err(Refusal::CannotManageKeys)
            };
            assert_eq!(
                check_key(&Grant::everywhere(role), &everything),
                expected,
                "{role}"
            );
        }
        let admin_a = grant(Role::Admin, only(&["srv_a"]), paths(&["shots"]));
        let read_a = key(&[LogsRead], only(&["srv_a"]), paths(&["shots"]));
        assert_eq!(check_key(&admin_a, &read_a), Ok(()));
        assert_eq!(
            check_key(
                &admin_a,
                &key(&[LogsRead], ServerScope::All, paths(&["shots"]))
            ),
            Err(Refusal::ServersBeyondOwn)
        );
        assert_eq!(
            check_key(
                &admin_a,
                &key(&[CdnRead], only(&["srv_a"]), PathScope::unrestricted())
            ),
            Err(Refusal::PathsBeyondOwn)
        );
    }
}
