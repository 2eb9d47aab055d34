//! The fold: typed inputs in, an outcome for each, the session's state out.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::Set;

use msp_types::{
    HistoryMode, ProtocolNotification, ServerRequest, SessionResumeResult, SessionStartResult,
    UserInputSettledParams,
};

use crate::approvals::{ApprovalChange, Approvals, PendingApproval};
use crate::cursors::Cursors;
use crate::items::{item_of, DeltaChange, ItemChange, ItemEntry, Items};
use crate::kept::Kept;
use crate::prompts::{PendingPrompt, PromptChange, Prompts};
use crate::refill::{Refill, RefillFailure};
use crate::rules::FoldRules;
use crate::state::{SessionState, StateChange, StateValue};
use crate::turns::{
    accepted, turn_completed_of, TurnChange, TurnEntry, TurnEvent, TurnState, Turns,
};

/// The snapshot format this fold reads (`history.snapshot.schemaVersion`).
pub const SNAPSHOT_SCHEMA_VERSION: i64 = 1;

/// Something the host said that the fold takes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Input {
    /// A notification (every method; those without effect on the view are reported).
    Notification(ProtocolNotification),
    /// A request of the host: `approval/request` and `userInput/request` carry view state.
    Request(ServerRequest),
    /// A frame that did not decode: where and why.
    Undecodable {
        /// Its method, when it could be read.
        method: Option<String>,
        /// The JSON pointer of what failed.
        pointer: String,
        /// Why.
        reason: String,
        /// The session its params name, when they could be read that far: it is that
        /// session's input (and another session's fold refuses it).
        session_id: Option<String>,
    },
}

impl From<ProtocolNotification> for Input {
    fn from(notification: ProtocolNotification) -> Self {
        Input::Notification(notification)
    }
}

impl From<ServerRequest> for Input {
    fn from(request: ServerRequest) -> Self {
        Input::Request(request)
    }
}

impl Input {
    /// An input that allocates nothing, put where one is taken apart.
    pub(crate) fn placeholder() -> Self {
        Input::Undecodable {
            method: None,
            pointer: String::new(),
            reason: String::new(),
            session_id: None,
        }
    }

    /// The method of what was said.
    pub fn method(&self) -> Option<&str> {
        match self {
            Input::Notification(n) => Some(n.method()),
            Input::Request(r) => Some(r.method()),
            Input::Undecodable { method, .. } => method.as_deref(),
        }
    }

    /// The session it names, when it names one.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Input::Notification(n) => session_of(n),
            Input::Request(ServerRequest::ApprovalRequest(p)) => Some(&p.session_id),
            Input::Request(ServerRequest::UserInputRequest(p)) => Some(&p.session_id),
            Input::Undecodable { session_id, .. } => session_id.as_deref(),
            _ => None,
        }
    }

    /// Its view cursor, when it is a view event.
    pub fn view_cursor(&self) -> Option<&str> {
        match self {
            Input::Notification(n) => cursor_of(n),
            Input::Request(ServerRequest::ApprovalRequest(p)) => Some(&p.view_cursor),
            Input::Request(ServerRequest::UserInputRequest(p)) => Some(&p.view_cursor),
            _ => None,
        }
    }
}

/// What one input did to the fold. Every input has one; none is an error.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// An item event.
    Item {
        /// The item.
        item_id: String,
        /// What it did.
        change: ItemChange,
    },
    /// An `item/delta`.
    Delta {
        /// The item.
        item_id: String,
        /// The field its text goes to (`text` when the delta does not say).
        field: String,
        /// What it did.
        change: DeltaChange,
    },
    /// A turn event.
    Turn {
        /// The turn.
        turn_id: String,
        /// What it did.
        change: TurnChange,
    },
    /// An approval event, or the `approval/request` server request.
    Approval {
        /// The approval.
        approval_id: String,
        /// What it did.
        change: ApprovalChange,
    },
    /// A question event, or the `userInput/request` server request.
    Prompt {
        /// The prompt.
        user_input_id: String,
        /// What it did.
        change: PromptChange,
    },
    /// A session state event.
    State(StateChange),
    /// `view/gap`: events between `after` and `next` were not delivered; the fold is not
    /// current until a refill fills the hole (the hole's bounds: [`Fold::gap`]).
    Gap {
        /// This frame's `after`.
        after: String,
        /// This frame's `next`.
        next: String,
    },
    /// `view/gap` naming a `next` seen while this hole is open, or the target of one of the
    /// last holes filled: nothing changed.
    GapRepeated {
        /// The repeated `next`.
        next: String,
    },
    /// A `session/start` or `session/resume` result seeded the fold.
    Seeded(Seeded),
    /// A resume's history could not seed the fold: of mode `none`, nothing to page and no
    /// hole; of an unknown mode, or a snapshot missing or not read, its events are paged
    /// instead (the fold holds a hole from the view's oldest event up to its head).
    SeedRefused {
        /// Why.
        reason: String,
    },
    /// An event already applied, delivered again (its cursor was seen): not applied.
    DuplicateCursor {
        /// Its method.
        method: String,
        /// The cursor seen before.
        cursor: String,
    },
    /// A live event a refill already served (a late twin), refused once.
    LateTwin {
        /// Its method.
        method: String,
        /// Its cursor.
        cursor: String,
    },
    /// An event naming another session, or a result of another session's seeding a fold
    /// bound to one: not applied.
    ForeignSession {
        /// Its method.
        method: String,
        /// The session it names.
        session_id: String,
    },
    /// A known method that carries no view state (a notice such as `approval/reviewing`, or a
    /// session-level event such as `session/statusChanged`): nothing changed.
    Ignored {
        /// The method.
        method: String,
    },
    /// A method this version does not know: kept by the caller, nothing changed.
    Unrecognized {
        /// The method.
        method: String,
    },
    /// A frame that did not decode: nothing changed.
    Malformed {
        /// Its method, when known.
        method: Option<String>,
        /// Where it failed.
        pointer: String,
        /// Why.
        reason: String,
    },
    /// The session was discarded after its ephemeral host died: nothing is applied.
    Discarded {
        /// The method refused.
        method: Option<String>,
    },
}

