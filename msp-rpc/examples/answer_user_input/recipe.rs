//! The recipe on an msp-rpc connection: one handler for what the host asks, and each
//! question's life from re-issue to settlement.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use msp_rpc::blocking::Connection;
use msp_rpc::endpoint::codes::METHOD_NOT_FOUND;
use msp_rpc::{
    Command, ExitKind, HostCommand, HostExit, Inbound, Options as RpcOptions, Reply, RpcError,
    SpawnError, Traced,
};
use msp_types::protocol::{methods, notifications};
use msp_types::rpc::Id;
use msp_types::{
    ClientInfo, CommandStatus, InitializeParams, ItemKind, PendingRequestKind,
    ProtocolNotification, RequestReceipt, ServerRequest, SessionResumeParams, UserInputAnswer,
    UserInputAnswerParams, UserInputCancelParams, UserInputEngagedParams, UserInputInterruptParams,
    UserInputQuestion, UserInputRequestParams, UserInputSettledParams, ViewPageDirection,
    ViewPageParams,
};

use crate::cli::{Decision, HostChoice, Options};
use crate::deadline::Deadline;
use crate::labels::{Choice, OfferedLabel};
use crate::render::{describe_answers, describe_settlement, selection_text};

const CLIENT_NAME: &str = "answer_user_input";
const CLIENT_VERSION: &str = "0.1.0";
const PAGE_LIMIT: i64 = 200;
/// How long to wait for the host to re-issue a pending question, or to settle one.
const WAIT: Duration = Duration::from_secs(20);

/// Why a run stopped.
#[derive(Debug)]
pub enum Failure {
    Usage(String),
    /// A label that was not offered: nothing is sent, the question stays pending.
    Refused(String),
    Spawn(SpawnError),
    Rpc {
        step: &'static str,
        error: RpcError,
    },
    Host(HostExit),
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
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
            Failure::Spawn(error) => write!(f, "{error}"),
            Failure::Rpc { step, error } => write!(f, "{step}: {error}"),
            Failure::Host(exit) => write!(f, "{exit}"),
        }
    }
}

fn failed(step: &'static str) -> impl Fn(RpcError) -> Failure {
    move |error| Failure::Rpc { step, error }
}

/// A question this client was asked, kept until its settlement takes it down.
struct Prompt {
    params: UserInputRequestParams,
    request_id: Id,
    deadline: Deadline,
    open: bool,
}

/// A settling command this client sent: its id and the answers it carried.
struct Sent {
    command_id: String,
    answers: Vec<UserInputAnswer>,
}

struct Recipe {
    conn: Connection,
    /// The re-issued questions, from the request handler.
    asked: Receiver<(Id, UserInputRequestParams)>,
    prompts: Vec<Prompt>,
    /// userInputId -> the command this client sent to settle it.
    sent: HashMap<String, Sent>,
    results: Vec<String>,
}

/// The whole run: spawn the host, play the recipe, close in order, report.
pub fn run(options: &Options) -> Result<(), Failure> {
    let session = match &options.session {
        Some(session) => session.clone(),
        None => remembered_session(&options.transcript)
            .ok_or_else(|| Failure::Usage("no session to resume: pass --session ID".into()))?,
    };
    // The one handler for requests from the host. `userInput/request` gets the receipt ("a
    // client is showing this"; the answer travels separately); anything else an error reply,
    // so the host knows this client cannot handle it.
    let (tx, asked) = mpsc::channel();
    let mut rpc = RpcOptions::new().on_request(move |id, request| match request {
        ServerRequest::UserInputRequest(params) => {
            let _ = tx.send((id.clone(), *params));
            Reply::ok(&RequestReceipt::new())
        }
        other => {
            let method = other.method();
            println!("declined {method} (request {id}): this client only answers questions");
            Reply::with_code(
                METHOD_NOT_FOUND,
                format!("unhandled server request: {method}"),
            )
        }
    });
    if options.trace {
        rpc = rpc.trace(|way, line| match way {
            Traced::Sent => println!("> {line}"),
            Traced::Received => println!("< {line}"),
        });
    }
    let conn = Connection::spawn(&host_command(options)?, rpc).map_err(Failure::Spawn)?;
    let mut recipe = Recipe {
        conn,
        asked,
        prompts: Vec::new(),
        sent: HashMap::new(),
        results: Vec::new(),
    };
    let played = recipe.play(&options.decision, &session);
    let exit = recipe.conn.close();
    // What the host sent before it exited (the turn going on after the settlement).
    let conn = recipe.conn.clone();
    for inbound in conn.notifications() {
        recipe.on_inbound(inbound);
    }
    for prompt in recipe.prompts.iter().filter(|p| p.open) {
        let id = &prompt.params.user_input_id;
        recipe
            .results
            .push(format!("result: question {id} is still open"));
    }
    played?;
    for line in &recipe.results {
        println!("{line}");
    }
    match exit {
        Some(exit) if exit.kind != ExitKind::CleanShutdown => Err(Failure::Host(exit)),
        _ => Ok(()),
    }
}

