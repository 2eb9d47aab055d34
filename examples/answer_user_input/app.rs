//! The example's parts, wired together; `tests/example_answer_user_input.rs` runs them too.

#[path = "canned_host.rs"]
pub mod canned_host;
#[path = "cli.rs"]
pub mod cli;
#[path = "client.rs"]
pub mod client;
#[path = "deadline.rs"]
pub mod deadline;
#[path = "labels.rs"]
pub mod labels;
#[path = "render.rs"]
pub mod render;

use std::fmt;
use std::io::{self, Write};

use msp_types::protocol::methods;
use msp_types::rpc::Request;
use msp_types::ErrorObject;

use canned_host::{CannedHost, HostError, Transcript};
use cli::{Decision, Options};
use client::Client;

/// What the user decides when no option says: the first offered label, or, when the
/// recording cancels, this reason.
pub const DEFAULT_REASON: &str = "the user chose not to answer";

/// Why a run stopped.
#[derive(Debug)]
pub enum Failure {
    Usage(String),
    /// A label that was not offered: nothing is sent, the question stays pending.
    Refused(String),
    Host(HostError),
    Wire(String),
    Rpc {
        method: String,
        error: Box<ErrorObject>,
    },
    Io(io::Error),
}

impl Failure {
    pub fn rpc(method: &str, error: ErrorObject) -> Self {
        Failure::Rpc {
            method: method.to_owned(),
            error: Box::new(error),
        }
    }

    fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Refused(_) => 3,
            _ => 1,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(message) => write!(f, "usage: {message}"),
            Failure::Refused(message) => write!(
                f,
                "refused: {message}; nothing was sent, the question stays pending"
            ),
            Failure::Host(error) => write!(f, "{error}"),
            Failure::Wire(message) => write!(f, "protocol: {message}"),
            Failure::Rpc { method, error } => {
                write!(f, "{method} failed: {} ({})", error.message, error.code)
            }
            Failure::Io(error) => write!(f, "output: {error}"),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        Failure::Io(error)
    }
}

/// The whole program: parse `args`, play the transcript; the exit code.
pub fn main(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let options = match cli::parse(args) {
        Ok(Some(options)) => options,
        Ok(None) => return report(writeln!(out, "{}", cli::USAGE), err, 0),
        Err(message) => {
            let written = writeln!(err, "usage: {message}\n\n{}", cli::USAGE);
            return report(written, err, 2);
        }
    };
    match Transcript::load(&options.transcript) {
        Ok(transcript) => play(transcript, &options, out, err),
        Err(error) => report(writeln!(err, "{error}"), err, 1),
    }
}

/// Runs the client against a canned host playing `transcript`. Values the client sent
/// that differ from the recording are listed on `err` as `canned host:` notes.
pub fn play(
    transcript: Transcript,
    options: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let mut host = CannedHost::new(transcript);
    let outcome = run(&mut host, options, out);
    let mut written = Ok(());
    for note in host.notes() {
        written = written.and(writeln!(err, "canned host: value differs at {note}"));
    }
    match outcome {
        Ok(()) => report(written, err, 0),
        Err(failure) => report(
            written.and(writeln!(err, "{failure}")),
            err,
            failure.exit_code(),
        ),
    }
}

fn report(written: io::Result<()>, err: &mut dyn Write, code: u8) -> u8 {
    match written {
        Ok(()) => code,
        Err(error) => {
            let _ = writeln!(err, "output: {error}");
            1
        }
    }
}

/// The recipe: handshake, resume, receipts, view backfill, the user's decision, settlement.
/// Optional steps run when the recording shows the client taking them.
fn run(host: &mut CannedHost, options: &Options, out: &mut dyn Write) -> Result<(), Failure> {
    let session = options
        .session
        .clone()
        .or_else(|| host.remembered_session());
    let mut client = Client::new(host, out, options.trace);
    if client.host_waits_for() == Some(methods::Initialize::METHOD) {
        client.handshake()?;
    }
    if client.host_waits_for() == Some(methods::ModelList::METHOD) {
        client.list_models()?;
    }
    if client.host_waits_for() == Some(methods::SessionResume::METHOD) {
        let session = session.ok_or_else(|| Failure::Usage("no session to resume".to_owned()))?;
        client.resume(&session)?;
    }
    client.pump()?;
    client.match_pending()?;
    if client.host_waits_for() == Some(methods::ViewPage::METHOD) {
        client.page_view()?;
    }
    client.pump()?;
    let decision = match &options.decision {
        Some(decision) => decision.clone(),
        None => default_decision(client.host_waits_for()),
    };
    client.decide(&decision)?;
    client.finish()
}

/// The user's default, matched to the recording: the first offered label, given as an
/// answer, or confirmed before an interrupt; a cancellation when the recording cancels.
fn default_decision(next: Option<&str>) -> Decision {
    match next {
        Some(methods::UserInputCancel::METHOD) => Decision::Cancel(DEFAULT_REASON.to_owned()),
        Some(methods::UserInputInterrupt::METHOD) | Some("userInput/engaged") => {
            Decision::Interrupt(Vec::new())
        }
        _ => Decision::Answer(Vec::new()),
    }
}