/// What seeding took from a result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seeded {
    /// Items taken from the history.
    pub items: usize,
    /// Turns taken (the active one and the queued ones).
    pub turns: usize,
    /// Pending approvals and questions named.
    pub pending: usize,
}

/// The hole the host reported, if any, and how the last refill went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GapState {
    pending: Option<(Option<String>, String)>,
    /// The session the `view/gap` named.
    session_id: Option<String>,
    /// Every `next` named while the hole is open.
    targets: Set<String>,
    failure: Option<RefillFailure>,
    /// When the hole's first `after` arrived, noted when the gap was (the cursor window may
    /// forget it before a refill ends).
    after_arrival: Option<u64>,
    /// The items an item event or delta was folded live for while the hole was open (a
    /// refill that overflowed, or one that failed): a page's deltas of those would come after
    /// later ones.
    live_items: Set<String>,
}

impl GapState {
    /// The hole: events after `after` up to `next` were not delivered (merged gaps keep the
    /// first `after` and the latest `next`). `after` is `None` for the hole a resume left
    /// when the host did not serve its history: every event up to the view's head.
    pub fn pending(&self) -> Option<(Option<&str>, &str)> {
        self.pending
            .as_ref()
            .map(|(a, n)| (a.as_deref(), n.as_str()))
    }

    /// Whether no hole is open: the fold holds every event the host delivered.
    pub fn is_current(&self) -> bool {
        self.pending.is_none()
    }

    /// Why the last refill of the open hole failed, if it did.
    pub fn failure(&self) -> Option<&RefillFailure> {
        self.failure.as_ref()
    }
}

/// A session's view, folded from what the host said: no threads, no clock, no I/O.
#[derive(Clone, Debug)]
pub struct Fold {
    rules: FoldRules,
    session_id: Option<String>,
    items: Items,
    turns: Turns,
    approvals: Approvals,
    prompts: Prompts,
    state: SessionState,
    gap: GapState,
    cursors: Cursors,
    /// Cursors a refill served past its target, refused once when they arrive live again
    /// (kept when no cursor window does the job).
    twins: Set<String>,
    /// The targets of the last holes filled ([`FoldRules::filled_gaps_remembered`], every
    /// `next` a merged hole had): a `view/gap` delivered again after its hole was filled
    /// opens none.
    filled: VecDeque<String>,
    discarded: bool,
    /// Inputs taken so far: when each arrived, to tell live state from a refill's older one.
    arrivals: u64,
    /// While a refill's pages are applied: the arrival of the hole's `after`, or of the
    /// latest event they served that came live, after which every live event is newer than
    /// the pages'.
    paging_after: Option<u64>,
    /// Whether a refill's pages are being applied (not live inputs).
    paging: bool,
}

impl Fold {
    /// An empty fold, bound to no session yet (the first seed binds it).
    pub fn new(rules: FoldRules) -> Self {
        Fold {
            cursors: Cursors::new(rules.cursor_window),
            rules,
            session_id: None,
            items: Items::default(),
            turns: Turns::default(),
            approvals: Approvals::default(),
            prompts: Prompts::default(),
            state: SessionState::default(),
            gap: GapState::default(),
            twins: Set::default(),
            filled: VecDeque::new(),
            discarded: false,
            arrivals: 0,
            paging_after: None,
            paging: false,
        }
    }

    /// An empty fold of session `session_id`.
    pub fn for_session(session_id: impl Into<String>, rules: FoldRules) -> Self {
        let mut fold = Fold::new(rules);
        fold.session_id = Some(session_id.into());
        fold
    }

    /// The rules it folds by.
    pub fn rules(&self) -> &FoldRules {
        &self.rules
    }

    /// The session it is bound to.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Takes one input.
    pub fn apply(&mut self, input: impl Into<Input>) -> Outcome {
        let input = input.into();
        if let Some(outcome) = self.arrive(&input) {
            return outcome;
        }
        self.take_owned(input)
    }

    /// Takes one input that the caller keeps too (a client hands it out as an event): what
    /// the fold keeps of an item event or a `turn/completed` is kept inside it, ids are
    /// copied out of it, and it is copied whole only for the params the fold keeps of other
    /// kinds (approvals, prompts, session state, a turn's hints). An input no one else holds
    /// any more is taken as [`Fold::apply`] takes it. The outcome is [`Fold::apply`]'s.
    ///
    /// An item kept inside an input is taken out of it once the caller dropped its share (at
    /// one of the next inputs): the rest of the notification is freed then rather than when
    /// the item is replaced or the fold dropped.
    pub fn apply_shared(&mut self, input: Arc<Input>) -> Outcome {
        self.items.unshare();
        if let Some(outcome) = self.arrive(&input) {
            return outcome;
        }
        match Arc::try_unwrap(input) {
            Ok(input) => self.take_owned(input),
            Err(input) => self.take_shared(input),
        }
    }

