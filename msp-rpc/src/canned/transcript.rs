//! Recorded sessions: `{dir, raw}` lines and the scenario's manifest.

use std::fmt;
use std::path::{Path, PathBuf};

use msp_types::rpc::Id;
use msp_types::support::pointer_push;
use serde::Deserialize;
use serde_json::Value;

/// Which side wrote a recorded frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Written to the host's stdin.
    Client,
    /// Read from the host's stdout.
    Server,
}

/// One recorded frame.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Who wrote it.
    pub dir: Dir,
    /// Its 1-based line in the transcript file.
    pub line: usize,
    /// The frame as recorded (a trailing `\r` removed).
    pub raw: String,
    /// The frame, parsed.
    pub value: Value,
}

impl Recorded {
    /// The frame's method, for a request or notification.
    pub fn method(&self) -> Option<&str> {
        self.value.get("method").and_then(Value::as_str)
    }

    /// The frame's id, when it has a readable one.
    pub fn id(&self) -> Option<Id> {
        id_of(&self.value)
    }

    /// Whether it is a response (a result or an error).
    pub fn is_response(&self) -> bool {
        self.value.get("method").is_none()
    }
}

pub(crate) fn id_of(frame: &Value) -> Option<Id> {
    serde_json::from_value(frame.get("id")?.clone()).ok()
}

/// A recorded session, in wire order.
#[derive(Clone, Debug)]
pub struct Transcript {
    /// Where it came from, as shown in diagnoses.
    pub origin: String,
    /// Its frames.
    pub frames: Vec<Recorded>,
    /// JSON pointers (from the manifest's `normalize`) whose values may differ between runs.
    pub normalize: Vec<String>,
}

/// A transcript that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The file, and the line when the problem is on one.
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for LoadError {}

#[derive(Deserialize)]
struct Line {
    dir: String,
    raw: String,
}

#[derive(Deserialize, Default)]
struct Manifest {
    #[serde(default)]
    normalize: Vec<String>,
}

impl Transcript {
    /// Reads a scenario folder (`transcript.ndjson` and, if present, `manifest.json`) or a
    /// transcript file (with a `manifest.json` beside it, if any).
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        let file: PathBuf = if path.is_dir() {
            path.join("transcript.ndjson")
        } else {
            path.to_path_buf()
        };
        let origin = file.display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| LoadError {
            at: origin.clone(),
            message: format!("cannot read: {e}"),
        })?;
        let mut transcript = Self::parse(&text, &origin)?;
        let manifest = file.with_file_name("manifest.json");
        if manifest.is_file() {
            let shown = manifest.display().to_string();
            let text = std::fs::read_to_string(&manifest).map_err(|e| LoadError {
                at: shown.clone(),
                message: format!("cannot read: {e}"),
            })?;
            let manifest: Manifest = serde_json::from_str(&text).map_err(|e| LoadError {
                at: shown,
                message: e.to_string(),
            })?;
            transcript.normalize = manifest
                .normalize
                .iter()
                .map(|p| dotted_to_pointer(p))
                .collect();
        }
        Ok(transcript)
    }

    /// Parses transcript text; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<Self, LoadError> {
        let mut frames = Vec::new();
        for (index, text) in text.lines().enumerate() {
            let line = index + 1;
            if text.trim().is_empty() {
                continue;
            }
            let bad = |message: String| LoadError {
                at: format!("{origin}:{line}"),
                message,
            };
            let entry: Line = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
            let dir = match entry.dir.as_str() {
                "client" => Dir::Client,
                "server" => Dir::Server,
                other => return Err(bad(format!("unknown dir {other:?}"))),
            };
            let raw = entry.raw.trim_end_matches(['\r', '\n']).to_owned();
            let value: Value =
                serde_json::from_str(&raw).map_err(|e| bad(format!("raw frame: {e}")))?;
            if !value.is_object() {
                return Err(bad("raw frame: not a JSON object".into()));
            }
            frames.push(Recorded {
                dir,
                line,
                raw,
                value,
            });
        }
        Ok(Transcript {
            origin: origin.to_owned(),
            frames,
            normalize: Vec::new(),
        })
    }
}

/// `params.commandId` to `/params/commandId`.
fn dotted_to_pointer(path: &str) -> String {
    path.split('.').fold(String::new(), |pointer, token| {
        pointer_push(&pointer, token)
    })
}
