//! A canned MSP host for testing clients (feature `canned-host`): it plays the server side of
//! a recorded transcript, over stdio (the `msp-canned-host` binary) or any reader and writer.
//!
//! Client frames are matched by value: the same kind and method, and every value the recorded
//! client sent sent again, except
//! - request ids and `params.commandId`s, which the client mints: they are bound to the
//!   recorded ones on first sight, and every later server frame speaks the client's (a
//!   response carries the client's request id, and a recorded `commandId` quoted anywhere, an
//!   ack's `commandId` or a `decidedByCommandId`, becomes the client's);
//! - the manifest's `normalize` paths;
//! - values a client chooses for itself, loosened by `METHOD#POINTER` patterns (see
//!   [`Allow`]): the default set [`DEFAULT_ALLOWED`] (`clientInfo`, workspace roots, the free
//!   text a user typed), each [`CannedHost::allow`] (`--allow` on the command line), and the
//!   script's `allow` steps from where they run; an error reply's `message` and `data`.
//!
//! A value that differs elsewhere, or a recorded member left out, is a mismatch: a client that
//! decides differently from the recording (another `choiceId`, a made-up `sessionId`) fails.
//! A member the client adds is its own business as long as its frame is valid for its method
//! (it decodes with `msp-types`; if not, the decoder's pointer is in the diagnosis); strict
//! matching refuses it too. Everything loosened or added is noted: on stderr, and in the
//! [`Report`] that [`CannedHost::serve`] returns (a test reads the notes from there, or from
//! the stderr tail every `HostExit` carries).
//!
//! Replies to the host's own requests may cross the client's next request on the wire: they
//! are matched by id whenever they come, and must all come. Unless strict, a client may also
//! leave out recorded *requests* it has no use for (a `view/page` backfill): when its frame
//! matches a later recorded one and only requests and server frames lie between, the host
//! plays on from there, leaving out the responses to the skipped requests.
//!
//! A client frame that matches nothing gets a diagnosis on stderr (the frame expected, its
//! transcript line, the JSON pointers that differ, sent against recorded) and exit code
//! [`MISMATCH`] (65); a client whose input ends before the transcript does gets
//! [`INCOMPLETE`] (66).
//!
//! ```
//! use msp_rpc::canned::{CannedHost, Outcome, Transcript};
//!
//! let transcript = Transcript::parse(
//!     concat!(
//!         r#"{"dir":"client","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"model/list\",\"params\":{}}"}"#, "\n",
//!         r#"{"dir":"server","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}"#, "\n",
//!     ),
//!     "demo",
//! )
//! .unwrap();
//! let client = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"model/list\",\"params\":{}}\n";
//! let (mut out, mut err) = (Vec::new(), Vec::new());
//! let report = CannedHost::new(transcript).serve(&client[..], &mut out, &mut err);
//! assert!(matches!(report.outcome, Outcome::Completed));
//! assert!(report.notes.is_empty());
//! // The recorded response, answering the client's id.
//! let answer: serde_json::Value = serde_json::from_slice(&out).unwrap();
//! assert_eq!(answer, serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
//! ```

mod allow;
mod compare;
mod script;
mod transcript;

use std::collections::HashSet;
use std::fmt;
use std::io::{self, BufWriter, Read, Write};

use msp_types::rpc::Id;
use msp_types::{Frame, Sender};
use serde_json::Value;

pub use self::allow::{Allow, DEFAULT_ALLOWED};
pub use self::compare::{compare, Diff, DiffKind};
pub use self::script::{Fault, Script, ScriptError, When};
pub use self::transcript::{Dir, LoadError, Recorded, Transcript};

use self::compare::{describe, kind, Binding};
use self::transcript::id_of;
use crate::framing::{LineDecoder, DEFAULT_MAX_FRAME_BYTES};

