//! What both drivers do alike: the options split, the request handler, what a frame that did
//! not decode becomes, and the checks handles wait on.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use msp_rpc::{BadFrame, CloseReason, Command, Handshake, Inbound, Problem, Reply, RpcError};
use msp_session::{Fold, Input, PendingApproval, PendingPrompt};
use msp_types::protocol::methods;
use msp_types::rpc::Request;
use msp_types::{
    ApprovalRequirementRef, InitializeParams, PendingRequestPointer, RequestReceipt, ServerRequest,
    SessionDurability, SessionHistory, SessionResumeResult, UserInputRequestParams,
};

use crate::asks::AskError;
use crate::core::Core;
use crate::options::{Options, Retry};
use crate::outcome::{Error, SettledBy, Settlement};
use crate::pending::{EndedBefore, PendingCommand};
use crate::stop::HandlerStop;

/// What the driver keeps of the options once the core and the connection's are made.
pub(crate) struct Rest {
    pub(crate) initialize: InitializeParams,
    pub(crate) retry: Retry,
}

/// The core, the connection's options with the client's request handler, and the rest.
pub(crate) fn split(options: Options) -> (Arc<Core>, msp_rpc::Options<msp_rpc::Client>, Rest) {
    let core = Arc::new(Core::new(options.rules, options.events));
    // Each request reaches its session among the notifications, where it came (a copy, which
    // the pump routes), while the handler answers it at once.
    let rpc = options
        .connection
        .inbound_requests(true)
        .on_request(|_id, request| answer(&request))
        .on_bad_request(|_id, frame| answer_bad(frame));
    let rest = Rest {
        initialize: options.initialize,
        retry: options.retry,
    };
    (core, rpc, rest)
}

/// The host's requests: an approval or a question gets its receipt at once, whether or not
/// anyone takes the frames, and its copy among the notifications reaches its session's fold
/// and events in wire order; any other is not a method this client has.
fn answer(request: &ServerRequest) -> Reply {
    match request {
        ServerRequest::ApprovalRequest(_) | ServerRequest::UserInputRequest(_) => {
            Reply::ok(&RequestReceipt::new())
        }
        other => Reply::method_not_found(other.method()),
    }
}

/// A request of the host whose params do not decode: the host is told `-32602` with where
/// decoding failed (nothing was presented to the user); its copy among the notifications
/// reaches its session's events (as [`Input::Undecodable`], the fold's `Malformed`), so the
/// program knows it was asked.
fn answer_bad(frame: &BadFrame) -> Reply {
    frame.decode_error().map_or_else(
        || Reply::invalid_params(&frame.problem),
        Reply::invalid_params_at,
    )
}

/// Notifications the pump routes at most under one lock.
pub(crate) const BATCH: usize = 64;

/// What the connection delivered, as the fold's input.
pub(crate) fn input(inbound: Inbound) -> Input {
    match inbound {
        Inbound::Notification { notification, .. } => Input::Notification(notification),
        Inbound::Undecodable(bad) => undecodable(&bad),
        Inbound::Request { request, .. } => Input::Request(*request),
    }
}

/// A frame that did not decode, as the fold's input: its method and where it failed.
pub(crate) fn undecodable(bad: &BadFrame) -> Input {
    let (pointer, reason) = match &bad.problem {
        Problem::Decode(error) => (error.pointer.clone(), error.reason.clone()),
        other => (String::new(), other.to_string()),
    };
    // The session it names, read from the raw params, so that it reaches that session.
    let session_id = bad
        .params()
        .and_then(|params| params.get("sessionId")?.as_str().map(str::to_owned));
    tracing::warn!(method = ?bad.method(), %pointer, %reason, session = ?session_id, "a frame did not decode");
    Input::Undecodable {
        method: bad.method().map(str::to_owned),
        pointer,
        reason,
        session_id,
    }
}

/// Whether a command settling a prompt failed so that the prompt is open to this client
/// again: the host refused it otherwise than as settled already (which it soon says) or
/// unknown to it; it was never sent (it did not encode); or no acknowledgement of it came
/// after every retry, or one naming another command. Should it have landed, it settles the
/// prompt first and a second command loses: refused as settled already, or admitted and
/// then told apart by `userInput/settled`'s `decidedByCommandId`.
pub(crate) fn prompt_open_again(error: &Error) -> bool {
    match error {
        Error::Rpc(RpcError::Remote(remote)) => !matches!(
            remote.kind(),
            Some("userInputAlreadySettled" | "userInputNotFound")
        ),
        Error::Rpc(RpcError::Encode { .. } | RpcError::TimedOut { .. }) => true,
        // Acknowledged as another command: whether this one landed is unknown.
        Error::AckMismatch { .. } => true,
        _ => false,
    }
}

