//! The command line: exit codes, error messages naming file, pointer and line, and that a bad
//! schema leaves the output folder untouched.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const GOOD: &str = r#"{
  "$defs": {
    "Greeting": {
      "type": "object",
      "properties": {"text": {"type": "string"}},
      "required": ["text"]
    }
  }
}"#;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_msp-codegen"))
        .args(args)
        .output()
        .unwrap()
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// Runs `generate` on `schema` over a populated output folder; expects exit 2 and no change.
fn rejects(name: &str, schema: &str, expected: &[&str]) {
    let dir = scratch(name);
    let path = dir.join("schema.json");
    fs::write(&path, schema).unwrap();
    let out = dir.join("out");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("lib.rs"), "// previous output\n").unwrap();
    let before = snapshot(&out);
    let output = run(&[
        "generate",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(path.to_str().unwrap()),
        "no file name in: {stderr}"
    );
    for needle in expected {
        assert!(stderr.contains(needle), "`{needle}` not in: {stderr}");
    }
    assert_eq!(snapshot(&out), before, "the output folder changed");
}

#[test]
fn invalid_json_names_the_line() {
    rejects(
        "invalid_json",
        "{\n  \"$defs\": {\n    \"A\": {\"type\": \"object\",}\n  }\n}",
        &["not valid JSON", ":3:"],
    );
}

#[test]
fn dangling_ref_names_the_pointer() {
    let schema = GOOD.replace(r#"{"type": "string"}"#, r##"{"$ref": "#/$defs/Missing"}"##);
    rejects(
        "dangling_ref",
        &schema,
        &[
            "does not resolve",
            "/$defs/Greeting/properties/text/$ref",
            ":5:",
        ],
    );
}

#[test]
fn unknown_typing_keyword_names_the_pointer() {
    let schema = GOOD.replace(
        r#"{"type": "string"}"#,
        r#"{"allOf": [{"type": "string"}]}"#,
    );
    rejects(
        "unknown_keyword",
        &schema,
        &["`allOf`", "/$defs/Greeting/properties/text/allOf"],
    );
}

#[test]
fn unmappable_shape_names_the_pointer() {
    let schema = GOOD.replace(
        r#"{"type": "string"}"#,
        r#"{"oneOf": [{"type": "string"}, {"type": "integer"}]}"#,
    );
    rejects(
        "unmappable",
        &schema,
        &["inline `oneOf`", "/$defs/Greeting/properties/text/oneOf"],
    );
}

#[test]
fn unsupported_pattern_is_rejected() {
    let schema = GOOD.replace(
        r#"{"type": "string"}"#,
        r#"{"type": "string", "pattern": "a|b"}"#,
    );
    rejects(
        "pattern",
        &schema,
        &["alternation", "/$defs/Greeting/properties/text/pattern"],
    );
}

#[test]
fn check_reports_stale_then_current() {
    let dir = scratch("check");
    let path = dir.join("schema.json");
    fs::write(&path, GOOD).unwrap();
    let out = dir.join("out");
    let (schema, out_arg) = (path.to_str().unwrap(), out.to_str().unwrap());
    let stale = run(&["check", schema, "--out", out_arg]);
    assert_eq!(stale.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&stale.stderr);
    assert!(
        stderr.contains("stale: lib.rs") && stderr.contains("generate"),
        "{stderr}"
    );
    assert!(!out.exists(), "check must not write");

    assert_eq!(
        run(&["generate", schema, "--out", out_arg]).status.code(),
        Some(0)
    );
    fs::write(out.join("leftover.rs"), "").unwrap();
    let extra = run(&["check", schema, "--out", out_arg]);
    assert_eq!(extra.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&extra.stderr).contains("leftover.rs"));

    assert_eq!(
        run(&["generate", schema, "--out", out_arg]).status.code(),
        Some(0)
    );
    assert!(!out.join("leftover.rs").exists());
    assert_eq!(
        run(&["check", schema, "--out", out_arg]).status.code(),
        Some(0)
    );
}

#[test]
fn without_a_schema_the_embedded_one_is_used() {
    let dir = scratch("embedded");
    let out = dir.join("out");
    let output = run(&["generate", "--out", out.to_str().unwrap()]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated");
    assert_eq!(snapshot(&out), snapshot(&committed));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(
        run(&["generate", "a.json", "b.json"]).status.code(),
        Some(2)
    );
    assert_eq!(run(&["generate", "--out"]).status.code(), Some(2));
    assert_eq!(
        run(&["frobnicate", "a", "--out", "b"]).status.code(),
        Some(2)
    );
    let missing = run(&["generate", "/nonexistent/schema.json", "--out", "/tmp/x"]);
    assert_eq!(missing.status.code(), Some(2));
}
