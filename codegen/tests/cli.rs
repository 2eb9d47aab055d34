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
        // Written in place, the union moves into `$defs` as `GreetingText`; the error still
        // names the place as written.
        &[
            "`oneOf` arms must be objects",
            "/$defs/Greeting/properties/text/oneOf",
        ],
    );
}

#[test]
fn a_union_arm_without_properties_names_the_pointer() {
    let schema = GOOD.replace(
        r#"{"type": "string"}"#,
        r#"{"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
            {"type": "object", "required": ["kind"]}
        ]}"#,
    );
    rejects(
        "arm_without_properties",
        &schema,
        &[
            "`oneOf` arms must be objects",
            "/$defs/Greeting/properties/text/oneOf",
        ],
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
    // A file an earlier generation wrote (its header says so) and this one no longer makes.
    fs::write(
        out.join("leftover.rs"),
        "// Generated by msp-codegen from old.json; do not edit.\n",
    )
    .unwrap();
    let extra = run(&["check", schema, "--out", out_arg]);
    assert_eq!(extra.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&extra.stderr).contains("leftover.rs"));

    let cleaned = run(&["generate", schema, "--out", out_arg]);
    assert_eq!(cleaned.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&cleaned.stdout);
    assert!(
        stdout.contains(&format!("removed {}", out.join("leftover.rs").display())),
        "the removed file is named: {stdout}"
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
fn help_prints_the_usage_and_exits_0() {
    for flag in ["--help", "-h", "help"] {
        let output = run(&[flag]);
        assert_eq!(output.status.code(), Some(0), "{flag}");
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            text.starts_with("usage: msp-codegen generate"),
            "{flag}: {text}"
        );
    }
    assert_eq!(run(&["generate", "--help"]).status.code(), Some(0));
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

#[test]
fn files_the_generator_did_not_write_are_never_removed_or_overwritten() {
    let dir = scratch("foreign");
    let path = dir.join("schema.json");
    fs::write(&path, GOOD).unwrap();
    let out = dir.join("out");
    fs::create_dir_all(&out).unwrap();
    let (schema, out_arg) = (path.to_str().unwrap(), out.to_str().unwrap());

    // The user's own module beside the output stays, byte for byte, and is not "stale".
    let mine = "//! My own code.\npub fn hello() {}\n";
    fs::write(out.join("mine.rs"), mine).unwrap();
    let generated = run(&["generate", schema, "--out", out_arg]);
    assert_eq!(generated.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&generated.stdout);
    assert!(stdout.contains("(12 written, 0 removed)"), "{stdout}");
    assert!(stdout.contains("[features]\nexperimental = []"), "{stdout}");
    assert_eq!(fs::read_to_string(out.join("mine.rs")).unwrap(), mine);
    assert_eq!(
        run(&["check", schema, "--out", out_arg]).status.code(),
        Some(0)
    );

    // A file of the user's where the output would go is refused, by name, and nothing is written.
    let other = scratch("foreign-lib");
    let other_out = other.join("out");
    fs::create_dir_all(&other_out).unwrap();
    fs::write(other_out.join("lib.rs"), mine).unwrap();
    let before = snapshot(&other_out);
    let refused = run(&["generate", schema, "--out", other_out.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&other_out.join("lib.rs").display().to_string())
            && stderr.contains("not written by msp-codegen"),
        "{stderr}"
    );
    assert_eq!(snapshot(&other_out), before);
}

#[test]
fn the_crate_docs_name_the_protocol_and_the_header_the_command_that_was_run() {
    let dir = scratch("protocol-name");
    let path = dir.join("schema.json");
    let titled = GOOD.replacen('{', r#"{"title": "Greeter Protocol","#, 1);
    fs::write(&path, &titled).unwrap();
    let doc = dir.join("extra.md");
    fs::write(&doc, "Greeters greet.\n").unwrap();
    let (schema, out) = (path.to_str().unwrap(), dir.join("out"));
    let lib = |args: &[&str]| {
        let output = run(args);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        fs::read_to_string(out.join("lib.rs")).unwrap()
    };
    let out_arg = out.to_str().unwrap();

    let by_title = lib(&["generate", schema, "--out", out_arg]);
    assert!(by_title.contains("//! Typed messages of the Greeter Protocol, generated"));
    assert!(by_title.starts_with(&format!(
        "// Generated by msp-codegen from {schema}; do not edit. Regenerate: msp-codegen generate {schema} --out {out_arg}\n"
    )));

    let named = lib(&[
        "generate",
        schema,
        "--out",
        out_arg,
        "--protocol",
        "Hello Protocol",
        "--crate-doc",
        doc.to_str().unwrap(),
    ]);
    assert!(named.contains("//! Typed messages of the Hello Protocol, generated"));
    assert!(named.contains("//! Greeters greet."));
    assert!(named.contains("--protocol \"Hello Protocol\" --crate-doc"));

    fs::write(&path, GOOD).unwrap();
    assert!(lib(&["generate", schema, "--out", out_arg])
        .contains("//! Typed messages of a protocol, generated"));
}

/// In module mode the header's command is the one that was run (no path rewritten in it), and
/// running it again, then `check`, finds the output current.
#[test]
fn the_header_command_of_a_module_regenerates_the_same_output() {
    let dir = scratch("module-header");
    let path = dir.join("schema.json");
    fs::write(&path, GOOD).unwrap();
    let out = dir.join("out");
    let (schema, out_arg) = (path.to_str().unwrap(), out.to_str().unwrap());
    let output = run(&[
        "generate",
        schema,
        "--out",
        out_arg,
        "--module",
        "crate::greet",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let root = fs::read_to_string(out.join("mod.rs")).unwrap();
    let header = root.lines().next().unwrap();
    let command = header.split("Regenerate: msp-codegen ").nth(1).unwrap();
    assert_eq!(
        command,
        format!("generate {schema} --out {out_arg} --module crate::greet")
    );
    let before = snapshot(&out);
    let args: Vec<&str> = command.split(' ').collect();
    assert_eq!(run(&args).status.code(), Some(0));
    assert_eq!(snapshot(&out), before, "regenerating changed nothing");
    let mut check = args.clone();
    check[0] = "check";
    assert_eq!(run(&check).status.code(), Some(0), "current");
    // Paths in the code are the module's; every file's header is as written.
    for (name, text) in snapshot(&out) {
        let text = String::from_utf8(text).unwrap();
        assert!(!text.contains("crate::greet::greet"), "{name}");
        assert!(
            text.lines()
                .next()
                .unwrap()
                .ends_with("--module crate::greet"),
            "{name}"
        );
    }
}
