//! Turns by id, in the order first seen, with how each ended.

use crate::index::Index;

use msp_types::{
    ProtocolNotification, RetractOutcome, TurnCompletedParams, TurnForegroundCompletedParams,
    TurnModelRetryScheduledParams, TurnRetryScheduledParams,
};

use crate::fold::{Arrival, Input};
use crate::kept::Kept;
use crate::rules::FoldRules;

/// Where a turn stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnState {
    /// Queued behind another turn (known from a resume's snapshot).
    Queued,
    /// Started, or mentioned, and not ended.
    Running,
    /// Ended by `turn/completed`: completed, failed or cancelled (the terminal params say;
    /// see [`TurnEntry::completed`]).
    Ended,
    /// Taken back by an accepted `turn/retracted`.
    Retracted,
    /// Removed from the queue before it ran (`turn/unqueued`).
    Unqueued,
}

impl TurnState {
    /// Whether the turn has ended, one way or another.
    pub fn is_over(&self) -> bool {
        !matches!(self, TurnState::Queued | TurnState::Running)
    }
}

/// A turn as the fold holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnEntry {
    pub(crate) turn_id: String,
    pub(crate) state: TurnState,
    pub(crate) ended: Option<Kept<TurnCompletedParams>>,
    pub(crate) command_id: Option<String>,
    pub(crate) retry: Option<Box<TurnRetryScheduledParams>>,
    pub(crate) model_retry: Option<Box<TurnModelRetryScheduledParams>>,
    pub(crate) foreground: Option<Box<TurnForegroundCompletedParams>>,
    /// When each hint held (`retry`, `model_retry`, `foreground`) counts as arrived (see
    /// [`Arrival`]).
    pub(crate) hinted_at: [u64; 3],
}

impl TurnEntry {
    /// The turn's id.
    pub fn id(&self) -> &str {
        &self.turn_id
    }

    /// Where it stands.
    pub fn state(&self) -> TurnState {
        self.state
    }

    /// The `commandId` of the command that started (or last changed) it, when known.
    pub fn command_id(&self) -> Option<&str> {
        self.command_id.as_deref()
    }

    /// The terminal params of the `turn/completed` that ended it (a retract afterwards, under
    /// Python's rules, keeps them).
    pub fn completed(&self) -> Option<&TurnCompletedParams> {
        self.ended.as_ref().map(Kept::get)
    }

    /// The latest retry the host scheduled while it ran (cleared at its end).
    pub fn retry_scheduled(&self) -> Option<&TurnRetryScheduledParams> {
        self.retry.as_deref()
    }

    /// The latest model retry the host scheduled while it ran (cleared at its end).
    pub fn model_retry_scheduled(&self) -> Option<&TurnModelRetryScheduledParams> {
        self.model_retry.as_deref()
    }

    /// The foreground work's end, when the host reported it before the turn's own.
    pub fn foreground_completed(&self) -> Option<&TurnForegroundCompletedParams> {
        self.foreground.as_deref()
    }

    /// A turn's hints hold while it runs; its end (any: completed, retracted, unqueued)
    /// clears them.
    fn clear_hints(&mut self) {
        self.retry = None;
        self.model_retry = None;
        self.foreground = None;
    }
}

/// What a turn event did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnChange {
    /// It runs (a first mention creates it running).
    Running,
    /// It ended with `turn/completed`.
    Ended,
    /// An accepted retract took it back.
    Retracted,
    /// A declined retract: it stands as it was.
    RetractDeclined,
    /// It left the queue without running.
    Unqueued,
    /// A hint (a retry scheduled, the foreground completed) while it runs.
    Hint,
    /// Not applied: it has ended already; the first end stands (a second terminal, a late
    /// `turn/completed` after a retract, an end after an unqueue).
    AlreadyOver,
    /// Not applied: the event only applies to a running turn (a start or a hint after the
    /// end, a declined retract of a turn never seen), or a refill's page served a hint older
    /// than the one held.
    Stale,
}

/// A turn event, typed enough for the store.
pub(crate) enum TurnEvent {
    Started { command_id: String },
    Completed(Kept<TurnCompletedParams>),
    Retracted { command_id: String, accepted: bool },
    Unqueued { command_id: String },
    Retry(Box<TurnRetryScheduledParams>),
    ModelRetry(Box<TurnModelRetryScheduledParams>),
    Foreground(Box<TurnForegroundCompletedParams>),
}

/// Holds hint `params` in `slot`, arrived as `arrival` says, unless the hint held there
/// arrived live since the hole whose page serves this one began (it is the later word).
fn hint<T>(
    slot: &mut Option<Box<T>>,
    at: &mut u64,
    params: Box<T>,
    arrival: Arrival,
) -> TurnChange {
    if slot.is_some() && arrival.yields_to(*at) {
        return TurnChange::Stale;
    }
    *slot = Some(params);
    *at = arrival.at;
    TurnChange::Hint
}

/// The terminal params a `turn/completed` carries.
pub(crate) fn turn_completed_of(input: &Input) -> Option<&TurnCompletedParams> {
    match input {
        Input::Notification(ProtocolNotification::TurnCompleted(params)) => Some(params),
        _ => None,
    }
}

/// Whether a retract's outcome took the turn back: an absent or unknown outcome counts as
/// accepted, as the schema says.
pub(crate) fn accepted(outcome: Option<&RetractOutcome>) -> bool {
    !matches!(outcome, Some(RetractOutcome::Declined))
}

