//! The streamed turn's frames, for the session bench and the comparison with the official SDK:
//! the corpus' server notifications but `view/gap` (a gap makes a session page, and a bench's
//! host answers nothing), the ids and cursors of each scenario of each repetition made its
//! own and every frame naming one session, so that each frame is new to a fold (scenarios
//! reuse ids and cursors such as `v:s:1`: in one session a later scenario's frames would be
//! repeats of an earlier one's).

use serde_json::Value;

use crate::corpus::{self, Corpus, Dir};

/// The members whose values name something of one repetition.
const OWN: [&str; 7] = [
    "itemId",
    "turnId",
    "approvalId",
    "userInputId",
    "viewCursor",
    "commandId",
    "taskId",
];

/// The corpus' server notifications but `view/gap`, each with its scenario.
pub fn frames(corpus: &Corpus) -> Vec<(&str, Value)> {
    corpus
        .lines
        .iter()
        .filter(|l| l.dir == Some(Dir::Server) && l.kind == corpus::Kind::Notification)
        .filter_map(|l| {
            let frame = serde_json::from_str::<Value>(l.raw.trim_end_matches('\r')).ok()?;
            let scenario = l.source.split(':').next().unwrap_or_default();
            Some((scenario, frame))
        })
        .filter(|(_, frame)| frame["method"] != "view/gap")
        .collect()
}

/// `frame` of `scenario` as repetition `n` sends it to `session`: a line, without its `\n`.
pub fn line(frame: &Value, scenario: &str, n: usize, session: &str) -> String {
    let mut frame = frame.clone();
    own(&mut frame, &format!("r{n}.{scenario}-"), session);
    frame.to_string()
}

/// `repeat` repetitions of `frames` naming `session`, a line each.
pub fn lines(frames: &[(&str, Value)], repeat: usize, session: &str) -> Vec<String> {
    (0..repeat)
        .flat_map(|n| {
            frames
                .iter()
                .map(move |(scenario, frame)| line(frame, scenario, n, session))
        })
        .collect()
}

/// `value` with every id of [`OWN`] prefixed by `prefix`, and every session named `session`.
fn own(value: &mut Value, prefix: &str, session: &str) {
    match value {
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                match member {
                    Value::String(text) if key == "sessionId" => *text = session.to_owned(),
                    Value::String(text) if OWN.contains(&key.as_str()) => {
                        *text = format!("{prefix}{text}")
                    }
                    other => own(other, prefix, session),
                }
            }
        }
        Value::Array(values) => values.iter_mut().for_each(|v| own(v, prefix, session)),
        _ => {}
    }
}
