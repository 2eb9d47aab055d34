//! The client: typed requests over the canned host, one handler for everything the host
//! asks, and each question's life from re-issue to settlement.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::io::Write;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use msp_types::protocol::{methods, notifications, requests};
use msp_types::rpc::{decode_payload, Id, Notification, PendingRequests, RawFrame, Request};
use msp_types::{
    ClientInfo, CommandStatus, ErrorObject, Frame, InitializeParams, ItemKind, Message,
    ModelListParams, PendingRequestKind, ProtocolNotification, RequestReceipt, ServerRequest,
    SessionResumeParams, UserInputAnswer, UserInputAnswerParams, UserInputCancelParams,
    UserInputEngagedParams, UserInputInterruptParams, UserInputQuestion, UserInputRequestParams,
    UserInputSettledParams, ViewPageDirection, ViewPageParams,
};
use serde_json::Value;

use super::canned_host::CannedHost;
use super::cli::Decision;
use super::deadline::Deadline;
use super::labels::{Choice, OfferedLabel};
use super::render::{describe_answers, describe_settlement, selection_text};
use super::Failure;

const CLIENT_NAME: &str = "answer_user_input";
const CLIENT_VERSION: &str = "0.1.0";
const PAGE_LIMIT: i64 = 200;

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

pub struct Client<'a> {
    host: &'a mut CannedHost,
    out: &'a mut dyn Write,
    trace: bool,
    next_id: i64,
    awaiting: PendingRequests,
    responses: HashMap<Id, Result<Value, ErrorObject>>,
    session_id: Option<String>,
    pending_at_resume: Vec<String>,
    prompts: Vec<Prompt>,
    /// userInputId -> the command this client sent to settle it.
    commands: HashMap<String, Sent>,
    results: Vec<String>,
}

impl<'a> Client<'a> {
    pub fn new(host: &'a mut CannedHost, out: &'a mut dyn Write, trace: bool) -> Self {
        Client {
            host,
            out,
            trace,
            next_id: 1,
            awaiting: PendingRequests::default(),
            responses: HashMap::new(),
            session_id: None,
            pending_at_resume: Vec::new(),
            prompts: Vec::new(),
            commands: HashMap::new(),
            results: Vec::new(),
        }
    }

    /// The method the host waits for next, when it waits for one.
    pub fn host_waits_for(&self) -> Option<&str> {
        self.host.next_client_method()
    }

    pub fn handshake(&mut self) -> Result<(), Failure> {
        let info = ClientInfo::new(CLIENT_NAME.to_owned(), CLIENT_VERSION.to_owned());
        let result = self.call::<methods::Initialize>(&InitializeParams::new(info))?;
        let result = result.map_err(|e| Failure::rpc(methods::Initialize::METHOD, e))?;
        let server = &result.server_info;
        writeln!(
            self.out,
            "connected to {} {} (schema {})",
            server.name, server.version, result.schema.version
        )?;
        self.notify::<notifications::Initialized>(&None)
    }

    pub fn list_models(&mut self) -> Result<(), Failure> {
        let result = self.call::<methods::ModelList>(&ModelListParams::new())?;
        let result = result.map_err(|e| Failure::rpc(methods::ModelList::METHOD, e))?;
        let models: Vec<String> = result
            .models
            .iter()
            .map(|m| match m.is_default {
                true => format!("{} (default)", m.model_id),
                false => m.model_id.clone(),
            })
            .collect();
        writeln!(self.out, "models: {}", models.join(", "))?;
        Ok(())
    }

