//! The golden wire corpus: every frame of every transcript, with the method that types its
//! payload (a response takes the method of the request with the same id sent the other way).

use std::path::{Path, PathBuf};

use crate::envelope::{Envelope, Member};

/// `$MSP_SHARED_DIR`, or why it cannot be used.
pub fn shared_dir() -> Result<PathBuf, String> {
    let dir = std::env::var_os("MSP_SHARED_DIR")
        .filter(|d| !d.is_empty())
        .ok_or("MSP_SHARED_DIR not set")?;
    let dir = PathBuf::from(dir);
    if dir.join("msp-upstream").is_dir() {
        Ok(dir)
    } else {
        Err(format!("{}/msp-upstream missing", dir.display()))
    }
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("benches/ has a parent")
        .to_path_buf()
}

/// Who wrote a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// The client.
    Client,
    /// The server.
    Server,
}

/// What a frame carries, by the method tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A request of the `methods` table (or of no table).
    ClientRequest,
    /// A request of the `requests` table.
    ServerRequest,
    /// A notification.
    Notification,
    /// The result of a client request.
    ClientResult,
    /// The result of a server request.
    ServerResult,
    /// An error response.
    Error,
}

/// One frame of the corpus.
#[derive(Clone, Debug)]
pub struct Line {
    /// `scenario:line`.
    pub source: String,
    /// Who wrote it, when the transcript says.
    pub dir: Option<Dir>,
    /// The frame as sent (a trailing `\r` kept).
    pub raw: String,
    /// What it carries.
    pub kind: Kind,
    /// The method that types the payload; `None` for a response to no known request.
    pub method: Option<String>,
    /// Where the payload text is in `raw`.
    pub payload: Option<(Member, std::ops::Range<usize>)>,
    /// For a response to a known request: its id, which a client would have recorded with the
    /// method when it sent the request.
    pub answers: Option<msp_types::rpc::Id>,
}

impl Line {
    /// The payload text.
    pub fn payload_text(&self) -> Option<&str> {
        self.payload
            .as_ref()
            .map(|(_, range)| &self.raw[range.clone()])
    }
}

/// The frames and where they came from.
pub struct Corpus {
    /// A description of the source.
    pub source: String,
    /// Every frame, file by file.
    pub lines: Vec<Line>,
}

/// The transcripts under `$MSP_SHARED_DIR`, else the project's `tests/fixtures/**/*.ndjson`.
pub fn load() -> Result<Corpus, String> {
    let (source, files) = match shared_dir() {
        Ok(shared) => {
            let dir = shared.join("msp-upstream/transcripts");
            let mut files = Vec::new();
            for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
                let path = entry
                    .map_err(|e| e.to_string())?
                    .path()
                    .join("transcript.ndjson");
                if path.is_file() {
                    files.push(path);
                }
            }
            (format!("{}/*/transcript.ndjson", dir.display()), files)
        }
        Err(reason) => {
            let dir = workspace_root().join("tests/fixtures");
            let mut files = Vec::new();
            find_ndjson(&dir, &mut files);
            (format!("{}/**/*.ndjson ({reason})", dir.display()), files)
        }
    };
    let mut files = files;
    files.sort();
    let mut lines = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.parent().and_then(Path::file_name).map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        read_file(&name, &text, &mut lines)?;
    }
    if lines.is_empty() {
        return Err(format!("no frames in {source}"));
    }
    Ok(Corpus { source, lines })
}

fn find_ndjson(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            find_ndjson(&path, out);
        } else if path.extension().is_some_and(|e| e == "ndjson") {
            out.push(path);
        }
    }
}

/// A transcript line is `{"dir": ..., "raw": "<frame>"}`; a fixture line may be the frame.
fn unwrap_line(line: &str) -> (Option<Dir>, String) {
    #[derive(serde::Deserialize)]
    struct Wrapped {
        dir: String,
        raw: String,
    }
    match serde_json::from_str::<Wrapped>(line) {
        Ok(w) => {
            let dir = match w.dir.as_str() {
                "client" => Some(Dir::Client),
                "server" => Some(Dir::Server),
                _ => None,
            };
            (dir, w.raw)
        }
        Err(_) => (None, line.to_owned()),
    }
}

