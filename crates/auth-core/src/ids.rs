//! Identifiers as types, so an organization's id cannot be passed where a key's is expected.
//!
//! Each is a string underneath (`org_…`, `key_…`, `srv_…`), made by the stores and read back
//! from them; they dereference to `str` for formatting, SQL binds and comparisons.

#[doc(hidden)]
pub use serde as __serde;

/// A string identifier type: `new`, `generate` (a ULID after the prefix, when one is given),
/// `as_str`, `Deref<Target = str>`, `Display`, conversions from `String`/`&str`, equality with
/// `str`, and serde as a plain string.
#[macro_export]
macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident, $prefix:literal) => {
        $crate::string_id!($(#[$meta])* $name);

        impl $name {
            /// A new, sortable id with this type's prefix.
            pub fn generate() -> Self {
                Self::new($crate::ids::new_id($prefix))
            }
        }
    };
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        /// As the string (`"org_…"`), so messages that quote an id read as before.
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.0, f)
            }
        }

        impl $name {
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::convert::Infallible;
            fn from_str(id: &str) -> Result<Self, Self::Err> {
                Ok(Self(id.to_owned()))
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(id.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl $crate::ids::__serde::Serialize for $name {
            fn serialize<S: $crate::ids::__serde::Serializer>(
                &self,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> $crate::ids::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::ids::__serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                <String as $crate::ids::__serde::Deserialize>::deserialize(deserializer).map(Self)
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
    };
}

string_id!(
    /// An organization's id (`org_…`).
    OrgId,
    "org"
);

string_id!(
    /// An API key's id (`key_…`), never its secret.
    KeyId,
    "key"
);

string_id!(
    /// A registered server's id (`srv_…`), as opposed to its join code (`cfx_id`), which the
    /// wire calls `serverId`.
    ServerId,
    "srv"
);

string_id!(
    /// A member's id (`mem_…`): a person with their own sign-in, in one or more organizations.
    MemberId,
    "mem"
);

string_id!(
    /// An invitation's id (`inv_…`), as opposed to its token, which only the link carries.
    InvitationId,
    "inv"
);

/// Prefixed, sortable identifiers (`org_01J…`).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new().to_string().to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn ids_read_as_their_strings_and_compare_with_them() {
        let org = OrgId::new("org_1");
        assert_eq!(org.as_str(), "org_1");
        assert_eq!(&*org, "org_1");
        assert_eq!(org, "org_1");
        assert_eq!(org.to_string(), "org_1");
        assert_eq!(format!("{org:?}"), "\"org_1\"", "quoted like the string");
        assert_eq!(String::from(org.clone()), "org_1");
        assert_eq!(OrgId::from("org_1"), org);
        let by_id: HashMap<OrgId, i32> = HashMap::from([(org, 1)]);
        assert_eq!(by_id.get("org_1"), Some(&1), "looked up by a plain str");
        let json = serde_json::to_string(&OrgId::new("org_1")).unwrap();
        assert_eq!(json, "\"org_1\"");
        assert_eq!(serde_json::from_str::<OrgId>(&json).unwrap(), "org_1");
        let made = KeyId::generate();
        assert!(made.starts_with("key_") && made.len() == 30, "{made}");
        assert!(made != KeyId::generate());
    }
}
