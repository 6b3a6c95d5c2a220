//! Object metadata: a map of string to string. Non-string values are ignored (dropped).
//!
//! Limits: at most 32 entries, keys 1 to 128 bytes, values at most 1024 bytes, 8 KiB in total;
//! keys and values may not contain control characters.

use std::collections::BTreeMap;

use serde_json::Value;

pub const MAX_ENTRIES: usize = 32;
pub const MAX_KEY_BYTES: usize = 128;
pub const MAX_VALUE_BYTES: usize = 1024;
pub const MAX_TOTAL_BYTES: usize = 8192;

pub type Metadata = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    #[error("metadata must be a JSON object of string values")]
    NotAnObject,
    #[error("metadata has {0} entries; the limit is 32")]
    TooManyEntries(usize),
    #[error("metadata key must be 1 to 128 bytes (got {0})")]
    KeyLength(usize),
    #[error("metadata value of `{0}` is over the 1024-byte limit")]
    ValueTooLong(String),
    #[error("metadata is {0} bytes in total; the limit is 8192")]
    TooLarge(usize),
    #[error("metadata key or value of `{0}` contains control characters")]
    ControlCharacter(String),
}

/// From a parsed JSON value: an object, or a JSON string holding an object.
pub fn from_value(v: &Value) -> Result<Metadata, MetadataError> {
    match v {
        Value::Null => Ok(Metadata::new()),
        Value::Object(map) => {
            let kept: Metadata = map
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect();
            validate(&kept)?;
            Ok(kept)
        }
        Value::String(s) => from_text(s),
        _ => Err(MetadataError::NotAnObject),
    }
}

/// From the text of a multipart `metadata` part (a JSON object).
pub fn from_text(text: &str) -> Result<Metadata, MetadataError> {
    if text.trim().is_empty() {
        return Ok(Metadata::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => from_value(&v),
        _ => Err(MetadataError::NotAnObject),
    }
}

pub fn validate(m: &Metadata) -> Result<(), MetadataError> {
    if m.len() > MAX_ENTRIES {
        return Err(MetadataError::TooManyEntries(m.len()));
    }
    let mut total = 0;
    for (k, v) in m {
        if k.is_empty() || k.len() > MAX_KEY_BYTES {
            return Err(MetadataError::KeyLength(k.len()));
        }
        if v.len() > MAX_VALUE_BYTES {
            return Err(MetadataError::ValueTooLong(k.clone()));
        }
        if k.chars().chain(v.chars()).any(char::is_control) {
            return Err(MetadataError::ControlCharacter(k.clone()));
        }
        total += k.len() + v.len();
    }
    if total > MAX_TOTAL_BYTES {
        return Err(MetadataError::TooLarge(total));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_strings_are_dropped() {
        let m =
            from_value(&json!({"a": "1", "b": 2, "c": null, "d": {"x": 1}, "e": "ok"})).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m["a"], "1");
        assert_eq!(m["e"], "ok");
    }

    #[test]
    fn string_holding_object() {
        let m = from_value(&json!("{\"player\":\"steam:1\"}")).unwrap();
        assert_eq!(m["player"], "steam:1");
        assert_eq!(from_value(&json!("[1]")), Err(MetadataError::NotAnObject));
        assert_eq!(from_value(&json!(5)), Err(MetadataError::NotAnObject));
        assert_eq!(from_text(""), Ok(Metadata::new()));
        assert_eq!(from_text("not json"), Err(MetadataError::NotAnObject));
    }

    #[test]
    fn limits_at_the_edges() {
        let entries = |n: usize| -> Value {
            Value::Object((0..n).map(|i| (format!("k{i}"), json!("v"))).collect())
        };
        assert!(from_value(&entries(MAX_ENTRIES - 1)).is_ok());
        assert!(from_value(&entries(MAX_ENTRIES)).is_ok());
        assert_eq!(
            from_value(&entries(MAX_ENTRIES + 1)),
            Err(MetadataError::TooManyEntries(33))
        );
        let key = |n: usize| json!({ "k".repeat(n): "v" });
        assert!(from_value(&key(MAX_KEY_BYTES)).is_ok());
        assert_eq!(
            from_value(&key(MAX_KEY_BYTES + 1)),
            Err(MetadataError::KeyLength(129))
        );
        assert_eq!(from_value(&key(0)), Err(MetadataError::KeyLength(0)));
        let val = |n: usize| json!({ "k": "v".repeat(n) });
        assert!(from_value(&val(MAX_VALUE_BYTES)).is_ok());
        assert_eq!(
            from_value(&val(MAX_VALUE_BYTES + 1)),
            Err(MetadataError::ValueTooLong("k".into()))
        );
        let big = Value::Object(
            (0..9)
                .map(|i| (format!("k{i}"), json!("v".repeat(1000))))
                .collect(),
        );
        assert!(matches!(
            from_value(&big),
            Err(MetadataError::TooManyEntries(_)) | Err(MetadataError::TooLarge(_))
        ));
        assert_eq!(
            from_value(&json!({"a\nb": "x"})),
            Err(MetadataError::ControlCharacter("a\nb".into()))
        );
    }
}