impl Recipe {
    fn play(&mut self, decision: &Decision, session: &str) -> Result<(), Failure> {
        self.handshake()?;
        let pending = self.resume(session)?;
        self.take_reissued(&pending);
        self.page_view(session)?;
        while let Ok((id, params)) = self.asked.try_recv() {
            self.show(id, params);
        }
        for index in 0..self.prompts.len() {
            if self.prompts[index].open {
                self.decide(index, decision)?;
            }
        }
        self.wait_for_settlements();
        Ok(())
    }

    fn handshake(&mut self) -> Result<(), Failure> {
        let info = ClientInfo::builder()
            .name(CLIENT_NAME.to_owned())
            .version(CLIENT_VERSION.to_owned())
            .build();
        let hello = self
            .conn
            .initialize(&InitializeParams::builder().client_info(info).build())
            .map_err(failed("initialize"))?;
        let (name, version) = match hello.server_info() {
            Some(server) => (server.name, server.version),
            None => ("an unnamed host".to_owned(), String::new()),
        };
        let schema = hello.version;
        println!("connected to {name} {version} (schema {schema})");
        for warning in &hello.warnings {
            println!("warning: {warning}");
        }
        Ok(())
    }

    /// Joins a session this client did not create. `excludeItems`: history is paged later.
    /// The questions waiting in it, by id.
    fn resume(&mut self, session_id: &str) -> Result<Vec<String>, Failure> {
        let resume = Command::<methods::SessionResume>::new(|command_id| {
            let mut params = SessionResumeParams::builder()
                .command_id(command_id)
                .session_id(session_id.to_owned())
                .build();
            params.exclude_items = Some(true);
            params
        });
        let result = self
            .conn
            .command(&resume)
            .map_err(failed("session/resume"))?;
        let session = &result.session;
        let turn = match &session.active_turn_id {
            Some(turn) => format!(", turn {turn} in progress"),
            None => String::new(),
        };
        println!(
            "resumed session {}: {}{turn}",
            session.session_id, session.status
        );
        if result.pending_requests.is_empty() {
            println!("pending: nothing");
        }
        let mut questions = Vec::new();
        for entry in &result.pending_requests {
            match (&entry.kind, &entry.user_input_id) {
                (PendingRequestKind::UserInput, Some(id)) => {
                    println!("pending: question {id}");
                    questions.push(id.clone());
                }
                (kind, _) => println!("pending: {kind} (not a question, skipped)"),
            }
        }
        Ok(questions)
    }

    /// The host re-issues each pending question to a client that joins: match them up.
    fn take_reissued(&mut self, pending: &[String]) {
        let until = Instant::now() + WAIT;
        while pending.iter().any(|id| self.prompt(id).is_none()) {
            let left = until.saturating_duration_since(Instant::now());
            match self.asked.recv_timeout(left) {
                Ok((request_id, params)) => self.show(request_id, params),
                Err(_) => break,
            }
        }
        for id in pending {
            match self.prompt(id) {
                Some(prompt) => println!(
                    "pending question {id} matches re-issued request {}",
                    prompt.request_id
                ),
                None => println!("pending question {id} was not re-issued"),
            }
        }
    }

