//! Scripted faults: what real hosts do that clients get wrong, put between transcript steps.
//!
//! One step a line, `WHEN: WHAT`; `#` starts a comment.
//!
//! ```text
//! start: fingerprint sha256:c94c3d1f2f51e6424074b9ec43eac3eedcf532d3dcd77351ec1383a87d3049c6
//! after 2: stderr warming up the model cache
//! after 5: send this line is not JSON
//! after 5: send {"jsonrpc":"2.0","method":"future/notice","params":{}}
//! after 9: exit 3
//! ```
//!
//! `WHEN` is `start`, `end` (after the last frame) or `after N` (once the frame on transcript
//! line N was sent, or received and matched). `WHAT` is one of:
//!
//! - `stderr TEXT`: writes TEXT and a newline to stderr;
//! - `exit CODE`: stops and exits with CODE (`muse serve`'s are 0 to 5);
//! - `stall`: stops answering; reads and ignores the client until its input ends;
//! - `close-stdout`: closes stdout, then reads and ignores the client until its input ends;
//! - `send LINE`: writes LINE as a frame, whatever it is (not JSON, an unknown method, an
//!   unknown enum value);
//! - `fingerprint VALUE`: serves VALUE as `schema.fingerprint` in the `initialize` result;
//! - `allow METHOD#POINTER`: from here on, lets the client's value there differ from the
//!   recording (see [`Allow`](super::Allow)).

use std::fmt;

use super::allow::Allow;

/// When a step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum When {
    /// Before the first frame.
    Start,
    /// Once the frame on this transcript line was sent, or received and matched.
    After(usize),
    /// After the last frame.
    End,
}

/// What a step does.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// Writes the text and a newline to stderr.
    Stderr(String),
    /// Exits with the code.
    Exit(i32),
    /// Stops answering: reads and ignores the client until its input ends, then exits 0.
    Stall,
    /// Closes stdout, then reads and ignores the client until its input ends.
    CloseStdout,
    /// Writes the line as a frame, as it is.
    Send(String),
    /// Serves this `schema.fingerprint` in the `initialize` result.
    Fingerprint(String),
    /// From here on, lets the client's value at this place differ from the recording.
    Allow(Allow),
}

/// The faults of a run, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    steps: Vec<(When, Fault)>,
}

/// A script line that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "script line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ScriptError {}

impl Script {
    /// No faults.
    pub fn new() -> Self {
        Script::default()
    }

    /// Adds a step.
    pub fn at(mut self, when: When, fault: Fault) -> Self {
        self.steps.push((when, fault));
        self
    }

    /// Adds a step once the frame on transcript line `line` has been played.
    pub fn after(self, line: usize, fault: Fault) -> Self {
        self.at(When::After(line), fault)
    }

    /// Parses script text (see the module docs).
    pub fn parse(text: &str) -> Result<Self, ScriptError> {
        let mut script = Script::new();
        for (index, line) in text.lines().enumerate() {
            let content = line.trim_start();
            if content.is_empty() || content.starts_with('#') {
                continue;
            }
            let step = parse_step(content).map_err(|message| ScriptError {
                line: index + 1,
                message,
            })?;
            script.steps.push(step);
        }
        Ok(script)
    }

    /// Adds the steps of `other` after these.
    pub fn extend(&mut self, other: Script) {
        self.steps.extend(other.steps);
    }

    /// The transcript lines the `after N` steps name.
    pub fn after_lines(&self) -> impl Iterator<Item = usize> + '_ {
        self.steps.iter().filter_map(|(when, _)| match when {
            When::After(line) => Some(*line),
            _ => None,
        })
    }

    /// The steps that run at `when`, in script order.
    pub fn steps_at(&self, when: When) -> impl Iterator<Item = &Fault> {
        self.steps
            .iter()
            .filter(move |(at, _)| *at == when)
            .map(|(_, fault)| fault)
    }
}

fn parse_step(line: &str) -> Result<(When, Fault), String> {
    let (when, what) = line
        .split_once(':')
        .ok_or("expected `WHEN: WHAT` (`start`, `end` or `after N`, then a fault)")?;
    let when = match when.trim() {
        "start" => When::Start,
        "end" => When::End,
        other => match other.strip_prefix("after").map(str::trim) {
            Some(n) => When::After(
                n.parse()
                    .map_err(|_| format!("`after` needs a transcript line number, got {n:?}"))?,
            ),
            None => {
                return Err(format!(
                    "unknown step time {other:?}: use start, end or after N"
                ))
            }
        },
    };
    let what = what.strip_prefix(' ').unwrap_or(what);
    let (verb, rest) = what.split_once(' ').unwrap_or((what, ""));
    let fault = match verb {
        "stderr" => Fault::Stderr(rest.to_owned()),
        "exit" => Fault::Exit(
            rest.trim()
                .parse()
                .map_err(|_| format!("`exit` needs an exit code, got {rest:?}"))?,
        ),
        "stall" => Fault::Stall,
        "close-stdout" => Fault::CloseStdout,
        "send" => Fault::Send(rest.to_owned()),
        "fingerprint" if !rest.trim().is_empty() => Fault::Fingerprint(rest.trim().to_owned()),
        "fingerprint" => return Err("`fingerprint` needs a value".into()),
        "allow" => Fault::Allow(Allow::parse(rest.trim())?),
        other => {
            return Err(format!(
                "unknown step {other:?}: use stderr, exit, stall, close-stdout, send, fingerprint or allow"
            ))
        }
    };
    Ok((when, fault))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse_and_bad_lines_are_named() {
        let script = Script::parse(
            "# faults\nstart: fingerprint sha256:ab\nafter 3: stderr two  spaces kept\nafter 3: send not json\nend: exit 4\nafter 9: stall\nafter 9: close-stdout\n",
        )
        .unwrap();
        assert_eq!(
            script.steps_at(When::After(3)).collect::<Vec<_>>(),
            vec![
                &Fault::Stderr("two  spaces kept".into()),
                &Fault::Send("not json".into())
            ]
        );
        assert_eq!(
            script.steps_at(When::End).collect::<Vec<_>>(),
            vec![&Fault::Exit(4)]
        );
        assert_eq!(
            script.steps_at(When::Start).collect::<Vec<_>>(),
            vec![&Fault::Fingerprint("sha256:ab".into())]
        );
        let allow = Script::parse("after 4: allow approval/decide#/choiceId").unwrap();
        let expected = Allow::parse("approval/decide#/choiceId").unwrap();
        assert_eq!(
            allow.steps_at(When::After(4)).collect::<Vec<_>>(),
            vec![&Fault::Allow(expected)]
        );
        assert!(Script::parse("start: allow nothing").is_err());
        let error = Script::parse("start: exit 0\nafter x: stall\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(Script::parse("end: explode").is_err());
        assert!(Script::parse("stall").is_err());
    }
}