/// A prompt this client is settling or a stage it is deciding: not offered (by the waits
/// and handlers of this client) while the command is in flight, and offered again when this
/// is dropped armed, as it is unless the driver disarms it: the command failed leaving it
/// open, or its send never ended (a future dropped, an unwind).
pub(crate) struct OfferAgain<'a> {
    core: &'a Core,
    session_id: &'a str,
    offered: Offered<'a>,
    pub(crate) armed: bool,
}

/// What a command in flight settles: a prompt, or an approval's stage.
pub(crate) enum Offered<'a> {
    Prompt(&'a str),
    Stage(&'a str, &'a ApprovalRequirementRef),
}

impl<'a> OfferAgain<'a> {
    /// Hides `offered` while its command is sent.
    pub(crate) fn hide(core: &'a Core, session_id: &'a str, offered: Offered<'a>) -> Self {
        match offered {
            Offered::Prompt(id) => core.answered(session_id, id, true),
            Offered::Stage(id, requirement) => core.decided(session_id, id, requirement, true),
        }
        OfferAgain {
            core,
            session_id,
            offered,
            armed: true,
        }
    }
}

impl Drop for OfferAgain<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        match self.offered {
            Offered::Prompt(id) => self.core.answered(self.session_id, id, false),
            Offered::Stage(id, requirement) => {
                self.core.decided(self.session_id, id, requirement, false)
            }
        }
    }
}

/// A command whose params `build` makes around a minted `commandId`, or around one of its
/// own (a `build` that ignores the id given it): the command is then that id's, so that what
/// the client notes of it and sends again is under the id on the wire.
pub(crate) fn command<M: Request>(build: impl FnOnce(String) -> M::Params) -> Command<M> {
    let minted = msp_rpc::new_command_id();
    let params = build(minted.clone());
    let id = named_id::<M>(&params).unwrap_or(minted);
    Command::with_id(id, |_| params)
}

/// The `commandId` params name, if any.
fn named_id<M: Request>(params: &M::Params) -> Option<String> {
    command_id_in(&serde_json::to_value(params).ok()?).map(str::to_owned)
}

/// The `commandId` member of encoded params or a result.
fn command_id_in(value: &serde_json::Value) -> Option<&str> {
    value.get("commandId")?.as_str()
}

/// Checks that a session command's `params`, as encoded, name the `commandId` it is noted
/// under, where they name one (a [`Command`] made around params that ignore the id minted):
/// otherwise what the client notes of it (its pending entry, its acknowledgement, who
/// settled a prompt) would be another command's. Commands the client makes are so by
/// construction ([`command`], `commands.rs`).
pub(crate) fn names_its_id(
    method: &'static str,
    command_id: &str,
    params: &serde_json::Value,
) -> Result<(), Error> {
    match command_id_in(params) {
        Some(named) if named != command_id => Err(Error::Misdirected {
            method,
            command_id: command_id.to_owned(),
            reason: format!("its params name commandId {named}"),
        }),
        _ => Ok(()),
    }
}

