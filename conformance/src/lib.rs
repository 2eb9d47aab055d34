//! Transcript conformance for msp-types: every frame of a wire transcript decodes into the
//! typed API and re-encodes to the same JSON.
//!
//! A transcript is an `*.ndjson` file of `{"dir": "client"|"server", "raw": "<frame>"}` lines.
//! Each frame is parsed ([`msp_types::rpc::RawFrame::parse_line`], a trailing `\r` tolerated),
//! classified (request, notification, result, error) and typed through the generated tables
//! ([`msp_types::Frame::from_raw`]); a result is typed by the method of the request with the
//! same `id` sent the other way ([`msp_types::ClientResult::decode`] or
//! [`msp_types::ServerResult::decode`]). The typed frame is encoded again and compared with the
//! input as JSON values, the whole frame.
//!
//! One difference is allowed: a member absent on input that is written as `null` on output,
//! when the schema makes that member required-nullable in the type at that place (checked
//! against the model of `schema/msp.schema.json`, not assumed for any `null`).
//!
//! # Counters
//!
//! The runner ends with `frames: N, typed: T, decoded: D, lossless: L, untyped: U, failures: F`:
//!
//! - `frames`: transcript lines (blank lines are not frames).
//! - `typed`: frames whose payload the method tables give a schema type: requests and
//!   notifications whose method is in a table, results answering such a request, and error
//!   responses (typed as `ErrorObject`).
//! - `untyped`: frames whose method (or, for a result, the method of the request it answers) is
//!   in no table: they decode through an `Unknown` arm and must round-trip all the same.
//!   `typed + untyped` is the number of frames that could be classified.
//! - `decoded`: frames that decoded into the typed message without error.
//! - `lossless`: decoded frames whose re-encoding equals the input, modulo the allowed
//!   difference.
//! - `failures`: frames that are not lossless (`frames - lossless`); each gets one line naming
//!   the file, the line, the method, the JSON pointer and the reason.

pub mod decode;
pub mod diff;
pub mod fold;
pub mod frame;
pub mod pointer;
pub mod shape;
pub mod transcript;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub use frame::{Checked, Session};
pub use shape::Shapes;
pub use transcript::{Dir, InputError};

/// A frame that did not round-trip, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The transcript.
    pub file: PathBuf,
    /// The 1-based line of the frame.
    pub line: usize,
    /// The frame's method, or the method of the request it answers, when known.
    pub method: Option<String>,
    /// JSON pointer into the frame (empty: the frame as a whole).
    pub pointer: String,
    /// What went wrong.
    pub reason: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(frame)"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{}:{}: {}: {pointer}: {}",
            self.file.display(),
            self.line,
            self.method.as_deref().unwrap_or("-"),
            self.reason
        )
    }
}

/// The counters of a run and its failures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Frames read.
    pub frames: usize,
    /// Frames whose payload got a schema type.
    pub typed: usize,
    /// Frames that decoded.
    pub decoded: usize,
    /// Frames that re-encoded equal to the input.
    pub lossless: usize,
    /// Frames of methods in no table.
    pub untyped: usize,
    /// One entry per frame that is not lossless, in file and line order.
    pub failures: Vec<Failure>,
}

impl Report {
    /// Counts one checked frame of `file` at `line`.
    pub fn add(&mut self, file: &Path, line: usize, checked: Checked) {
        self.frames += 1;
        match checked.typed {
            Some(true) => self.typed += 1,
            Some(false) => self.untyped += 1,
            None => {}
        }
        self.decoded += usize::from(checked.decoded);
        self.lossless += usize::from(checked.lossless);
        if !checked.lossless {
            let (pointer, reason) = checked
                .failure
                .unwrap_or_else(|| (String::new(), "not lossless".to_owned()));
            self.failures.push(Failure {
                file: file.to_owned(),
                line,
                method: checked.method,
                pointer,
                reason,
            });
        }
    }

    /// Adds the counts and failures of `other`, which comes after `self`.
    pub fn merge(&mut self, other: Report) {
        self.frames += other.frames;
        self.typed += other.typed;
        self.decoded += other.decoded;
        self.lossless += other.lossless;
        self.untyped += other.untyped;
        self.failures.extend(other.failures);
    }

    /// The closing line.
    pub fn summary(&self) -> String {
        format!(
            "frames: {}, typed: {}, decoded: {}, lossless: {}, untyped: {}, failures: {}",
            self.frames,
            self.typed,
            self.decoded,
            self.lossless,
            self.untyped,
            self.failures.len()
        )
    }
}

/// Checks transcripts against the generated types.
pub struct Runner {
    shapes: Shapes,
}

impl Runner {
    /// A runner over the checked-in schema's model.
    pub fn new() -> Result<Self, msp_codegen::Error> {
        Ok(Runner {
            shapes: Shapes::load()?,
        })
    }

    /// The schema's model, indexed.
    pub fn shapes(&self) -> &Shapes {
        &self.shapes
    }

    /// Checks every `*.ndjson` under `root`. Files are checked in parallel (each has its own
    /// request bookkeeping) and reported in path order.
    pub fn run(&self, root: &Path) -> Result<Report, InputError> {
        let files = transcript::files(root)?;
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(files.len());
        let next = AtomicUsize::new(0);
        let mut done: Vec<(usize, Result<Report, InputError>)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(file) = files.get(i) else {
                                return out;
                            };
                            out.push((i, self.check_file(file)));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("a checking thread panicked"))
                .collect()
        });
        done.sort_unstable_by_key(|(i, _)| *i);
        let mut report = Report::default();
        for (_, file_report) in done {
            report.merge(file_report?);
        }
        Ok(report)
    }

    /// Checks one transcript file.
    pub fn check_file(&self, file: &Path) -> Result<Report, InputError> {
        let text = std::fs::read_to_string(file).map_err(|e| InputError::Io(file.to_owned(), e))?;
        let mut report = Report::default();
        self.check_text(file, &text, &mut report)?;
        Ok(report)
    }

    /// Checks one transcript's text, shown as `file`.
    pub fn check_text(
        &self,
        file: &Path,
        text: &str,
        report: &mut Report,
    ) -> Result<(), InputError> {
        let mut session = Session::new(&self.shapes);
        for (line, record) in transcript::records(file, text)? {
            report.add(file, line, session.check(record.dir, &record.raw));
        }
        Ok(())
    }
}
