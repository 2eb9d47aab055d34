//! How turns, prompts and commands end, and why a call failed.

use std::fmt;
use std::time::Duration;

use msp_rpc::{CloseReason, RpcError, SpawnError};
use msp_session::{Fold, TurnState};
use msp_types::{LastTurn, TurnCompletedParams, TurnTerminal, UserInputSettledParams};

use crate::asks::AskError;

/// How a turn ended.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum TurnOutcome {
    /// `turn/completed`: completed, failed or cancelled (see [`TurnOutcome::terminal`]), with
    /// its usage and, on failure, the error.
    Ended(Box<TurnCompletedParams>),
    /// Taken out of the queue before it ran (`turn/unqueued`).
    Unqueued,
    /// Taken back by an accepted retract (`turn/retracted`).
    Retracted,
    /// The connection closed before the turn ended: its end is unknown (items in progress
    /// are marked ended-unknown when the host was ephemeral).
    HostExited(CloseReason),
    /// Ended before this client resumed the session, its `turn/completed` not seen: how, when
    /// the resume's `lastTurn` names it (its terminal, and on failure the error); `None`
    /// when only the resume's snapshot shows it ran (a `userMessage` of it) and is neither
    /// running nor queued.
    EndedBeforeResume(Option<Box<LastTurn>>),
}

impl TurnOutcome {
    /// The terminal of an ended turn.
    pub fn terminal(&self) -> Option<&TurnTerminal> {
        match self {
            TurnOutcome::Ended(params) => Some(&params.terminal),
            TurnOutcome::EndedBeforeResume(Some(last)) => Some(&last.terminal),
            _ => None,
        }
    }

    /// What the fold says of turn `turn_id`, once it is over; else, when the resume showed
    /// it ended (`before`: how, when it said), that it ended before.
    pub(crate) fn of(
        fold: &Fold,
        turn_id: &str,
        before: Option<Option<&LastTurn>>,
    ) -> Option<TurnOutcome> {
        Self::folded(fold, turn_id).or_else(|| {
            let how = before?.map(|last| Box::new(last.clone()));
            Some(TurnOutcome::EndedBeforeResume(how))
        })
    }

    fn folded(fold: &Fold, turn_id: &str) -> Option<TurnOutcome> {
        let turn = fold.turn(turn_id)?;
        match turn.state() {
            TurnState::Ended => turn
                .completed()
                .map(|params| TurnOutcome::Ended(Box::new(params.clone()))),
            TurnState::Unqueued => Some(TurnOutcome::Unqueued),
            TurnState::Retracted => Some(TurnOutcome::Retracted),
            _ => None,
        }
    }
}

/// Who settled a prompt, read from `decidedByCommandId`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettledBy {
    /// A command this client sent in the session, through a session handle of any of its
    /// openings (its `commandId`).
    ThisClient(String),
    /// A command of another client, or one this client sent otherwise than through a
    /// session handle, or over an earlier connection and not sent again on this one
    /// ([`crate::blocking::Session::resend`]): its `commandId`, to compare with the one the
    /// answer's acknowledgement gave.
    Elsewhere(String),
    /// No command: the host settled it (timed out, aborted with its turn).
    Host,
}

/// A prompt's end: the `userInput/settled` params and who settled it.
#[derive(Clone, Debug)]
pub struct Settlement {
    /// The settlement as sent (`outcome`: answered, cancelled, interrupted, clarified, timed
    /// out, aborted; the answers; `decidedAt`).
    pub params: UserInputSettledParams,
    /// Who settled it.
    pub by: SettledBy,
}