/// Exit code: a client frame did not match the transcript (the diagnosis is on stderr).
pub const MISMATCH: i32 = 65;
/// Exit code: the client's input ended before the transcript did.
pub const INCOMPLETE: i32 = 66;
/// Exit code: bad usage, or a transcript or script that cannot be read.
pub const UNUSABLE: i32 = 2;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every recorded frame was played, and the client closed its output.
    Completed,
    /// A scripted `stall` or `close-stdout` ran, and the client's input then ended.
    Stopped,
    /// A scripted `exit`.
    Exited(i32),
    /// A client frame matched nothing.
    Mismatch(Mismatch),
    /// The client's input ended (or it stopped reading) before the transcript's end.
    Incomplete(String),
}

impl Outcome {
    /// The process exit code for this outcome.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Completed | Outcome::Stopped => 0,
            Outcome::Exited(code) => *code,
            Outcome::Mismatch(_) => MISMATCH,
            Outcome::Incomplete(_) => INCOMPLETE,
        }
    }
}

/// What a run did: how it ended, and what it noted on the way (values loosened, members the
/// client added, requests it left out), each line as written to stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// How it ended.
    pub outcome: Outcome,
    /// What it noted, in order.
    pub notes: Vec<String>,
}

/// Why a client frame was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The transcript and line of the frame expected (the transcript alone when none was).
    pub at: String,
    /// The frame expected, described (`request view/page (id 3)`); `None` when the transcript
    /// has no more client frames.
    pub expected: Option<String>,
    /// The frame the client sent, described, or the line when it is not JSON.
    pub sent: String,
    /// What is wrong: the differing JSON pointers, or why nothing could match.
    pub reasons: Vec<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.expected {
            Some(expected) => write!(
                f,
                "mismatch at {}: expected {expected}, the client sent {}",
                self.at, self.sent
            )?,
            None => write!(
                f,
                "mismatch at {}: the transcript has no more client frames, the client sent {}",
                self.at, self.sent
            )?,
        }
        for reason in &self.reasons {
            write!(f, "\n  {reason}")?;
        }
        Ok(())
    }
}

/// A canned host: a transcript, the faults to put between its steps, and how strictly to
/// match.
#[derive(Clone, Debug)]
pub struct CannedHost {
    transcript: Transcript,
    script: Script,
    allowed: Vec<Allow>,
    strict: bool,
    fingerprint: Option<String>,
    trace: bool,
}

impl CannedHost {
    /// A host playing `transcript`.
    pub fn new(transcript: Transcript) -> Self {
        CannedHost {
            transcript,
            script: Script::new(),
            allowed: self::allow::defaults(),
            strict: false,
            fingerprint: None,
            trace: false,
        }
    }

    /// Faults to put between the transcript's steps.
    pub fn script(mut self, script: Script) -> Self {
        self.script = script;
        self
    }

    /// Lets the values `allow` covers differ from the recording (see [`Allow`]).
    pub fn allow(mut self, allow: Allow) -> Self {
        self.allowed.push(allow);
        self
    }

    /// Compares even what the default set [`DEFAULT_ALLOWED`] loosens (patterns given with
    /// [`CannedHost::allow`] after this still apply).
    pub fn no_default_allowed(mut self) -> Self {
        self.allowed.clear();
        self
    }

    /// Strict matching: the client must send every recorded client frame (replies may still
    /// cross requests on the wire), and no member the recording lacks.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Serves `fingerprint` as `schema.fingerprint` in the `initialize` result.
    pub fn fingerprint(mut self, fingerprint: impl Into<String>) -> Self {
        self.fingerprint = Some(fingerprint.into());
        self
    }

    /// Writes every frame received (`< `) and sent (`> `) to stderr.
    pub fn trace(mut self, trace: bool) -> Self {
        self.trace = trace;
        self
    }