    /// `input` arrives: counted, and its outcome if it is not applied.
    fn arrive(&mut self, input: &Input) -> Option<Outcome> {
        self.arrivals += 1;
        if !self.paging && self.gap.pending.is_some() {
            if let Some(item_id) = item_named(input) {
                self.gap.live_items.insert(item_id.to_owned());
            }
        }
        if self.discarded {
            return Some(Outcome::Discarded {
                method: input.method().map(str::to_owned),
            });
        }
        self.refused(input)
    }

    fn take_owned(&mut self, input: Input) -> Outcome {
        match input {
            Input::Notification(notification) => self.notification(notification),
            Input::Request(request) => self.request(request),
            Input::Undecodable {
                method,
                pointer,
                reason,
                ..
            } => Outcome::Malformed {
                method,
                pointer,
                reason,
            },
        }
    }

    /// [`Fold::apply_shared`]'s input, held elsewhere too: [`Fold::notification`] arm by
    /// arm, borrowing where it moves; a kind whose params the fold stores is copied and
    /// taken as owned. Both end in "ignored": `tests/shared.rs` folds every kind both ways
    /// and catches a kind one of them misses.
    fn take_shared(&mut self, input: Arc<Input>) -> Outcome {
        use ProtocolNotification as N;
        let Input::Notification(notification) = &*input else {
            return self.take_owned(Input::clone(&input));
        };
        match notification {
            N::ItemStarted(_) | N::ItemUpdated(_) | N::ItemCompleted(_) => {
                let completed = matches!(notification, N::ItemCompleted(_));
                match Kept::shared(input, item_of) {
                    Ok(item) => self.apply_item(item, completed),
                    Err(input) => self.take_owned(Input::clone(&input)),
                }
            }
            N::TurnCompleted(p) => {
                let turn_id = p.turn_id.clone();
                match Kept::shared(input, turn_completed_of) {
                    Ok(params) => self.apply_turn(turn_id, TurnEvent::Completed(params)),
                    Err(input) => self.take_owned(Input::clone(&input)),
                }
            }
            N::ItemDelta(p) => {
                let field = p.field.as_deref().unwrap_or("text");
                let change = self.items.delta(&p.item_id, field, &p.delta, &self.rules);
                Outcome::Delta {
                    item_id: p.item_id.clone(),
                    field: field.to_owned(),
                    change,
                }
            }
            N::TurnStarted(p) => self.apply_turn(
                p.turn_id.clone(),
                TurnEvent::Started {
                    command_id: p.command_id.clone(),
                },
            ),
            N::TurnRetracted(p) => self.apply_turn(
                p.turn_id.clone(),
                TurnEvent::Retracted {
                    command_id: p.command_id.clone(),
                    accepted: accepted(p.outcome.as_ref()),
                },
            ),
            N::TurnUnqueued(p) => self.apply_turn(
                p.turn_id.clone(),
                TurnEvent::Unqueued {
                    command_id: p.command_id.clone(),
                },
            ),
            N::ApprovalReviewing(p) => Outcome::Approval {
                approval_id: p.approval_id.clone(),
                change: ApprovalChange::Reviewing,
            },
            N::ViewGap(p) => self.view_gap(p.session_id.clone(), p.after.clone(), p.next.clone()),
            N::Unknown { method, .. } => Outcome::Unrecognized {
                method: method.clone(),
            },
            N::TurnRetryScheduled(_)
            | N::TurnModelRetryScheduled(_)
            | N::TurnForegroundCompleted(_)
            | N::ApprovalRequested(_)
            | N::ApprovalUpdated(_)
            | N::ApprovalResolved(_)
            | N::UserInputRequested(_)
            | N::UserInputSettled(_)
            | N::SessionApprovalModeChanged(_)
            | N::SessionBranchChanged(_)
            | N::SessionContextUsage(_)
            | N::SessionGoalChanged(_)
            | N::SessionModelChanged(_)
            | N::SessionNameChanged(_)
            | N::SessionReasoningEffortChanged(_)
            | N::SessionTodoListChanged(_)
            | N::SessionTokenUsage(_) => self.take_owned(Input::clone(&input)),
            other => Outcome::Ignored {
                method: other.method().to_owned(),
            },
        }
    }

    /// Why `input` is not applied at all: another session's, or delivered before.
    fn refused(&mut self, input: &Input) -> Option<Outcome> {
        let method = || input.method().unwrap_or_default().to_owned();
        if let Some(theirs) = input.session_id() {
            let foreign = self.foreign(input.method().unwrap_or_default(), theirs);
            if foreign.is_some() {
                return foreign;
            }
        }
        let cursor = input.view_cursor()?;
        if self.rules.cursor_window == 0 {
            // Python's late twins: refused once, then forgotten.
            if !matches!(input, Input::Request(_)) && self.twins.remove(cursor) {
                return Some(Outcome::LateTwin {
                    method: method(),
                    cursor: cursor.to_owned(),
                });
            }
            return None;
        }
        // A request and its view event are one ask, with one cursor: both feed one entry.
        if matches!(input, Input::Request(_)) {
            return None;
        }
        // A page's event counts as arrived when its hole began, as what it folds does: a
        // later walk past it does not take it for one that came live.
        match self.cursors.first(cursor, self.arrival().at) {
            true => None,
            false => Some(Outcome::DuplicateCursor {
                method: method(),
                cursor: cursor.to_owned(),
            }),
        }
    }

