//! What a schema change does to a crate that builds values of the generated types: an added
//! optional member changes nothing for it, an added required member stops it compiling at the
//! place that builds the value (its `build()` no longer exists until the member is set).

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::workspace;

const SCHEMA: &str = r#"{
  "title": "Greeter Protocol",
  "$defs": {
    "Greeting": {
      "type": "object",
      "description": "Said on arrival.",
      "properties": {
        "text": {"type": "string"},
        "lang": {"type": "string"}
      },
      "required": ["text"]
    }
  }
}"#;

// The downstream crate: builds a value by name and reads it back.
const APP: &str = r#"fn main() {
    let greeting = proto::Greeting::builder().text("hello").lang("en").build();
    assert_eq!(greeting.text, "hello");
}
"#;

fn generate(schema: &str, dir: &Path) {
    let options = msp_codegen::Options::new("greeter.schema.json");
    let output = msp_codegen::generate(schema, &options).unwrap_or_else(|e| panic!("{e}"));
    msp_codegen::write(&dir.join("proto/src"), &output.files).unwrap();
}

fn setup(dir: &Path) {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir.join("app/src")).unwrap();
    fs::create_dir_all(dir.join("proto/src")).unwrap();
    fs::write(
        dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"app\", \"proto\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    fs::write(
        dir.join("proto/Cargo.toml"),
        "[package]\nname = \"proto\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n\
         serde_json = { version = \"1\", features = [\"raw_value\"] }\n\n\
         [features]\nexperimental = []\nreflect = []\nsample = []\n",
    )
    .unwrap();
    fs::write(
        dir.join("app/Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nproto = { path = \"../proto\" }\n",
    )
    .unwrap();
    fs::write(dir.join("app/src/main.rs"), APP).unwrap();
    // The workspace's lock file pins the same serde versions, and works offline.
    fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

fn run_app(dir: &Path) -> Output {
    Command::new(env!("CARGO"))
        .args(["run", "--quiet", "-p", "app"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap()
}

#[test]
fn cargo_build_downstream_survives_an_added_optional_member_not_a_required_one() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("evolution");
    setup(&dir);

    generate(SCHEMA, &dir);
    let before = run_app(&dir);
    assert!(
        before.status.success(),
        "the first version: {}",
        String::from_utf8_lossy(&before.stderr)
    );

    let optional = SCHEMA.replace(
        r#""lang": {"type": "string"}"#,
        r#""lang": {"type": "string"}, "tone": {"type": ["string", "null"]}"#,
    );
    generate(&optional, &dir);
    let after = run_app(&dir);
    assert!(
        after.status.success(),
        "an added optional member broke the downstream crate: {}",
        String::from_utf8_lossy(&after.stderr)
    );

    // A required member that may be `null` starts as `null`; one that may not must be set.
    let required = optional
        .replace(
            r#""tone": {"type": ["string", "null"]}"#,
            r#""tone": {"type": ["string", "null"]}, "audience": {"type": "string"}"#,
        )
        .replace(
            r#""required": ["text"]"#,
            r#""required": ["text", "tone", "audience"]"#,
        );
    generate(&required, &dir);
    let broken = run_app(&dir);
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(
        !broken.status.success(),
        "an added required member went unnoticed"
    );
    assert!(
        stderr.contains("the builder is missing the member `proto::members::audience`")
            && stderr.contains("app/src/main.rs"),
        "the error should name the member and point at the value that lacks it:\n{stderr}"
    );
}