/// Checks that `result`, the acknowledgement of `command`, echoes its `commandId`, where it
/// names one (its params name the same: [`names_its_id`]).
pub(crate) fn echoed<M: Request>(command: &Command<M>, result: &M::Result) -> Result<(), Error> {
    let result = serde_json::to_value(result).ok();
    match result.as_ref().and_then(command_id_in) {
        Some(acknowledged) if acknowledged != command.command_id() => Err(Error::AckMismatch {
            method: M::METHOD,
            command_id: command.command_id().to_owned(),
            acknowledged: acknowledged.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// The JSON-RPC code of a failed request, when the peer sent one.
pub(crate) fn code(error: &RpcError) -> Option<i64> {
    match error {
        RpcError::Remote(remote) => Some(remote.code()),
        _ => None,
    }
}

/// What a pump's [`Ending`] does with its connection: both drivers' connections.
pub(crate) trait Ends {
    fn close_reason(&self) -> Option<CloseReason>;
    fn abort(&self);
    fn handshake(&self) -> Option<&Handshake>;
}

macro_rules! ends {
    ($connection:ty) => {
        impl Ends for $connection {
            fn close_reason(&self) -> Option<CloseReason> {
                <$connection>::close_reason(self)
            }
            fn abort(&self) {
                <$connection>::abort(self)
            }
            fn handshake(&self) -> Option<&Handshake> {
                <$connection>::handshake(self)
            }
        }
    };
}
ends!(msp_rpc::blocking::Connection);
#[cfg(feature = "tokio")]
ends!(msp_rpc::tokio::Connection);

/// Ends the core when its pump stops, if it has not ended already: held by the pump (the
/// blocking driver's thread, tokio's task) for as long as it runs.
pub(crate) struct Ending<'a, C: Ends> {
    pub(crate) connection: &'a C,
    pub(crate) core: &'a Core,
}

impl<C: Ends> Drop for Ending<'_, C> {
    fn drop(&mut self) {
        if self.connection.close_reason().is_none() {
            // The pump stopped early (a panic, the runtime's shutdown): with nobody routing,
            // the connection ends too, so that no command goes out to a host nobody hears.
            self.connection.abort();
        }
        let reason = self.connection.close_reason().unwrap_or(CloseReason::Local);
        self.core.end(reason, durable(self.connection.handshake()));
    }
}

/// Whether the host said its sessions outlive it (absent or unknown: durable, so that
/// nothing is marked ended that may still run).
pub(crate) fn durable(handshake: Option<&Handshake>) -> bool {
    let durability = handshake
        .and_then(|h| h.result.as_ref())
        .and_then(|r| r.session_durability.as_ref());
    !matches!(durability, Some(SessionDurability::Ephemeral))
}

/// The questions of prompt `user_input_id`, pending in `fold`.
pub(crate) fn prompt_request(
    fold: &Fold,
    user_input_id: &str,
) -> Result<UserInputRequestParams, AskError> {
    let pending = fold
        .pending_prompt(user_input_id)
        .ok_or_else(|| AskError::UnknownPrompt {
            user_input_id: user_input_id.to_owned(),
        })?;
    pending
        .request()
        .cloned()
        .ok_or_else(|| AskError::QuestionsUnknown {
            user_input_id: user_input_id.to_owned(),
        })
}

/// Whether prompt `user_input_id` is pending (its questions known or not).
pub(crate) fn prompt_pending(fold: &Fold, user_input_id: &str) -> Result<(), AskError> {
    match fold.pending_prompt(user_input_id) {
        Some(_) => Ok(()),
        None => Err(AskError::UnknownPrompt {
            user_input_id: user_input_id.to_owned(),
        }),
    }
}

/// A fork's or side chat's result as the resume it amounts to (the same members): the new
/// session's fold is seeded from it alike.
pub(crate) fn as_resume_result(
    history: &SessionHistory,
    pending: &[PendingRequestPointer],
    session: &msp_types::Session,
    view_cursor: &str,
) -> SessionResumeResult {
    SessionResumeResult::builder()
        .history(history.clone())
        .pending_requests(pending.to_vec())
        .session(session.clone())
        .view_cursor(view_cursor)
        .build()
}

/// An approval's stage, as this client tells stages apart: the approval, and its
/// requirement's approval and index.
pub(crate) type StageKey = (String, String, i64);

/// What this client did in a session, for the checks handles wait on. Kept in the session's
/// slot and read there by each check, under the client's lock: a wait never copies it, and
/// each check sees what the client did until then (a command sent, a prompt answered or a
/// stage decided only ever makes a check find less, so none of them wakes a wait; a resume,
/// which may end a turn waited on, does).
#[derive(Debug, Default)]
pub(crate) struct Asked {
    /// The `commandId`s it sent.
    pub(crate) sent: HashSet<String>,
    /// The prompts it answered, cancelled or clarified: how many of those commands are in
    /// flight or were accepted (one refused or dropped in flight counts no more).
    pub(crate) answered: HashMap<String, usize>,
    /// The approval stages it decided: how many of those decisions are in flight or were
    /// accepted (one that failed leaving the stage open counts no more).
    pub(crate) decided: HashMap<StageKey, usize>,
    /// The turns the resume shows ended before it.
    pub(crate) ended_before: EndedBefore,
}

impl Asked {
    /// Whether turn `turn_id` ended: in the fold, or before the resume.
    pub(crate) fn turn_over(&self, fold: &Fold, turn_id: &str) -> bool {
        let folded = fold
            .turn(turn_id)
            .is_some_and(|turn| turn.state().is_over());
        folded || self.ended_before.contains(turn_id)
    }

    /// Whether the fold shows the outcome of command `entry`: for a `turn/start`, its turn
    /// ended (the one its acknowledgement named, else the one that names its `commandId`);
    /// for any other, a prompt settled or an approval resolved by it.
    pub(crate) fn outcome_seen(&self, fold: &Fold, entry: &PendingCommand) -> bool {
        let id = Some(entry.command_id());
        if entry.method() == methods::TurnStart::METHOD {
            return match entry.turn_id() {
                Some(turn_id) => self.turn_over(fold, turn_id),
                None => fold
                    .turns()
                    .iter()
                    .any(|turn| turn.command_id() == id && self.turn_over(fold, turn.id())),
            };
        }
        let by = |decided: &Option<String>| decided.as_deref() == id;
        fold.settled_prompts()
            .iter()
            .any(|settled| by(&settled.decided_by_command_id))
            || fold
                .resolved_approvals()
                .iter()
                .any(|resolved| by(&resolved.decided_by_command_id))
    }

    pub(crate) fn decided_key(approval_id: &str, requirement: &ApprovalRequirementRef) -> StageKey {
        (
            approval_id.to_owned(),
            requirement.approval_id.clone(),
            requirement.source_index,
        )
    }

    /// Whether `approval` has a current stage this client has not decided, nor an approval
    /// handler passed on (`passed`).
    fn to_decide(&self, approval: &PendingApproval, passed: &HashSet<StageKey>) -> bool {
        approval.stage().is_some_and(|stage| {
            let key = Asked::decided_key(approval.id(), stage.requirement);
            !self.decided.contains_key(&key) && !passed.contains(&key)
        })
    }

    /// A pending prompt with its questions that this client has not answered.
    pub(crate) fn next_prompt(&self, fold: &Fold) -> Option<PendingPrompt> {
        fold.pending_prompts()
            .iter()
            .find(|p| p.request().is_some() && !self.answered.contains_key(p.id()))
            .cloned()
    }

    /// A pending approval whose current stage is one to decide (see [`Asked::to_decide`]).
    pub(crate) fn next_approval(
        &self,
        fold: &Fold,
        passed: &HashSet<StageKey>,
    ) -> Option<PendingApproval> {
        fold.pending_approvals()
            .iter()
            .find(|p| self.to_decide(p, passed))
            .cloned()
    }

    /// For a wait on turn `turn_id`: `Some(Some(approval))` for one of its approvals to
    /// decide (see [`Asked::to_decide`]), `Some(None)` once the turn is over, `None` to wait
    /// on. `identified`: only approvals whose request came (known from a resume's pointer and
    /// an update alone, an approval names no turn and no tool).
    pub(crate) fn next_approval_of(
        &self,
        fold: &Fold,
        turn_id: &str,
        identified: bool,
        passed: &HashSet<StageKey>,
    ) -> Option<Option<PendingApproval>> {
        let of_turn = |p: &&PendingApproval| match p.request() {
            Some(request) => request.turn_id == turn_id,
            None => !identified,
        };
        let next = fold
            .pending_approvals()
            .iter()
            .filter(of_turn)
            .find(|p| self.to_decide(p, passed));
        match next {
            Some(approval) => Some(Some(approval.clone())),
            None if self.turn_over(fold, turn_id) => Some(None),
            None => None,
        }
    }

    /// For a wait on turn `turn_id`: one of its questions to answer, or its end.
    pub(crate) fn next_prompt_of(
        &self,
        fold: &Fold,
        turn_id: &str,
    ) -> Option<Option<PendingPrompt>> {
        let next = fold.pending_prompts().iter().find(|p| {
            p.request().is_some_and(|r| r.turn_id == turn_id) && !self.answered.contains_key(p.id())
        });
        match next {
            Some(prompt) => Some(Some(prompt.clone())),
            None if self.turn_over(fold, turn_id) => Some(None),
            None => None,
        }
    }

    /// How prompt `user_input_id` settled, once it did.
    pub(crate) fn settlement(&self, fold: &Fold, user_input_id: &str) -> Option<Settlement> {
        let params = fold
            .settled_prompts()
            .iter()
            .find(|s| s.user_input_id == user_input_id)?
            .clone();
        let by = match &params.decided_by_command_id {
            Some(id) if self.sent.contains(id) => SettledBy::ThisClient(id.clone()),
            Some(id) => SettledBy::Elsewhere(id.clone()),
            None => SettledBy::Host,
        };
        Some(Settlement { params, by })
    }
}

/// The approvals decided by a handler (`Turn::completed_deciding`,
/// `Session::decide_approvals`, both drivers): the stages it passed on, so that its waits
/// skip them.
#[derive(Default)]
pub(crate) struct Deciding {
    /// Stages still pending that the handler left undecided, or whose decision another
    /// decision won or the host moved past.
    passed: HashSet<StageKey>,
    /// Stages whose decision the host refused as a choice it does not offer, as they were
    /// offered: each is passed on until the fold shows its choices changed.
    refused: Vec<PendingApproval>,
    /// What stops the handler, if anything does before its end.
    stop: Option<HandlerStop>,
}

impl Deciding {
    /// A handler of session `session_id`, stopped by `stop` if given.
    pub(crate) fn new(stop: Option<&HandlerStop>, core: &Arc<Core>, session_id: &str) -> Self {
        if let Some(stop) = stop {
            stop.watch(core, session_id);
        }
        Deciding {
            passed: HashSet::new(),
            refused: Vec::new(),
            stop: stop.cloned(),
        }
    }

    /// Whether the handler was stopped.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(HandlerStop::is_stopped)
    }

    /// The check of the handler's next wait: for turn `turn_id`, an approval whose request
    /// came, as [`Asked::next_approval_of`], or for `None` any approval of the session with a
    /// stage to decide (a resume's pending ones included); `Some(None)` once the turn is over
    /// or the handler stopped. The stages passed on of approvals no longer pending are
    /// forgotten first (those of one still pending are kept, whatever stage it shows: a
    /// few, and no stage passed on is offered again whatever the fold shows), but for a
    /// refused stage whose choices changed since, offered again.
    pub(crate) fn next(
        &mut self,
        fold: &Fold,
        asked: &Asked,
        turn_id: Option<&str>,
    ) -> Option<Option<PendingApproval>> {
        if self.stopped() {
            return Some(None);
        }
        let passed = &mut self.passed;
        self.refused.retain(|approval| {
            let unchanged = still_offered(fold, approval);
            if let (false, Some(stage)) = (unchanged, approval.stage()) {
                passed.remove(&Asked::decided_key(approval.id(), stage.requirement));
            }
            unchanged
        });
        self.passed
            .retain(|(approval_id, ..)| fold.pending_approval(approval_id).is_some());
        match turn_id {
            Some(turn_id) => asked.next_approval_of(fold, turn_id, true, &self.passed),
            None => asked.next_approval(fold, &self.passed).map(Some),
        }
    }

    /// What a handler's wait gave (`waited`, the connection's close reason `closed` read
    /// after it): the approval to offer (`Continue`), or the loop's end (`Break`: `None` once
    /// the turn is over or the handler stopped, why the connection closed once it did).
    /// Nothing is offered once the connection closed: no decision could be sent.
    pub(crate) fn offer(
        waited: Result<Option<PendingApproval>, Error>,
        closed: Option<CloseReason>,
    ) -> Result<ControlFlow<Option<CloseReason>, PendingApproval>, Error> {
        match waited {
            Ok(Some(approval)) => match closed {
                Some(reason) => Ok(ControlFlow::Break(Some(reason))),
                None => Ok(ControlFlow::Continue(approval)),
            },
            // Over or stopped as the connection closed: the close is told.
            Ok(None) => Ok(ControlFlow::Break(closed)),
            Err(Error::Closed(reason)) => Ok(ControlFlow::Break(Some(reason))),
            Err(error) => Err(error),
        }
    }

    /// Leaves `approval`'s current stage undecided.
    pub(crate) fn pass(&mut self, approval: &PendingApproval) {
        if let Some(stage) = approval.stage() {
            self.passed
                .insert(Asked::decided_key(approval.id(), stage.requirement));
        }
    }

    /// After a decision failed: a stage another decision won (`approvalAlreadyResolved`, or
    /// resolved before it was sent) or the host moved past (`approvalRequirementStale`) is
    /// passed on, the resolution or the next stage still to come, and so is one the host no
    /// longer knows (`approvalNotFound`: dropped with its turn, say; no resolution comes,
    /// and the fold keeps it pending); a choice the host no longer offers
    /// (`approvalChoiceInvalid`: it changed the stage's choices) is passed on until the fold
    /// shows the change, and then offered again with its new choices (the host sends the
    /// change before the refusal, but the refusal may be read before the change is folded).
    /// A closed connection ends the handler's wait with why (`Ok(Some)`, no other stage
    /// offered to the handler); any other failure is the caller's.
    pub(crate) fn failed(
        &mut self,
        approval: &PendingApproval,
        error: Error,
    ) -> Result<Option<CloseReason>, Error> {
        match &error {
            _ if error.stage_gone() => {}
            Error::Rpc(RpcError::Remote(remote))
                if remote.kind() == Some("approvalChoiceInvalid") =>
            {
                tracing::debug!(approval = approval.id(), %error, "the stage's choices changed");
                self.pass(approval);
                self.refused.push(approval.clone());
                return Ok(None);
            }
            Error::Rpc(RpcError::Closed(reason)) | Error::Closed(reason) => {
                return Ok(Some(reason.clone()));
            }
            _ => return Err(error),
        }
        tracing::debug!(approval = approval.id(), %error, "a stage no longer to decide");
        self.pass(approval);
        Ok(None)
    }
}

/// A question or an approval a wait found for the program to act on, unless the connection
/// closed (`closed`, read after the wait): nothing about it can be sent then, so the wait
/// ends with why, whatever the fold still shows pending.
pub(crate) fn to_act_on<T>(found: T, closed: Option<CloseReason>) -> Result<T, Error> {
    match closed {
        Some(reason) => Err(Error::Closed(reason)),
        None => Ok(found),
    }
}

/// Whether `approval` is still pending at the stage it was offered at, with the same choices
/// and subject (a host may change a stage's choices without moving to another).
pub(crate) fn still_offered(fold: &Fold, approval: &PendingApproval) -> bool {
    let now = fold.pending_approval(approval.id()).and_then(|p| p.stage());
    now.is_some() && now == approval.stage()
}

/// `Debug` for a driver's `Client`, `Session` and `Turn` (the ids, nothing of the state).
macro_rules! debug_handles {
    () => {
        impl std::fmt::Debug for Client {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct("Client").finish_non_exhaustive()
            }
        }

        impl std::fmt::Debug for Session {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct("Session")
                    .field("id", &self.0.id)
                    .finish_non_exhaustive()
            }
        }

        impl std::fmt::Debug for Turn {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct("Turn")
                    .field("id", &self.id)
                    .field("session", &self.session.0.id)
                    .finish_non_exhaustive()
            }
        }
    };
}
pub(crate) use debug_handles;