    /// An owned notification. A kind handled here is handled in [`Fold::take_shared`] too.
    fn notification(&mut self, notification: ProtocolNotification) -> Outcome {
        use ProtocolNotification as N;
        let rules = &self.rules;
        match notification {
            N::ItemStarted(p) => self.apply_item(Kept::owned(p.item), false),
            N::ItemUpdated(p) => self.apply_item(Kept::owned(p.item), false),
            N::ItemCompleted(p) => self.apply_item(Kept::owned(p.item), true),
            N::ItemDelta(p) => {
                // Moved from the params: a delta allocates only the text it appends.
                let field = p.field.unwrap_or_else(|| "text".to_owned());
                let change = self.items.delta(&p.item_id, &field, &p.delta, rules);
                Outcome::Delta {
                    item_id: p.item_id,
                    field,
                    change,
                }
            }
            N::TurnStarted(p) => self.apply_turn(
                p.turn_id,
                TurnEvent::Started {
                    command_id: p.command_id,
                },
            ),
            N::TurnCompleted(p) => {
                self.apply_turn(p.turn_id.clone(), TurnEvent::Completed(Kept::owned(p)))
            }
            N::TurnRetracted(p) => self.apply_turn(
                p.turn_id,
                TurnEvent::Retracted {
                    command_id: p.command_id,
                    accepted: accepted(p.outcome.as_ref()),
                },
            ),
            N::TurnUnqueued(p) => self.apply_turn(
                p.turn_id,
                TurnEvent::Unqueued {
                    command_id: p.command_id,
                },
            ),
            N::TurnRetryScheduled(p) => self.apply_turn(p.turn_id.clone(), TurnEvent::Retry(p)),
            N::TurnModelRetryScheduled(p) => {
                self.apply_turn(p.turn_id.clone(), TurnEvent::ModelRetry(p))
            }
            N::TurnForegroundCompleted(p) => {
                self.apply_turn(p.turn_id.clone(), TurnEvent::Foreground(p))
            }
            N::ApprovalRequested(p) => {
                let approval_id = p.approval_id.clone();
                let change = self.approvals.requested(*p, false, self.arrival());
                Outcome::Approval {
                    approval_id,
                    change,
                }
            }
            N::ApprovalUpdated(p) => Outcome::Approval {
                approval_id: p.approval_id.clone(),
                change: self.approvals.updated(*p, self.arrival()),
            },
            N::ApprovalResolved(p) => Outcome::Approval {
                approval_id: p.approval_id.clone(),
                change: self.approvals.resolved_by(*p),
            },
            N::ApprovalReviewing(p) => Outcome::Approval {
                approval_id: p.approval_id,
                change: ApprovalChange::Reviewing,
            },
            N::UserInputRequested(p) => {
                let user_input_id = p.user_input_id.clone();
                let change = self.prompts.requested(*p, false);
                Outcome::Prompt {
                    user_input_id,
                    change,
                }
            }
            N::UserInputSettled(p) => self.settled(*p),
            N::ViewGap(p) => self.view_gap(p.session_id, p.after, p.next),
            N::SessionApprovalModeChanged(p) => self.state_value(StateValue::ApprovalMode(p)),
            N::SessionBranchChanged(p) => self.state_value(StateValue::Branch(p)),
            N::SessionContextUsage(p) => self.state_value(StateValue::ContextUsage(p)),
            N::SessionGoalChanged(p) => self.state_value(StateValue::Goal(p)),
            N::SessionModelChanged(p) => self.state_value(StateValue::Model(p)),
            N::SessionNameChanged(p) => self.state_value(StateValue::Name(p)),
            N::SessionReasoningEffortChanged(p) => self.state_value(StateValue::ReasoningEffort(p)),
            N::SessionTodoListChanged(p) => self.state_value(StateValue::TodoList(p)),
            N::SessionTokenUsage(p) => self.state_value(StateValue::TokenUsage(p)),
            N::Unknown { method, .. } => Outcome::Unrecognized { method },
            other => Outcome::Ignored {
                method: other.method().to_owned(),
            },
        }
    }

    fn request(&mut self, request: ServerRequest) -> Outcome {
        if !self.rules.requests_feed_the_fold {
            return Outcome::Ignored {
                method: request.method().to_owned(),
            };
        }
        match request {
            ServerRequest::ApprovalRequest(p) => {
                let approval_id = p.approval_id.clone();
                let change = self.approvals.requested(*p, true, self.arrival());
                Outcome::Approval {
                    approval_id,
                    change,
                }
            }
            ServerRequest::UserInputRequest(p) => {
                let user_input_id = p.user_input_id.clone();
                let change = self.prompts.requested(*p, true);
                Outcome::Prompt {
                    user_input_id,
                    change,
                }
            }
            ServerRequest::Unknown { method, .. } => Outcome::Unrecognized { method },
            other => Outcome::Ignored {
                method: other.method().to_owned(),
            },
        }
    }

    fn apply_item(&mut self, item: Kept<msp_types::Item>, completed: bool) -> Outcome {
        let (item_id, change) = self.items.upsert(item, completed, &self.rules);
        Outcome::Item { item_id, change }
    }

    fn apply_turn(&mut self, turn_id: String, event: TurnEvent) -> Outcome {
        let arrival = self.arrival();
        let change = self.turns.apply(&turn_id, event, &self.rules, arrival);
        Outcome::Turn { turn_id, change }
    }

