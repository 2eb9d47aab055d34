//! The committed `generated/` is exactly what the generator makes of `schema/msp.schema.json`.
//! `MSP_UPDATE_GENERATED=1 cargo test --test generated_current` rewrites it.

use std::path::Path;

#[test]
fn generated_matches_fresh_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("schema/msp.schema.json")).unwrap();
    let output = msp_codegen::generate(&text, &msp_codegen::Options::project())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = root.join("generated");
    if std::env::var_os("MSP_UPDATE_GENERATED").is_some() {
        let report = msp_codegen::write(&dir, &output.files).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("rewrote {:?}, removed {:?}", report.written, report.removed);
        return;
    }
    let report = msp_codegen::render::write::diff(&dir, &output.files);
    assert!(
        report.written.is_empty() && report.removed.is_empty(),
        "generated/ is stale: {:?} differ, {:?} are no longer generated.\n\
         Run: cargo run -p msp-codegen -- generate\n\
         (or MSP_UPDATE_GENERATED=1 cargo test --test generated_current)",
        report.written,
        report.removed
    );
}
