//! Transcripts on disk: `*.ndjson` files of `{"dir": "client"|"server", "raw": "<frame>"}` lines.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Who wrote a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Written by the client (to the host's stdin).
    Client,
    /// Written by the server (read from the host's stdout).
    Server,
}

impl Dir {
    /// The other side.
    pub fn other(self) -> Dir {
        match self {
            Dir::Client => Dir::Server,
            Dir::Server => Dir::Client,
        }
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dir::Client => "client",
            Dir::Server => "server",
        })
    }
}

/// One line of a transcript.
#[derive(Clone, Debug, Deserialize)]
pub struct Record {
    /// Who wrote the frame.
    pub dir: Dir,
    /// The frame exactly as written.
    pub raw: String,
}

/// Input the runner cannot use at all.
#[derive(Debug)]
pub enum InputError {
    /// The folder (or file) does not exist.
    Missing(PathBuf),
    /// The folder holds no `*.ndjson` file.
    Empty(PathBuf),
    /// A file or folder could not be read.
    Io(PathBuf, std::io::Error),
    /// A line is not a JSON transcript record.
    BadLine {
        /// The file.
        file: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// Why it is not one.
        message: String,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Missing(path) => write!(f, "{}: no such file or folder", path.display()),
            InputError::Empty(path) => {
                write!(f, "{}: no *.ndjson transcript in it", path.display())
            }
            InputError::Io(path, e) => write!(f, "{}: {e}", path.display()),
            InputError::BadLine {
                file,
                line,
                message,
            } => write!(
                f,
                "{}:{line}: not a transcript line ({{\"dir\", \"raw\"}}): {message}",
                file.display()
            ),
        }
    }
}

impl std::error::Error for InputError {}

/// Every `*.ndjson` file under `root` (or `root` itself when it is a file), sorted by path.
pub fn files(root: &Path) -> Result<Vec<PathBuf>, InputError> {
    if !root.exists() {
        return Err(InputError::Missing(root.to_owned()));
    }
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_owned();
            InputError::Io(path, e.into())
        })?;
        if entry.file_type().is_file() && entry.path().extension() == Some("ndjson".as_ref()) {
            found.push(entry.into_path());
        }
    }
    if found.is_empty() {
        return Err(InputError::Empty(root.to_owned()));
    }
    found.sort();
    Ok(found)
}

/// The records of a transcript's text, with their 1-based line numbers; blank lines are skipped.
pub fn records(file: &Path, text: &str) -> Result<Vec<(usize, Record)>, InputError> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(line).map_err(|e| InputError::BadLine {
            file: file.to_owned(),
            line: index + 1,
            message: e.to_string(),
        })?;
        out.push((index + 1, record));
    }
    Ok(out)
}