    /// When the input being applied counts as arrived.
    fn arrival(&self) -> Arrival {
        Arrival {
            at: self.paging_after.unwrap_or(self.arrivals),
            older_than: self.paging_after,
        }
    }

    fn settled(&mut self, settlement: UserInputSettledParams) -> Outcome {
        let user_input_id = settlement.user_input_id.clone();
        let change = self.prompts.settled_by(settlement);
        Outcome::Prompt {
            user_input_id,
            change,
        }
    }

    fn state_value(&mut self, value: StateValue) -> Outcome {
        let refuse_repeat = self.rules.cursor_window == 0;
        let arrival = self.arrival();
        Outcome::State(self.state.set(value, arrival, refuse_repeat))
    }

    fn view_gap(&mut self, session_id: String, after: String, next: String) -> Outcome {
        if self.gap.targets.contains(&next) || self.filled.contains(&next) {
            return Outcome::GapRepeated { next };
        }
        self.gap.session_id.get_or_insert(session_id);
        self.gap.targets.insert(next.clone());
        let first_after = match &self.gap.pending {
            Some((first, _)) => first.clone(),
            None => {
                // When the hole began: at `after`'s arrival. Unknown (never delivered here,
                // or forgotten), just before `next`'s when `next` came first, or now: what
                // arrived before either is older than the hole, none of whose events came.
                // (With no window, as Python, no cursor's arrival is known: nothing yields.)
                let next_came = self.cursors.arrival(&next).map(|at| at.saturating_sub(1));
                let began = self.cursors.arrival(&after).or(next_came);
                let now = (self.rules.cursor_window > 0).then_some(self.arrivals);
                self.gap.after_arrival = began.or(now);
                Some(after.clone())
            }
        };
        self.gap.pending = Some((first_after, next.clone()));
        Outcome::Gap { after, next }
    }

    /// Seeds the fold from a `session/start` result: binds it to the session (a result of
    /// another session than the one it is bound to seeds nothing: [`Outcome::ForeignSession`]).
    pub fn seed_started(&mut self, result: &SessionStartResult) -> Outcome {
        if !self.rules.seed_from_results {
            return Outcome::Ignored {
                method: "session/start".into(),
            };
        }
        self.arrivals += 1;
        if let Some(foreign) = self.foreign("session/start", &result.session.session_id) {
            return foreign;
        }
        self.bind(&result.session.session_id);
        self.cursors.first(&result.view_cursor, self.arrivals);
        Outcome::Seeded(Seeded::default())
    }

    /// Seeds the fold from a `session/resume` result: binds it to the session; takes the
    /// history's items (inline, or a snapshot's, with its state, active and queued turns and
    /// pending asks), and the pending requests the result names, so that a question waiting
    /// at resume shows pending at once. A history of mode `none`, an unknown mode or a
    /// snapshot format this fold does not read seeds nothing but the pending requests
    /// ([`Outcome::SeedRefused`] says why). An unknown mode, or a snapshot not read, leaves
    /// a hole of every event up to the view's head, to page from the view's oldest event
    /// ([`Fold::begin_refill`]), as the schema says; mode `none` says why the host served
    /// nothing (asked for none, resumed from a cursor, too large to serve or read), and
    /// leaves none. A result of another session than the one the fold is bound to seeds
    /// nothing ([`Outcome::ForeignSession`]).
    pub fn seed_resumed(&mut self, result: &SessionResumeResult) -> Outcome {
        if !self.rules.seed_from_results {
            return Outcome::Ignored {
                method: "session/resume".into(),
            };
        }
        self.arrivals += 1;
        if let Some(foreign) = self.foreign("session/resume", &result.session.session_id) {
            return foreign;
        }
        self.bind(&result.session.session_id);
        let mut seeded = Seeded::default();
        let history = &result.history;
        let refused = match (&history.mode, &history.snapshot) {
            (HistoryMode::Inline, _) => {
                for item in history.items.iter().flatten() {
                    self.items.seed(item.clone());
                    seeded.items += 1;
                }
                None
            }
            (HistoryMode::Snapshot | HistoryMode::AnchoredSnapshot, Some(snapshot))
                if snapshot.schema_version == SNAPSHOT_SCHEMA_VERSION =>
            {
                let state = &snapshot.state;
                for item in &state.items {
                    self.items.seed(item.clone());
                    seeded.items += 1;
                }
                if let Some(active) = &state.active_turn {
                    let (id, command) = (&active.turn_id, &active.command_id);
                    self.turns.seed(id, Some(command), TurnState::Running);
                    seeded.turns += 1;
                }
                for queued in &state.queued_turns {
                    let command = Some(&*queued.command_id);
                    self.turns.seed(&queued.turn_id, command, TurnState::Queued);
                    seeded.turns += 1;
                }
                for pointer in &state.pending_approvals {
                    self.approvals.pointer(&pointer.approval_id);
                    seeded.pending += 1;
                }
                for pointer in &state.pending_user_inputs {
                    self.prompts.pointer(&pointer.user_input_id);
                    seeded.pending += 1;
                }
                self.cursors.first(&snapshot.view_cursor, self.arrivals);
                // Its items are the fold's now: kept once.
                let mut kept = (**state).clone();
                kept.items = Vec::new();
                self.state.seed(kept);
                None
            }
            (HistoryMode::Snapshot | HistoryMode::AnchoredSnapshot, Some(snapshot)) => {
                Some(format!(
                    "the history's snapshot has schemaVersion {}; this fold reads {}",
                    snapshot.schema_version, SNAPSHOT_SCHEMA_VERSION
                ))
            }
            (HistoryMode::Snapshot | HistoryMode::AnchoredSnapshot, None) => {
                Some("the history names a snapshot mode but carries no snapshot".into())
            }
            (HistoryMode::None, _) => Some("the history holds no items (mode `none`)".into()),
            (mode, _) => Some(format!("the history's mode `{mode}` is unknown")),
        };
        // Whatever history was taken, the session says which turn runs (its command is
        // known from a snapshot only). A history not taken is paged, the turn's start too.
        if let (None, Some(active)) = (&refused, &result.session.active_turn_id) {
            if self.turns.get(active).is_none() {
                self.turns.seed(active, None, TurnState::Running);
                seeded.turns += 1;
            }
        }
        for pointer in &result.pending_requests {
            if let Some(id) = &pointer.approval_id {
                self.approvals.pointer(id);
                seeded.pending += 1;
            }
            if let Some(id) = &pointer.user_input_id {
                self.prompts.pointer(id);
                seeded.pending += 1;
            }
        }
        // Mode `none` says why nothing was served (asked for none, resumed from a cursor, too
        // large to serve or to read): paging would ask for what the host just declined.
        let none = history.mode == HistoryMode::None;
        match refused {
            Some(reason) if !none => {
                // The pages serve the head's event too: it is not seen yet.
                self.gap.pending = Some((None, result.view_cursor.clone()));
                self.gap.after_arrival = Some(self.arrivals);
                Outcome::SeedRefused { reason }
            }
            refused => {
                self.cursors.first(&result.view_cursor, self.arrivals);
                match refused {
                    Some(reason) => Outcome::SeedRefused { reason },
                    None => Outcome::Seeded(seeded),
                }
            }
        }
    }