    /// Backfills the view, where the question sits right after the tool call that asked.
    fn page_view(&mut self, session_id: &str) -> Result<(), Failure> {
        let mut params = ViewPageParams::builder()
            .limit(PAGE_LIMIT)
            .session_id(session_id.to_owned())
            .build();
        params.direction = Some(ViewPageDirection::Forward);
        let page = self
            .conn
            .request::<methods::ViewPage>(&params)
            .map_err(failed("view/page"))?;
        for event in page.events {
            let params = serde_json::to_value(&event.params).ok();
            match ProtocolNotification::decode(&event.method, params) {
                Ok(event) => self.on_event(event),
                Err(error) => println!("view: an event that does not decode: {error}"),
            }
        }
        if let Some(cursor) = page.next_cursor {
            println!("view: more events after {cursor}");
        }
        Ok(())
    }

    /// Acts on the user's decision for prompt `index`, sending only offered labels.
    fn decide(&mut self, index: usize, decision: &Decision) -> Result<(), Failure> {
        let params = self.prompts[index].params.clone();
        let (session, id) = (params.session_id.clone(), params.user_input_id.clone());
        if self.prompts[index].deadline.passed(Instant::now()) {
            println!(
                "question {id}: the answer window has passed; not answering, the host settles it"
            );
            return Ok(());
        }
        // Every label is checked before anything is sent.
        let (what, ack) = match decision {
            Decision::Answer(texts) => {
                let answers = choose(&params.questions, texts, params.questions.len())?;
                println!("answer: {}", describe_answers(&params.questions, &answers));
                let command = Command::<methods::UserInputAnswerMethod>::new(|command_id| {
                    UserInputAnswerParams::builder()
                        .answers(answers.clone())
                        .command_id(command_id)
                        .session_id(session)
                        .user_input_id(id.clone())
                        .build()
                });
                self.remember(&id, command.command_id(), &answers);
                let ack = self.conn.command(&command);
                ("answer", ack.map(|a| (a.status, a.user_input_id)))
            }
            Decision::Cancel(reason) => {
                println!("cancel: {reason}");
                let command = Command::<methods::UserInputCancel>::new(|command_id| {
                    let mut params = UserInputCancelParams::builder()
                        .command_id(command_id)
                        .session_id(session)
                        .user_input_id(id.clone())
                        .build();
                    params.reason = Some(reason.clone());
                    params
                });
                self.remember(&id, command.command_id(), &[]);
                let ack = self.conn.command(&command);
                ("cancellation", ack.map(|a| (a.status, a.user_input_id)))
            }
            Decision::Interrupt(texts) => {
                let confirmed = texts.len().max(1).min(params.questions.len());
                let answers = choose(&params.questions, texts, confirmed)?;
                let engaged = UserInputEngagedParams::builder()
                    .session_id(session.clone())
                    .user_input_id(id.clone())
                    .build();
                self.conn
                    .notify::<notifications::UserInputEngaged>(&engaged)
                    .map_err(failed("userInput/engaged"))?;
                self.prompts[index].deadline.stop();
                println!("engaged: the host stops the countdown");
                println!(
                    "interrupt, keeping: {}",
                    describe_answers(&params.questions, &answers)
                );
                let command = Command::<methods::UserInputInterrupt>::new(|command_id| {
                    let mut params = UserInputInterruptParams::builder()
                        .command_id(command_id)
                        .session_id(session)
                        .user_input_id(id.clone())
                        .build();
                    params.answers = Some(answers.clone());
                    params
                });
                self.remember(&id, command.command_id(), &answers);
                let ack = self.conn.command(&command);
                ("interruption", ack.map(|a| (a.status, a.user_input_id)))
            }
        };
        match ack {
            Ok((CommandStatus::Accepted, echoed)) if echoed == id => println!(
                "host accepted the {what} (a receipt, not the outcome); waiting for userInput/settled"
            ),
            Ok((status, echoed)) => {
                println!("host answered the {what} with status {status} for question {echoed}")
            }
            // Too late, or refused: the settlement says how the question ended.
            Err(RpcError::Remote(refusal)) => println!("host refused the {what}: {}", refusal.error),
            Err(error) => return Err(Failure::Rpc { step: "the decision", error }),
        }
        Ok(())
    }

