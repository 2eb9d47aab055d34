//! Helpers shared by the conformance tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use msp_conformance::transcript::{self, Dir};
use msp_conformance::{Checked, Runner, Session};
use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate sits in the repository")
        .to_owned()
}

/// `$MSP_SHARED_DIR`, or why a test that needs it is skipped.
pub fn shared_dir() -> Result<PathBuf, String> {
    let dir = std::env::var_os("MSP_SHARED_DIR")
        .filter(|d| !d.is_empty())
        .ok_or("skipped: MSP_SHARED_DIR not set")?;
    let dir = PathBuf::from(dir);
    // Set to a folder without the material: a mistake, said loudly rather than skipped.
    assert!(
        dir.join("msp-upstream").is_dir(),
        "MSP_SHARED_DIR is set but {}/msp-upstream is missing",
        dir.display()
    );
    Ok(dir)
}

/// One frame of a transcript after the check.
pub struct Played {
    pub line: usize,
    pub dir: Dir,
    pub raw: String,
    pub input: Value,
    pub checked: Checked,
}

impl Played {
    /// The re-encoded frame.
    pub fn output(&self) -> &Value {
        self.checked
            .output
            .as_ref()
            .unwrap_or_else(|| panic!("line {}: did not decode: {:?}", self.line, self.checked))
    }
}

/// Checks every frame of `file`, keeping the input and the output.
pub fn play(runner: &Runner, file: &Path) -> Vec<Played> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let records = transcript::records(file, &text).unwrap_or_else(|e| panic!("{e}"));
    let mut session = Session::new(runner.shapes());
    records
        .into_iter()
        .map(|(line, record)| Played {
            line,
            dir: record.dir,
            input: serde_json::from_str(record.raw.trim_end_matches('\r'))
                .unwrap_or_else(|e| panic!("{}:{line}: {e}", file.display())),
            checked: session.check(record.dir, &record.raw),
            raw: record.raw,
        })
        .collect()
}

/// Checks a transcript given as `(dir, frame)` pairs.
pub fn play_frames(runner: &Runner, frames: &[(Dir, Value)]) -> Vec<Checked> {
    let mut session = Session::new(runner.shapes());
    frames
        .iter()
        .map(|(dir, frame)| session.check(*dir, &frame.to_string()))
        .collect()
}
