//! The commands of a session whose outcome this client has not seen, to send again from a new
//! connection after the host went away: same `commandId`, same params, so that a host that
//! still knows the command answers with its first decision instead of applying it twice.

use std::collections::HashSet;

use msp_rpc::{Command, RpcError};
use msp_types::protocol::methods;
use msp_types::rpc::Request;
use msp_types::{ClientResult, HistoryMode, ItemKind, LastTurn, SessionResumeResult};
use serde_json::Value;

use crate::outcome::Error;

/// A command this client sent in a session whose outcome it has not seen: no acknowledgement
/// came (the request timed out, the connection closed first, or a send was given up while
/// it awaited its answer), one came naming another command, a draining host refused it
/// (`daemonDraining`), it was refused for now (`overloaded`) once an attempt of it may have
/// been applied ([`PendingCommand::may_have_applied`]), or, for a `turn/start`, the turn it
/// started has not ended. A command the host refused otherwise, or refused for now at every
/// attempt while none may have been applied, is not one. Take them from the old session
/// ([`blocking::Session::pending`](crate::blocking::Session::pending)) and send them again
/// on the session resumed over a new connection: any of them with
/// [`blocking::Session::resend`](crate::blocking::Session::resend), or typed, a `turn/start`
/// with [`blocking::Session::resend_turn`](crate::blocking::Session::resend_turn) (a
/// [`Turn`](crate::blocking::Turn) to follow); both carry over whether it may have been
/// applied. Any command may also go with
/// [`blocking::Session::send`](crate::blocking::Session::send) of
/// [`PendingCommand::command`], as a new command: refused for now at every attempt, it is
/// no longer pending.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingCommand {
    method: &'static str,
    command_id: String,
    session_id: String,
    params: Value,
    turn_id: Option<String>,
    may_have_applied: bool,
}

impl PendingCommand {
    /// The command's method.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The `commandId` it was sent with, and is sent again with.
    pub fn command_id(&self) -> &str {
        &self.command_id
    }

    /// The session it was sent in.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The params as sent.
    pub fn params(&self) -> &Value {
        &self.params
    }

    /// For a `turn/start` the host acknowledged, the turn it named.
    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }

    /// Whether an attempt of it may have been applied: one timed out, or was given up while
    /// it awaited its answer, or the connection closed under it, or the host acknowledged
    /// another command, or (a `turn/start`) it was acknowledged and its turn runs. Not when
    /// every answer said it was not (a draining host's refusal, say). Sent again, a host that
    /// applied it answers with its first decision.
    pub fn may_have_applied(&self) -> bool {
        self.may_have_applied
    }

    /// The command again, typed as `M`: the same `commandId` and params (its `sessionId`
    /// among them: send it on that session's handle, so that its outcome is noted there).
    pub fn command<M: Request>(&self) -> Result<Command<M>, Error> {
        if M::METHOD != self.method {
            return Err(self.misdirected(format!("it is not {}", M::METHOD)));
        }
        let params: M::Params = serde_json::from_value(self.params.clone())
            .map_err(|e| self.misdirected(format!("its params do not decode: {e}")))?;
        Ok(Command::with_id(self.command_id.clone(), |_| params))
    }

    /// The `turn/start` again, for session `session_id`.
    pub(crate) fn turn_start(
        &self,
        session_id: &str,
    ) -> Result<Command<methods::TurnStart>, Error> {
        self.sent_in(session_id)?;
        self.command()
    }

    /// The prompt a command settling one names (`userInput/answer`, `cancel`, `clarify`,
    /// `interrupt`).
    pub(crate) fn prompt(&self) -> Option<&str> {
        let settles = [
            methods::UserInputAnswerMethod::METHOD,
            methods::UserInputCancel::METHOD,
            methods::UserInputClarify::METHOD,
            methods::UserInputInterrupt::METHOD,
        ];
        match settles.contains(&self.method) {
            true => self.params.get("userInputId")?.as_str(),
            false => None,
        }
    }

    /// `Ok` when the command was sent in session `session_id`.
    pub(crate) fn sent_in(&self, session_id: &str) -> Result<(), Error> {
        if self.session_id != session_id {
            return Err(self.misdirected(format!(
                "it was sent in session {}, not {session_id}",
                self.session_id
            )));
        }
        Ok(())
    }

    /// Checks that a replay of this `turn/start` acknowledged turn `turn_id`, as the first
    /// acknowledgement did (when one came).
    pub(crate) fn replayed_as(&self, turn_id: &str) -> Result<(), Error> {
        match &self.turn_id {
            Some(first) if first != turn_id => Err(Error::ReplayDiffers {
                method: self.method,
                command_id: self.command_id.clone(),
            }),
            _ => Ok(()),
        }
    }

    pub(crate) fn misdirected(&self, reason: String) -> Error {
        Error::Misdirected {
            method: self.method,
            command_id: self.command_id.clone(),
            reason,
        }
    }
}