    fn remember(&mut self, id: &str, command_id: &str, answers: &[UserInputAnswer]) {
        let sent = Sent {
            command_id: command_id.to_owned(),
            answers: answers.to_vec(),
        };
        self.sent.insert(id.to_owned(), sent);
    }

    /// Reads the view live until every question shown here has settled.
    fn wait_for_settlements(&mut self) {
        let until = Instant::now() + WAIT;
        while self.prompts.iter().any(|p| p.open) {
            let left = until.saturating_duration_since(Instant::now());
            match self.conn.next_timeout(left) {
                Some(inbound) => self.on_inbound(inbound),
                None => return,
            }
        }
    }

    fn prompt(&self, id: &str) -> Option<&Prompt> {
        self.prompts.iter().find(|p| p.params.user_input_id == id)
    }

    /// Puts a question in front of the user.
    fn show(&mut self, request_id: Id, params: UserInputRequestParams) {
        let window = match params.auto_resolution_ms {
            Some(ms) if ms % 1000 == 0 => format!("answer within {} s", ms / 1000),
            Some(ms) => format!("answer within {ms} ms"),
            None => "no deadline".to_owned(),
        };
        println!(
            "question {} (request {request_id}), {window}:",
            params.user_input_id
        );
        for question in &params.questions {
            let selection = selection_text(&question.selection);
            println!("  {}: {} ({selection})", question.header, question.question);
            for option in &question.options {
                match &option.description {
                    Some(why) => println!("    - {}: {why}", option.label),
                    None => println!("    - {}", option.label),
                }
            }
        }
        println!("receipt: showing question {}", params.user_input_id);
        let prompt = Prompt {
            deadline: Deadline::after(Instant::now(), params.auto_resolution_ms),
            params,
            request_id,
            open: true,
        };
        // Asked again (another re-issue): show the latest copy in the same place.
        let id = &prompt.params.user_input_id;
        match self
            .prompts
            .iter()
            .position(|p| p.params.user_input_id == *id)
        {
            Some(index) => self.prompts[index] = prompt,
            None => self.prompts.push(prompt),
        }
    }

    fn on_inbound(&mut self, inbound: Inbound) {
        match inbound {
            Inbound::Notification { notification, .. } => self.on_event(notification),
            Inbound::Undecodable(frame) => {
                println!("skipped a frame that does not decode: {frame}")
            }
        }
    }

    /// View events, live or paged. Only those this recipe is about are shown.
    fn on_event(&mut self, event: ProtocolNotification) {
        match event {
            ProtocolNotification::UserInputSettled(params) => self.on_settled(*params),
            ProtocolNotification::UserInputRequested(params) => {
                let id = &params.user_input_id;
                let note = match self.prompt(id) {
                    Some(_) => "shown above",
                    None => "waiting for its userInput/request",
                };
                println!("view: question {id} asked here ({note})");
            }
            ProtocolNotification::ItemStarted(params) if params.item.kind == ItemKind::ToolCall => {
                let tool = params.item.tool.as_deref().unwrap_or("?");
                println!("view: tool call {tool} {}", params.item.status);
            }
            ProtocolNotification::ItemCompleted(params) => {
                let item = &params.item;
                match item.kind {
                    ItemKind::UserMessage => {
                        println!(
                            "view: user message {:?}",
                            item.text.as_deref().unwrap_or_default()
                        )
                    }
                    ItemKind::ToolCall => {
                        let tool = item.tool.as_deref().unwrap_or("?");
                        let output = item.visible_output.as_deref().unwrap_or_default();
                        println!("view: tool call {tool} {}: {output}", item.status);
                    }
                    _ => {}
                }
            }
            ProtocolNotification::TurnCompleted(params) => {
                let reason = match &params.reason {
                    Some(reason) => format!(" ({reason})"),
                    None => String::new(),
                };
                println!("view: turn {}{reason}", params.terminal);
            }
            _ => {}
        }
    }