    /// [`Outcome::ForeignSession`] for an input or a result naming another session than
    /// the one the fold is bound to.
    fn foreign(&self, method: &str, session_id: &str) -> Option<Outcome> {
        match &self.session_id {
            Some(ours) if self.rules.bind_to_session && ours != session_id => {
                Some(Outcome::ForeignSession {
                    method: method.to_owned(),
                    session_id: session_id.to_owned(),
                })
            }
            _ => None,
        }
    }

    fn bind(&mut self, session_id: &str) {
        if self.session_id.is_none() {
            self.session_id = Some(session_id.to_owned());
        }
    }

    /// The host died. An ephemeral host (`durable` false: `initialize` said
    /// `sessionDurability: ephemeral`; absent means durable) takes the session with it: items
    /// in progress end unknown (client-side only: nothing is invented on the wire), and the
    /// fold refuses every later input, staying readable. A durable host's session survives:
    /// nothing changes. Returns the items marked.
    pub fn host_died(&mut self, durable: bool) -> Vec<String> {
        if durable || self.discarded {
            return Vec::new();
        }
        self.discarded = true;
        self.items.mark_terminal_unknown()
    }

    /// Whether the session was discarded with its ephemeral host.
    pub fn is_discarded(&self) -> bool {
        self.discarded
    }

    /// Starts the refill of the open hole (see [`Refill`]) of the fold's session, else the
    /// one the `view/gap` named; `None` when the fold is current.
    pub fn begin_refill(&mut self) -> Option<Refill> {
        let (after, next) = self.gap.pending.clone()?;
        let session_id = self.session_id.clone().or(self.gap.session_id.clone())?;
        Some(Refill::new(session_id, after, next, &self.rules))
    }

    /// Ends a refill: the events its pages served are applied, then the live inputs it held,
    /// in arrival order, but those a page served (the overlap). When it reached its target,
    /// the hole is filled; when it failed, the fold stays not current and keeps the reason.
    pub fn finish_refill(&mut self, refill: Refill) -> Vec<Outcome> {
        let end = refill.into_end();
        let mut outcomes = Vec::new();
        // Session state arriving live after the hole's start is newer than any page's.
        let after = end
            .after
            .as_deref()
            .and_then(|after| self.cursors.arrival(after));
        self.paging_after = after.or(self.gap.after_arrival);
        self.paging = true;
        for event in end.events {
            // The view's order: past an event that came live (at the end of a hole, or
            // between two holes merged into one), the pages' events are newer than every
            // live one that came before it.
            let live = cursor_of(&event).and_then(|cursor| self.cursors.arrival(cursor));
            if let Some(arrival) = live {
                self.paging_after = self.paging_after.max(Some(arrival));
            }
            // Deltas of an item folded live since would append their text out of order.
            let late = matches!(&event, ProtocolNotification::ItemDelta(p) if self.gap.live_items.contains(&p.item_id));
            outcomes.push(match event {
                ProtocolNotification::ItemDelta(p) if late => Outcome::Delta {
                    item_id: p.item_id,
                    field: p.field.unwrap_or_else(|| "text".to_owned()),
                    change: DeltaChange::Late,
                },
                event => self.apply(Input::Notification(event)),
            });
        }
        self.paging = false;
        self.paging_after = None;
        for input in end.held {
            let served = input.view_cursor().is_some_and(|c| end.served.contains(c));
            if served && !matches!(input, Input::Request(_)) {
                outcomes.push(Outcome::DuplicateCursor {
                    method: input.method().unwrap_or_default().to_owned(),
                    cursor: input.view_cursor().unwrap_or_default().to_owned(),
                });
                continue;
            }
            outcomes.push(self.apply(input));
        }
        if self.rules.cursor_window == 0 {
            self.twins.extend(end.twins);
        }
        match end.failure {
            None if self.gap.pending.as_ref().map(|(_, next)| next) == Some(&end.target) => {
                let remembered = self.rules.filled_gaps_remembered;
                self.filled.extend(self.gap.targets.drain());
                let forgotten = self.filled.len().saturating_sub(remembered);
                self.filled.drain(..forgotten);
                self.gap = GapState::default();
            }
            None => {}
            Some(failure) => self.gap.failure = Some(failure),
        }
        outcomes
    }

