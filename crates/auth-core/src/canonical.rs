//! Canonical JSON: object keys sorted, no whitespace. Used for request fingerprints and batch
//! digests, so key order and formatting never change a digest, whatever serde_json features the
//! build enables.

use std::io::Write;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes the canonical form of `v` to `out`. Streams: nothing is allocated per key or scalar
/// (this runs over every event of every ingested batch).
pub fn write_to<W: Write>(v: &Value, out: &mut W) -> std::io::Result<()> {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable(); // already sorted in serde_json's BTreeMap; not with preserve_order
            out.write_all(b"{")?;
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, k)?;
                out.write_all(b":")?;
                write_to(&map[k], out)?;
            }
            out.write_all(b"}")
        }
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_to(item, out)?;
            }
            out.write_all(b"]")
        }
        scalar => Ok(serde_json::to_writer(&mut *out, scalar)?),
    }
}

pub fn write(v: &Value, out: &mut String) {
    let mut buf = Vec::new();
    // writing to a Vec cannot fail, and serde_json writes valid UTF-8
    let _ = write_to(v, &mut buf);
    out.push_str(&String::from_utf8_lossy(&buf));
}

pub fn to_string(v: &Value) -> String {
    let mut s = String::new();
    write(v, &mut s);
    s
}

/// SHA-256 of what is written to it: for digests of canonical text produced piece by piece
/// (the ingestion fast path writes a batch's canonical form without building its `Value`).
#[derive(Default)]
pub struct DigestWriter(Sha256);

impl DigestWriter {
    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

impl Write for DigestWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// SHA-256 of the canonical form, hashed as it is produced.
pub fn digest(v: &Value) -> [u8; 32] {
    let mut h = DigestWriter::default();
    let _ = write_to(v, &mut h); // infallible: the writer never fails
    h.finish()
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

    #[test]
    fn digest_is_sha256_of_the_canonical_text() {
        // stored batch digests and fingerprints depend on this exact text
        let v = serde_json::json!({
            "z": [1, 2.5, -3, true, null, "\u{0}\t/<é>"],
            "a": { "k": { "é": "ü", "b": [] } },
            "m": {}
        });
        let text = to_string(&v);
        assert_eq!(
            text,
            "{\"a\":{\"k\":{\"b\":[],\"é\":\"ü\"}},\"m\":{},\"z\":[1,2.5,-3,true,null,\"\\u0000\\t/<é>\"]}"
        );
        let expected: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        assert_eq!(digest(&v), expected);
    }
}