    /// A question ended. The settlement goes to every client, so it may be another
    /// client's doing, the host's (no command: timed out, aborted), or about a question
    /// this client never saw.
    fn on_settled(&mut self, settled: UserInputSettledParams) {
        let id = &settled.user_input_id;
        let sent = self.sent.get(id);
        let by_me =
            sent.is_some_and(|s| settled.decided_by_command_id.as_ref() == Some(&s.command_id));
        let by = match (&settled.decided_by_command_id, by_me) {
            (Some(_), true) => "this client".to_owned(),
            (Some(by), false) => format!("another client (command {by})"),
            (None, _) => "the host (no command)".to_owned(),
        };
        let Some(prompt) = self
            .prompts
            .iter_mut()
            .find(|p| p.params.user_input_id == *id)
        else {
            let summary = format!(
                "{} by {by}{}",
                settled.outcome,
                describe_settlement(&[], &settled)
            );
            println!("settled: question {id}, never shown here: {summary}; nothing to take down");
            return;
        };
        let questions = &prompt.params.questions;
        let summary = format!(
            "{} by {by}{}",
            settled.outcome,
            describe_settlement(questions, &settled)
        );
        if !prompt.open {
            println!("settled again: question {id}: {summary}");
            return;
        }
        prompt.open = false;
        match sent {
            Some(sent) if by_me => {
                println!("settled: {}, by this client's command", settled.outcome);
                if sent.answers != settled.answers {
                    let ours = describe_answers(questions, &sent.answers);
                    println!(
                        "note: the host recorded other answers than this client sent ({ours})"
                    );
                }
            }
            _ => println!(
                "settled: {} by {by}; taking question {id} down",
                settled.outcome
            ),
        }
        self.results.push(format!("result: {summary}"));
    }
}

/// Answers for the first `count` questions, made of offered labels only: the user's text
/// where given, else the question's first option. Nothing is sent when a label was not
/// offered.
fn choose(
    questions: &[UserInputQuestion],
    texts: &[String],
    count: usize,
) -> Result<Vec<UserInputAnswer>, Failure> {
    if texts.len() > questions.len() {
        let message = format!(
            "{} labels given for {} question(s)",
            texts.len(),
            questions.len()
        );
        return Err(Failure::Usage(message));
    }
    let mut answers = Vec::new();
    for (index, question) in questions.iter().take(count).enumerate() {
        let label = match texts.get(index) {
            Some(text) => OfferedLabel::pick(question, text),
            None => OfferedLabel::first(question),
        };
        let label = label.map_err(|e| Failure::Refused(e.to_string()))?;
        let choice = Choice::new(question, vec![label]).map_err(Failure::Refused)?;
        answers.push(choice.to_answer());
    }
    Ok(answers)
}

/// The host to spawn: `muse serve`, or the canned host playing the transcript.
fn host_command(options: &Options) -> Result<HostCommand, Failure> {
    let HostChoice::Canned { binary, args } = &options.host else {
        return Ok(HostCommand::muse());
    };
    let binary = binary
        .clone()
        .or_else(|| std::env::var_os("MSP_CANNED_HOST").map(PathBuf::from))
        .or_else(canned_host_beside_this_program)
        .ok_or_else(|| {
            Failure::Usage(
                "msp-canned-host not found next to this program: build it with \
                 `cargo build -p msp-rpc --features canned-host --bin msp-canned-host`, or pass --host PATH"
                    .into(),
            )
        })?;
    Ok(HostCommand::new(binary).args(args).arg(&options.transcript))
}

/// `target/debug/msp-canned-host`, for this program in `target/debug/examples/`.
fn canned_host_beside_this_program() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let name = format!("msp-canned-host{}", std::env::consts::EXE_SUFFIX);
    let examples = exe.parent()?;
    [examples.join(&name), examples.parent()?.join(&name)]
        .into_iter()
        .find(|path| path.is_file())
}

/// The session the recorded client resumed: what a real client would remember from its
/// last run.
fn remembered_session(transcript: &Path) -> Option<String> {
    let file = match transcript.is_dir() {
        true => transcript.join("transcript.ndjson"),
        false => transcript.to_path_buf(),
    };
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|line| {
        let entry: serde_json::Value = serde_json::from_str(line).ok()?;
        let frame: serde_json::Value = serde_json::from_str(entry.get("raw")?.as_str()?).ok()?;
        let resumes = entry["dir"] == "client" && frame["method"] == "session/resume";
        resumes.then(|| {
            frame
                .pointer("/params/sessionId")?
                .as_str()
                .map(str::to_owned)
        })?
    })
}
