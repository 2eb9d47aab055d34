//! Every shared transcript played to the end through the session API, against the canned
//! host: as a child process, through the blocking client and through the tokio client, and
//! on a thread of this process over in-memory pipes. The recorded client's requests become
//! session calls (a resume, a turn, a decision checked against the offered choices, an
//! answer checked against the offered labels, a goal, ...) with fresh ids; `view/page` is
//! left to the session's own gap refill; the host's requests are answered by the client.
//! Each run waits until the last recorded view event reached its session, checks that each
//! session's events are the host's frames naming it (its requests among its notifications)
//! in wire order, and that each turn, prompt and approval the recording ends comes to the
//! same end through the session API, then closes: the host must have played its recording
//! to the end.

mod support;

#[path = "scenarios/driver.rs"]
mod driver;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use driver::Driver;
use msp_client::{Answer, Error, Event, SettledBy, TurnOutcome};
use msp_rpc::{new_command_id, Command};
use msp_session::Input;
use msp_types::protocol::methods;
use msp_types::rpc::Request;
use msp_types::{Frame, InitializeParams, Message, Sender, UserInputAnswer};
use serde_json::Value;

const WAIT: Option<Duration> = Some(Duration::from_secs(20));

/// The refill is the session's own walk, not the recorded client's: where a page starts (a
/// cursor or an anchor) is its choice, and a member of a future schema the recorded client
/// sent (`futureOptionalField`) is none this client knows. Every other value is compared.
const REFILL_WALK: &[&str] = &[
    "view/page#/cursor",
    "view/page#/anchor",
    "view/page#/futureOptionalField",
];

#[test]
fn every_shared_scenario_plays_to_the_end_through_the_session_api() {
    play_every_scenario(driver::Blocking::connect);
}

#[test]
fn every_shared_scenario_plays_to_the_end_over_in_memory_pipes() {
    play_every_scenario(driver::Blocking::in_memory);
}

#[cfg(feature = "tokio")]
#[test]
fn every_shared_scenario_plays_to_the_end_through_the_session_api_on_tokio() {
    play_every_scenario(driver::OnTokio::connect);
}

/// Plays every shared scenario through driver `D`, each connected by `connect`, and checks
/// that the ends the corpus has are each met at least once.
fn play_every_scenario<D: Driver>(connect: Connect<D>) {
    let Some(dir) = support::transcripts() else {
        eprintln!("skipped: MSP_SHARED_DIR is not set to the shared material");
        return;
    };
    let mut scenarios: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("transcript.ndjson").is_file())
        .collect();
    scenarios.sort();
    assert_eq!(scenarios.len(), 47, "the shared corpus");
    let mut failed = Vec::new();
    let mut ends = std::collections::BTreeMap::new();
    for scenario in &scenarios {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        match play(scenario, connect) {
            Ok((calls, checked)) => {
                println!(
                    "{name}: played ({calls} session calls, {} ends)",
                    checked.len()
                );
                for end in checked {
                    *ends.entry(end).or_insert(0) += 1;
                }
            }
            Err(why) => failed.push(format!("{name}: {why}")),
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    println!("ends checked: {ends:#?}");
    // What the corpus ends with, each checked at least once.
    for end in [
        r#"turn/completed "completed""#,
        r#"turn/completed "failed""#,
        r#"turn/completed "cancelled""#,
        "turn/unqueued",
        r#"userInput/settled "answered" by this client"#,
        r#"userInput/settled "cancelled" by this client"#,
        r#"userInput/settled "interrupted" by this client"#,
        r#"approval/resolved "approvedForSession""#,
        r#"approval/resolved "abort""#,
        "a request in wire order among its session's events",
    ] {
        assert!(ends.contains_key(end), "{end} checked: {ends:?}");
    }
}

/// How a driver connects to the canned host playing a scenario ([`Driver::connect`]).
type Connect<D> = fn(&Path, &[&str], msp_client::Options) -> Result<D, Error>;

/// One recorded frame: its direction and its JSON.
struct Recorded {
    client: bool,
    frame: Value,
}

fn load(scenario: &Path) -> Vec<Recorded> {
    std::fs::read_to_string(scenario.join("transcript.ndjson"))
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            let raw = line["raw"].as_str().unwrap_or_default();
            Recorded {
                client: line["dir"] == "client",
                frame: serde_json::from_str(raw.trim_end_matches('\r')).unwrap_or(Value::Null),
            }
        })
        .collect()
}

