//! `schemars::JsonSchema` of every generated type is its definition as the schema states it:
//! for every definition, the root schema of its type equals the source definition on wire
//! facts (0 differences), and so does every definition it pulls in.

#![cfg(feature = "schemars")]

use serde_json::Value;

mod wire_facts;
use wire_facts::{diff, strip};

fn source() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/msp.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_type_s_schema_is_its_definition() {
    let source = source();
    let defs = source["$defs"].as_object().unwrap();
    let (mut types, mut aliases) = (0, 0);
    let mut differences = Vec::new();
    for (name, definition) in defs {
        let Some(schema) = msp_types::json_schema::root_schema(name) else {
            // An alias is its target's Rust type; its definition is still served as written.
            assert_eq!(msp_types::json_schema::definition(name), Some(definition));
            aliases += 1;
            continue;
        };
        types += 1;
        let mut root = schema.to_value();
        let pulled = root
            .as_object_mut()
            .unwrap()
            .remove("$defs")
            .unwrap_or(Value::Object(Default::default()));
        root.as_object_mut().unwrap().remove("$schema");
        diff(
            &strip(definition, false),
            &strip(&root, false),
            &format!("/$defs/{name}"),
            &mut differences,
        );
        for (reached, schema) in pulled.as_object().unwrap() {
            diff(
                &strip(&defs[reached], false),
                &strip(schema, false),
                &format!("/$defs/{name} reaching /$defs/{reached}"),
                &mut differences,
            );
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences: {differences:#?}",
        differences.len()
    );
    assert!(types > 300, "only {types} types (and {aliases} aliases)");
}

#[test]
fn decided_at_stays_required_and_nullable() {
    let schema = schemars::schema_for!(msp_types::UserInputSettledParams).to_value();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(required.contains(&"decidedAt"));
    let decided_at = &schema["properties"]["decidedAt"];
    let nullable = decided_at["type"]
        .as_array()
        .is_some_and(|types| types.iter().any(|t| t == "null"))
        || decided_at["anyOf"]
            .as_array()
            .is_some_and(|arms| arms.iter().any(|a| a["type"] == "null"));
    assert!(nullable, "decidedAt: {decided_at}");
    // Openness survives too.
    let outcome = schemars::schema_for!(msp_types::UserInputOutcome).to_value();
    assert_eq!(outcome["x-msp-openness"], "open");
}