    /// Joins a session this client did not create. `excludeItems`: history is paged later.
    pub fn resume(&mut self, session_id: &str) -> Result<(), Failure> {
        let mut params = SessionResumeParams::new(mint_command_id(), session_id.to_owned());
        params.exclude_items = Some(true);
        let result = self.call::<methods::SessionResume>(&params)?;
        let result = result.map_err(|e| Failure::rpc(methods::SessionResume::METHOD, e))?;
        let session = &result.session;
        let turn = match &session.active_turn_id {
            Some(turn) => format!(", turn {turn} in progress"),
            None => String::new(),
        };
        writeln!(
            self.out,
            "resumed session {}: {}{turn}",
            session.session_id, session.status
        )?;
        self.session_id = Some(session.session_id.clone());
        if result.pending_requests.is_empty() {
            writeln!(self.out, "pending: nothing")?;
        }
        for entry in &result.pending_requests {
            match (&entry.kind, &entry.user_input_id) {
                (PendingRequestKind::UserInput, Some(id)) => {
                    writeln!(self.out, "pending: question {id}")?;
                    self.pending_at_resume.push(id.clone());
                }
                (kind, _) => writeln!(self.out, "pending: {kind} (not a question, skipped)")?,
            }
        }
        Ok(())
    }

    /// Matches each pending question of the resume result with its re-issued request.
    pub fn match_pending(&mut self) -> Result<(), Failure> {
        for id in &self.pending_at_resume {
            match self.prompts.iter().find(|p| p.params.user_input_id == *id) {
                Some(prompt) => writeln!(
                    self.out,
                    "pending question {id} matches re-issued request {}",
                    prompt.request_id
                )?,
                None => writeln!(self.out, "pending question {id} was not re-issued yet")?,
            }
        }
        Ok(())
    }

    /// Backfills the view, where the question sits right after the tool call that asked.
    pub fn page_view(&mut self) -> Result<(), Failure> {
        let session_id = self.session().ok_or_else(|| {
            Failure::Wire("no session to page: nothing was resumed or asked".to_owned())
        })?;
        let mut params = ViewPageParams::new(PAGE_LIMIT, session_id);
        params.direction = Some(ViewPageDirection::Forward);
        let page = self.call::<methods::ViewPage>(&params)?;
        let page = page.map_err(|e| Failure::rpc(methods::ViewPage::METHOD, e))?;
        for event in page.events {
            let params = serde_json::to_value(&event.params).ok();
            let event = ProtocolNotification::decode(&event.method, params)
                .map_err(|e| Failure::Wire(format!("view/page event: {e}")))?;
            self.on_notification(event)?;
        }
        if let Some(cursor) = page.next_cursor {
            writeln!(self.out, "view: more events after {cursor}")?;
        }
        Ok(())
    }

    /// Handles every frame the host has ready.
    pub fn pump(&mut self) -> Result<(), Failure> {
        while self.pump_one()? {}
        Ok(())
    }

    /// Acts on the user's decision for each question still open.
    pub fn decide(&mut self, decision: &Decision) -> Result<(), Failure> {
        for index in 0..self.prompts.len() {
            if self.prompts[index].open {
                self.decide_one(index, decision)?;
            }
        }
        Ok(())
    }

    /// Reports how each question ended; fails if the recording expects more.
    pub fn finish(mut self) -> Result<(), Failure> {
        self.pump()?;
        if let Some(method) = self.host.next_client_method() {
            return Err(Failure::Wire(format!(
                "the recording expects the client to send {method} next"
            )));
        }
        for prompt in self.prompts.iter().filter(|p| p.open) {
            let id = &prompt.params.user_input_id;
            self.results
                .push(format!("result: question {id} is still open"));
        }
        for line in &self.results {
            writeln!(self.out, "{line}")?;
        }
        Ok(())
    }