/// What sending a pending command again gave
/// ([`blocking::Session::resend`](crate::blocking::Session::resend)): a `turn/start`'s turn,
/// to follow, or any other command's acknowledgement, typed by its method.
#[derive(Debug)]
#[non_exhaustive]
pub enum Resent<T> {
    /// The turn a `turn/start` started (or the host said it started the first time).
    Turn(T),
    /// Any other command's acknowledgement.
    Acknowledged(ClientResult),
}

/// `result`, the acknowledgement of method `M`, as the table's result.
pub(crate) fn acknowledged<M: Request>(result: &M::Result) -> Result<ClientResult, Error> {
    ClientResult::decode(M::METHOD, msp_types::rpc::encode_payload(result))
        .map_err(|e| RpcError::Decode(e).into())
}

/// How sending a command ended when no attempt of it was acknowledged.
#[derive(Debug)]
pub(crate) struct Unacknowledged {
    /// The last attempt's error.
    pub(crate) error: Error,
    /// Whether an attempt timed out (it may have been applied, whatever the later ones
    /// were told).
    pub(crate) timed_out: bool,
}

#[cfg(test)]
impl From<Error> for Unacknowledged {
    /// Failed at its only attempt.
    fn from(error: Error) -> Self {
        let timed_out = matches!(error, Error::Rpc(RpcError::TimedOut { .. }));
        Self { error, timed_out }
    }
}

/// The commands of one session whose outcome is not seen yet, in the order sent.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    entries: Vec<PendingCommand>,
    /// The commands an attempt of which may have been applied (see
    /// [`PendingCommand::may_have_applied`]; one resent is noted before it is sent),
    /// whatever a later attempt or send was told.
    in_doubt: HashSet<String>,
}

impl Ledger {
    /// Notes `command` (its params as `params`), sent in `session_id` (sent again: noted
    /// once); first forgets the commands whose outcome `seen` says the fold shows.
    pub(crate) fn sent<M: Request>(
        &mut self,
        session_id: &str,
        command: &Command<M>,
        params: Value,
        seen: impl Fn(&PendingCommand) -> bool,
    ) {
        self.retain(|e| !seen(e));
        if self
            .entries
            .iter()
            .any(|e| e.command_id == command.command_id())
        {
            return;
        }
        self.entries.push(PendingCommand {
            method: M::METHOD,
            command_id: command.command_id().to_owned(),
            session_id: session_id.to_owned(),
            params,
            turn_id: None,
            may_have_applied: false,
        });
    }

    /// Command `command_id`, about to be sent again from an earlier connection's pending
    /// commands, may have been applied already (noted before its [`Ledger::sent`]).
    pub(crate) fn doubted(&mut self, command_id: &str) {
        self.in_doubt.insert(command_id.to_owned());
    }