    // Reading.

    /// How many inputs the fold was given, refused or not, and results it was seeded from:
    /// what a reader waits on to know the fold saw everything sent so far.
    pub fn arrivals(&self) -> u64 {
        self.arrivals
    }

    /// Whether the event at view cursor `cursor` was folded (live, from a refill's page, or
    /// a seed's cursor), as far as the cursor window remembers: its last
    /// [`FoldRules::cursor_window`] cursors at least, none under a window of 0.
    pub fn seen(&self, cursor: &str) -> bool {
        self.cursors.arrival(cursor).is_some()
    }

    /// The items, in the order first opened.
    pub fn items(&self) -> &[ItemEntry] {
        self.items.entries()
    }

    /// The item `id`.
    pub fn item(&self, id: &str) -> Option<&ItemEntry> {
        self.items.get(id)
    }

    /// Deltas held for items not seen yet: item id and its text by field.
    pub fn held_deltas(
        &self,
    ) -> impl Iterator<Item = (&str, &std::collections::BTreeMap<String, String>)> {
        self.items.held()
    }

    /// The turns, in the order first seen.
    pub fn turns(&self) -> &[TurnEntry] {
        self.turns.entries()
    }

    /// The turn `id`.
    pub fn turn(&self, id: &str) -> Option<&TurnEntry> {
        self.turns.get(id)
    }

    /// The turn running now, if any.
    pub fn active_turn(&self) -> Option<&TurnEntry> {
        self.turns.active().and_then(|id| self.turns.get(id))
    }

    /// Approvals waiting for a decision, in the order first seen.
    pub fn pending_approvals(&self) -> &[PendingApproval] {
        self.approvals.pending()
    }

    /// The pending approval `id`.
    pub fn pending_approval(&self, id: &str) -> Option<&PendingApproval> {
        self.approvals.pending().iter().find(|a| a.id() == id)
    }

    /// Approvals resolved, each with its first resolution, in the order resolved.
    pub fn resolved_approvals(&self) -> &[msp_types::ApprovalResolvedParams] {
        self.approvals.resolved()
    }

    /// Questions waiting for an answer, in the order first seen.
    pub fn pending_prompts(&self) -> &[PendingPrompt] {
        self.prompts.pending()
    }

    /// The pending question `id`.
    pub fn pending_prompt(&self, id: &str) -> Option<&PendingPrompt> {
        self.prompts.pending().iter().find(|p| p.id() == id)
    }

    /// Questions settled, each with its first settlement, in the order settled.
    pub fn settled_prompts(&self) -> &[UserInputSettledParams] {
        self.prompts.settled()
    }

    /// The session's state families.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The hole the host reported, if any.
    pub fn gap(&self) -> &GapState {
        &self.gap
    }

    /// Whether the fold holds every event the host delivered (no hole open).
    pub fn is_current(&self) -> bool {
        self.gap.is_current()
    }
}

/// When an input counts as arrived, for what the fold keeps the latest of (session state, an
/// approval's update, a turn's hints): a live input as it arrives; a refill's page's event
/// when the hole began, so that later pages override it and what arrived live since does
/// not yield to it (`older_than`, the hole's start; `None` when live, or when the hole's
/// start is not known).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival {
    pub(crate) at: u64,
    pub(crate) older_than: Option<u64>,
}

impl Arrival {
    /// Whether what was kept as arrived at `kept` stands against this input: it arrived
    /// live after the hole this input's page fills began.
    pub(crate) fn yields_to(self, kept: u64) -> bool {
        self.older_than.is_some_and(|start| kept > start)
    }
}

/// The item an item event or delta names.
fn item_named(input: &Input) -> Option<&str> {
    use ProtocolNotification as N;
    match input {
        Input::Notification(N::ItemDelta(p)) => Some(&p.item_id),
        Input::Notification(N::ItemStarted(p)) => Some(&p.item.item_id),
        Input::Notification(N::ItemUpdated(p)) => Some(&p.item.item_id),
        Input::Notification(N::ItemCompleted(p)) => Some(&p.item.item_id),
        _ => None,
    }
}