    fn decide_one(&mut self, index: usize, decision: &Decision) -> Result<(), Failure> {
        let prompt = &self.prompts[index];
        let params = prompt.params.clone();
        let id = params.user_input_id.clone();
        if prompt.deadline.passed(Instant::now()) {
            writeln!(
                self.out,
                "question {id}: the answer window has passed; not answering, the host settles it"
            )?;
            return Ok(());
        }
        // Every label is checked before anything is sent.
        let (what, ack) = match decision {
            Decision::Answer(texts) => {
                let answers = choose(&params.questions, texts, params.questions.len())?;
                let described = describe_answers(&params.questions, &answers);
                writeln!(self.out, "answer: {described}")?;
                let command_id = self.command_for(&id, &answers);
                let command =
                    UserInputAnswerParams::new(answers, command_id, params.session_id, id.clone());
                let ack = self.call::<methods::UserInputAnswer>(&command)?;
                ("answer", ack.map(|a| (a.status, a.user_input_id)))
            }
            Decision::Cancel(reason) => {
                writeln!(self.out, "cancel: {reason}")?;
                let command_id = self.command_for(&id, &[]);
                let mut command =
                    UserInputCancelParams::new(command_id, params.session_id, id.clone());
                command.reason = Some(reason.clone());
                let ack = self.call::<methods::UserInputCancel>(&command)?;
                ("cancellation", ack.map(|a| (a.status, a.user_input_id)))
            }
            Decision::Interrupt(texts) => {
                let confirmed = texts.len().max(1).min(params.questions.len());
                let answers = choose(&params.questions, texts, confirmed)?;
                let engaged = UserInputEngagedParams::new(params.session_id.clone(), id.clone());
                self.notify::<notifications::UserInputEngaged>(&engaged)?;
                self.prompts[index].deadline.stop();
                writeln!(self.out, "engaged: the host stops the countdown")?;
                let described = describe_answers(&params.questions, &answers);
                writeln!(self.out, "interrupt, keeping: {described}")?;
                let command_id = self.command_for(&id, &answers);
                let mut command =
                    UserInputInterruptParams::new(command_id, params.session_id, id.clone());
                command.answers = Some(answers);
                let ack = self.call::<methods::UserInputInterrupt>(&command)?;
                ("interruption", ack.map(|a| (a.status, a.user_input_id)))
            }
        };
        match ack {
            Ok((CommandStatus::Accepted, echoed)) if echoed == id => writeln!(
                self.out,
                "host accepted the {what} (a receipt, not the outcome); waiting for userInput/settled"
            )?,
            Ok((status, echoed)) => writeln!(
                self.out,
                "host answered the {what} with status {status} for question {echoed}"
            )?,
            // Too late, or refused: the settlement says how the question ended.
            Err(error) => writeln!(
                self.out,
                "host refused the {what}: {} ({})",
                error.message, error.code
            )?,
        }
        Ok(())
    }

    /// Mints the command id that will settle question `id`, remembering what it carries.
    fn command_for(&mut self, id: &str, answers: &[UserInputAnswer]) -> String {
        let command_id = mint_command_id();
        let sent = Sent {
            command_id: command_id.clone(),
            answers: answers.to_vec(),
        };
        self.commands.insert(id.to_owned(), sent);
        command_id
    }

    fn session(&self) -> Option<String> {
        let asked = self.prompts.first().map(|p| p.params.session_id.clone());
        self.session_id.clone().or(asked)
    }

    /// Sends a request and handles what the host sends until its response arrives.
    fn call<M: Request>(
        &mut self,
        params: &M::Params,
    ) -> Result<Result<M::Result, ErrorObject>, Failure> {
        let id = Id::Number(self.next_id);
        self.next_id += 1;
        self.send(RawFrame::request::<M>(id.clone(), params))?;
        self.awaiting.insert(id.clone(), M::METHOD);
        loop {
            match self.responses.remove(&id) {
                Some(Ok(result)) => {
                    return decode_payload::<M::Result>(M::METHOD, Some(result))
                        .map(Ok)
                        .map_err(|e| Failure::Wire(e.to_string()));
                }
                Some(Err(error)) => return Ok(Err(error)),
                None if self.pump_one()? => {}
                None => {
                    return Err(Failure::Wire(format!(
                        "the host stopped before answering {} (id {id})",
                        M::METHOD
                    )))
                }
            }
        }
    }

    fn notify<N: Notification>(&mut self, params: &N::Params) -> Result<(), Failure> {
        self.send(RawFrame::notification::<N>(params))
    }

    fn send(&mut self, frame: RawFrame) -> Result<(), Failure> {
        let line = frame.to_line();
        if self.trace {
            writeln!(self.out, "> {line}")?;
        }
        self.host.send(&line).map_err(Failure::Host)
    }