    /// The host acknowledged command `command_id`: its outcome is seen, but for a
    /// `turn/start`, whose outcome is its turn's end. A command settling a prompt takes along
    /// the others of that prompt whose outcome was not seen: the prompt is this one's to
    /// settle, and sent again they could only lose to it.
    pub(crate) fn acknowledged(&mut self, method: &str, command_id: &str, result: &Value) {
        if method != methods::TurnStart::METHOD {
            let entry = self.entries.iter().find(|e| e.command_id == command_id);
            return match entry.and_then(PendingCommand::prompt).map(str::to_owned) {
                Some(prompt) => self.retain(|e| e.prompt() != Some(&prompt)),
                None => self.forget(command_id),
            };
        }
        // Applied: sent again and refused for now, it stays pending.
        self.in_doubt.insert(command_id.to_owned());
        let turn_id = result.get("turnId").and_then(Value::as_str);
        if let Some(entry) = self.entries.iter_mut().find(|e| e.command_id == command_id) {
            entry.turn_id = turn_id.map(str::to_owned);
        }
    }

    /// Command `command_id` failed with `failure`'s last error. It stays pending (to send
    /// again, here or over another connection) while its outcome is unknown: a timeout, a
    /// closed connection, an acknowledgement naming another command; a draining host's
    /// refusal (`daemonDraining`: another host takes it); and a refusal for now
    /// (`overloaded`, any retryable error) once an attempt of it, in this send or an
    /// earlier one, may have been applied. Any other answer of the host is its outcome (a
    /// refusal for now of every attempt says none was applied: sent again later it could
    /// undo what the program did since), and a command that could not be encoded was never
    /// sent.
    pub(crate) fn failed(&mut self, command_id: &str, failure: &Unacknowledged) {
        let may_have_applied = match &failure.error {
            Error::Rpc(RpcError::TimedOut { .. } | RpcError::Closed(_))
            | Error::Closed(_)
            | Error::AckMismatch { .. } => true,
            _ => failure.timed_out,
        };
        if may_have_applied {
            self.in_doubt.insert(command_id.to_owned());
        }
        let in_doubt = self.in_doubt.contains(command_id);
        let unknown = match &failure.error {
            Error::Rpc(RpcError::Remote(remote)) => {
                crate::options::draining(remote) || (in_doubt && remote.retryable() == Some(true))
            }
            _ => may_have_applied,
        };
        if !unknown {
            self.forget(command_id);
        }
    }

    /// The commands whose outcome is not seen (`seen` says whether the fold shows it).
    pub(crate) fn pending(&self, seen: impl Fn(&PendingCommand) -> bool) -> Vec<PendingCommand> {
        let unseen = self.entries.iter().filter(|e| !seen(e));
        unseen
            .map(|e| PendingCommand {
                may_have_applied: self.in_doubt.contains(&e.command_id),
                ..e.clone()
            })
            .collect()
    }

    /// A send of command `command_id` was given up before its attempts were over: while
    /// one may have been applied (`in_doubt`: it awaited its answer) the command stays
    /// pending, and so it does after; else it is forgotten, unless an earlier attempt may
    /// have been applied.
    #[cfg(feature = "tokio")]
    pub(crate) fn given_up(&mut self, command_id: &str, in_doubt: bool) {
        if in_doubt {
            self.in_doubt.insert(command_id.to_owned());
        } else if !self.in_doubt.contains(command_id) {
            self.forget(command_id);
        }
    }

    /// Forgets command `command_id`: its outcome is seen, or it was never applied.
    fn forget(&mut self, command_id: &str) {
        self.retain(|e| e.command_id != command_id);
    }

    /// Keeps the commands `keep` says; the doubts of those it drops go with them (a doubt
    /// noted before its command is, [`Ledger::doubted`], stays).
    fn retain(&mut self, keep: impl Fn(&PendingCommand) -> bool) {
        let in_doubt = &mut self.in_doubt;
        self.entries.retain(|e| {
            let kept = keep(e);
            if !kept {
                in_doubt.remove(&e.command_id);
            }
            kept
        });
    }
}

