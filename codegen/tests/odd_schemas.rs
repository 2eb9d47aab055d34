//! Valid but awkward schemas of the dialect, each generated into a scratch crate that declares
//! nothing but `serde` and `serde_json`: every crate builds with `-D warnings`, is clippy-clean,
//! and its doc tests pass. One more crate holds a generated protocol as a module
//! (`src/protocol/`) beside its own code.

#![recursion_limit = "512"]

use std::fs;
use std::path::Path;

mod support;
use support::{cargo_strict, workspace};

use serde_json::{json, Value};

fn cases() -> Vec<(&'static str, Value)> {
    let deep = (0..40).fold(
        json!({"type": "string"}),
        |inner, level| json!({"type": "object", "properties": {format!("level{level}"): inner}}),
    );
    vec![
        (
            "enum_only",
            json!({"$defs": {"Colour": {"enum": ["red", "green"]}}}),
        ),
        (
            "alias_only",
            json!({"$defs": {"Name": {"type": "string", "pattern": "^[a-z]+$"}}}),
        ),
        (
            "struct_only",
            json!({"$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}),
        ),
        (
            "std_names",
            json!({"$defs": {
                "Option": {"type": "string"},
                "Result": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                "String": {"enum": ["a"]},
                "Box": {"type": "integer"},
                "Vec": {"type": "array", "items": {"$ref": "#/$defs/String"}},
                "Serialize": {"type": "object", "properties": {"type": {"type": "string"}, "self": {"type": "string"}, "crate": {"type": "string"}, "async": {"type": "string"}}, "required": ["type"]},
                "Deserialize": {"type": "string"},
                "Value": {"type": "object", "properties": {"value": {"$ref": "#/$defs/Map"}}},
                "Map": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Option"}},
                "BTreeMap": {"type": "string"},
                "Number": {"type": "number"},
                "Default": {"type": "string"},
                "Some": {"type": "string"},
                "Self": {"type": "string"},
                "Fmt": {"type": "string"},
                "Cow": {"type": "string"},
                "Unset": {"type": "string"},
                "RawValue": {"type": "string"},
                "Id": {"type": "string"},
                "Uses": {"type": "object", "properties": {
                    "a": {"$ref": "#/$defs/Option"}, "b": {"$ref": "#/$defs/Result"},
                    "c": {"$ref": "#/$defs/Box"}, "d": {"$ref": "#/$defs/Vec"},
                    "e": {"$ref": "#/$defs/Serialize"}, "f": {"$ref": "#/$defs/Deserialize"},
                    "g": {"$ref": "#/$defs/Value"}, "h": {"$ref": "#/$defs/BTreeMap"},
                    "i": {"$ref": "#/$defs/Number"}, "j": {"$ref": "#/$defs/Default"},
                    "k": {"$ref": "#/$defs/Some"}, "l": {"$ref": "#/$defs/Self"},
                    "m": {"$ref": "#/$defs/Cow"}, "n": {"$ref": "#/$defs/Unset"},
                    "o": {"$ref": "#/$defs/RawValue"}, "p": {"$ref": "#/$defs/Id"},
                    "q": {"$ref": "#/$defs/Fmt"}
                }, "required": ["a", "e"]}
            }}),
        ),
        (
            "case_collisions",
            json!({"$defs": {
                "thing": {"type": "object", "properties": {"fooBar": {"type": "string"}, "foo_bar": {"type": "string"}, "FooBar": {"type": "integer"}}, "required": ["fooBar", "FooBar"]},
                "Thing": {"type": "string"},
                "THING": {"enum": ["a", "A", "b-c", "b_c", "BC"], "x-msp-openness": "open"}
            }}),
        ),
        (
            "non_ascii",
            json!({"$defs": {
                "ñcode": {"type": "object", "properties": {"größe": {"type": "integer"}, "été": {"type": "string"}}, "required": ["größe"]},
                "Ärger": {"enum": ["été", "ñ", "日本"]}
            }}),
        ),
        (
            "odd_enum_values",
            json!({"$defs": {
                "Odd": {"enum": ["", "1", "-1", "1.5", "a b", "Unknown", "self", "Self"], "x-msp-openness": "open"},
                "Closed": {"enum": ["", "2", "_", "__"]}
            }}),
        ),
        (
            "empty_schemas",
            json!({"$defs": {
                "Anything": {},
                "Holder": {"type": "object", "properties": {"any": {}, "yes": true, "list": {"type": "array"}}, "required": ["any"]}
            }}),
        ),
        (
            "descriptions",
            json!({"description": "A protocol with <b>HTML</b>, [brackets] and https://example.com/x.\n\n```\nfn not_rust() {}\n```",
                   "$defs": {"Doc": {
                "type": "object",
                "description": "Has code:\n```\nlet x = <T>::new();\n```\n<div>html</div> and `code` and [a link](https://example.com) and [b]\n    indented",
                "properties": {"m": {"type": "string", "description": "```json\n{\"a\": 1}\n```\n<br/> & &amp;"}}
            }}}),
        ),
        (
            "recursion",
            json!({"$defs": {
                "Tree": {"type": "object", "properties": {"left": {"$ref": "#/$defs/Tree"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}, "parent": {"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]}}},
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}, "required": ["b"]},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}
            }}),
        ),
        (
            "big_enum",
            json!({"$defs": {"Big": {"enum": (0..5000).map(|i| format!("value{i}")).collect::<Vec<_>>(), "x-msp-openness": "open"}}}),
        ),
        ("inline_deep", json!({"$defs": {"Deep": deep}})),
        (
            "inline_shapes",
            json!({"$defs": {
                "Outer": {"type": "object", "properties": {
                    "inner": {"type": "object", "properties": {"mode": {"enum": ["on", "off"]}, "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}},
                    "choice": {"oneOf": [
                        {"type": "object", "properties": {"kind": {"const": "a"}, "a": {"type": "string"}}, "required": ["kind"]},
                        {"type": "object", "properties": {"kind": {"const": "b"}}, "required": ["kind"]}
                    ]},
                    "either": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"n": {"type": "integer"}}}]}
                }},
                "OuterInner": {"type": "string"}
            }}),
        ),
        (
            "validation",
            json!({"$defs": {"Limits": {"type": "object", "properties": {
                "name": {"type": "string", "minLength": 2, "maxLength": 4, "format": "hostname"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": true},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "step": {"type": "integer", "multipleOf": 5, "minimum": 0, "maximum": 100},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1, "maxProperties": 1},
                "code": {"type": "string", "pattern": "^[a-z]+$"}
            }, "dependentRequired": {"step": ["ratio"]}}}}),
        ),
        (
            "ref_arms",
            json!({"$defs": {
                "Shape": {"oneOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}]},
                "Circle": {"type": "object", "description": "A circle.", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}}, "required": ["kind", "r"]},
                "Square": {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "integer"}}, "required": ["kind"]}
            }}),
        ),
        (
            "protocol",
            json!({
                "title": "Tiny Protocol",
                "$defs": {
                    "PingParams": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
                    "PingResult": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
                    "TickParams": {"type": "object", "properties": {"at": {"type": ["string", "null"]}}, "required": ["at"]},
                    "ErrorObject": {"type": "object", "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}, "required": ["code", "message"]}
                },
                "methods": {"ping": {"params": {"$ref": "#/$defs/PingParams"}, "result": {"$ref": "#/$defs/PingResult"}}},
                "requests": {"ask/now": {"params": {"$ref": "#/$defs/PingParams"}, "result": {"$ref": "#/$defs/PingResult"}}},
                "notifications": {"tick": {"params": {"$ref": "#/$defs/TickParams"}}},
                "errors": [{"code": -32601, "kind": "methodNotFound", "retryable": false}],
                "capabilities": {"grantable": ["pings"]}
            }),
        ),
    ]
}