    /// Reads and handles one frame; `false` when the host has nothing to send.
    fn pump_one(&mut self) -> Result<bool, Failure> {
        let Some(line) = self.host.recv() else {
            return Ok(false);
        };
        if self.trace {
            writeln!(self.out, "< {line}")?;
        }
        let frame = Frame::parse(&line).map_err(|e| Failure::Wire(format!("{e}: {line}")))?;
        match frame.message {
            Message::ServerRequest { id, request } => {
                let reply = self.on_server_request(id, request)?;
                self.send(reply)?;
            }
            // A method in no server table still is a request from the host.
            Message::ClientRequest { id, request } => {
                let request = ServerRequest::Unknown {
                    method: request.method().to_owned(),
                    params: request.params(),
                };
                let reply = self.on_server_request(id, request)?;
                self.send(reply)?;
            }
            Message::Notification(notification) => self.on_notification(notification)?,
            Message::Result { id, result } => self.on_response(id, Ok(result.to_value()))?,
            // Typed results come from `Frame::parse_tracked`; this client types them itself.
            Message::ClientResult { id, result } => self.on_response(id, Ok(result.result()))?,
            Message::ServerResult { id, result } => self.on_response(id, Ok(result.result()))?,
            Message::Error {
                id: Some(id),
                error,
            } => self.on_response(id, Err(error))?,
            Message::Error { id: None, error } => {
                return Err(Failure::Wire(format!(
                    "the host could not read a frame: {}",
                    error.message
                )))
            }
        }
        Ok(true)
    }

    /// The one handler for requests from the host. `userInput/request` gets the receipt
    /// ("a client is showing this"; the answer travels separately); anything else gets an
    /// error reply, so the host knows this client cannot handle it.
    fn on_server_request(&mut self, id: Id, request: ServerRequest) -> Result<RawFrame, Failure> {
        match request {
            ServerRequest::UserInputRequest(params) => {
                self.show(id.clone(), params)?;
                Ok(RawFrame::result::<requests::UserInputRequest>(
                    id,
                    &RequestReceipt::new(),
                ))
            }
            other => {
                let method = other.method().to_owned();
                writeln!(
                    self.out,
                    "declined {method} (request {id}): this client only answers questions"
                )?;
                let code =
                    msp_types::registry::error_by_kind("methodNotFound").map_or(-32601, |e| e.code);
                let message = format!("unhandled server request: {method}");
                Ok(RawFrame::error(Some(id), code, &message, None))
            }
        }
    }

    fn on_response(&mut self, id: Id, response: Result<Value, ErrorObject>) -> Result<(), Failure> {
        match self.awaiting.take(&id) {
            Some(_) => {
                self.responses.insert(id, response);
                Ok(())
            }
            None => Err(Failure::Wire(format!(
                "a response to id {id}, which this client never sent"
            ))),
        }
    }

    /// Puts a question in front of the user.
    fn show(&mut self, request_id: Id, params: UserInputRequestParams) -> Result<(), Failure> {
        let window = match params.auto_resolution_ms {
            Some(ms) if ms % 1000 == 0 => format!("answer within {} s", ms / 1000),
            Some(ms) => format!("answer within {ms} ms"),
            None => "no deadline".to_owned(),
        };
        writeln!(
            self.out,
            "question {} (request {request_id}), {window}:",
            params.user_input_id
        )?;
        for question in &params.questions {
            writeln!(
                self.out,
                "  {}: {} ({})",
                question.header,
                question.question,
                selection_text(&question.selection)
            )?;
            for option in &question.options {
                match &option.description {
                    Some(why) => writeln!(self.out, "    - {}: {why}", option.label)?,
                    None => writeln!(self.out, "    - {}", option.label)?,
                }
            }
        }
        writeln!(
            self.out,
            "receipt: showing question {}",
            params.user_input_id
        )?;
        let prompt = Prompt {
            deadline: Deadline::after(Instant::now(), params.auto_resolution_ms),
            params,
            request_id,
            open: true,
        };
        let id = &prompt.params.user_input_id;
        // Asked again (another re-issue): show the latest copy in the same place.
        match self
            .prompts
            .iter()
            .position(|p| p.params.user_input_id == *id)
        {
            Some(index) => self.prompts[index] = prompt,
            None => self.prompts.push(prompt),
        }
        Ok(())
    }