#[cfg(test)]
mod tests {
    use msp_session::{Fold, FoldRules, Input};
    use msp_types::{ProtocolNotification, ServerRequest};
    use serde_json::{json, Value};

    use super::{prompt_open_again, Asked, Deciding};
    use crate::outcome::Error;
    use msp_rpc::{CloseReason, RpcError};

    /// A command whose params name another `commandId` than it was made with is refused
    /// before it is sent (what the client notes of it would be another command's); one made
    /// from a `build` is the id its params name.
    #[test]
    fn a_command_must_name_its_own_id() {
        use msp_rpc::Command;
        use msp_types::protocol::methods::GoalSet;
        let goal = |id: &str| {
            msp_types::GoalSetParams::builder()
                .command_id(id)
                .objective("ship")
                .session_id("s")
                .build()
        };
        let names_its_id = |command: &Command<GoalSet>| {
            let params = serde_json::to_value(command.params()).unwrap();
            super::names_its_id("goal/set", command.command_id(), &params)
        };
        let own: Command<GoalSet> = Command::new(|id| goal(&id));
        assert!(names_its_id(&own).is_ok());
        // Made from a `build`, a command is the id its params name.
        let chosen = super::command::<GoalSet>(|_| goal("fixed"));
        assert_eq!(chosen.command_id(), "fixed");
        assert!(names_its_id(&chosen).is_ok());
        let minted = super::command::<GoalSet>(|id| goal(&id));
        assert_eq!(minted.params().command_id, minted.command_id());
        let other: Command<GoalSet> = Command::new(|_| goal("fixed"));
        let refused = names_its_id(&other);
        assert!(
            matches!(&refused, Err(Error::Misdirected { reason, .. }) if reason.contains("fixed")),
            "{refused:?}"
        );
    }

