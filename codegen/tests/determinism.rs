//! Output is a function of the schema's content alone: byte-identical across runs and
//! independent of the order of keys in the schema text.

use std::path::Path;

use serde_json::Value;

fn schema_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/msp.schema.json");
    std::fs::read_to_string(path).unwrap()
}

fn generate(text: &str) -> std::collections::BTreeMap<String, String> {
    let options = msp_codegen::Options::project();
    msp_codegen::generate(text, &options)
        .unwrap_or_else(|e| panic!("{e}"))
        .files
}

// Writes JSON with every object's keys in reverse order.
fn write_reversed(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            keys.reverse();
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_reversed(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_reversed(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[test]
fn two_runs_give_identical_bytes() {
    let text = schema_text();
    assert_eq!(generate(&text), generate(&text));
}

#[test]
fn key_order_in_the_schema_does_not_matter() {
    let text = schema_text();
    let value: Value = serde_json::from_str(&text).unwrap();
    let mut reversed = String::new();
    write_reversed(&value, &mut reversed);
    assert_ne!(reversed, text);
    assert_eq!(generate(&text), generate(&reversed));
}

#[test]
fn fingerprint_ignores_prose_but_not_wire_facts() {
    let text = schema_text();
    let mut value: Value = serde_json::from_str(&text).unwrap();
    let base = msp_codegen::model::fingerprint(value.as_object().unwrap());
    value["$defs"]["UserInputSettledParams"]["description"] = Value::from("Reworded.");
    assert_eq!(
        msp_codegen::model::fingerprint(value.as_object().unwrap()),
        base
    );
    value["$defs"]["UserInputSettledParams"]["required"]
        .as_array_mut()
        .unwrap()
        .retain(|v| v != "decidedAt");
    assert_ne!(
        msp_codegen::model::fingerprint(value.as_object().unwrap()),
        base
    );
}