    /// View events, live or paged. Only those this recipe is about are shown.
    fn on_notification(&mut self, notification: ProtocolNotification) -> Result<(), Failure> {
        match notification {
            ProtocolNotification::UserInputSettled(params) => self.on_settled(*params)?,
            ProtocolNotification::UserInputRequested(params) => {
                let id = &params.user_input_id;
                let shown = self.prompts.iter().any(|p| p.params.user_input_id == *id);
                let note = match shown {
                    true => "shown above",
                    false => "waiting for its userInput/request",
                };
                writeln!(self.out, "view: question {id} asked here ({note})")?;
            }
            ProtocolNotification::ItemStarted(params) => {
                let item = &params.item;
                if item.kind == ItemKind::ToolCall {
                    let tool = item.tool.as_deref().unwrap_or("?");
                    writeln!(self.out, "view: tool call {tool} {}", item.status)?;
                }
            }
            ProtocolNotification::ItemCompleted(params) => {
                let item = &params.item;
                match item.kind {
                    ItemKind::UserMessage => {
                        let text = item.text.as_deref().unwrap_or_default();
                        writeln!(self.out, "view: user message {text:?}")?;
                    }
                    ItemKind::ToolCall => {
                        let tool = item.tool.as_deref().unwrap_or("?");
                        let output = item.visible_output.as_deref().unwrap_or_default();
                        writeln!(self.out, "view: tool call {tool} {}: {output}", item.status)?;
                    }
                    _ => {}
                }
            }
            ProtocolNotification::TurnCompleted(params) => {
                let reason = match &params.reason {
                    Some(reason) => format!(" ({reason})"),
                    None => String::new(),
                };
                writeln!(self.out, "view: turn {}{reason}", params.terminal)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A question ended. The settlement goes to every client, so it may be another
    /// client's doing, the host's (no command: timed out, aborted), or about a question
    /// this client never saw.
    fn on_settled(&mut self, settled: UserInputSettledParams) -> Result<(), Failure> {
        let id = &settled.user_input_id;
        let sent = self.commands.get(id);
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
            writeln!(
                self.out,
                "settled: question {id}, never shown here: {summary}; nothing to take down"
            )?;
            return Ok(());
        };
        let questions = &prompt.params.questions;
        let summary = format!(
            "{} by {by}{}",
            settled.outcome,
            describe_settlement(questions, &settled)
        );
        if !prompt.open {
            writeln!(self.out, "settled again: question {id}: {summary}")?;
            return Ok(());
        }
        prompt.open = false;
        match sent {
            Some(sent) if by_me => {
                writeln!(
                    self.out,
                    "settled: {}, by this client's command",
                    settled.outcome
                )?;
                if sent.answers != settled.answers {
                    writeln!(
                        self.out,
                        "note: the host recorded other answers than this client sent ({})",
                        describe_answers(questions, &sent.answers)
                    )?;
                }
            }
            _ => writeln!(
                self.out,
                "settled: {} by {by}; taking question {id} down",
                settled.outcome
            )?,
        }
        self.results.push(format!("result: {summary}"));
        Ok(())
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
        return Err(Failure::Usage(format!(
            "{} labels given for {} question(s)",
            texts.len(),
            questions.len()
        )));
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

/// A fresh UUIDv7: 48 bits of Unix milliseconds, then random bits.
fn mint_command_id() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    // Each `RandomState` is keyed afresh, which is randomness enough for an id.
    let random = RandomState::new().hash_one(ms);
    format!(
        "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
        (ms >> 16) & 0xffff_ffff,
        ms & 0xffff,
        (random >> 52) & 0xfff,
        0x8000 | ((random >> 36) & 0x3fff),
        random & 0xffff_ffff_ffff
    )
}