struct Player<D: Driver> {
    client: D,
    sessions: HashMap<String, D::Session>,
    /// Recorded `commandId` -> the one minted for it, so that a recorded replay is one.
    command_ids: HashMap<String, String>,
    calls: usize,
    /// Each session's events taken so far, in order.
    taken: HashMap<String, Vec<Event>>,
}

/// Plays `scenario`: the session calls made, and the ends checked (see
/// [`Player::check_ends`]).
fn play<D: Driver>(scenario: &Path, connect: Connect<D>) -> Result<(usize, Vec<String>), String> {
    let recorded = load(scenario);
    let initialize = recorded
        .iter()
        .find(|r| r.client && r.frame["method"] == "initialize")
        .map(|r| serde_json::from_value::<InitializeParams>(r.frame["params"].clone()).unwrap());
    let mut options = support::options();
    if let Some(initialize) = initialize {
        options = options.initialize(initialize);
    }
    let client = connect(scenario, REFILL_WALK, options).map_err(|e| format!("connect: {e}"))?;
    let mut player = Player {
        client,
        sessions: HashMap::new(),
        command_ids: HashMap::new(),
        calls: 0,
        taken: HashMap::new(),
    };
    for r in recorded.iter().filter(|r| r.client) {
        let Some(method) = r.frame["method"].as_str() else {
            continue; // a reply to the host's request: the client sends its own
        };
        if matches!(method, "initialize" | "initialized" | "view/page") {
            continue;
        }
        player
            .call(method, &r.frame["params"])
            .map_err(|e| format!("{method}: {e}"))?;
    }
    player.take_every_event(&recorded)?;
    let mut ends = player.check_wire_order(&recorded)?;
    ends.extend(player.check_ends(&recorded)?);
    let calls = player.calls;
    drop(player.sessions);
    player.client.close()?;
    Ok((calls, ends))
}

fn with_command_id<P: serde::de::DeserializeOwned>(params: &Value, command_id: &str) -> P {
    let mut params = params.clone();
    if params.get("commandId").is_some() {
        params["commandId"] = command_id.into();
    }
    serde_json::from_value(params).expect("recorded params decode")
}

impl<D: Driver> Player<D> {
    fn command_id(&mut self, params: &Value) -> String {
        let recorded = params["commandId"].as_str().unwrap_or_default().to_owned();
        self.command_ids
            .entry(recorded)
            .or_insert_with(new_command_id)
            .clone()
    }

    fn session(&mut self, params: &Value) -> Result<D::Session, String> {
        let id = params["sessionId"].as_str().ok_or("no sessionId")?;
        if let Some(session) = self.sessions.get(id) {
            return Ok(session.clone());
        }
        let session = self.client.open_session(id);
        self.sessions.insert(id.to_owned(), session.clone());
        Ok(session)
    }

    /// Sends a command of a session as recorded, its `commandId` mapped.
    fn send<M: Request>(&mut self, params: &Value) -> Result<(), String>
    where
        msp_rpc::Client: msp_rpc::endpoint::Sends<M>,
    {
        let session = self.session(params)?;
        let command_id = self.command_id(params);
        let command = Command::<M>::with_id(command_id, |id| with_command_id(params, &id));
        accept_remote(self.client.send(&session, &command))
    }

