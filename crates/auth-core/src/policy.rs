//! Path-scope and MIME policy.
//!
//! Prefixes match whole segments: `images` admits `images` and `images/a.png`, never
//! `images2/a.png`. Denied prefixes win over allowed ones. An empty allow-list means "anywhere".
//! Inputs are expected to be normalized object keys (see `cdn-core::path`).

/// Whether `prefix` covers `key` on whole segments. The empty prefix covers everything.
pub fn prefix_matches(prefix: &str, key: &str) -> bool {
    let prefix = prefix.trim_matches('/');
    if prefix.is_empty() {
        return true;
    }
    match key.strip_prefix(prefix) {
        Some("") => true,
        Some(rest) => rest.starts_with('/'),
        None => false,
    }
}

/// Allowed and denied CDN path prefixes of a key (or of an upload URL's lock).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathScope {
    pub allowed: Vec<String>,
    pub denied: Vec<String>,
}

impl PathScope {
    pub fn new(allowed: Vec<String>, denied: Vec<String>) -> Self {
        Self { allowed, denied }
    }

    pub fn unrestricted() -> Self {
        Self::default()
    }

    /// Whether the key is restricted to specific prefixes.
    pub fn is_restricted(&self) -> bool {
        !self.allowed.is_empty()
    }

    pub fn is_denied(&self, key: &str) -> bool {
        self.denied.iter().any(|d| prefix_matches(d, key))
    }

    /// Whether an object key (or a folder) lies inside the scope.
    pub fn allows(&self, key: &str) -> bool {
        if self.is_denied(key) {
            return false;
        }
        self.allowed.is_empty() || self.allowed.iter().any(|a| prefix_matches(a, key))
    }

    /// The part of `folder` outside the scope, when not all of it lies inside: the folder itself
    /// (outside an allowed prefix, or under a denied one) or a denied prefix within it. `None`
    /// when the whole folder may be written, deleted or moved.
    pub fn outside_part<'a>(&'a self, folder: &'a str) -> Option<&'a str> {
        if !self.allows(folder) {
            return Some(folder);
        }
        self.denied
            .iter()
            .find(|d| prefix_matches(folder, d))
            .map(String::as_str)
    }

    /// Whether every key this scope admits is admitted by `ceiling` (a grant or key never reaches
    /// a path its maker cannot): each allowed prefix lies inside one of the ceiling's, and each of
    /// the ceiling's denied prefixes is denied here too or lies outside everything allowed here.
    pub fn within(&self, ceiling: &PathScope) -> bool {
        if ceiling.is_restricted()
            && (!self.is_restricted()
                || !self
                    .allowed
                    .iter()
                    .all(|a| ceiling.allowed.iter().any(|c| prefix_matches(c, a))))
        {
            return false;
        }
        ceiling.denied.iter().all(|d| {
            self.is_denied(d)
                || (self.is_restricted()
                    && !self
                        .allowed
                        .iter()
                        .any(|a| prefix_matches(a, d) || prefix_matches(d, a)))
        })
    }

    /// Whether listing the folder `path` is allowed. The folder itself must lie inside an allowed
    /// prefix (listing `""` with a restricted key is refused); objects under denied prefixes are
    /// filtered from the results by the caller.
    pub fn allows_listing(&self, path: &str) -> bool {
        if self.is_denied(path) {
            return false;
        }
        if self.allowed.is_empty() {
            return true;
        }
        !path.is_empty() && self.allowed.iter().any(|a| prefix_matches(a, path))
    }
}