#[test]
fn cargo_build_of_odd_schemas_is_warning_free_clippy_clean_and_doc_tested() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("odd-schemas");
    let _ = fs::remove_dir_all(&base);
    let mut members = Vec::new();
    for (name, schema) in cases() {
        let dir = base.join(name);
        let crate_name = format!("odd_{name}");
        let options =
            msp_codegen::Options::new(format!("{name}.schema.json")).crate_path(&crate_name);
        let output = msp_codegen::generate(&schema.to_string(), &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        msp_codegen::write(&dir.join("src"), &output.files).unwrap();
        if let Some(test) = case_test(name) {
            fs::create_dir_all(dir.join("tests")).unwrap();
            fs::write(dir.join("tests/case.rs"), test).unwrap();
        }
        fs::write(
            dir.join("Cargo.toml"),
            format!(
                "[package]\nname = \"{crate_name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
                 [features]\nsample = []\n\n\
                 [dependencies]\nserde = {{ version = \"1\", features = [\"derive\"] }}\n\
                 serde_json = {{ version = \"1\", features = [\"raw_value\"] }}\n"
            ),
        )
        .unwrap();
        members.push(format!("\"{name}\""));
    }
    bigger_crate(&base.join("bigger"));
    members.push("\"bigger\"".to_owned());
    fs::write(
        base.join("Cargo.toml"),
        format!(
            "[workspace]\nmembers = [{}]\nresolver = \"2\"\n",
            members.join(", ")
        ),
    )
    .unwrap();
    // The workspace's lock file pins the same serde versions, and works offline.
    fs::copy(workspace().join("Cargo.lock"), base.join("Cargo.lock")).unwrap();
    cargo_strict(
        &base,
        &base.join("target"),
        &[
            "clippy",
            "--quiet",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    );
    cargo_strict(
        &base,
        &base.join("target"),
        &[
            "test",
            "--quiet",
            "--workspace",
            "--features",
            "odd_validation/sample",
        ],
    );
}

/// A test of what a case's generated code does, run in its crate.
fn case_test(name: &str) -> Option<&'static str> {
    match name {
        // Every validation keyword: a value breaking each is reported at its pointer.
        "validation" => Some(
            r#"use odd_validation::{Limits, Validate};
use serde_json::json;

#[test]
fn every_keyword_is_checked_at_its_pointer() {
    let bad: Limits = serde_json::from_value(json!({
        "name": "x", "tags": ["a", "a", "b"], "ratio": 1, "step": 7, "labels": {}, "code": "A"
    }))
    .unwrap();
    let violations: Vec<String> = bad.validate().unwrap_err().iter().map(|v| v.to_string()).collect();
    for expected in [
        "/name: has 1 characters, expected at least 2",
        "/tags: has 3 items, expected at most 2",
        "/tags: items 0 and 1 are equal, expected unique items",
        "/ratio: 1 is not below the exclusive maximum 1",
        "/step: 7 is not a multiple of 5",
        "/labels: has 0 members, expected at least 1",
        "/code: does not match the pattern `^[a-z]+$`",
    ] {
        assert!(violations.iter().any(|v| v == expected), "{expected}: {violations:?}");
    }
    assert_eq!(violations.len(), 7, "{violations:?}");
    let step_alone: Limits = serde_json::from_value(json!({"step": 10})).unwrap();
    let errors = step_alone.validate().unwrap_err();
    assert_eq!(errors[0].to_string(), "/: `step` is present, so `ratio` must be too");
    let good: Limits = serde_json::from_value(json!({
        "name": "abc", "tags": ["a"], "ratio": 0.5, "step": 10, "labels": {"k": "v"}, "code": "ab"
    }))
    .unwrap();
    assert_eq!(good.validate(), Ok(()));
}

// The sampler draws within the bounds and the pattern, and drops `step` when `ratio` is absent.
#[cfg(feature = "sample")]
#[test]
fn samples_keep_the_bounds_the_pattern_and_the_dependent_rule() {
    use odd_validation::sample::{Sample, Sampler};
    let (mut steps, mut codes) = (0, 0);
    for seed in 0..500 {
        let value = Limits::sample(&mut Sampler::new(seed));
        if let Some(step) = value.step {
            assert!((0..=100).contains(&step), "step {step}");
            assert!(value.ratio.is_some(), "step without ratio");
            steps += 1;
        }
        if let Some(code) = &value.code {
            assert!(!code.is_empty() && code.bytes().all(|b| b.is_ascii_lowercase()), "{code:?}");
            codes += 1;
        }
    }
    assert!(steps > 0 && codes > 0, "{steps} steps, {codes} codes sampled");
}
"#,
        ),
        // `oneOf` arms written as `$ref`s: the same tagged enum as arms written in place.
        "ref_arms" => Some(
            r#"use odd_ref_arms::{Shape, ShapeCircle};
use serde_json::json;

#[test]
fn ref_arms_decode_by_their_tag_and_round_trip() {
    let circle = json!({"kind": "circle", "r": 1.5});
    let shape: Shape = serde_json::from_value(circle.clone()).unwrap();
    assert!(matches!(shape, Shape::Circle(ShapeCircle { .. })));
    assert_eq!(serde_json::to_value(&shape).unwrap(), circle);
    let square: Shape = serde_json::from_value(json!({"kind": "square"})).unwrap();
    assert_eq!(square.tag(), "square");
    assert!(serde_json::from_value::<Shape>(json!({"kind": "triangle"})).is_err());
}
"#,
        ),
        _ => None,
    }
}

// A crate of its own with the generated code as `crate::protocol`, and a test that uses it.
fn bigger_crate(dir: &Path) {
    let schema = cases()
        .into_iter()
        .find(|(name, _)| *name == "protocol")
        .map(|(_, schema)| schema)
        .unwrap();
    let options = msp_codegen::Options::new("protocol.schema.json")
        .module("crate::protocol")
        .crate_path("odd_bigger::protocol");
    let output =
        msp_codegen::generate(&schema.to_string(), &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(output.files.contains_key("mod.rs") && !output.files.contains_key("lib.rs"));
    msp_codegen::write(&dir.join("src/protocol"), &output.files).unwrap();
    fs::write(
        dir.join("src/lib.rs"),
        r##"//! A crate with a generated protocol inside.

pub mod protocol;

/// A `ping` request line.
pub fn ping(n: i64) -> String {
    let params = protocol::PingParams::builder().n(n).build();
    protocol::rpc::RawFrame::request::<protocol::protocol::methods::Ping>(1, &params).to_line()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_module_speaks_the_protocol() {
        let line = super::ping(3);
        assert_eq!(line, r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":3}}"#);
        let frame = crate::protocol::Frame::parse(crate::protocol::Sender::Client, &line).unwrap();
        assert_eq!(frame.to_line(), line);
    }
}
"##,
    )
    .unwrap();
    fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"odd_bigger\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n\
         serde_json = { version = \"1\", features = [\"raw_value\"] }\n",
    )
    .unwrap();
}
