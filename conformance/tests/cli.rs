//! The `msp-conformance` binary: its output lines and exit status.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use msp_conformance::Runner;

fn run(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_msp-conformance"))
        .arg(dir)
        .current_dir(support::repo_root())
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

#[test]
fn a_clean_folder_prints_only_the_summary_and_exits_0() {
    let output = run(Path::new("tests/fixtures"));
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let expected = Runner::new()
        .unwrap()
        .run(&support::repo_root().join("tests/fixtures"))
        .unwrap()
        .summary();
    assert_eq!(text, format!("{expected}\n"));
    assert!(expected.ends_with("failures: 0"));
}

#[test]
fn a_failing_frame_prints_file_line_method_and_pointer_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{"dir":"client","raw":"{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}"}"#;
    let bad = r#"{"dir":"client","raw":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"view/page\",\"params\":{\"sessionId\":\"s\",\"direction\":\"sideways\",\"limit\":1}}"}"#;
    let file = dir.path().join("nested/case.ndjson");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, format!("{good}\n\n{bad}\n")).unwrap();

    let output = run(dir.path());
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let prefix = format!("{}:3: view/page: /params/direction: ", file.display());
    assert!(lines[0].starts_with(&prefix), "{}", lines[0]);
    assert!(lines[0].contains("unknown ViewPageDirection value `sideways`"));
    assert_eq!(
        lines[1],
        "frames: 2, typed: 2, decoded: 1, lossless: 1, untyped: 0, failures: 1"
    );
}

#[test]
fn unusable_input_exits_2() {
    let missing = run(Path::new("tests/fixtures/no-such-folder"));
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no such file or folder"));

    let empty = tempfile::tempdir().unwrap();
    assert_eq!(run(empty.path()).status.code(), Some(2));

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("broken.ndjson"),
        "{\"dir\":\"client\",\"raw\":\n",
    )
    .unwrap();
    let broken = run(dir.path());
    assert_eq!(broken.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(
        stderr.contains("broken.ndjson:1: not a transcript line"),
        "{stderr}"
    );
    assert!(broken.stdout.is_empty());
}
