//! The search as query parameters, for the `GET` routes a browser opens directly (export as a
//! download, tail as an `EventSource`). The same fields as the JSON bodies, flattened:
//! `levels` is a comma-separated list, `identifier` is `owner:key:value` (the value may contain
//! colons) and `data`, `dataWhere` and `exclude` are JSON text.

use serde_json::Value;

use crate::search::{IdentifierRequest, SearchFields};

/// Declares a query-parameter type: the search parameters (documented once, here) plus its own.
#[macro_export]
macro_rules! search_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[into_params(parameter_in = Query, rename_all = "camelCase")]
        pub struct $name {
            /// The server's join code; required for a global key, optional for a server-bound one.
            pub server_id: Option<String>,
            /// One level.
            pub level: Option<String>,
            /// Any of these levels, comma-separated (`warn,error`).
            pub levels: Option<String>,
            /// This level and the more severe ones (debug < info < warn < error < fatal).
            pub min_level: Option<String>,
            pub event_type: Option<String>,
            pub resource: Option<String>,
            /// Case-insensitive substring of the message.
            pub message: Option<String>,
            /// The event's player or target player.
            pub player_id: Option<String>,
            /// A player id or any identifier the player carries (`license:…`), as actor or target.
            pub player: Option<String>,
            /// `owner:key:value`, e.g. `player:license:license:abc123` (owner `player` or `target`).
            pub identifier: Option<String>,
            /// A JSON object the event's `data` must contain, e.g. `{"item":"WEAPON_PISTOL"}`.
            pub data: Option<String>,
            /// Conditions on `data` paths as a JSON array, e.g. `[{"path":"amount","op":">","value":100000}]`.
            pub data_where: Option<String>,
            /// Exclusions as a JSON object, e.g. `{"resources":["chat"],"eventTypes":["admin.*"]}`.
            pub exclude: Option<String>,
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $name {
            /// The search part of the parameters, with the window given.
            pub fn search(
                &self,
                from: Option<String>,
                to: Option<String>,
            ) -> Result<$crate::search::SearchFields, String> {
                $crate::params::fields(
                    $crate::params::Flat {
                        server_id: &self.server_id,
                        level: &self.level,
                        levels: &self.levels,
                        min_level: &self.min_level,
                        event_type: &self.event_type,
                        resource: &self.resource,
                        message: &self.message,
                        player_id: &self.player_id,
                        player: &self.player,
                        identifier: &self.identifier,
                        data: &self.data,
                        data_where: &self.data_where,
                        exclude: &self.exclude,
                    },
                    from,
                    to,
                )
            }
        }
    };
}

/// The flattened search parameters, borrowed.
pub struct Flat<'a> {
    pub server_id: &'a Option<String>,
    pub level: &'a Option<String>,
    pub levels: &'a Option<String>,
    pub min_level: &'a Option<String>,
    pub event_type: &'a Option<String>,
    pub resource: &'a Option<String>,
    pub message: &'a Option<String>,
    pub player_id: &'a Option<String>,
    pub player: &'a Option<String>,
    pub identifier: &'a Option<String>,
    pub data: &'a Option<String>,
    pub data_where: &'a Option<String>,
    pub exclude: &'a Option<String>,
}

/// A parameter holding JSON text, read as `T`.
fn json_param<T: serde::de::DeserializeOwned>(
    name: &str,
    v: &Option<String>,
    example: &str,
) -> Result<Option<T>, String> {
    v.as_deref()
        .map(|s| {
            serde_json::from_str::<T>(s)
                .map_err(|e| format!("`{name}` must be JSON, e.g. {example} ({e})"))
        })
        .transpose()
}

pub fn fields(
    p: Flat<'_>,
    from: Option<String>,
    to: Option<String>,
) -> Result<SearchFields, String> {
    let identifier =
        match p.identifier {
            None => None,
            Some(s) => {
                let mut parts = s.splitn(3, ':');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(owner), Some(key), Some(value)) => Some(IdentifierRequest {
                        owner: owner.to_owned(),
                        key: key.to_owned(),
                        value: value.to_owned(),
                    }),
                    _ => return Err(
                        "`identifier` must be owner:key:value, e.g. player:license:license:abc123"
                            .into(),
                    ),
                }
            }
        };
    let data = match p.data {
        None => None,
        Some(s) => Some(serde_json::from_str::<Value>(s).map_err(|e| {
            format!("`data` must be a JSON object, e.g. {{\"item\":\"WEAPON_PISTOL\"}} ({e})")
        })?),
    };
    Ok(SearchFields {
        server_id: p.server_id.clone(),
        from,
        to,
        level: p.level.clone(),
        levels: p
            .levels
            .as_ref()
            .map(|l| l.split(',').map(|s| s.trim().to_owned()).collect()),
        min_level: p.min_level.clone(),
        event_type: p.event_type.clone(),
        resource: p.resource.clone(),
        message: p.message.clone(),
        player_id: p.player_id.clone(),
        player: p.player.clone(),
        identifier,
        data,
        data_where: json_param(
            "dataWhere",
            p.data_where,
            r#"[{"path":"amount","op":">","value":100000}]"#,
        )?,
        exclude: json_param("exclude", p.exclude, r#"{"resources":["chat"]}"#)?,
    })
}

#[cfg(test)]
mod tests {
    crate::search_params! {
        pub struct Params {}
    }

    #[test]
    fn flat_parameters_make_the_same_search() {
        let p: Params = serde_json::from_value(serde_json::json!({
            "serverId": "abc", "levels": "warn, error", "identifier": "player:license:license:a:b",
            "data": "{\"item\":\"X\"}",
        }))
        .unwrap();
        let s = p.search(Some("f".into()), None).unwrap();
        assert_eq!(s.levels, Some(vec!["warn".to_owned(), "error".to_owned()]));
        let i = s.identifier.unwrap();
        assert_eq!(
            (i.owner.as_str(), i.key.as_str(), i.value.as_str()),
            ("player", "license", "license:a:b")
        );
        assert_eq!(s.data, Some(serde_json::json!({ "item": "X" })));
        assert_eq!(s.from.as_deref(), Some("f"));
        let bad = Params {
            identifier: Some("player:license".into()),
            ..Default::default()
        };
        assert!(bad
            .search(None, None)
            .unwrap_err()
            .contains("owner:key:value"));
        let bad = Params {
            data: Some("{item".into()),
            ..Default::default()
        };
        assert!(bad
            .search(None, None)
            .unwrap_err()
            .contains("`data` must be a JSON object"));
    }
}
