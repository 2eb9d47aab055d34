//! Writing output: only files whose bytes changed, each through a temporary file and a rename,
//! so a reader never sees a half-written file. Stale `.rs` files are removed.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::error::Error;

/// What a write did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WriteReport {
    /// Files written because they were new or different.
    pub written: Vec<String>,
    /// Files removed because the output no longer has them.
    pub removed: Vec<String>,
}

/// How `dir` differs from `files`: changed or new, and stale, file names.
pub fn diff(dir: &Path, files: &BTreeMap<String, String>) -> WriteReport {
    let written = files
        .iter()
        .filter(|(name, text)| fs::read(dir.join(name)).ok().as_deref() != Some(text.as_bytes()))
        .map(|(name, _)| name.clone())
        .collect();
    WriteReport {
        written,
        removed: stale(dir, files),
    }
}

fn stale(dir: &Path, files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.ends_with(".rs") && !files.contains_key(name))
        .collect();
    out.sort();
    out
}

/// Writes `files` into `dir`, touching only what changed.
pub fn write(dir: &Path, files: &BTreeMap<String, String>) -> Result<WriteReport, Error> {
    let shown = dir.display().to_string();
    fs::create_dir_all(dir).map_err(|e| Error::io(&shown, &e))?;
    let report = diff(dir, files);
    for name in &report.written {
        let target = dir.join(name);
        let temp = dir.join(format!(".{name}.tmp"));
        fs::write(&temp, &files[name]).map_err(|e| Error::io(&temp.display().to_string(), &e))?;
        fs::rename(&temp, &target).map_err(|e| Error::io(&target.display().to_string(), &e))?;
    }
    for name in &report.removed {
        fs::remove_file(dir.join(name))
            .map_err(|e| Error::io(&dir.join(name).display().to_string(), &e))?;
    }
    Ok(report)
}
