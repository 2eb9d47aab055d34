//! Each schema (ours, and the two upstream bundles when `MSP_SHARED_DIR` is set) generates a
//! crate that builds without warnings and passes clippy with `-D warnings`, with and without
//! the `experimental` feature. The scratch crates depend on serde and serde_json alone.

use std::fs;
use std::path::{Path, PathBuf};

mod support;
use support::{cargo_strict, workspace};

fn schemas() -> Vec<(&'static str, PathBuf)> {
    let mut out = vec![("project", workspace().join("schema/msp.schema.json"))];
    match std::env::var_os("MSP_SHARED_DIR").filter(|v| !v.is_empty()) {
        Some(shared) => {
            let bundles = PathBuf::from(shared).join("msp-upstream");
            assert!(
                bundles.is_dir(),
                "MSP_SHARED_DIR is set but {} is missing",
                bundles.display()
            );
            out.push(("stable", bundles.join("stable/msp.schema.json")));
            out.push(("experimental", bundles.join("experimental/msp.schema.json")));
        }
        None => eprintln!("skipped the upstream bundles: MSP_SHARED_DIR is not set"),
    }
    out
}

#[test]
fn cargo_build_of_generated_crates_is_warning_free_and_clippy_clean() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scratch");
    let target = base.join("target");
    for (name, schema) in schemas() {
        let output = msp_codegen::generate_file(&schema, &schema.display().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        let dir = base.join(name);
        let _ = fs::remove_dir_all(&dir);
        msp_codegen::write(&dir.join("src"), &output.files).unwrap();
        fs::write(
            dir.join("Cargo.toml"),
            format!(
                "[package]\nname = \"scratch-{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
                 [features]\nexperimental = []\nreflect = []\nsample = []\n\n\
                 [dependencies]\nserde = {{ version = \"1\", features = [\"derive\"] }}\nserde_json = {{ version = \"1\", features = [\"raw_value\"] }}\n\n\
                 [workspace]\n"
            ),
        )
        .unwrap();
        // The workspace's lock file pins the same serde versions, and works offline.
        fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        cargo_strict(&dir, &target, &["build", "--quiet"]);
        cargo_strict(
            &dir,
            &target,
            &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
        );
        cargo_strict(
            &dir,
            &target,
            &[
                "clippy",
                "--quiet",
                "--all-targets",
                "--all-features",
                "--",
                "-D",
                "warnings",
            ],
        );
        eprintln!(
            "{name}: {} files, {} lines build clean",
            output.files.len(),
            output
                .files
                .values()
                .map(|t| t.lines().count())
                .sum::<usize>()
        );
    }
}

/// The output as a private module (`--module crate::msp`) of a library and of a binary that
/// use a little of it: both build without warnings and pass clippy with `-D warnings`.
#[test]
fn cargo_build_of_a_generated_module_in_a_binary_and_a_library_is_warning_free() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scratch");
    let target = base.join("target");
    let schema = workspace().join("schema/msp.schema.json");
    let text = fs::read_to_string(&schema).unwrap();
    let options = msp_codegen::Options::new("schema/msp.schema.json").module("crate::msp");
    let output = msp_codegen::generate(&text, &options).unwrap_or_else(|e| panic!("{e}"));
    let dir = base.join("module");
    let _ = fs::remove_dir_all(&dir);
    msp_codegen::write(&dir.join("src/msp"), &output.files).unwrap();
    fs::write(
        dir.join("src/lib.rs"),
        "//! A library with the protocol as a private module.\n\nmod msp;\n\n\
         /// Whether `line` is a frame the host may send.\n\
         pub fn is_host_frame(line: &str) -> bool {\n    \
         msp::Frame::parse(msp::Sender::Server, line).is_ok()\n}\n",
    )
    .unwrap();
    fs::write(
        dir.join("src/main.rs"),
        "//! A binary with the protocol as a private module.\n\n\
         #[path = \"msp/mod.rs\"]\nmod msp;\n\n\
         fn main() {\n    \
         let method = <msp::protocol::methods::Initialize as msp::rpc::Request>::METHOD;\n    \
         println!(\"{method}\");\n}\n",
    )
    .unwrap();
    fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"scratch-module\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\nserde_json = { version = \"1\", features = [\"raw_value\"] }\n\n\
         [workspace]\n",
    )
    .unwrap();
    fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    cargo_strict(
        &dir,
        &target,
        &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
    );
}

/// A `build()` on a builder with required members left out does not compile, and the error
/// names each missing member by its schema name.
#[test]
fn a_builder_missing_a_member_fails_to_compile_naming_it() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scratch-missing-member");
    let _ = fs::remove_dir_all(&base);
    let schema = serde_json::json!({"$defs": {"Decision": {
        "type": "object",
        "properties": {
            "choiceId": {"type": "string"},
            "sessionId": {"type": "string"},
            "requirement": {"type": "integer"},
            "note": {"type": "string"}
        },
        "required": ["choiceId", "sessionId", "requirement"]
    }}});
    let output = msp_codegen::generate(&schema.to_string(), &msp_codegen::Options::new("d.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    msp_codegen::write(&base.join("types/src"), &output.files).unwrap();
    let manifest = |name: &str, deps: &str| {
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nserde = {{ version = \"1\", features = [\"derive\"] }}\n\
             serde_json = {{ version = \"1\", features = [\"raw_value\"] }}\n{deps}"
        )
    };
    fs::write(base.join("types/Cargo.toml"), manifest("types", "")).unwrap();
    fs::create_dir_all(base.join("user/src")).unwrap();
    fs::write(
        base.join("user/Cargo.toml"),
        manifest("user", "types = { path = \"../types\" }\n"),
    )
    .unwrap();
    fs::write(
        base.join("user/src/main.rs"),
        "fn main() {\n    let _ = types::Decision::builder().session_id(\"s\").note(\"n\").build();\n}\n",
    )
    .unwrap();
    fs::write(
        base.join("Cargo.toml"),
        "[workspace]\nmembers = [\"types\", \"user\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    fs::copy(workspace().join("Cargo.lock"), base.join("Cargo.lock")).unwrap();
    let built = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "user"])
        .current_dir(&base)
        .env("CARGO_TARGET_DIR", base.join("target"))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(!built.status.success(), "it compiled:\n{stderr}");
    for missing in ["choiceId", "requirement"] {
        assert!(
            // The marker's path, as rustc prints a type of another crate.
            stderr.contains(&format!(
                "the builder is missing the member `types::members::{missing}`"
            )),
            "{missing}:\n{stderr}"
        );
    }
    assert!(!stderr.contains("members::sessionId"), "{stderr}");
}
