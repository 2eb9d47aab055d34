//! Every `examples` entry of the schema's definitions decodes, re-encodes equal, and is valid
//! JSON Schema 2020-12 against its definition.

use jsonschema::{Draft, Registry};
use msp_conformance::shape::SCHEMA_TEXT;
use msp_types::reflect;
use serde_json::{json, Value};

const SCHEMA_URI: &str = "urn:msp:schema";

#[test]
fn every_schema_example_round_trips_and_validates() {
    let schema: Value = serde_json::from_str(SCHEMA_TEXT).expect("the schema is JSON");
    let defs = schema["$defs"].as_object().expect("$defs");
    let registry = Registry::new()
        .add(SCHEMA_URI, schema.clone())
        .and_then(|builder| builder.prepare())
        .expect("the schema registers");

    let mut checked = 0;
    let mut failures = Vec::new();
    for (name, def) in defs {
        let Some(examples) = def.get("examples").and_then(Value::as_array) else {
            continue;
        };
        let validator = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .with_registry(&registry)
            .build(&json!({"$ref": format!("{SCHEMA_URI}#/$defs/{name}")}))
            .unwrap_or_else(|e| panic!("{name}: the schema does not compile: {e}"));
        for (i, example) in examples.iter().enumerate() {
            let at = format!("/$defs/{name}/examples/{i}");
            match reflect::reencode(name, example.clone()) {
                None => failures.push(format!("{at}: msp_types::reflect has no {name}")),
                Some(Err(e)) => failures.push(format!("{at}: does not decode: {e}")),
                Some(Ok(out)) if &out != example => {
                    failures.push(format!("{at}: re-encodes as {out}"))
                }
                Some(Ok(_)) => {}
            }
            for error in validator.iter_errors(example) {
                failures.push(format!("{at}{}: invalid: {error}", error.instance_path()));
            }
            checked += 1;
        }
    }
    eprintln!("schema examples checked: {checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 0);
}

#[test]
fn the_validator_rejects_what_the_schema_does_not_allow() {
    // The validation above is real: a broken example is caught.
    let schema: Value = serde_json::from_str(SCHEMA_TEXT).expect("the schema is JSON");
    let registry = Registry::new()
        .add(SCHEMA_URI, schema)
        .and_then(|builder| builder.prepare())
        .expect("the schema registers");
    let validator = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_registry(&registry)
        .build(&json!({"$ref": format!("{SCHEMA_URI}#/$defs/ViewPageParams")}))
        .expect("compiles");
    assert!(validator.is_valid(&json!({"sessionId": "s", "direction": "forward", "limit": 10})));
    assert!(!validator.is_valid(&json!({"sessionId": "s", "direction": "sideways", "limit": 10})));
    assert!(!validator.is_valid(&json!({"direction": "forward", "limit": 10})));
}
