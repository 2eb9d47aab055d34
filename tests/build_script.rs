//! `cargo build` regenerates `generated/` after a schema edit, and a second build with no
//! change does not run the generator again. Runs on a copy of the workspace.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            fs::copy(&path, &dest).unwrap();
        }
    }
}

/// `cargo build -v` in `dir`; returns stderr.
fn build(dir: &Path, target: &Path) -> String {
    let output = Command::new(env!("CARGO"))
        .args(["build", "-v", "-p", "msp-types", "--features", "regenerate"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "build failed:\n{stderr}");
    stderr
}

fn ran_build_script(log: &str) -> bool {
    log.lines().any(|l| {
        l.trim_start().starts_with("Running")
            && l.contains("msp-types")
            && l.contains("build-script-build")
    })
}

#[test]
fn cargo_build_regenerates_after_a_schema_edit_and_not_otherwise() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("build_script");
    let copy = work.join("ws");
    let _ = fs::remove_dir_all(&copy);
    for dir in ["codegen", "schema", "generated"] {
        copy_dir(&root.join(dir), &copy.join(dir));
    }
    let _ = fs::remove_dir_all(copy.join("codegen/target"));
    for file in ["build.rs", "Cargo.lock"] {
        fs::copy(root.join(file), copy.join(file)).unwrap();
    }
    // The workspace cut down to msp-types and the generator.
    let manifest: String = fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .lines()
        .map(|line| match line {
            l if l.starts_with("members = ") => r#"members = [".", "codegen"]"#.to_owned(),
            l if l.starts_with("default-members = ") => r#"default-members = ["."]"#.to_owned(),
            l => l.to_owned(),
        })
        .map(|line| line + "\n")
        .collect();
    fs::write(copy.join("Cargo.toml"), manifest).unwrap();
    let target = work.join("target");

    build(&copy, &target);
    let schema_path = copy.join("schema/msp.schema.json");
    let mut schema: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&schema_path).unwrap()).unwrap();
    schema["$defs"]["UserInputSettledParams"]["properties"]["settledOnHost"] =
        serde_json::json!({"type": "string", "description": "Added by the build-script test."});
    fs::write(&schema_path, serde_json::to_string_pretty(&schema).unwrap()).unwrap();

    let log = build(&copy, &target);
    assert!(
        ran_build_script(&log),
        "the schema edit did not run the generator:\n{log}"
    );
    let generated = fs::read_to_string(copy.join("generated/user_input.rs")).unwrap();
    assert!(
        generated.contains("pub settled_on_host: Option<String>"),
        "generated/ was not updated"
    );

    let log = build(&copy, &target);
    assert!(
        !ran_build_script(&log),
        "an unchanged build ran the generator:\n{log}"
    );
    assert!(log.contains("Fresh msp-types"), "{log}");
}
