//! Property test over every generated type: random values (from the generator's `Sample`
//! impls, which honour patterns, bounds and `dependentRequired`) encode to JSON that the
//! schema validates and that decodes back equal.
//!
//! `PROPTEST_CASES` sets the cases per definition (default 16 here, CI-sized); for a longer
//! run: `PROPTEST_CASES=2000 cargo test --all-features --test property`.

#![cfg(all(feature = "sample", feature = "reflect", feature = "experimental"))]

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;

/// The schema as a validator that knows `x-msp-openness` would read it: an open enum accepts
/// any string, an open union also an object whose tag no arm uses.
fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/msp.schema.json");
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for def in schema["$defs"].as_object_mut().unwrap().values_mut() {
        let def = def.as_object_mut().unwrap();
        if def.get("x-msp-openness").and_then(Value::as_str) != Some("open") {
            continue;
        }
        if def.remove("enum").is_some() {
            continue;
        }
        if let Some(arms) = def.remove("oneOf") {
            let tag = arms[0]["properties"]
                .as_object()
                .and_then(|p| p.iter().find(|(_, v)| v.get("const").is_some()))
                .map(|(k, _)| k.clone())
                .unwrap();
            let tags: Vec<Value> = arms
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["properties"][&tag]["const"].clone())
                .collect();
            let unknown = serde_json::json!({"type": "object", "properties": {tag.clone(): {"type": "string", "not": {"enum": tags}}}, "required": [tag]});
            def.insert(
                "anyOf".into(),
                serde_json::json!([{"oneOf": arms}, unknown]),
            );
        }
    }
    schema
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16)
}

#[test]
fn every_type_round_trips_and_validates() {
    let schema = schema();
    let mut checked = 0usize;
    for definition in msp_types::reflect::DEFINITIONS {
        let mut root = schema.clone();
        root["$ref"] = Value::from(format!("#{}", definition.pointer));
        let validator = jsonschema::draft202012::new(&root)
            .unwrap_or_else(|e| panic!("{}: the schema does not compile: {e}", definition.name));
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&any::<u64>(), |seed| {
                let value = msp_types::reflect::sample(definition.name, seed)
                    .expect("a definition of this build");
                let errors: Vec<String> = validator
                    .iter_errors(&value)
                    .map(|e| format!("{} at {}", e, e.instance_path()))
                    .collect();
                prop_assert!(
                    errors.is_empty(),
                    "{}: schema rejects {value}: {errors:?}",
                    definition.name
                );
                let again = msp_types::reflect::reencode(definition.name, value.clone())
                    .expect("a definition of this build")
                    .map_err(|e| {
                        TestCaseError::fail(format!("{}: {e} decoding {value}", definition.name))
                    })?;
                prop_assert_eq!(&again, &value, "{} did not round-trip", definition.name);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        checked += 1;
    }
    println!("property: {checked} definitions x {} cases", cases());
    assert_eq!(checked, msp_types::reflect::DEFINITIONS.len());
    assert!(checked > 400);
}