/// Why a call of the client failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The host could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The connection failed the request (a remote error, a timeout after every retry, a
    /// closed connection, ...).
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The answer or decision does not fit what was offered; nothing was sent.
    #[error(transparent)]
    Ask(#[from] AskError),
    /// The connection closed while waiting.
    #[error("the connection closed: {0}")]
    Closed(CloseReason),
    /// Nothing came within the time given.
    #[error("{what}: nothing within {timeout:?}")]
    TimedOut {
        /// What was waited for.
        what: &'static str,
        /// How long.
        timeout: Duration,
    },
    /// A pending command given to another session than its own, or rebuilt as another
    /// method than its own, or a command whose params name another `commandId` than the one
    /// it was made with; nothing was sent.
    #[error("{method} {command_id} cannot be sent so: {reason}")]
    Misdirected {
        /// Its method.
        method: &'static str,
        /// Its `commandId`.
        command_id: String,
        /// What does not fit.
        reason: String,
    },
    /// A command's acknowledgement names another `commandId` than the command's: it
    /// acknowledges some other command, not this one.
    #[error("{method} {command_id}: acknowledged as {acknowledged}")]
    AckMismatch {
        /// The method.
        method: &'static str,
        /// The command sent.
        command_id: String,
        /// The `commandId` its acknowledgement names.
        acknowledged: String,
    },
    /// A command sent again with the same `commandId` got another acknowledgement than the
    /// first time: the host did not replay it. Compared on the connection that got the first
    /// (a session keeps its latest 1,024 commands' acknowledgements), and for a `turn/start`
    /// sent again from a new connection, by the turn it names.
    #[error("{method} {command_id}: the replayed acknowledgement differs from the first")]
    ReplayDiffers {
        /// The method.
        method: &'static str,
        /// The command.
        command_id: String,
    },
    /// A page of `session/list` named as the next page's cursor one that a page of the
    /// listing was asked with already: asking again would page for ever, so the listing
    /// ends.
    #[error("session/list gave back cursor {cursor:?} as the next page's")]
    PageRepeated {
        /// The cursor.
        cursor: String,
    },
    /// Pages of `session/list`, so many in a row that asking on could page for ever (16),
    /// held no session but named a next page; the listing ends.
    #[error(
        "session/list gave {} empty pages in a row, the last naming cursor {cursor:?} as the next page's",
        crate::listing::EMPTY_PAGES
    )]
    PageEmpty {
        /// The cursor.
        cursor: String,
    },
}

impl Error {
    /// Whether a decision ([`Session::decide`](crate::blocking::Session::decide)) failed
    /// because the stage it named is no longer there to decide: another decision won
    /// (`approvalAlreadyResolved`), the host moved past it (`approvalRequirementStale`) or no
    /// longer knows the approval (`approvalNotFound`), or it was no longer pending in the
    /// session when the decision was to be sent (nothing sent). That stage is not offered
    /// again; the resolution or the next stage comes to the session as any other, when there
    /// is one (none for an approval the host no longer knows).
    pub fn stage_gone(&self) -> bool {
        match self {
            Error::Rpc(RpcError::Remote(remote)) => matches!(
                remote.kind(),
                Some("approvalAlreadyResolved" | "approvalRequirementStale" | "approvalNotFound")
            ),
            Error::Ask(AskError::UnknownApproval { .. }) => true,
            _ => false,
        }
    }
}

impl fmt::Display for SettledBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettledBy::ThisClient(id) => write!(f, "this client (command {id})"),
            SettledBy::Elsewhere(id) => write!(f, "another client (command {id})"),
            SettledBy::Host => f.write_str("the host"),
        }
    }
}

impl fmt::Display for TurnOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TurnOutcome::Ended(params) => {
                write!(f, "{}", params.terminal)?;
                if let Some(error) = &params.error {
                    write!(f, ": {}", error.message)?;
                }
                Ok(())
            }
            TurnOutcome::Unqueued => f.write_str("unqueued"),
            TurnOutcome::Retracted => f.write_str("retracted"),
            TurnOutcome::HostExited(reason) => write!(f, "unknown, the host is gone: {reason}"),
            TurnOutcome::EndedBeforeResume(None) => f.write_str("ended before the resume"),
            TurnOutcome::EndedBeforeResume(Some(last)) => {
                write!(f, "{} (before the resume)", last.terminal)?;
                if let Some(error) = &last.error {
                    write!(f, ": {}", error.message)?;
                }
                Ok(())
            }
        }
    }
}

/// The host's refusal `error` of a `method` call, as the connection reports it (for tests).
#[cfg(test)]
pub(crate) fn remote(method: &'static str, error: msp_types::ErrorObject) -> RpcError {
    let entry = error.registry_entry();
    RpcError::Remote(msp_rpc::RemoteError {
        method,
        error,
        entry,
    })
}