fn read_file(name: &str, text: &str, out: &mut Vec<Line>) -> Result<(), String> {
    // Requests seen so far: (id as JSON text, writer, method, kind).
    let mut requests: Vec<(String, Option<Dir>, String, Kind)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let source = format!("{name}:{}", n + 1);
        let (dir, raw) = unwrap_line(line);
        let frame = Envelope::parse(&raw).map_err(|e| format!("{source}: {e}"))?;
        let id = frame.id.as_ref().map(|id| id.to_string());
        let (kind, method) = match (&frame.method, frame.payload.map(|p| p.0)) {
            (Some(method), _) => {
                let kind = match &id {
                    None => Kind::Notification,
                    Some(_) if msp_types::protocol::SERVER_METHODS.contains(&&**method) => {
                        Kind::ServerRequest
                    }
                    Some(_) => Kind::ClientRequest,
                };
                if let Some(id) = &id {
                    requests.push((id.clone(), dir, method.to_string(), kind));
                }
                (kind, Some(method.to_string()))
            }
            (None, Some(Member::Error)) => (Kind::Error, None),
            (None, _) => {
                let request = requests.iter().rev().find(|(rid, rdir, _, _)| {
                    Some(rid) == id.as_ref() && (dir.is_none() || *rdir != dir)
                });
                match request {
                    Some((_, _, method, Kind::ServerRequest)) => {
                        (Kind::ServerResult, Some(method.clone()))
                    }
                    Some((_, _, method, _)) => (Kind::ClientResult, Some(method.clone())),
                    None => (Kind::ClientResult, None),
                }
            }
        };
        let payload = frame.payload.map(|(member, value)| {
            let start = value.get().as_ptr() as usize - raw.as_ptr() as usize;
            (member, start..start + value.get().len())
        });
        let answers = match (kind, &method, &frame.id) {
            (Kind::ClientResult | Kind::ServerResult, Some(_), Some(id)) => {
                serde_json::from_value(id.clone()).ok()
            }
            _ => None,
        };
        drop(frame);
        out.push(Line {
            source,
            dir,
            raw,
            kind,
            method,
            payload,
            answers,
        });
    }
    Ok(())
}

/// The definition names that type each method's params and result, from a schema's
/// `methods`, `requests` and `notifications` tables.
#[derive(Debug, Default)]
pub struct Tables {
    params: std::collections::HashMap<String, String>,
    results: std::collections::HashMap<String, String>,
}

impl Tables {
    /// Reads the tables of the schema at `path`.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let doc: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut tables = Tables::default();
        for table in ["methods", "requests", "notifications"] {
            let Some(entries) = doc.get(table).and_then(|t| t.as_object()) else {
                continue;
            };
            for (method, entry) in entries {
                if let Some(def) = def_name(entry.get("params")) {
                    tables.params.insert(method.clone(), def);
                }
                if let Some(def) = def_name(entry.get("result")) {
                    tables.results.insert(method.clone(), def);
                }
            }
        }
        Ok(tables)
    }

    /// The definition that types the payload of `line`: `ErrorObject` for errors.
    pub fn definition(&self, line: &Line) -> Option<&str> {
        let (member, _) = line.payload.as_ref()?;
        match member {
            Member::Error => Some("ErrorObject"),
            Member::Params => self.params.get(line.method.as_deref()?).map(String::as_str),
            Member::Result => self
                .results
                .get(line.method.as_deref()?)
                .map(String::as_str),
        }
    }
}

fn def_name(member: Option<&serde_json::Value>) -> Option<String> {
    let reference = member?.get("$ref")?.as_str()?;
    reference.strip_prefix("#/$defs/").map(str::to_owned)
}