    #[test]
    fn a_prompt_is_open_again_after_an_answer_not_sent_or_not_acknowledged() {
        let timed_out = RpcError::TimedOut {
            method: "userInput/answer",
            id: msp_types::rpc::Id::Number(1),
        };
        assert!(prompt_open_again(&Error::Rpc(timed_out)));
        let unencoded = RpcError::Encode {
            method: "userInput/answer".to_owned(),
            message: "no".to_owned(),
        };
        assert!(prompt_open_again(&Error::Rpc(unencoded)));
        // The connection gone: nothing to answer it on.
        let closed = RpcError::Closed(CloseReason::PeerClosed);
        assert!(!prompt_open_again(&Error::Rpc(closed)));
    }

    /// The members of approval `a1` at stage `index`, as a request and an update carry them.
    fn stage(index: i64) -> Value {
        json!({
            "approvalId": "a1", "sessionId": "s", "viewCursor": format!("v:s:{index}"),
            "currentRequirementId": {"approvalId": "a1", "sourceIndex": index},
            "availableChoices": [{"choiceId": format!("s{index}-allow"), "label": "Allow once",
                "decision": "approved", "scope": "once"}],
            "subject": {"kind": "fileAccess", "toolName": "shell", "path": "/x", "access": "write"},
            "sourceRange": {"stream": {"kind": "run", "id": "t1"},
                "first": {"id": "r1", "sequence": 1}, "last": {"id": "r1", "sequence": 1}},
        })
    }

