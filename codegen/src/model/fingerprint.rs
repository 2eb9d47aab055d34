//! The schema fingerprint: a hash of its wire facts, prose left out.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The fingerprint: SHA-256 of the schema's wire facts as canonical JSON.
///
/// Prose (`description`, `title`, `$comment`, `examples`) is dropped at every depth, object
/// keys are sorted, and the value is written without whitespace. Editing prose keeps the
/// fingerprint; changing a wire fact changes it.
pub fn fingerprint(root: &Map<String, Value>) -> String {
    let mut canonical = String::new();
    write_canonical(&Value::Object(root.clone()), &mut canonical, false);
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

// `names`: the object's keys are names (of properties, definitions, methods), not keywords.
pub(crate) fn write_canonical(value: &Value, out: &mut String, names: bool) {
    const PROSE: &[&str] = &["description", "title", "$comment", "examples"];
    const NAME_MAPS: &[&str] = &[
        "properties",
        "$defs",
        "dependentRequired",
        "methods",
        "notifications",
        "requests",
    ];
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map
                .keys()
                .filter(|k| names || !PROSE.contains(&k.as_str()))
                .collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out, !names && NAME_MAPS.contains(&key.as_str()));
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out, false);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