/// The session a notification names, when it names one.
pub(crate) fn session_of(notification: &ProtocolNotification) -> Option<&str> {
    use ProtocolNotification as N;
    Some(match notification {
        N::ItemStarted(p) => &p.session_id,
        N::ItemUpdated(p) => &p.session_id,
        N::ItemCompleted(p) => &p.session_id,
        N::ItemDelta(p) => &p.session_id,
        N::TurnStarted(p) => &p.session_id,
        N::TurnCompleted(p) => &p.session_id,
        N::TurnRetracted(p) => &p.session_id,
        N::TurnUnqueued(p) => &p.session_id,
        N::TurnRetryScheduled(p) => &p.session_id,
        N::TurnModelRetryScheduled(p) => &p.session_id,
        N::TurnForegroundCompleted(p) => &p.session_id,
        N::ApprovalRequested(p) => &p.session_id,
        N::ApprovalUpdated(p) => &p.session_id,
        N::ApprovalResolved(p) => &p.session_id,
        N::ApprovalReviewing(p) => &p.session_id,
        N::UserInputRequested(p) => &p.session_id,
        N::UserInputSettled(p) => &p.session_id,
        N::UserInputEngaged(p) => &p.session_id,
        N::ViewGap(p) => &p.session_id,
        N::SessionApprovalModeChanged(p) => &p.session_id,
        N::SessionBranchChanged(p) => &p.session_id,
        N::SessionContextUsage(p) => &p.session_id,
        N::SessionGoalChanged(p) => &p.session_id,
        N::SessionModelChanged(p) => &p.session_id,
        N::SessionNameChanged(p) => &p.session_id,
        N::SessionReasoningEffortChanged(p) => &p.session_id,
        N::SessionTodoListChanged(p) => &p.session_id,
        N::SessionTokenUsage(p) => &p.session_id,
        N::SessionModelRouteUnserved(p) => &p.session_id,
        N::SessionStatusChanged(p) => &p.session_id,
        N::SessionClosed(p) => &p.session_id,
        N::SessionLeaveCompleted(p) => &p.session_id,
        N::SessionViewHealthChanged(p) => &p.session_id,
        N::SessionStarted(p) => &p.session.session_id,
        N::MonitorInboxItemAdmitted(p) => &p.session_id,
        N::MonitorInboxItemDrained(p) => &p.session_id,
        N::MonitorInboxItemVoided(p) => &p.session_id,
        N::RecapCompleted(p) => &p.session_id,
        N::PluginChanged(p) => &p.session_id,
        N::PluginMarketplaceChanged(p) => &p.session_id,
        N::SkillChanged(p) => &p.session_id,
        N::ComputerUseSetupChanged(p) => p.session_id.as_deref()?,
        #[cfg(feature = "experimental")]
        N::AdmissionRequested(p) => &p.session_id,
        #[cfg(feature = "experimental")]
        N::AdmissionResolved(p) => &p.session_id,
        #[cfg(feature = "experimental")]
        N::SessionPermissionProfileChanged(p) => &p.session_id,
        N::Unknown { params, .. } => member(params, "sessionId")?,
        _ => return None,
    })
}

/// A string member of an unknown kind's params.
fn member<'a>(params: &'a Option<serde_json::Value>, name: &str) -> Option<&'a str> {
    params.as_ref()?.get(name)?.as_str()
}

/// The view cursor of a view event: its own position in the view. Not of
/// `session/statusChanged` (the cursor of the record that caused it), `approval/reviewing`
/// (the cursor of the record that opened the approval, `approval/requested`'s),
/// `session/closed` (the view's head at unload) or `session/leaveCompleted` (no view event):
/// theirs name other records, which would be refused as seen when they come.
pub(crate) fn cursor_of(notification: &ProtocolNotification) -> Option<&str> {
    use ProtocolNotification as N;
    Some(match notification {
        N::ItemStarted(p) => &p.view_cursor,
        N::ItemUpdated(p) => &p.view_cursor,
        N::ItemCompleted(p) => &p.view_cursor,
        N::ItemDelta(p) => &p.view_cursor,
        N::TurnStarted(p) => &p.view_cursor,
        N::TurnCompleted(p) => &p.view_cursor,
        N::TurnRetracted(p) => &p.view_cursor,
        N::TurnUnqueued(p) => &p.view_cursor,
        N::TurnRetryScheduled(p) => &p.view_cursor,
        N::TurnModelRetryScheduled(p) => &p.view_cursor,
        N::TurnForegroundCompleted(p) => &p.view_cursor,
        N::ApprovalRequested(p) => &p.view_cursor,
        N::ApprovalUpdated(p) => &p.view_cursor,
        N::ApprovalResolved(p) => &p.view_cursor,
        N::UserInputRequested(p) => &p.view_cursor,
        N::UserInputSettled(p) => &p.view_cursor,
        N::SessionApprovalModeChanged(p) => &p.view_cursor,
        N::SessionBranchChanged(p) => &p.view_cursor,
        N::SessionContextUsage(p) => &p.view_cursor,
        N::SessionGoalChanged(p) => &p.view_cursor,
        N::SessionModelChanged(p) => &p.view_cursor,
        N::SessionNameChanged(p) => &p.view_cursor,
        N::SessionReasoningEffortChanged(p) => &p.view_cursor,
        N::SessionTodoListChanged(p) => &p.view_cursor,
        N::SessionTokenUsage(p) => &p.view_cursor,
        N::SessionModelRouteUnserved(p) => &p.view_cursor,
        N::MonitorInboxItemAdmitted(p) => &p.view_cursor,
        N::MonitorInboxItemDrained(p) => &p.view_cursor,
        N::MonitorInboxItemVoided(p) => &p.view_cursor,
        #[cfg(feature = "experimental")]
        N::AdmissionRequested(p) => &p.view_cursor,
        #[cfg(feature = "experimental")]
        N::AdmissionResolved(p) => &p.view_cursor,
        #[cfg(feature = "experimental")]
        N::SessionPermissionProfileChanged(p) => &p.view_cursor,
        // A kind of a later schema: its `viewCursor`, which a view event's is.
        N::Unknown { params, .. } => member(params, "viewCursor")?,
        _ => return None,
    })
}