    /// Refuses a script with a step after a line that holds no frame.
    pub fn check_script(&self) -> Result<(), String> {
        let lines: HashSet<usize> = self.transcript.frames.iter().map(|f| f.line).collect();
        match self.script.after_lines().find(|line| !lines.contains(line)) {
            Some(line) => Err(format!(
                "the script has a step after line {line}, which holds no frame of {}",
                self.transcript.origin
            )),
            None => Ok(()),
        }
    }

    /// Plays the transcript: reads the client's frames from `input`, writes the host's to
    /// `output`, and notes and diagnoses on `stderr`; returns the outcome and the notes.
    pub fn serve(&self, input: impl Read, output: impl Write, stderr: impl Write) -> Report {
        let mut run = Run {
            host: self,
            allowed: self.allowed.clone(),
            notes: Vec::new(),
            done: vec![false; self.transcript.frames.len()],
            out: Some(BufWriter::new(output)),
            err: stderr,
            ids: Binding::default(),
            commands: Binding::default(),
            skipped: HashSet::new(),
            asked: HashSet::new(),
            initialize_ids: HashSet::new(),
            fingerprint: self.fingerprint.clone(),
        };
        let mut lines = ClientLines::new(input);
        let outcome = match run.play(&mut lines) {
            Ok(()) => Outcome::Completed,
            Err(Stop::Stall) => {
                lines.drain();
                Outcome::Stopped
            }
            Err(Stop::Outcome(outcome)) => outcome,
        };
        match &outcome {
            Outcome::Mismatch(mismatch) => run.say(&format!("msp-canned-host: {mismatch}")),
            Outcome::Incomplete(why) => run.say(&format!("msp-canned-host: incomplete: {why}")),
            _ => {}
        }
        Report {
            outcome,
            notes: run.notes,
        }
    }
}

enum Stop {
    Stall,
    Outcome(Outcome),
}

impl From<Mismatch> for Stop {
    fn from(mismatch: Mismatch) -> Self {
        Stop::Outcome(Outcome::Mismatch(mismatch))
    }
}

/// The client's frames, one line at a time.
struct ClientLines<R> {
    input: R,
    lines: LineDecoder,
    ended: bool,
}

impl<R: Read> ClientLines<R> {
    fn new(input: R) -> Self {
        ClientLines {
            input,
            lines: LineDecoder::new(DEFAULT_MAX_FRAME_BYTES),
            ended: false,
        }
    }

    /// The next line; `None` at the end of input.
    fn next(&mut self) -> Option<String> {
        let mut buf = [0u8; 8192];
        loop {
            if let Some(line) = self.lines.next_line() {
                return Some(match line {
                    Ok(line) => line.to_owned(),
                    Err(e) => e.to_string(),
                });
            }
            if self.ended {
                return None;
            }
            match self.input.read(&mut buf) {
                Ok(0) | Err(_) => {
                    self.ended = true;
                    self.lines.finish();
                }
                Ok(n) => self.lines.push(&buf[..n]),
            }
        }
    }

    /// Reads and ignores everything until the end of input.
    fn drain(&mut self) {
        while self.next().is_some() {}
    }
}

struct Run<'a, W: Write, E: Write> {
    host: &'a CannedHost,
    /// The loosened places: the host's, and the script's `allow` steps run so far.
    allowed: Vec<Allow>,
    /// What was noted, as written to stderr.
    notes: Vec<String>,
    /// Frames played: server frames sent, client frames matched (or skipped).
    done: Vec<bool>,
    out: Option<BufWriter<W>>,
    err: E,
    ids: Binding<Id>,
    commands: Binding<String>,
    /// Recorded ids of client requests the client left out.
    skipped: HashSet<Id>,
    /// Ids of the host's requests not answered yet.
    asked: HashSet<Id>,
    initialize_ids: HashSet<Id>,
    fingerprint: Option<String>,
}