    fn call(&mut self, method: &str, params: &Value) -> Result<(), String> {
        self.calls += 1;
        let answers = |params: &Value| -> Vec<Answer> {
            serde_json::from_value::<Vec<UserInputAnswer>>(params["answers"].clone())
                .unwrap_or_default()
                .into_iter()
                .map(Answer::from)
                .collect()
        };
        match method {
            "session/start" => {
                let session = self
                    .client
                    .start_session(|id| with_command_id(params, &id))
                    .map_err(|e| e.to_string())?;
                self.sessions.insert(D::id(&session), session);
            }
            "session/resume" => match self
                .client
                .resume_session(|id| with_command_id(params, &id))
            {
                Ok(session) => {
                    self.sessions.insert(D::id(&session), session);
                }
                Err(e) => accept_remote(Err(e))?,
            },
            "view/subscribe" => {
                self.session(params)?;
                let params = serde_json::from_value(params.clone()).unwrap();
                accept_remote(self.client.request::<methods::ViewSubscribe>(&params))?;
            }
            "turn/start" => {
                let session = self.session(params)?;
                let command_id = self.command_id(params);
                let build = |_| with_command_id(params, &command_id);
                accept_remote(self.client.start_turn(&session, build))?;
            }
            "approval/decide" => {
                let session = self.session(params)?;
                let approval = self
                    .client
                    .next_approval(&session)
                    .map_err(|e| e.to_string())?;
                assert_eq!(approval.id(), params["approvalId"], "the approval asked");
                let feedback = params["feedback"].as_str();
                let choice = params["choiceId"].as_str().unwrap();
                accept_remote(self.client.decide(&session, &approval, choice, feedback))?;
            }
            "userInput/answer" => {
                let session = self.session(params)?;
                let prompt = self
                    .client
                    .next_prompt(&session)
                    .map_err(|e| e.to_string())?;
                assert_eq!(prompt.id(), params["userInputId"], "the question asked");
                accept_remote(self.client.answer(&session, prompt.id(), answers(params)))?;
            }
            "userInput/cancel" => {
                let session = self.session(params)?;
                let prompt = self
                    .client
                    .next_prompt(&session)
                    .map_err(|e| e.to_string())?;
                let reason = params["reason"].as_str();
                accept_remote(self.client.cancel_prompt(&session, prompt.id(), reason))?;
            }
            "userInput/interrupt" => {
                let session = self.session(params)?;
                let id = params["userInputId"].as_str().unwrap();
                // Answers are checked against the questions: wait for them to arrive.
                self.client.asked(&session, id).map_err(|e| e.to_string())?;
                accept_remote(self.client.interrupt_prompt(&session, id, answers(params)))?;
            }
            "userInput/engaged" => {
                let session = self.session(params)?;
                self.client
                    .engaged(&session, params["userInputId"].as_str().unwrap())
                    .map_err(|e| e.to_string())?;
            }
            "turn/interrupt" => {
                let session = self.session(params)?;
                let turn = params["turnId"].as_str();
                let retract = params["retract"].as_bool().unwrap_or(false);
                accept_remote(self.client.interrupt(&session, turn, retract))?;
            }
            "turn/unqueue" => {
                let session = self.session(params)?;
                accept_remote(
                    self.client
                        .unqueue(&session, params["turnId"].as_str().unwrap()),
                )?;
            }
            "model/list" => {
                let params = serde_json::from_value(params.clone()).unwrap();
                accept_remote(self.client.request::<methods::ModelList>(&params))?;
            }
            "goal/set" => self.send::<methods::GoalSet>(params)?,
            "goal/edit" => self.send::<methods::GoalEdit>(params)?,
            "goal/pause" => self.send::<methods::GoalPause>(params)?,
            "goal/resume" => self.send::<methods::GoalResume>(params)?,
            "goal/clear" => self.send::<methods::GoalClear>(params)?,
            "session/compact" => {
                let session = self.session(params)?;
                accept_remote(self.client.compact(&session, params["turnId"].as_str()))?;
            }
            "session/setModel" => {
                let session = self.session(params)?;
                let model = serde_json::from_value(params["model"].clone()).unwrap();
                accept_remote(self.client.set_model(&session, model))?;
            }
            "session/userShell" => self.send::<methods::SessionUserShell>(params)?,
            "subagent/close" => self.send::<methods::SubagentClose>(params)?,
            "subagent/sendMessage" => self.send::<methods::SubagentSendMessage>(params)?,
            "subagent/stop" => self.send::<methods::SubagentStop>(params)?,
            "subagent/readResult" => self.send::<methods::SubagentReadResult>(params)?,
            "workflow/cancel" => self.send::<methods::WorkflowCancel>(params)?,
            "workflow/childControl" => self.send::<methods::WorkflowChildControl>(params)?,
            other => return Err(format!("no session call for {other}")),
        }
        Ok(())
    }

