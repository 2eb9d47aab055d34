//! Wire facts of schema nodes: prose keywords dropped, and the deepest differences between two
//! nodes as JSON pointers (the comparison `shared/tools/schema_wire_diff.py` makes).

use serde_json::Value;

const PROSE: &[&str] = &["description", "title", "$comment", "examples"];

/// Objects whose keys are names (of members, definitions, methods), not keywords: a member
/// named `description` is a wire fact and stays.
const NAME_MAPS: &[&str] = &[
    "properties",
    "$defs",
    "dependentRequired",
    "methods",
    "notifications",
    "requests",
];

pub fn strip(value: &Value, names: bool) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| names || !PROSE.contains(&k.as_str()))
                .map(|(k, v)| {
                    (
                        k.clone(),
                        strip(v, !names && NAME_MAPS.contains(&k.as_str())),
                    )
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| strip(v, false)).collect()),
        other => other.clone(),
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

// The deepest differing nodes; lists of scalars (required, enum, type) compare as sets.
pub fn diff(a: &Value, b: &Value, pointer: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let p = format!("{pointer}/{}", escape(key));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => diff(x, y, &p, out),
                    _ => out.push(p),
                }
            }
        }
        (Value::Array(x), Value::Array(y))
            if x.iter().chain(y).all(|v| !v.is_object() && !v.is_array()) =>
        {
            let mut x: Vec<String> = x.iter().map(Value::to_string).collect();
            let mut y: Vec<String> = y.iter().map(Value::to_string).collect();
            x.sort();
            y.sort();
            if x != y {
                out.push(pointer.to_owned());
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                diff(x, y, &format!("{pointer}/{i}"), out);
            }
        }
        _ if a != b => out.push(pointer.to_owned()),
        _ => {}
    }
}