impl<W: Write, E: Write> Run<'_, W, E> {
    fn frames(&self) -> &[Recorded] {
        &self.host.transcript.frames
    }

    fn say(&mut self, text: &str) {
        let _ = writeln!(self.err, "{text}");
        let _ = self.err.flush();
    }

    /// Notes something about recorded frame `k`, on stderr and in the report.
    fn note(&mut self, k: usize, text: &str) {
        let at = format!("{}:{}", self.host.transcript.origin, self.frames()[k].line);
        let note = format!("msp-canned-host: note: {at}: {text}");
        self.say(&note);
        self.notes.push(note);
    }

    fn play<R: Read>(&mut self, lines: &mut ClientLines<R>) -> Result<(), Stop> {
        self.faults(When::Start, lines)?;
        let mut i = 0;
        while i < self.frames().len() {
            if self.done[i] {
                i += 1;
                continue;
            }
            match self.frames()[i].dir {
                Dir::Server => self.send_recorded(i, lines)?,
                Dir::Client => {
                    let sent = self.read(lines, i)?;
                    self.take(i, sent, lines)?;
                }
            }
        }
        self.faults(When::End, lines)?;
        // Replies still owed must all come.
        while let Some(k) = (0..self.frames().len()).find(|&k| !self.done[k]) {
            let sent = self.read(lines, k)?;
            self.take(k, sent, lines)?;
        }
        match lines.next() {
            None => Ok(()),
            Some(line) => Err(self.no_more(&line).into()),
        }
    }

    /// The client's next frame, expected to answer for recorded frame `at`.
    fn read<R: Read>(&mut self, lines: &mut ClientLines<R>, at: usize) -> Result<Value, Stop> {
        let Some(line) = lines.next() else {
            // A request of the host left unanswered is the client's fault, not an early end.
            let unanswered = (0..self.frames().len()).find(|&k| {
                let frame = &self.frames()[k];
                frame.dir == Dir::Client
                    && !self.done[k]
                    && frame.is_response()
                    && frame.id().is_some_and(|id| self.asked.contains(&id))
            });
            if let Some(k) = unanswered {
                let id = self.frames()[k]
                    .id()
                    .map_or_else(String::new, |id| id.to_string());
                let reason = format!("the client never answered the host's request {id}");
                return Err(self
                    .mismatch(k, "nothing (its input ended)".into(), vec![reason])
                    .into());
            }
            let frame = &self.frames()[at];
            let why = format!(
                "the client's input ended; {}:{} expects it to send {}",
                self.host.transcript.origin,
                frame.line,
                describe(&frame.value)
            );
            return Err(Stop::Outcome(Outcome::Incomplete(why)));
        };
        if self.host.trace {
            self.say(&format!("< {line}"));
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(value) if value.is_object() => Ok(value),
            _ => Err(self
                .mismatch(
                    at,
                    format!("a line that is not a JSON object: {line}"),
                    vec![],
                )
                .into()),
        }
    }

    /// Takes the client's frame `sent` while recorded frame `i` is due.
    fn take<R: Read>(
        &mut self,
        i: usize,
        sent: Value,
        lines: &mut ClientLines<R>,
    ) -> Result<(), Stop> {
        if sent.get("method").is_none() {
            return self.take_reply(i, sent, lines);
        }
        let next = (i..self.frames().len()).find(|&j| self.is_due_call(j));
        let Some(j) = next else {
            return Err(self.no_more(&sent.to_string()).into());
        };
        // Unless strict, later frames too, past recorded requests only: a notification is
        // never left out.
        let mut candidates = vec![j];
        if !self.host.strict && self.frames()[j].id().is_some() {
            for k in j + 1..self.frames().len() {
                if self.is_due_call(k) {
                    candidates.push(k);
                    if self.frames()[k].id().is_none() {
                        break;
                    }
                }
            }
        }
        for &k in &candidates {
            if let Ok(notes) = self.matches(k, &sent) {
                return self.accept(i, k, &sent, notes, lines);
            }
        }
        let reasons = match self.matches(j, &sent) {
            Err(reasons) => reasons,
            Ok(_) => vec![],
        };
        Err(self.mismatch(j, describe(&sent), reasons).into())
    }

    /// A reply to one of the host's requests: matched by id, whenever it comes.
    fn take_reply<R: Read>(
        &mut self,
        i: usize,
        sent: Value,
        lines: &mut ClientLines<R>,
    ) -> Result<(), Stop> {
        let id = id_of(&sent);
        let owed = id
            .as_ref()
            .filter(|id| self.asked.contains(id))
            .and_then(|id| {
                (i..self.frames().len()).find(|&k| {
                    let frame = &self.frames()[k];
                    frame.dir == Dir::Client
                        && !self.done[k]
                        && frame.is_response()
                        && frame.id().as_ref() == Some(id)
                })
            });
        let Some(k) = owed else {
            let reason = match &id {
                Some(id) => {
                    format!("the host did not ask request {id}, or it was answered already")
                }
                None => "a reply without a readable id".to_owned(),
            };
            let due = (i..self.frames().len())
                .find(|&k| self.frames()[k].dir == Dir::Client && !self.done[k]);
            return Err(self
                .mismatch(due.unwrap_or(i), describe(&sent), vec![reason])
                .into());
        };
        let recorded = &self.frames()[k].value;
        if kind(recorded) != kind(&sent) {
            let reason = format!("a {}, recorded a {}", kind(&sent), kind(recorded));
            return Err(self.mismatch(k, describe(&sent), vec![reason]).into());
        }
        // An error's message and data are the client's own words.
        let diffs = self.differences(recorded, &sent, ["/error/message", "/error/data"]);
        let method = id
            .as_ref()
            .and_then(|id| self.asked_method(id))
            .unwrap_or_default();
        let notes = self
            .judge(&method, &sent, diffs)
            .map_err(|reasons| self.mismatch(k, describe(&sent), reasons))?;
        if let Some(id) = &id {
            self.asked.remove(id);
        }
        for note in notes {
            self.note(k, &note);
        }
        self.done[k] = true;
        let line = self.frames()[k].line;
        self.faults(When::After(line), lines)
    }

    /// The method of the host's request `id` (a recorded id).
    fn asked_method(&self, id: &Id) -> Option<String> {
        self.frames()
            .iter()
            .find(|f| f.dir == Dir::Server && !f.is_response() && f.id().as_ref() == Some(id))
            .and_then(|f| f.value.get("method")?.as_str().map(str::to_owned))
    }

    /// Sorts the differences of `sent` from its recorded frame (of `method`, or answering a
    /// request of `method`): `Ok` with what is only noted (loosened values, members the
    /// client added; the frame must still decode when members differ), `Err` with what
    /// refuses the frame.
    fn judge(
        &self,
        method: &str,
        sent: &Value,
        diffs: Vec<Diff>,
    ) -> Result<Vec<String>, Vec<String>> {
        let (mut notes, mut refused) = (Vec::new(), Vec::new());
        // Members left out or added that are let through: the frame must stay a valid one.
        let mut membership = Vec::new();
        for diff in diffs {
            let allow = self
                .allowed
                .iter()
                .find(|a| a.covers(method, &diff.pointer));
            let note = match allow {
                Some(allow) => format!("loosened ({allow}) {diff}"),
                None if diff.kind == DiffKind::Added && !self.host.strict => {
                    format!("added {diff}")
                }
                None => {
                    refused.push(diff.to_string());
                    continue;
                }
            };
            if matches!(diff.kind, DiffKind::Missing | DiffKind::Added) {
                membership.push(diff.to_string());
            }
            notes.push(note);
        }
        if refused.is_empty() && !membership.is_empty() {
            if let Err(e) = Frame::parse(Sender::Client, &sent.to_string()) {
                refused = membership;
                refused.push(format!("and the frame is not a valid one: {e}"));
            }
        }
        match refused.is_empty() {
            true => Ok(notes),
            false => Err(refused),
        }
    }

    fn is_due_call(&self, j: usize) -> bool {
        let frame = &self.frames()[j];
        frame.dir == Dir::Client && !self.done[j] && !frame.is_response()
    }

    /// Whether `sent` matches recorded frame `k`: `Ok` with what is only noted, `Err` with
    /// what does not match.
    fn matches(&self, k: usize, sent: &Value) -> Result<Vec<String>, Vec<String>> {
        let recorded = &self.frames()[k].value;
        if kind(recorded) != kind(sent) || recorded.get("method") != sent.get("method") {
            let reason = format!(
                "at /method: sent {}, recorded {}",
                describe(sent),
                describe(recorded)
            );
            return Err(vec![reason]);
        }
        let diffs = self.differences(recorded, sent, ["/id", "/params/commandId"]);
        let method = sent
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.judge(method, sent, diffs)
    }

    /// How `sent` differs from `recorded` as the client must send it (in the `commandId`s the
    /// host's frames told it: a turn's id is its `turn/start`'s `commandId`), leaving out the
    /// manifest's `normalize` paths and `own`, the pointers the client fills itself.
    fn differences(&self, recorded: &Value, sent: &Value, own: [&str; 2]) -> Vec<Diff> {
        let mut told = recorded.clone();
        self.rewrite_commands(&mut told);
        let mut free = self.host.transcript.normalize.clone();
        free.extend(own.map(str::to_owned));
        compare(&told, sent, &free)
    }

    /// Takes `sent` as recorded frame `j`, playing what lies between `i` and `j` first.
    fn accept<R: Read>(
        &mut self,
        i: usize,
        j: usize,
        sent: &Value,
        notes: Vec<String>,
        lines: &mut ClientLines<R>,
    ) -> Result<(), Stop> {
        let recorded = self.frames()[j].value.clone();
        if let (Some(recorded_id), Some(client_id)) = (id_of(&recorded), id_of(sent)) {
            self.ids
                .bind(&recorded_id, &client_id)
                .map_err(|e| self.mismatch(j, describe(sent), vec![e]))?;
            if recorded.get("method").and_then(Value::as_str) == Some("initialize") {
                self.initialize_ids.insert(recorded_id);
            }
        }
        let command = |frame: &Value| {
            frame
                .pointer("/params/commandId")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        if let (Some(recorded), Some(client)) = (command(&recorded), command(sent)) {
            self.commands
                .bind(&recorded, &client)
                .map_err(|e| self.mismatch(j, describe(sent), vec![e]))?;
        }
        for m in i..j {
            if self.done[m] {
                continue;
            }
            let frame = &self.frames()[m];
            match (frame.dir, frame.is_response()) {
                (Dir::Server, _) => self.send_recorded(m, lines)?,
                // A reply to the host's request stays owed.
                (Dir::Client, true) => {}
                (Dir::Client, false) => {
                    let (line, text) = (frame.line, describe(&frame.value));
                    if let Some(id) = frame.id() {
                        self.skipped.insert(id);
                    }
                    self.done[m] = true;
                    self.note(m, &format!("the client left out {text}"));
                    self.faults(When::After(line), lines)?;
                }
            }
        }
        for note in notes {
            self.note(j, &note);
        }
        self.done[j] = true;
        let line = self.frames()[j].line;
        self.faults(When::After(line), lines)
    }

    /// Sends recorded server frame `m`, in the client's ids, unless it answers a request the
    /// client left out.
    fn send_recorded<R: Read>(&mut self, m: usize, lines: &mut ClientLines<R>) -> Result<(), Stop> {
        self.done[m] = true;
        let frame = &self.frames()[m];
        let line = frame.line;
        let id = frame.id();
        if frame.is_response() && id.as_ref().is_some_and(|id| self.skipped.contains(id)) {
            return self.faults(When::After(line), lines);
        }
        if !frame.is_response() {
            if let Some(id) = id {
                self.asked.insert(id);
            }
        }
        let text = self.render(m);
        self.write(&text)?;
        self.faults(When::After(line), lines)
    }

    /// Recorded server frame `m` as the client must see it.
    fn render(&self, m: usize) -> String {
        let frame = &self.frames()[m];
        let mut value = frame.value.clone();
        let mut changed = false;
        if frame.is_response() {
            if let Some(recorded) = frame.id() {
                if let Some(client) = self.ids.client_of(&recorded) {
                    if *client != recorded {
                        value["id"] = serde_json::to_value(client).unwrap_or(Value::Null);
                        changed = true;
                    }
                }
                if self.initialize_ids.contains(&recorded) {
                    if let (Some(served), Some(slot)) = (
                        &self.fingerprint,
                        value.pointer_mut("/result/schema/fingerprint"),
                    ) {
                        *slot = Value::String(served.clone());
                        changed = true;
                    }
                }
            }
        }
        changed |= self.rewrite_commands(&mut value);
        if changed {
            value.to_string()
        } else {
            frame.raw.clone()
        }
    }

    /// Every string equal to a bound recorded `commandId` becomes the client's.
    fn rewrite_commands(&self, value: &mut Value) -> bool {
        match value {
            Value::String(s) => match self.commands.client_of(s) {
                Some(client) if client != s => {
                    *s = client.clone();
                    true
                }
                _ => false,
            },
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |c, v| self.rewrite_commands(v) | c),
            Value::Object(members) => members
                .values_mut()
                .fold(false, |c, v| self.rewrite_commands(v) | c),
            _ => false,
        }
    }

    fn write(&mut self, text: &str) -> Result<(), Stop> {
        if self.host.trace {
            self.say(&format!("> {text}"));
        }
        let Some(out) = &mut self.out else {
            return Ok(());
        };
        let written = out
            .write_all(text.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        written.map_err(|e: io::Error| {
            Stop::Outcome(Outcome::Incomplete(format!(
                "the client stopped reading: {e}"
            )))
        })
    }

    fn faults<R: Read>(&mut self, when: When, lines: &mut ClientLines<R>) -> Result<(), Stop> {
        let faults: Vec<Fault> = self.host.script.steps_at(when).cloned().collect();
        for fault in faults {
            match fault {
                Fault::Stderr(text) => self.say(&text),
                Fault::Exit(code) => {
                    if let Some(out) = &mut self.out {
                        let _ = out.flush();
                    }
                    return Err(Stop::Outcome(Outcome::Exited(code)));
                }
                Fault::Stall => return Err(Stop::Stall),
                Fault::CloseStdout => {
                    if let Some(mut out) = self.out.take() {
                        let _ = out.flush();
                    }
                    lines.drain();
                    return Err(Stop::Outcome(Outcome::Stopped));
                }
                Fault::Send(line) => self.write(&line)?,
                Fault::Fingerprint(value) => self.fingerprint = Some(value),
                Fault::Allow(allow) => self.allowed.push(allow),
            }
        }
        Ok(())
    }

    fn mismatch(&self, k: usize, sent: String, reasons: Vec<String>) -> Mismatch {
        let frame = &self.frames()[k];
        Mismatch {
            at: format!("{}:{}", self.host.transcript.origin, frame.line),
            expected: Some(format!("the client's {}", describe(&frame.value))),
            sent,
            reasons,
        }
    }

    fn no_more(&self, sent: &str) -> Mismatch {
        let sent = match serde_json::from_str::<Value>(sent) {
            Ok(value) => describe(&value),
            Err(_) => sent.to_owned(),
        };
        Mismatch {
            at: self.host.transcript.origin.clone(),
            expected: None,
            sent,
            reasons: vec![],
        }
    }
}
