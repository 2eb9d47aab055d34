//! Command-line options: what the user decides, and which transcript the canned host plays.

use std::path::PathBuf;

pub const USAGE: &str = "\
Usage: answer_user_input [OPTIONS] [TRANSCRIPT_DIR]

Resumes a session whose agent is waiting on a question, shows the question, answers it
and waits for the settlement. The host is canned: it plays TRANSCRIPT_DIR/transcript.ndjson
(default: tests/fixtures/seed-answer-user-input).

Options (at most one kind of decision; the default follows the recording, picking the
first offered label):
  --answer LABEL      answer with LABEL; repeat for the following questions
  --cancel REASON     decline to answer, giving REASON
  --interrupt LABEL   confirm LABEL (repeat for the following questions), then interrupt
  --session ID        the session to resume (default: the one the recording resumes)
  --trace             print every frame: `> ` sent, `< ` received
  -h, --help          print this help";

/// What the user decided about the question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Labels for the questions in order; a question without one gets its first option.
    Answer(Vec<String>),
    /// Decline, with a reason.
    Cancel(String),
    /// Labels confirmed so far (for the first questions), then stop the turn.
    Interrupt(Vec<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub transcript: PathBuf,
    pub decision: Option<Decision>,
    pub session: Option<String>,
    pub trace: bool,
}

/// The fixture the example plays when no folder is given.
pub fn default_transcript() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed-answer-user-input")
}

/// `Ok(None)` asks for the help text.
pub fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options {
        transcript: default_transcript(),
        decision: None,
        session: None,
        trace: false,
    };
    let mut transcript = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next().cloned())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name {
            "-h" | "--help" => return Ok(None),
            "--trace" => options.trace = true,
            "--session" => options.session = Some(value()?),
            "--answer" | "--interrupt" | "--cancel" => {
                let value = value()?;
                options.decision = Some(match (name, options.decision.take()) {
                    ("--answer", None) => Decision::Answer(vec![value]),
                    ("--answer", Some(Decision::Answer(mut labels))) => {
                        labels.push(value);
                        Decision::Answer(labels)
                    }
                    ("--interrupt", None) => Decision::Interrupt(vec![value]),
                    ("--interrupt", Some(Decision::Interrupt(mut labels))) => {
                        labels.push(value);
                        Decision::Interrupt(labels)
                    }
                    ("--cancel", None) => Decision::Cancel(value),
                    _ => return Err("choose one of --answer, --cancel, --interrupt".to_owned()),
                });
            }
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            folder if transcript.is_none() => transcript = Some(PathBuf::from(folder)),
            extra => return Err(format!("unexpected argument {extra}")),
        }
    }
    if let Some(folder) = transcript {
        options.transcript = folder;
    }
    Ok(Some(options))
}
