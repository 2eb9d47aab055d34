//! The shell scripts of `scripts/` parse, and the table of ratios prints: a syntax error in a
//! script, or in its awk program, fails here rather than at the end of a benchmark run.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts")
}

#[test]
fn every_script_parses() {
    let mut checked = 0;
    for entry in std::fs::read_dir(scripts()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sh") {
            let output = Command::new("bash").arg("-n").arg(&path).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(output.status.success(), "{}: {stderr}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 2, "only {checked} scripts");
}

#[test]
fn the_ratios_table_prints_each_ratio_against_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("sample.tsv");
    std::fs::write(
        &tsv,
        "bundle.ratio.time\t0.8\nschema.ratio.time\t1.7\nratio.flood.host_copy\t0.4\nratio.session_over_flood\t1.27\n",
    )
    .unwrap();
    let output = Command::new("awk")
        .arg("-F\t")
        .arg("-f")
        .arg(scripts().join("ratios.awk"))
        .arg(&tsv)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let table = String::from_utf8(output.stdout).unwrap();
    let line = |what: &str| {
        table
            .lines()
            .find(|l| l.starts_with(what))
            .unwrap_or_else(|| panic!("no row {what}:\n{table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(line("generation time msp-codegen/typify (bundle)").ends_with("0.80 <=1 met"));
    assert!(line("generation time msp-codegen/typify (schema)").ends_with("1.70 <=1 MISSED"));
    assert!(line("request round trip, blocking").ends_with("n/a <=2 skipped"));
    assert!(line("  notification flood, the host's copy alone").ends_with("0.40"));
    assert!(line("streamed turn through a session").ends_with("1.27 <=1.25 MISSED"));
    assert!(line("session fold: folding").ends_with("n/a <=0.2 skipped"));
}
