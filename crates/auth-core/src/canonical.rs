//! Canonical JSON: object keys sorted, no whitespace. Used for request fingerprints and batch
//! digests, so key order and formatting never change a digest, whatever serde_json features the
//! build enables.

use serde_json::Value;
use sha2::{Digest, Sha256};

pub fn write(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

pub fn to_string(v: &Value) -> String {
    let mut s = String::new();
    write(v, &mut s);
    s
}

pub fn digest(v: &Value) -> [u8; 32] {
    Sha256::digest(to_string(v).as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_whitespace_do_not_matter() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[1,2,{"q":1,"p":2}],"x":"s"}}"#).unwrap();
        let b: Value = serde_json::from_str(
            "{ \"a\" : { \"x\":\"s\", \"y\":[1, 2, {\"p\":2,\"q\":1}] }, \"b\" : 1 }",
        )
        .unwrap();
        assert_eq!(
            to_string(&a),
            r#"{"a":{"x":"s","y":[1,2,{"p":2,"q":1}]},"b":1}"#
        );
        assert_eq!(digest(&a), digest(&b));
        let c: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[2,1,{"q":1,"p":2}],"x":"s"}}"#).unwrap();
        assert_ne!(digest(&a), digest(&c), "array order matters");
        assert_eq!(to_string(&serde_json::json!("é\"\n")), "\"é\\\"\\n\"");
    }
}