/// The turns of a session.
#[derive(Clone, Debug, Default)]
pub(crate) struct Turns {
    entries: Vec<TurnEntry>,
    index: Index,
    /// The running turn's place.
    active: Option<usize>,
    /// When the running turn was last made so: a refill's page's older start does not
    /// take its place.
    active_at: u64,
}

impl Turns {
    pub(crate) fn entries(&self) -> &[TurnEntry] {
        &self.entries
    }

    pub(crate) fn get(&self, id: &str) -> Option<&TurnEntry> {
        self.place(id).map(|at| &self.entries[at])
    }

    fn place(&self, id: &str) -> Option<usize> {
        self.index.get(id, |at| &self.entries[at].turn_id)
    }

    pub(crate) fn active(&self) -> Option<&str> {
        self.active.map(|at| self.entries[at].turn_id.as_str())
    }

    /// The place of turn `id`, created running on its first mention.
    fn entry(&mut self, id: &str) -> usize {
        match self.place(id) {
            Some(at) => at,
            None => {
                self.entries.push(TurnEntry {
                    turn_id: id.to_owned(),
                    state: TurnState::Running,
                    ended: None,
                    command_id: None,
                    retry: None,
                    model_retry: None,
                    foreground: None,
                    hinted_at: [0; 3],
                });
                let at = self.entries.len() - 1;
                let entries = &self.entries;
                self.index.insert(id, at, |at| &entries[at].turn_id);
                at
            }
        }
    }

    /// Seeds a turn from a resume (its command, when the resume names it).
    pub(crate) fn seed(&mut self, id: &str, command_id: Option<&str>, state: TurnState) {
        let at = self.entry(id);
        let entry = &mut self.entries[at];
        entry.state = state;
        if let Some(command_id) = command_id {
            entry.command_id = Some(command_id.to_owned());
        }
        if entry.state == TurnState::Running {
            self.active = Some(at);
        }
    }

    /// Applies `event` to turn `id`, arrived as `arrival` says.
    pub(crate) fn apply(
        &mut self,
        id: &str,
        event: TurnEvent,
        rules: &FoldRules,
        arrival: Arrival,
    ) -> TurnChange {
        let known = self.place(id).is_some();
        if let TurnEvent::Retracted {
            accepted: false, ..
        } = &event
        {
            if !known {
                return TurnChange::Stale;
            }
        }
        let first_end_wins = rules.first_end_wins;
        let at = self.entry(id);
        let entry = &mut self.entries[at];
        let over = entry.state.is_over();
        match event {
            TurnEvent::Started { command_id } => {
                if over {
                    return TurnChange::Stale;
                }
                entry.state = TurnState::Running;
                entry.command_id = Some(command_id);
                // A turn started live since the hole this page fills began runs now.
                if self.active.is_none() || !arrival.yields_to(self.active_at) {
                    self.active = Some(at);
                    self.active_at = arrival.at;
                }
                TurnChange::Running
            }
            TurnEvent::Completed(params) => {
                let refused = match first_end_wins {
                    true => over,
                    false => matches!(entry.state, TurnState::Retracted | TurnState::Unqueued),
                };
                if refused {
                    return TurnChange::AlreadyOver;
                }
                let mut params = params;
                if let (Some(earlier), None) = (&entry.ended, &params.get().error) {
                    // Python keeps an earlier error when a later terminal carries none.
                    if let Some(error) = &earlier.get().error {
                        params.make_mut().error = Some(error.clone());
                    }
                }
                entry.state = TurnState::Ended;
                entry.ended = Some(params);
                entry.clear_hints();
                self.clear_active(at);
                TurnChange::Ended
            }
            TurnEvent::Retracted {
                command_id,
                accepted: false,
            } => {
                entry.command_id = Some(command_id);
                TurnChange::RetractDeclined
            }
            TurnEvent::Retracted { command_id, .. } => {
                if over && first_end_wins {
                    return TurnChange::AlreadyOver;
                }
                entry.state = TurnState::Retracted;
                entry.command_id = Some(command_id);
                if rules.any_end_clears_hints {
                    entry.clear_hints();
                }
                self.clear_active(at);
                TurnChange::Retracted
            }
            TurnEvent::Unqueued { command_id } => {
                if over && first_end_wins {
                    return TurnChange::AlreadyOver;
                }
                entry.state = TurnState::Unqueued;
                entry.command_id = Some(command_id);
                if rules.any_end_clears_hints {
                    entry.clear_hints();
                }
                self.clear_active(at);
                TurnChange::Unqueued
            }
            TurnEvent::Retry(params) => {
                if entry.state != TurnState::Running {
                    return TurnChange::Stale;
                }
                hint(&mut entry.retry, &mut entry.hinted_at[0], params, arrival)
            }
            TurnEvent::ModelRetry(params) => {
                if entry.state != TurnState::Running {
                    return TurnChange::Stale;
                }
                hint(
                    &mut entry.model_retry,
                    &mut entry.hinted_at[1],
                    params,
                    arrival,
                )
            }
            TurnEvent::Foreground(params) => {
                if entry.state != TurnState::Running {
                    return TurnChange::Stale;
                }
                hint(
                    &mut entry.foreground,
                    &mut entry.hinted_at[2],
                    params,
                    arrival,
                )
            }
        }
    }

    fn clear_active(&mut self, at: usize) {
        if self.active == Some(at) {
            self.active = None;
        }
    }
}