    /// Takes each opened session's events until every frame the host sent naming it was
    /// routed to it (a `Folded` event each), for [`Player::check_wire_order`].
    fn take_every_event(&mut self, recorded: &[Recorded]) -> Result<(), String> {
        for (id, session) in &self.sessions {
            let sent = recorded
                .iter()
                .filter(|r| !r.client && names(&r.frame) == Some(id.as_str()))
                .count();
            let taken = self.taken.entry(id.clone()).or_default();
            let mut folded = 0;
            while folded < sent {
                match self.client.next_event(session, WAIT.unwrap()) {
                    Ok(Some(event)) => {
                        folded += usize::from(matches!(event, Event::Folded { .. }));
                        taken.push(event);
                    }
                    Ok(None) => return Err(format!("session {id}: closed after {folded} frames")),
                    Err(e) => return Err(format!("session {id}: {folded} of {sent} frames: {e}")),
                }
            }
        }
        Ok(())
    }
}

impl<D: Driver> Player<D> {
    /// Each session's events ([`Player::take_every_event`]) are the host's frames that name
    /// it, requests and notifications alike, every one in the order the recording has them
    /// (a page's outcomes come as one `Refilled` event, between the frames around it). A
    /// check noted for each request found there.
    fn check_wire_order(&mut self, recorded: &[Recorded]) -> Result<Vec<String>, String> {
        let mut checked = Vec::new();
        for id in self.sessions.keys() {
            let taken = self.taken.entry(id.clone()).or_default();
            let mut wire = recorded
                .iter()
                .filter(|r| !r.client && names(&r.frame) == Some(id.as_str()));
            for (n, event) in taken.iter().enumerate() {
                let input = match event {
                    Event::Folded { input, .. } => input,
                    Event::Refilled { .. } => continue,
                    other => return Err(format!("session {id}: event {n} is {other:?}")),
                };
                let Some(frame) = wire.next().map(|r| &r.frame) else {
                    return Err(format!("session {id}: event {n} was never sent"));
                };
                let same = input.method() == frame["method"].as_str()
                    && input
                        .view_cursor()
                        .map_or(true, |cursor| frame["params"]["viewCursor"] == cursor);
                if !same {
                    return Err(format!(
                        "session {id}: event {n} is {:?} at {:?}, the wire's is {} at {}",
                        input.method(),
                        input.view_cursor(),
                        frame["method"],
                        frame["params"]["viewCursor"]
                    ));
                }
                if matches!(**input, Input::Request(_)) {
                    checked.push("a request in wire order among its session's events".to_owned());
                }
            }
            if let Some(r) = wire.next() {
                return Err(format!("session {id}: {} never came", r.frame["method"]));
            }
        }
        Ok(checked)
    }