/// The turns a resume shows ended before it: the one its `lastTurn` names, with how it
/// ended, and, from a snapshot, each turn a `userMessage` item names that is neither running
/// nor queued (how it ended unknown).
#[derive(Clone, Debug, Default)]
pub(crate) struct EndedBefore(Vec<(String, Option<Box<LastTurn>>)>);

impl EndedBefore {
    pub(crate) fn of(result: &SessionResumeResult) -> Self {
        let mut ended = Vec::new();
        if let Some(last) = &result.last_turn {
            ended.push((last.turn_id.clone(), Some(last.clone())));
        }
        let history = &result.history;
        let snapshot = match history.mode {
            HistoryMode::Snapshot | HistoryMode::AnchoredSnapshot => history.snapshot.as_ref(),
            _ => None,
        };
        if let Some(snapshot) = snapshot {
            let state = &snapshot.state;
            let active = state.active_turn.iter().map(|t| &t.turn_id);
            // Running, queued, or taken already: a set, a long snapshot having many turns.
            let mut seen: HashSet<&String> = active
                .chain(state.queued_turns.iter().map(|t| &t.turn_id))
                .chain(ended.iter().map(|(id, _)| id))
                .collect();
            let mut found = Vec::new();
            for item in &state.items {
                let Some(turn_id) = item.turn_id.as_value() else {
                    continue;
                };
                if item.kind == ItemKind::UserMessage && seen.insert(turn_id) {
                    found.push((turn_id.clone(), None));
                }
            }
            ended.extend(found);
        }
        EndedBefore(ended)
    }

    /// Adds the turns `other` shows ended that this does not.
    pub(crate) fn extend(&mut self, other: EndedBefore) {
        for (turn_id, how) in other.0 {
            if !self.contains(&turn_id) {
                self.0.push((turn_id, how));
            }
        }
    }

    /// Whether turn `turn_id` ended before the resume.
    pub(crate) fn contains(&self, turn_id: &str) -> bool {
        self.0.iter().any(|(id, _)| id == turn_id)
    }