    /// `params` with `members` added.
    fn with(mut params: Value, members: Value) -> Value {
        for (name, value) in members.as_object().expect("members") {
            params[name] = value.clone();
        }
        params
    }

    fn event(method: &str, params: Value) -> Input {
        let event = ProtocolNotification::decode(method, Some(params)).expect(method);
        Input::Notification(event)
    }

    /// The stage the handler's next wait offers, if any.
    fn offered(deciding: &mut Deciding, fold: &Fold) -> Option<i64> {
        let next = deciding.next(fold, &Asked::default(), None)?;
        next.and_then(|p| p.stage().map(|stage| stage.requirement.source_index))
    }

    /// Passes on the current stage of approval `a1`.
    fn pass(deciding: &mut Deciding, fold: &Fold) {
        deciding.pass(fold.pending_approval("a1").expect("pending"));
    }

    #[test]
    fn a_handlers_passed_stages_are_kept_while_their_approval_is_pending() {
        let mut fold = Fold::for_session("s", FoldRules::default());
        let request = with(
            stage(0),
            json!({"turnId": "t1", "taskId": "task", "itemId": "tool-1", "toolCallId": "c1",
                "toolName": "shell", "rawArgs": "{}", "protectedWrite": false,
                "judgeEscalated": false}),
        );
        let request: Box<msp_types::ApprovalRequestParams> =
            serde_json::from_value(request).expect("approval/request params");
        let asked = Input::Request(ServerRequest::ApprovalRequest(request));
        fold.apply(asked.clone());
        let mut deciding = Deciding::default();
        assert_eq!(offered(&mut deciding, &fold), Some(0));
        pass(&mut deciding, &fold);
        assert_eq!(offered(&mut deciding, &fold), None, "passed on");

        let moved = json!({"change": {"kind": "stageApproved",
            "requirementId": {"approvalId": "a1", "sourceIndex": 0}}});
        fold.apply(event("approval/updated", with(stage(1), moved)));
        assert_eq!(offered(&mut deciding, &fold), Some(1), "the next stage");
        // The request routed after the update: the fold keeps the later stage, still offered.
        fold.apply(asked);
        assert_eq!(
            offered(&mut deciding, &fold),
            Some(1),
            "the later stage kept"
        );
        pass(&mut deciding, &fold);
        assert_eq!(
            deciding.passed.len(),
            2,
            "kept while the approval is pending"
        );

        let resolved = json!({"itemId": "tool-1", "turnId": "t1", "decision": "approved",
            "policyResult": "allow", "resolvedBy": "user", "decidedByCommandId": "cmd-1",
            "stageEvidence": [], "viewCursor": "v:s:2"});
        fold.apply(event("approval/resolved", with(stage(1), resolved)));
        assert!(fold.pending_approvals().is_empty());
        assert_eq!(offered(&mut deciding, &fold), None);
        assert!(
            deciding.passed.is_empty(),
            "a resolved approval's stages are forgotten"
        );
    }