/// Normalizes a MIME type for comparison: lowercase essence without parameters.
pub fn mime_essence(m: &str) -> String {
    m.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether `mime` is admitted by an allow-list. `None` means unrestricted. Entries may be exact
/// (`image/png`), a type wildcard (`image/*`) or `*/*`. Matching ignores case and parameters.
pub fn mime_allowed(list: Option<&[String]>, mime: &str) -> bool {
    let Some(list) = list else { return true };
    let mime = mime_essence(mime);
    let main = mime.split('/').next().unwrap_or("");
    list.iter().any(|entry| {
        let entry = mime_essence(entry);
        entry == "*/*"
            || entry == mime
            || entry
                .strip_suffix("/*")
                .is_some_and(|t| !t.is_empty() && t == main)
    })
}

/// Whether every entry of `requested` is admitted by `ceiling` (used when an upload URL narrows a
/// key's MIME restriction: the URL can never grant more than the key).
pub fn mime_list_within(ceiling: Option<&[String]>, requested: &[String]) -> bool {
    let Some(ceiling) = ceiling else { return true };
    requested.iter().all(|r| {
        let r = mime_essence(r);
        if let Some(main) = r.strip_suffix("/*") {
            // a wildcard request needs the same or a wider wildcard in the ceiling
            ceiling.iter().any(|c| {
                let c = mime_essence(c);
                c == "*/*" || c.strip_suffix("/*") == Some(main)
            })
        } else {
            mime_allowed(Some(ceiling), &r)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn the_part_of_a_folder_outside_the_scope() {
        let scope = PathScope::new(vec!["pub".into()], vec!["pub/secret".into()]);
        assert_eq!(scope.outside_part("pub/2026"), None);
        assert_eq!(
            scope.outside_part("pub"),
            Some("pub/secret"),
            "a denied prefix inside"
        );
        assert_eq!(scope.outside_part("pub/secret/x"), Some("pub/secret/x"));
        assert_eq!(scope.outside_part("priv"), Some("priv"));
        assert_eq!(scope.outside_part("pub-x"), Some("pub-x"), "whole segments");
        assert_eq!(PathScope::unrestricted().outside_part("any"), None);
    }

    #[test]
    fn whole_segment_prefixes() {
        let cases: &[(&str, &str, bool)] = &[
            ("images", "images", true),
            ("images", "images/a.png", true),
            ("images", "images/sub/a.png", true),
            ("images", "images2/a.png", false),
            ("images", "images2", false),
            ("images", "image", false),
            ("images", "imagesa.png", false),
            ("images", "other/images/a.png", false),
            ("images/", "images/a.png", true),
            ("/images/", "images/a.png", true),
            ("images/sub", "images/sub/a", true),
            ("images/sub", "images/subway/a", false),
            ("images/sub", "images", false),
            ("", "anything/at/all", true),
            ("", "", true),
            ("a", "", false),
            ("Images", "images/a.png", false),
            ("照片", "照片/猫.png", true),
            ("照片", "照片集/猫.png", false),
        ];
        for (prefix, key, expected) in cases {
            assert_eq!(
                prefix_matches(prefix, key),
                *expected,
                "prefix {prefix:?} key {key:?}"
            );
        }
    }

    #[test]
    fn deny_beats_allow() {
        let scope = PathScope::new(s(&["images"]), s(&["images/private"]));
        assert!(scope.allows("images/a.png"));
        assert!(scope.allows("images/privateer/a.png"));
        assert!(!scope.allows("images/private/a.png"));
        assert!(!scope.allows("images/private"));
        assert!(!scope.allows("videos/a.mp4"));
        assert!(!scope.allows("images2/a.png"));
        assert!(scope.is_restricted());
        let deny_only = PathScope::new(vec![], s(&["secret"]));
        assert!(deny_only.allows("public/x"));
        assert!(!deny_only.allows("secret/x"));
        assert!(deny_only.allows("secrets/x"));
        assert!(!deny_only.is_restricted());
        let both_same = PathScope::new(s(&["a"]), s(&["a"]));
        assert!(!both_same.allows("a/b"));
    }

    #[test]
    fn narrowing_a_path_scope() {
        let everywhere = PathScope::unrestricted();
        let images = PathScope::new(s(&["images"]), vec![]);
        let images_but_private = PathScope::new(s(&["images"]), s(&["images/private"]));
        let cases: &[(&PathScope, &PathScope, bool, &str)] = &[
            (&everywhere, &everywhere, true, "same"),
            (&images, &everywhere, true, "narrower"),
            (&everywhere, &images, false, "wider than the ceiling"),
            (&images, &images, true, "same prefixes"),
            (
                &PathScope::new(s(&["images/2026"]), vec![]),
                &images,
                true,
                "a sub-folder",
            ),
            (
                &PathScope::new(s(&["images2"]), vec![]),
                &images,
                false,
                "whole segments",
            ),
            (
                &PathScope::new(s(&["images", "clips"]), vec![]),
                &images,
                false,
                "N+1 prefixes",
            ),
            (
                &images,
                &images_but_private,
                false,
                "the ceiling's denial dropped",
            ),
            (
                &images_but_private,
                &images_but_private,
                true,
                "denial kept",
            ),
            (
                &PathScope::new(s(&["images"]), s(&["images/private/old"])),
                &images_but_private,
                false,
                "a narrower denial leaves part of the denied folder open",
            ),
            (
                &PathScope::new(s(&["images"]), s(&["images"])),
                &images_but_private,
                true,
                "a wider denial",
            ),
            (
                &PathScope::new(s(&["images/private/x"]), vec![]),
                &images_but_private,
                false,
                "allowed inside the denied folder",
            ),
            (
                &PathScope::new(s(&["images/public"]), vec![]),
                &images_but_private,
                true,
                "allowed beside the denied folder",
            ),
            (
                &PathScope::new(vec![], s(&["secret"])),
                &PathScope::new(vec![], s(&["secret"])),
                true,
                "deny-only ceilings",
            ),
            (
                &everywhere,
                &PathScope::new(vec![], s(&["secret"])),
                false,
                "deny-only ceiling, nothing denied",
            ),
            (
                &PathScope::new(s(&["照片"]), vec![]),
                &PathScope::new(s(&["照片"]), vec![]),
                true,
                "Unicode",
            ),
        ];
        for (scope, ceiling, expected, why) in cases {
            assert_eq!(
                scope.within(ceiling),
                *expected,
                "{why}: {scope:?} within {ceiling:?}"
            );
        }
    }

    #[test]
    fn listing_rules() {
        let scope = PathScope::new(s(&["images", "clips"]), s(&["images/private"]));
        assert!(!scope.allows_listing(""));
        assert!(scope.allows_listing("images"));
        assert!(scope.allows_listing("images/2024"));
        assert!(scope.allows_listing("clips"));
        assert!(!scope.allows_listing("images2"));
        assert!(!scope.allows_listing("images/private"));
        assert!(!scope.allows_listing("images/private/deeper"));
        assert!(PathScope::unrestricted().allows_listing(""));
        assert!(PathScope::unrestricted().allows_listing("x"));
    }

    #[test]
    fn mime_lists() {
        let list = s(&["image/png", "video/*"]);
        assert!(mime_allowed(None, "text/html"));
        assert!(mime_allowed(Some(&list), "image/png"));
        assert!(mime_allowed(Some(&list), "IMAGE/PNG"));
        assert!(mime_allowed(Some(&list), "image/png; charset=binary"));
        assert!(mime_allowed(Some(&list), "video/mp4"));
        assert!(!mime_allowed(Some(&list), "image/jpeg"));
        assert!(!mime_allowed(Some(&list), "text/html"));
        assert!(!mime_allowed(Some(&list), "videos/mp4"));
        assert!(!mime_allowed(Some(&[]), "image/png"));
        assert!(mime_allowed(Some(&s(&["*/*"])), "anything/else"));
        assert!(!mime_allowed(Some(&s(&["/*"])), "/x"));
    }

    #[test]
    fn mime_narrowing() {
        let ceiling = s(&["image/*", "audio/ogg"]);
        assert!(mime_list_within(None, &s(&["text/html"])));
        assert!(mime_list_within(
            Some(&ceiling),
            &s(&["image/png", "image/webp"])
        ));
        assert!(mime_list_within(Some(&ceiling), &s(&["image/*"])));
        assert!(mime_list_within(Some(&ceiling), &s(&["audio/ogg"])));
        assert!(!mime_list_within(Some(&ceiling), &s(&["audio/*"])));
        assert!(!mime_list_within(Some(&ceiling), &s(&["text/html"])));
        assert!(!mime_list_within(Some(&ceiling), &s(&["*/*"])));
        assert!(mime_list_within(Some(&ceiling), &[]));
    }
}