    /// How turn `turn_id` ended before the resume: `Some(None)` when the resume does not say.
    pub(crate) fn get(&self, turn_id: &str) -> Option<Option<&LastTurn>> {
        let (_, last) = self.0.iter().find(|(id, _)| id == turn_id)?;
        Some(last.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use msp_types::{GoalSetParams, TurnStartParams};

    fn turn_start() -> Command<methods::TurnStart> {
        Command::new(|id| {
            TurnStartParams::builder()
                .command_id(id)
                .input(Vec::new())
                .session_id("s")
                .build()
        })
    }

    fn params<M: Request>(command: &Command<M>) -> Value {
        serde_json::to_value(command.params()).unwrap()
    }

    fn goal_set() -> Command<methods::GoalSet> {
        Command::new(|id| {
            GoalSetParams::builder()
                .command_id(id)
                .objective("ship")
                .session_id("s")
                .build()
        })
    }

    /// The host's error of `code` to a `goal/set`.
    fn remote(code: i64) -> Error {
        let error = msp_types::ErrorObject::builder()
            .code(code)
            .message("no")
            .build();
        Error::Rpc(crate::outcome::remote("goal/set", error))
    }

    /// A `goal/set` that timed out.
    fn timeout() -> Error {
        Error::Rpc(RpcError::TimedOut {
            method: "goal/set",
            id: msp_types::rpc::Id::Number(1),
        })
    }

    #[test]
    fn a_command_is_pending_until_acknowledged_and_a_turn_start_until_its_turn_ends() {
        let never = |_: &PendingCommand| false;
        let mut ledger = Ledger::default();
        let (turn, goal) = (turn_start(), goal_set());
        ledger.sent("s", &turn, params(&turn), never);
        ledger.sent("s", &goal, params(&goal), never);
        ledger.sent("s", &goal, params(&goal), never);
        let pending = ledger.pending(never);
        assert_eq!(pending.len(), 2, "a command sent again is noted once");
        assert_eq!(pending[0].command_id(), turn.command_id());
        assert_eq!(pending[1].method(), "goal/set");
        assert_eq!(pending[1].params()["objective"], "ship");

        ledger.acknowledged("goal/set", goal.command_id(), &serde_json::json!({}));
        let ack = serde_json::json!({"turnId": "t1"});
        ledger.acknowledged("turn/start", turn.command_id(), &ack);
        let pending = ledger.pending(never);
        assert_eq!(pending.len(), 1, "the turn has not ended");
        assert_eq!(pending[0].turn_id(), Some("t1"));
        let ended = |c: &PendingCommand| c.turn_id() == Some("t1");
        assert!(ledger.pending(ended).is_empty());
        let goal = goal_set();
        ledger.sent("s", &goal, params(&goal), ended);
        assert_eq!(
            ledger.entries.len(),
            1,
            "an ended turn's command is forgotten"
        );
    }

    #[test]
    fn a_command_settling_a_prompt_names_it() {
        let cancel: Command<methods::UserInputCancel> = Command::new(|id| {
            msp_types::UserInputCancelParams::builder()
                .command_id(id)
                .session_id("s")
                .user_input_id("p1")
                .build()
        });
        let never = |_: &PendingCommand| false;
        let mut ledger = Ledger::default();
        let goal = goal_set();
        ledger.sent("s", &cancel, params(&cancel), never);
        ledger.sent("s", &goal, params(&goal), never);
        let pending = ledger.pending(never);
        assert_eq!(pending[0].prompt(), Some("p1"));
        assert_eq!(pending[1].prompt(), None);
        // The cancel's outcome unknown, the prompt answered and acknowledged: the cancel is
        // no longer to send again.
        let answer: Command<methods::UserInputAnswerMethod> = Command::new(|id| {
            msp_types::UserInputAnswerParams::builder()
                .answers(Vec::new())
                .command_id(id)
                .session_id("s")
                .user_input_id("p1")
                .build()
        });
        ledger.sent("s", &answer, params(&answer), never);
        let method = methods::UserInputAnswerMethod::METHOD;
        ledger.acknowledged(method, answer.command_id(), &serde_json::json!({}));
        let pending = ledger.pending(never);
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].method(), "goal/set");
    }

    #[test]
    fn a_refusal_is_an_outcome_and_a_timeout_a_draining_hosts_refusal_or_a_refusal_for_now_after_a_timeout_is_not(
    ) {
        let never = |_: &PendingCommand| false;
        let mut ledger = Ledger::default();
        let mismatch = |command_id: &str| Error::AckMismatch {
            method: "goal/set",
            command_id: command_id.to_owned(),
            acknowledged: "another".to_owned(),
        };
        let [refused, timed_out, draining, overloaded, acknowledged_as_another, overloaded_after_timeout, refused_after_timeout] =
            std::array::from_fn(|_| goal_set());
        for command in [
            &refused,
            &timed_out,
            &draining,
            &overloaded,
            &acknowledged_as_another,
            &overloaded_after_timeout,
            &refused_after_timeout,
        ] {
            ledger.sent("s", command, params(command), never);
        }
        ledger.failed(refused.command_id(), &remote(-32030).into());
        ledger.failed(timed_out.command_id(), &timeout().into());
        ledger.failed(draining.command_id(), &remote(-32039).into());
        ledger.failed(overloaded.command_id(), &remote(-32001).into());
        let id = acknowledged_as_another.command_id();
        ledger.failed(id, &mismatch(id).into());
        // An attempt timed out, the last was refused: for now (it may have landed), or for
        // good (the host answered for that commandId).
        let after_timeout = |error| Unacknowledged {
            error,
            timed_out: true,
        };
        let id = overloaded_after_timeout.command_id();
        ledger.failed(id, &after_timeout(remote(-32001)));
        let id = refused_after_timeout.command_id();
        ledger.failed(id, &after_timeout(remote(-32030)));
        let pending: Vec<_> = ledger
            .pending(never)
            .iter()
            .map(|p| p.command_id().to_owned())
            .collect();
        let unknown = [
            &timed_out,
            &draining,
            &acknowledged_as_another,
            &overloaded_after_timeout,
        ];
        let unknown: Vec<_> = unknown.iter().map(|c| c.command_id().to_owned()).collect();
        assert_eq!(
            pending, unknown,
            "not the refused ones, for good or for now"
        );
    }