    /// Session `s`'s fold with approval `a1` asked, at its stage 0.
    fn asked_a1() -> Fold {
        let mut fold = Fold::for_session("s", FoldRules::default());
        fold.apply(event(
            "approval/requested",
            with(
                stage(0),
                json!({"turnId": "t1",
                "taskId": "task", "itemId": "tool-1", "toolCallId": "c1", "toolName": "shell",
                "rawArgs": "{}", "protectedWrite": false, "judgeEscalated": false}),
            ),
        ));
        fold
    }

    /// The host's refusal of `approval/decide` as `kind`.
    fn refused_as(code: i64, kind: &str) -> Error {
        let error = msp_types::ErrorObject::builder()
            .code(code)
            .message("refused")
            .data(serde_json::from_value::<msp_types::ErrorData>(json!({"kind": kind})).unwrap())
            .build();
        Error::Rpc(crate::outcome::remote("approval/decide", error))
    }

    /// The stage of a decision the host refused as gone (resolved, moved past, not found)
    /// is passed on, and the handler goes on; any other refusal is the caller's.
    #[test]
    fn a_stage_the_host_says_is_gone_is_passed_on() {
        for (code, kind, gone) in [
            (-32050, "approvalNotFound", true),
            (-32051, "approvalAlreadyResolved", true),
            (-32053, "approvalRequirementStale", true),
            (-32054, "approvalReviewerUnavailable", false),
        ] {
            let fold = asked_a1();
            let shown = fold.pending_approval("a1").expect("pending").clone();
            let mut deciding = Deciding::default();
            let failed = deciding.failed(&shown, refused_as(code, kind));
            assert_eq!(matches!(failed, Ok(None)), gone, "{kind}: {failed:?}");
            // Passed on: not offered again (the wait goes on for another).
            let next = deciding.next(&fold, &Asked::default(), None);
            assert_eq!(next.is_none(), gone, "{kind}: {next:?}");
        }
    }