    /// Each turn, prompt and approval the recording ends in an opened session ends the same
    /// through the session API: a turn's outcome and terminal, a prompt's outcome and who
    /// settled it (this client when the recorded `decidedByCommandId` is a command the
    /// recorded client sent, the host when it is `null`), an approval's decision.
    fn check_ends(&self, recorded: &[Recorded]) -> Result<Vec<String>, String> {
        let mut checked = Vec::new();
        let sent: Vec<&Value> = recorded
            .iter()
            .filter(|r| r.client)
            .filter_map(|r| r.frame["params"].get("commandId"))
            .collect();
        for r in recorded
            .iter()
            .filter(|r| !r.client && r.frame.get("id").is_none())
        {
            let params = &r.frame["params"];
            let Some(session) = params["sessionId"]
                .as_str()
                .and_then(|id| self.sessions.get(id))
            else {
                continue;
            };
            // The canned host gives a recorded `commandId` quoted anywhere (a turn's id is
            // its `turn/start`'s) as the one this client sent in its place.
            let text = |value: &Value| {
                let text = value.as_str().unwrap_or_default();
                self.command_ids
                    .get(text)
                    .map_or(text, String::as_str)
                    .to_owned()
            };
            match r.frame["method"].as_str().unwrap_or_default() {
                "turn/completed" | "turn/unqueued" | "turn/retracted" => {
                    let turn_id = text(&params["turnId"]);
                    let outcome = self
                        .client
                        .turn_outcome(session, &turn_id)
                        .map_err(|e| format!("turn {turn_id}: {e}"))?;
                    let ended = match &outcome {
                        TurnOutcome::Ended(ended) => {
                            format!("turn/completed {}", wire(&ended.terminal))
                        }
                        TurnOutcome::Unqueued => "turn/unqueued".to_owned(),
                        TurnOutcome::Retracted => "turn/retracted".to_owned(),
                        other => format!("{other:?}"),
                    };
                    let expected = match r.frame["method"].as_str() {
                        Some("turn/completed") => format!("turn/completed {}", params["terminal"]),
                        Some(method) => method.to_owned(),
                        None => unreachable!(),
                    };
                    if ended != expected {
                        return Err(format!("turn {turn_id}: {ended}, recorded {expected}"));
                    }
                    checked.push(ended);
                }
                "userInput/settled" => {
                    let id = text(&params["userInputId"]);
                    let settled = self
                        .client
                        .settled(session, &id)
                        .map_err(|e| format!("prompt {id}: {e}"))?;
                    let by = &params["decidedByCommandId"];
                    let who = match &settled.by {
                        SettledBy::ThisClient(_) => "this client",
                        SettledBy::Elsewhere(_) => "elsewhere",
                        SettledBy::Host => "the host",
                        _ => "unknown",
                    };
                    let expected = match by {
                        Value::Null => "the host",
                        id if sent.contains(&id) => "this client",
                        _ => "elsewhere",
                    };
                    let outcome = wire(&settled.params.outcome);
                    if outcome != params["outcome"] || who != expected {
                        return Err(format!(
                            "prompt {id}: {outcome} by {who}, recorded {} by {expected}",
                            params["outcome"]
                        ));
                    }
                    checked.push(format!("userInput/settled {outcome} by {who}"));
                }
                "approval/resolved" => {
                    let id = text(&params["approvalId"]);
                    let resolved = self
                        .client
                        .resolved(session, &id)
                        .map_err(|e| format!("approval {id}: {e}"))?;
                    if wire(&resolved.decision) != params["decision"] {
                        return Err(format!(
                            "approval {id}: {}, recorded {}",
                            wire(&resolved.decision),
                            params["decision"]
                        ));
                    }
                    checked.push(format!("approval/resolved {}", params["decision"]));
                }
                _ => {}
            }
        }
        Ok(checked)
    }
}

/// The session a host frame is routed to, as the client reads it: a request or a
/// notification of a known method that names one (a frame that does not decode, by its
/// `params.sessionId`).
fn names(frame: &Value) -> Option<&str> {
    frame["method"].as_str()?;
    let params = &frame["params"];
    match Frame::parse(Sender::Server, &frame.to_string()).map(|frame| frame.message) {
        Ok(Message::Notification(n)) => Input::Notification(n).session_id().map(drop),
        Ok(Message::ServerRequest { request, .. }) => {
            Input::Request(request).session_id().map(drop)
        }
        // A frame that does not decode: its `params.sessionId` only.
        _ => return params["sessionId"].as_str(),
    }?;
    params["sessionId"]
        .as_str()
        .or(params["session"]["sessionId"].as_str())
}

/// `value` as the wire has it.
fn wire(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).expect("a protocol value encodes")
}

/// A command the host refused as the recording has it (an error response) is played too.
fn accept_remote(result: Result<(), Error>) -> Result<(), String> {
    match result {
        Ok(()) | Err(Error::Rpc(msp_rpc::RpcError::Remote(_))) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}