    /// An attempt that may have been applied keeps its command in doubt for the sends after
    /// it: refused for now, or given up while it waits to send again, it stays pending;
    /// a command never in doubt is forgotten.
    #[test]
    fn a_command_once_in_doubt_stays_pending_whatever_a_later_send_is_told() {
        let never = |_: &PendingCommand| false;
        let mut ledger = Ledger::default();
        let [doubted, acked_as_another, resent, clear, seen] = std::array::from_fn(|_| goal_set());
        let started = turn_start();
        ledger.sent("s", &seen, params(&seen), never);
        // A command sent again from an earlier connection's pending ones, noted as the fold
        // shows another's outcome.
        ledger.doubted(resent.command_id());
        let shown = |e: &PendingCommand| e.command_id() == seen.command_id();
        ledger.sent("s", &resent, params(&resent), shown);
        for command in [&doubted, &acked_as_another, &clear] {
            ledger.sent("s", command, params(command), never);
        }
        ledger.sent("s", &started, params(&started), never);
        ledger.failed(doubted.command_id(), &timeout().into());
        let id = acked_as_another.command_id();
        let mismatch = Error::AckMismatch {
            method: "goal/set",
            command_id: id.to_owned(),
            acknowledged: "another".to_owned(),
        };
        ledger.failed(id, &mismatch.into());
        // Applied: pending until its turn ends.
        let turn = serde_json::json!({"turnId": "t1"});
        ledger.acknowledged(methods::TurnStart::METHOD, started.command_id(), &turn);
        // Each sent again (noted once), and every attempt refused for now.
        let all = [&doubted, &acked_as_another, &resent, &clear];
        for id in all
            .iter()
            .map(|c| c.command_id())
            .chain([started.command_id()])
        {
            ledger.failed(id, &remote(-32001).into());
        }
        let ids = |ledger: &Ledger| -> Vec<String> {
            let pending = ledger.pending(never);
            pending.iter().map(|p| p.command_id().to_owned()).collect()
        };
        let mut expected = vec![resent.command_id(), doubted.command_id()];
        expected.extend([acked_as_another.command_id(), started.command_id()]);
        assert_eq!(ids(&ledger), expected);
        let pending = ledger.pending(never);
        assert!(pending.iter().all(PendingCommand::may_have_applied));
        #[cfg(feature = "tokio")]
        {
            let given_up = goal_set();
            ledger.sent("s", &given_up, params(&given_up), never);
            ledger.given_up(doubted.command_id(), false);
            ledger.given_up(given_up.command_id(), true);
            ledger.given_up(given_up.command_id(), false);
            expected.push(given_up.command_id());
            assert_eq!(
                ids(&ledger),
                expected,
                "in doubt before, or given up awaiting an answer"
            );
        }
    }

    #[test]
    fn a_pending_command_comes_back_typed_only_as_its_method_and_session() {
        let mut ledger = Ledger::default();
        let turn = turn_start();
        ledger.sent("s", &turn, params(&turn), |_| false);
        let pending = &ledger.pending(|_| false)[0];
        let again = pending.turn_start("s").expect("the same command");
        assert_eq!(again.command_id(), turn.command_id());
        assert_eq!(again.params(), turn.params());
        assert!(matches!(
            pending.turn_start("other"),
            Err(Error::Misdirected { .. })
        ));
        assert!(matches!(
            pending.command::<methods::GoalSet>(),
            Err(Error::Misdirected { .. })
        ));
    }
}