    /// A decision refused as a choice the stage does not offer (`approvalChoiceInvalid`) is
    /// no end of the handler: the stage is not offered again until the fold shows its
    /// choices changed, whether the change is folded after the refusal or before it.
    #[test]
    fn a_stage_refused_a_choice_is_offered_again_once_its_choices_changed() {
        let refusal = || refused_as(-32052, "approvalChoiceInvalid");
        // Stage 0 with choices named `prefix`.
        let choices = |prefix: &str, at: u32| {
            let mut params = stage(0);
            params["viewCursor"] = format!("v:s:{at}").into();
            params["availableChoices"][0]["choiceId"] = format!("{prefix}-allow").into();
            params["change"] = json!({"kind": "choicesChanged"});
            event("approval/updated", params)
        };
        let first_choice = |deciding: &mut Deciding, fold: &Fold| {
            let next = deciding.next(fold, &Asked::default(), None)?;
            let stage = next.as_ref()?.stage()?;
            Some(stage.choices[0].choice_id.clone())
        };
        for change_first in [false, true] {
            let mut fold = asked_a1();
            let mut deciding = Deciding::default();
            let shown = fold.pending_approval("a1").expect("pending").clone();
            assert_eq!(
                first_choice(&mut deciding, &fold).as_deref(),
                Some("s0-allow")
            );
            if change_first {
                fold.apply(choices("new", 5));
            }
            let failed = deciding.failed(&shown, refusal());
            assert!(matches!(failed, Ok(None)), "{failed:?}");
            if !change_first {
                assert_eq!(
                    first_choice(&mut deciding, &fold),
                    None,
                    "not until it changed"
                );
                fold.apply(choices("new", 5));
            }
            assert_eq!(
                first_choice(&mut deciding, &fold).as_deref(),
                Some("new-allow"),
                "changed first: {change_first}"
            );
        }
    }
}
