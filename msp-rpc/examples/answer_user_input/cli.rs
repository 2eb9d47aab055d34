//! Command-line options: what the user decides, and which host to talk to.

use std::path::{Path, PathBuf};

pub const USAGE: &str = "\
Usage: answer_user_input [OPTIONS] [TRANSCRIPT_DIR]

Resumes a session whose agent is waiting on a question, shows the question, answers it and
waits for the settlement. The host is msp-canned-host playing TRANSCRIPT_DIR (default:
tests/fixtures/seed-answer-user-input), spawned as a child process and spoken to over its
stdin and stdout, as `muse serve` would be; --muse talks to a real host instead.

Options (at most one kind of decision; the default answers with the first offered label):
  --answer LABEL      answer with LABEL; repeat for the following questions
  --cancel REASON     decline to answer, giving REASON
  --interrupt LABEL   confirm LABEL (repeat for the following questions), then interrupt
  --session ID        the session to resume (default: the one the transcript resumes)
  --host PATH         the canned host binary (default: $MSP_CANNED_HOST, else
                      msp-canned-host next to this program)
  --host-arg ARG      an argument for the canned host, such as --strict (repeatable)
  --muse              spawn `muse serve` ($MUSE_CLI, else muse on PATH) instead
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

/// Which host to talk to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostChoice {
    /// The canned host binary, playing a transcript, with extra arguments.
    Canned {
        binary: Option<PathBuf>,
        args: Vec<String>,
    },
    /// `muse serve`.
    Muse,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub transcript: PathBuf,
    pub decision: Decision,
    pub session: Option<String>,
    pub host: HostChoice,
    pub trace: bool,
}

/// The fixture the example plays when no folder is given.
pub fn default_transcript() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new(".."));
    workspace.join("tests/fixtures/seed-answer-user-input")
}

/// `Ok(None)` asks for the help text.
pub fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut transcript = None;
    let mut decision = None;
    let (mut session, mut binary, mut host_args, mut muse, mut trace) =
        (None, None, Vec::new(), false, false);
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
            "--trace" => trace = true,
            "--muse" => muse = true,
            "--session" => session = Some(value()?),
            "--host" => binary = Some(PathBuf::from(value()?)),
            "--host-arg" => host_args.push(value()?),
            "--answer" | "--interrupt" | "--cancel" => {
                let value = value()?;
                decision = Some(match (name, decision.take()) {
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
    let host = match muse {
        true => HostChoice::Muse,
        false => HostChoice::Canned {
            binary,
            args: host_args,
        },
    };
    Ok(Some(Options {
        transcript: transcript.unwrap_or_else(default_transcript),
        decision: decision.unwrap_or(Decision::Answer(Vec::new())),
        session,
        host,
        trace,
    }))
}
