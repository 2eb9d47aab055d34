//! The client's state, written once for both drivers: the sessions opened, each with its fold,
//! its events not taken yet and who waits on it.
//!
//! # Who does what
//!
//! | who | takes the lock to | wakes |
//! | --- | --- | --- |
//! | the pump (a thread or task) | route each frame (a notification, or a host request's copy where it came among them: msp-rpc's handler only replies its receipt) to its session's fold ([`Core::route_all`]); end every session when the connection closes ([`Core::end`]) | the session's waiters (at the end, every session's and each [`EndWait`]'s) |
//! | a refill's thread or task, or an opener ([`Paging`]) | finish the refill ([`Core::finish_refill`]): its pages and then the inputs held for it folded | the session's waiters |
//! | a handle (session, turn) | open or close a session, read its fold, take an event, check what it waits for | nobody |
//! | a waiting handle (blocking driver) | take the role of the pump and route as it does, one holder at a time (`pump.rs`) | the session's waiters; the handles waiting for the role, when it gives it back |
//! | a [`HandlerStop`](crate::HandlerStop) stopped (any thread) | wake each session an approval handler of it watches ([`Core::wake`]) | the session's waiters |
//!
//! One `Mutex<State>`, held for short steps only: never while sending, waiting or calling the
//! program. Waiting is polling a step with a waker; a step that cannot finish keeps the waker
//! in its session's slot, and whoever routes an input to that session, finishes its refill
//! or ends the connection wakes every waker there, once the lock is released. The waiters check their
//! condition again: a turn's end, a prompt's settlement, an event in the queue.
//!
//! Refills page on a thread (task) of their own, started by whoever routed the gap (the
//! pump, or on the blocking driver the handle holding the pump's role), or on the opener's,
//! for a gap among what came before the session was opened; routing goes on meanwhile:
//! inputs routed for the session are held and folded after its pages, up to the fold's
//! `refill_held_frames` (past it, folded as they come, the refill ending overflowed, and
//! another begun for the hole once it is finished, up to [`OVERFLOWS`] in a row). A wait
//! on a session sees the connection's end only once nothing is held for its refill
//! ([`seen_end`]): the refill ends soon after the connection (its pages fail).

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use foldhash::fast::RandomState;
use msp_rpc::CloseReason;
use msp_rpc::Command;
use msp_session::{Fold, FoldRules, Input, ItemChange, ItemEntry, Outcome, Refill, RefillFailure};
use msp_types::rpc::Request;
use msp_types::{ApprovalRequirementRef, SessionResumeResult};
use slab::Slab;

use crate::acks::Acks;
use crate::outcome::Error;
use crate::pending::{EndedBefore, Ledger, PendingCommand, Unacknowledged};
use crate::pump::{BUSY_LOOK, STALL};
use crate::shared::Asked;

// The lock is loom's when the synchronization is model-checked (`core/loom_tests.rs`).
#[cfg(loom)]
use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
use std::sync::{Mutex, MutexGuard};

#[cfg(all(test, loom))]
#[path = "core/loom_tests.rs"]
mod loom_tests;

/// Sessions and turns by id, looked up for every frame routed (seeded per client, as std's).
type ById<V> = HashMap<String, V, RandomState>;

/// Where an open session's slot is kept: its handles reach it there without a lookup, every
/// frame they wait for. Valid while the opening that gave it lasts (see [`Core::open`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place(usize);

/// The client's own slot, opened with the client and never forgotten: the inputs naming no
/// session (`usage/changed`; account and log notifications; a request of no known method)
/// are its events, the latest [`UNCLAIMED`] kept.
pub(crate) const CLIENT: Place = Place(0);

/// The sessions open: each slot at its place, found by id for the frames routed to it.
#[derive(Default)]
struct Slots {
    open: Slab<Slot>,
    by_id: ById<usize>,
}

impl Slots {
    fn get(&self, session_id: &str) -> Option<&Slot> {
        let &at = self.by_id.get(session_id)?;
        Some(&self.open[at])
    }

    fn get_mut(&mut self, session_id: &str) -> Option<&mut Slot> {
        let &at = self.by_id.get(session_id)?;
        Some(&mut self.open[at])
    }

    /// The slot of session `session_id`, which a handle holds open (its last handle forgets
    /// it, so it is there).
    fn named(&mut self, session_id: &str) -> &mut Slot {
        self.get_mut(session_id)
            .expect("a handle keeps its session open")
    }

    /// The slot at `place` (its opening lasts, so it is there).
    fn at(&mut self, place: Place) -> &mut Slot {
        &mut self.open[place.0]
    }

    fn insert(&mut self, session_id: &str, slot: Slot) -> Place {
        let at = self.open.insert(slot);
        self.by_id.insert(session_id.to_owned(), at);
        Place(at)
    }

    fn remove(&mut self, session_id: &str) -> Option<Slot> {
        let at = self.by_id.remove(session_id)?;
        Some(self.open.remove(at))
    }
}

/// Counts one more command in flight or accepted for `key` (`up`), or one fewer: whether
/// none is left now.
fn count<K: Hash + Eq>(counts: &mut HashMap<K, usize>, key: K, up: bool) -> bool {
    if up {
        *counts.entry(key).or_default() += 1;
        return false;
    }
    let Some(count) = counts.get_mut(&key) else {
        return false;
    };
    *count -= 1;
    if *count > 0 {
        return false;
    }
    counts.remove(&key);
    true
}

/// Inputs kept for sessions not opened yet (the host may speak of a session before the
/// result that names it arrives): the latest ones, at most this many.
pub(crate) const UNCLAIMED: usize = 1_024;

/// How many refills of a session may overflow in a row: past them its hole is left open
/// (the program drops the session's handles, its approval handlers stopped, and resumes
/// it, or lets a refill hold more, [`FoldRules::refill_held_frames`]), so that a session
/// always busier than a refill may hold does not page for ever.
pub(crate) const OVERFLOWS: u32 = 3;

/// Something that happened in a session (or, among the client's own events, naming none),
/// in the order it was routed.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Event {
    /// What the host said (a notification, or a request, whose receipt the client replies
    /// at once) and what it did to the session's fold.
    Folded {
        /// What the host said, shared with the fold, which keeps what it needs of it (an
        /// item, a turn's terminal params) without copying it.
        input: Arc<Input>,
        /// What it did.
        outcome: Outcome,
    },
    /// A gap's refill from `view/page` ended: what the pages did, in order (the inputs
    /// routed meanwhile follow, each an event of its own; when more came than a refill
    /// holds, they came before it, as they were routed, and its pages were dropped).
    /// Whether the hole is filled is the fold's to say ([`Fold::is_current`]; when not,
    /// `fold.gap().failure()` says why): an overflowed refill is followed by another.
    Refilled {
        /// What each did.
        outcomes: Vec<Outcome>,
    },
    /// The events were not taken fast enough: this many of the oldest were dropped (the fold
    /// saw them all).
    Lagged {
        /// How many.
        missed: u64,
    },
    /// The connection ended, the session's last event (and the client's own last): why (a
    /// host's exit, classified), and the items in progress then that the fold marked ended
    /// unknown (an ephemeral host's: nothing of its sessions outlived it; none for a durable
    /// host, whose session goes on).
    Closed {
        /// Why.
        reason: CloseReason,
        /// The items marked ended unknown ([`ItemEntry::terminal_unknown`]).
        ended_unknown: Vec<String>,
    },
}

impl Event {
    /// What the host said, for [`Event::Folded`].
    pub fn input(&self) -> Option<&Input> {
        match self {
            Event::Folded { input, .. } => Some(input),
            _ => None,
        }
    }

    /// What it did to the fold, in order: [`Event::Folded`]'s outcome, or each of
    /// [`Event::Refilled`]'s; none for the others.
    pub fn outcomes(&self) -> &[Outcome] {
        match self {
            Event::Folded { outcome, .. } => std::slice::from_ref(outcome),
            Event::Refilled { outcomes } => outcomes,
            Event::Lagged { .. } | Event::Closed { .. } => &[],
        }
    }
}

/// The connection ended: every wait fails with its reason (a session's, once nothing is held
/// for its refill).
struct Ended {
    reason: CloseReason,
    /// Whether the host said its sessions outlive it (`sessionDurability`).
    durable: bool,
}

/// A session's state in the core: what a handle's wait checks ([`Slot::next_event`],
/// [`Slot::check_fold`], [`Slot::next_turn_item`]) under the lock.
pub(crate) struct Slot {
    /// Times the session was opened and not forgotten yet.
    opened: usize,
    /// Which opening of a session this slot is, among every session's: a refill is finished
    /// in the slot it was begun in only.
    opening: u64,
    fold: Fold,
    events: VecDeque<Event>,
    capacity: usize,
    /// One a turn handle ([`Core::follow_turn`]), until it is dropped, and one a `turn/start`
    /// in flight ([`Core::follow_command`]): each gets every change to its turn's items.
    followers: Slab<Follower>,
    /// The session's refill in flight, and what it holds.
    hold: Hold,
    waiting: Waiters,
    /// What this client did in the session.
    asked: Asked,
    /// The acknowledgements of the commands sent lately, to compare a replay's with.
    acks: Acks,
    /// The commands whose outcome is not seen yet.
    ledger: Ledger,
    /// Its refills that overflowed in a row ([`OVERFLOWS`]).
    overflows: u32,
    /// Whether [`Event::Closed`] was pushed.
    told_closed: bool,
}

/// A session's refill in flight, and the inputs routed meanwhile.
enum Hold {
    /// No refill pages.
    Idle,
    /// A refill pages: the inputs routed meanwhile, to fold after its pages.
    Held(Vec<Input>),
    /// A refill pages, but the inputs routed meanwhile are folded as they come: more came
    /// than the rules let it hold ([`msp_session::FoldRules::refill_held_frames`]; the
    /// refill ends overflowed), or the session's ephemeral host ended (it ends failed).
    Folding,
}

impl Slot {
    /// Opening `opening` of a session, folded into `fold`; `sent`: the `commandId`s this
    /// client sent in it before.
    fn new(opening: u64, fold: Fold, capacity: usize, sent: HashSet<String>) -> Self {
        Slot {
            opened: 1,
            opening,
            fold,
            events: VecDeque::new(),
            capacity,
            followers: Slab::new(),
            hold: Hold::Idle,
            waiting: Waiters::default(),
            asked: Asked {
                sent,
                ..Asked::default()
            },
            acks: Acks::default(),
            ledger: Ledger::default(),
            overflows: 0,
            told_closed: false,
        }
    }

    /// Folds `input`, and makes it an event when events are kept (the fold and the event
    /// share it): whether it showed a gap.
    fn fold_in(&mut self, input: Input) -> bool {
        if self.capacity == 0 {
            let outcome = self.fold.apply(input);
            self.follow(&outcome);
            return matches!(outcome, Outcome::Gap { .. });
        }
        let input = Arc::new(input);
        let outcome = self.fold.apply_shared(Arc::clone(&input));
        self.follow(&outcome);
        let gap = matches!(outcome, Outcome::Gap { .. });
        self.push(Event::Folded { input, outcome });
        gap
    }

    /// Begins refilling the fold's open hole, if it has one: the inputs routed meanwhile are
    /// held for it.
    fn begin_refill(&mut self) -> Option<Refilling> {
        let refill = self.fold.begin_refill()?;
        self.hold = Hold::Held(Vec::new());
        Some(Refilling {
            session_id: self.fold.session_id().unwrap_or_default().to_owned(),
            opening: self.opening,
            refill: Box::new(refill),
        })
    }

    /// The connection ended (`durable`: the host's sessions outlive it): the fold marks an
    /// ephemeral host's items in progress ended unknown, their followers take them so, and
    /// the session's last event says why ([`Slot::tell_closed`]).
    fn host_ended(&mut self, reason: &CloseReason, durable: bool) {
        for item_id in self.fold.host_died(durable) {
            let change = ItemChange::Discarded;
            self.follow(&Outcome::Item { item_id, change });
        }
        self.tell_closed(reason);
    }

    /// The session's last event, [`Event::Closed`], once: not while a refill is in flight
    /// (what it held and its outcomes come first, when it ends), but for a session its
    /// ephemeral host took along (its refill adds nothing) — when the waits see the end.
    fn tell_closed(&mut self, reason: &CloseReason) {
        let refilling = !matches!(self.hold, Hold::Idle) && !self.fold.is_discarded();
        if self.told_closed || refilling {
            return;
        }
        self.told_closed = true;
        // Marked only by the host's end.
        let items = self.fold.items().iter();
        let ended_unknown = items
            .filter(|item| item.terminal_unknown())
            .map(|item| item.id().to_owned())
            .collect();
        self.push(Event::Closed {
            reason: reason.clone(),
            ended_unknown,
        });
    }

    fn push(&mut self, event: Event) {
        if self.capacity == 0 {
            return;
        }
        if self.events.len() >= self.capacity {
            // The oldest event goes, counted in the `Lagged` kept in front of the rest.
            let missed = match self.events.front() {
                Some(&Event::Lagged { missed }) => {
                    self.events.pop_front();
                    missed
                }
                _ => 0,
            };
            self.events.pop_front();
            self.events.push_front(Event::Lagged { missed: missed + 1 });
        }
        self.events.push_back(event);
    }

    /// Notes the item an outcome changed for each follower of its turn.
    fn follow(&mut self, outcome: &Outcome) {
        let item_id = match outcome {
            Outcome::Item { item_id, .. } | Outcome::Delta { item_id, .. } => item_id,
            Outcome::Turn { turn_id, .. } if !self.followers.is_empty() => {
                let command = self.fold.turn(turn_id).and_then(|t| t.command_id());
                let mut seeded = None;
                for (_, follower) in self.followers.iter_mut() {
                    if matches!(&follower.follows, Follows::Command(c) if Some(c.as_str()) == command)
                    {
                        // From the items the fold holds of the turn already (a turn sent
                        // again ran before; an item may come before its turn's event).
                        let of_turn =
                            seeded.get_or_insert_with(|| Follower::of(&self.fold, turn_id));
                        *follower = of_turn.clone();
                    }
                }
                return;
            }
            _ => return,
        };
        if self.followers.is_empty() {
            return;
        }
        let Some(turn) = self
            .fold
            .item(item_id)
            .and_then(|entry| entry.item().turn_id.as_value().map(String::as_str))
        else {
            return;
        };
        for (_, follower) in self.followers.iter_mut() {
            let of_turn = matches!(&follower.follows, Follows::Turn(t) if t == turn);
            // Changes not taken yet coalesce: an item is queued once until it is taken.
            if of_turn && follower.queued.insert(item_id.clone()) {
                follower.items.push_back(item_id.clone());
            }
        }
    }
}

/// A turn handle's view of its turn's items ([`Slot::next_turn_item`]).
#[derive(Clone)]
struct Follower {
    follows: Follows,
    /// The ids of the items changed and not taken yet, in order.
    items: VecDeque<String>,
    /// The same ids, to find one (a turn handle only waited on takes none).
    queued: HashSet<String>,
}

impl Follower {
    /// A follower of turn `turn_id`, given the items `fold` holds of it already.
    fn of(fold: &Fold, turn_id: &str) -> Follower {
        let items: VecDeque<String> = fold
            .items()
            .iter()
            .filter(|entry| entry.item().turn_id.as_value().map(String::as_str) == Some(turn_id))
            .map(|entry| entry.id().to_owned())
            .collect();
        Follower {
            follows: Follows::Turn(turn_id.to_owned()),
            queued: items.iter().cloned().collect(),
            items,
        }
    }
}

/// Whose items a follower takes.
#[derive(Clone)]
enum Follows {
    /// The turn a `turn/start` in flight starts, not seen yet: its `commandId`.
    Command(String),
    Turn(String),
}

/// A `turn/start` in flight whose turn a follower takes from its first event
/// ([`Core::follow_command`]). Dropped before [`Following::started`] took the result (the
/// start's future dropped at its await, a panic), it forgets both: nothing is left to grow.
pub(crate) struct Following<'a> {
    core: &'a Core,
    session_id: &'a str,
    /// Taken by [`Following::started`].
    key: Option<usize>,
}

impl Following<'_> {
    /// The command's result: the follower's key with the turn it started (given the items
    /// the fold holds of it unless the follower saw the turn start), or the failure, the
    /// follower forgotten.
    pub(crate) fn started(
        mut self,
        result: Result<msp_types::TurnStartResult, Error>,
    ) -> Result<(msp_types::TurnStartResult, usize), Error> {
        let key = self.key.take().expect("taken once, here");
        let started = match result {
            Ok(started) => started,
            Err(error) => {
                self.core.unfollow(self.session_id, key);
                return Err(error);
            }
        };
        let mut state = self.core.lock();
        let slot = state.slots.named(self.session_id);
        match &slot.followers[key].follows {
            Follows::Turn(turn_id) if *turn_id == started.turn_id => {}
            _ => slot.followers[key] = Follower::of(&slot.fold, &started.turn_id),
        }
        Ok((started, key))
    }
}

impl Drop for Following<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.core.unfollow(self.session_id, key);
        }
    }
}

struct State {
    slots: Slots,
    /// Sessions opened so far (each slot's [`Slot::opening`]).
    openings: u64,
    /// Inputs naming a session not open (yet), the latest [`UNCLAIMED`].
    unclaimed: VecDeque<Input>,
    /// Inputs dropped from `unclaimed`, counted for the log.
    unclaimed_dropped: u64,
    ended: Option<Ended>,
    /// The `commandId`s this client sent in the latest [`SENT_BEFORE`] sessions no longer
    /// open, for their next opening (a prompt settled by one was settled by this client).
    sent_before: VecDeque<(String, HashSet<String>)>,
    /// Waits for the connection's end itself, each at the key its [`EndWait`] holds (taken
    /// out when it is dropped: a wait a `select!` gave up on leaves nothing behind).
    ending: Slab<Waker>,
    pumping: Pumping,
    woken: Vec<Waker>,
}

/// Who takes frames from the connection and routes them (`pump.rs`): one holder at a time.
#[derive(Default)]
struct Pumping {
    /// Whether someone holds the role.
    held: bool,
    /// Handles whose wait parked, until it ends (see [`HandleWait`]).
    handles: usize,
    /// Times a waiting handle was served (it took the role, or found what it waits for
    /// routed already): the pump leaves the routing to handles served since its last look.
    served: u64,
    /// Handles waiting for the role.
    waiting: Vec<Waker>,
    /// The pump thread, between its looks.
    pump: Option<Waker>,
}

/// The state behind its lock; wakers gathered are woken once the lock is released.
struct Locked<'a>(Option<MutexGuard<'a, State>>);

impl std::ops::Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        self.0.as_ref().expect("held until dropped")
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        self.0.as_mut().expect("held until dropped")
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let woken = self.0.as_mut().map(|s| std::mem::take(&mut s.woken));
        drop(self.0.take());
        for waker in woken.into_iter().flatten() {
            waker.wake();
        }
    }
}

/// A session opened ([`Core::open`]).
#[must_use = "a gap reported before the session opened is refilled by the caller"]
pub(crate) struct Opened {
    /// Where its slot is, for its handles.
    pub(crate) place: Place,
    /// The gap among what the host said of it before, to refill.
    pub(crate) refills: Refills,
}

/// Gaps to refill, in order.
pub(crate) type Refills = Vec<Refilling>;

/// A gap's refill, begun in one opening of its session: finished in a later opening (every
/// handle dropped and the session opened again while it paged), it is dropped, since the
/// fold it was planned for is gone.
pub(crate) struct Refilling {
    pub(crate) session_id: String,
    opening: u64,
    /// Boxed: large.
    pub(crate) refill: Box<Refill>,
}

/// Refills being paged, each finished ([`Core::finish_refill`]: the inputs held for it
/// folded, its session's waits woken) however the paging stops: one still here when this is
/// dropped (a panic, a task cancelled, a thread that never started) is finished as failed,
/// so that no session's inputs stay held for it.
pub(crate) struct Paging {
    core: Arc<Core>,
    refills: Refills,
}

impl Paging {
    pub(crate) fn new(core: Arc<Core>, refills: Refills) -> Self {
        Paging { core, refills }
    }

    /// The refill to page next, kept here until [`Paging::finish`]ed, and whether its pages
    /// are still wanted: not once its session folds the inputs routed as they come (it
    /// overflowed, and its pages would be dropped), nor once the session is forgotten.
    pub(crate) fn next(&mut self) -> Option<(&mut Refill, Wanted<'_>)> {
        let refilling = self.refills.last_mut()?;
        let wanted = Wanted {
            core: &self.core,
            session_id: &refilling.session_id,
            opening: refilling.opening,
        };
        Some((&mut *refilling.refill, wanted))
    }

    /// Finishes the refill [`Paging::next`] gave; the refills the inputs it held ask for
    /// come next.
    pub(crate) fn finish(&mut self) {
        if let Some(refilling) = self.refills.pop() {
            let more = self.core.finish_refill(refilling);
            self.refills.extend(more);
        }
    }
}

/// Whether a refill's pages are still wanted ([`Paging::next`]).
pub(crate) struct Wanted<'a> {
    core: &'a Core,
    session_id: &'a str,
    opening: u64,
}

impl Wanted<'_> {
    pub(crate) fn get(&self) -> bool {
        self.core.holds_for(self.session_id, self.opening)
    }
}

impl Drop for Paging {
    fn drop(&mut self) {
        self.core.fail_refills(
            std::mem::take(&mut self.refills),
            "the refill was not paged to its end",
        );
    }
}

/// A wait for the connection's end: its waker is kept under its key until the end, or
/// until the wait is dropped.
pub(crate) struct EndWait<'a> {
    core: &'a Core,
    key: Option<usize>,
}

impl EndWait<'_> {
    /// Why the connection ended, once it did; until then `cx` is woken at its end.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<CloseReason> {
        let mut state = self.core.lock();
        if let Some(ended) = &state.ended {
            return Poll::Ready(ended.reason.clone());
        }
        match self.key.and_then(|key| state.ending.get_mut(key)) {
            Some(held) if held.will_wake(cx.waker()) => {}
            Some(held) => held.clone_from(cx.waker()),
            None => self.key = Some(state.ending.insert(cx.waker().clone())),
        }
        Poll::Pending
    }
}

impl Drop for EndWait<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            // Drained at the end, when no key is handed out any more.
            self.core.lock().ending.try_remove(key);
        }
    }
}

/// A task's wait on a session (the tokio driver's: its pump task routes every frame; the
/// blocking driver's handles wait through [`HandleWait`]): its waker is kept under a key of
/// its own until an input routed to the session wakes it, or the wait is dropped (a wait a
/// `timeout` or `select!` gave up on leaves nothing behind).
#[cfg(any(feature = "tokio", all(test, loom)))]
pub(crate) struct SlotWait<'a> {
    core: &'a Core,
    place: Place,
    key: Option<WaitKey>,
}

#[cfg(any(feature = "tokio", all(test, loom)))]
impl SlotWait<'_> {
    /// `check` in the slot (see [`Slot`]); when it finds nothing, `cx` is woken once an
    /// input is routed to the session or the connection ends.
    pub(crate) fn poll<T>(
        &mut self,
        cx: &mut Context<'_>,
        check: impl FnOnce(&mut Slot, Option<&CloseReason>) -> Option<T>,
    ) -> Poll<T> {
        let mut state = self.core.lock();
        let state = &mut *state;
        let slot = state.slots.at(self.place);
        match check(slot, seen_end(&state.ended, slot)) {
            Some(found) => {
                slot.waiting.forget(&mut self.key);
                Poll::Ready(found)
            }
            None => {
                slot.waiting.keep(&mut self.key, cx.waker());
                Poll::Pending
            }
        }
    }
}

#[cfg(any(feature = "tokio", all(test, loom)))]
impl Drop for SlotWait<'_> {
    fn drop(&mut self) {
        if self.key.is_some() {
            // The handle the wait borrows keeps the session open.
            let mut state = self.core.lock();
            state.slots.at(self.place).waiting.forget(&mut self.key);
        }
    }
}

/// A wait's key among a session's [`Waiters`]: the round of wake-ups it was kept in, and its
/// place then.
type WaitKey = (u64, usize);

/// The wakers of the waits on a session, each under its wait's own key (two waits of one
/// task keep one waker each: one dropped takes nothing of the other's). An input routed to
/// the session wakes them all and begins a new round: a wait that finds nothing then is kept
/// anew, and a key of an earlier round names nothing.
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    wakers: Slab<Waker>,
    round: u64,
}

impl Waiters {
    /// Keeps `waker` for the wait holding `key` (set here when it holds none of this round).
    fn keep(&mut self, key: &mut Option<WaitKey>, waker: &Waker) {
        let held = key
            .filter(|&(round, _)| round == self.round)
            .and_then(|(_, at)| self.wakers.get_mut(at));
        match held {
            Some(held) if held.will_wake(waker) => {}
            Some(held) => held.clone_from(waker),
            None => *key = Some((self.round, self.wakers.insert(waker.clone()))),
        }
    }

    /// Takes out the waker of the wait holding `key` (it ended or was dropped).
    fn forget(&mut self, key: &mut Option<WaitKey>) {
        if let Some((round, at)) = key.take() {
            if round == self.round {
                self.wakers.try_remove(at);
            }
        }
    }

    /// Hands every waker to `woken` (woken once the lock is released): each wait checks
    /// again.
    fn wake_into(&mut self, woken: &mut Vec<Waker>) {
        woken.extend(self.wakers.drain());
        self.round += 1;
    }

    /// How many waits are kept.
    #[cfg(all(test, feature = "tokio"))]
    fn len(&self) -> usize {
        self.wakers.len()
    }
}

/// What routing asks of the pump.
pub(crate) enum Routed {
    /// Nothing more.
    Done,
    /// Refill this session's gap: page with the refill, then [`Core::finish_refill`].
    Refill(Refilling),
}

pub(crate) struct Core {
    state: Mutex<State>,
    rules: FoldRules,
    capacity: usize,
}

impl Core {
    pub(crate) fn new(rules: FoldRules, capacity: usize) -> Self {
        let mut slots = Slots::default();
        // Bound to no session: it folds nothing of such inputs, the input the event.
        // Kept for a program that may never read them: the latest few, as `unclaimed`.
        let kept = capacity.min(UNCLAIMED);
        let client = Slot::new(0, Fold::new(rules.clone()), kept, HashSet::new());
        let at = slots.open.insert(client);
        debug_assert_eq!(Place(at), CLIENT, "the first slot");
        Core {
            state: Mutex::new(State {
                slots,
                openings: 0,
                unclaimed: VecDeque::new(),
                unclaimed_dropped: 0,
                ended: None,
                sent_before: VecDeque::new(),
                ending: Slab::new(),
                pumping: Pumping::default(),
                woken: Vec::new(),
            }),
            rules,
            capacity,
        }
    }

    fn lock(&self) -> Locked<'_> {
        // A panic elsewhere under the lock leaves no half-made step behind (each is a few
        // field writes), so the state is used as it is.
        Locked(Some(self.state.lock().unwrap_or_else(|e| e.into_inner())))
    }

    /// Hands `input` to its session's fold (or keeps it for a session being opened).
    #[cfg(test)]
    pub(crate) fn route(&self, input: Input) -> Routed {
        route(&mut self.lock(), input)
    }

    /// Hands every input of a batch to its session's fold, under one lock and with one
    /// wake-up a waiter: the refills they ask for, in order.
    pub(crate) fn route_all(&self, inputs: impl Iterator<Item = Input>) -> Refills {
        let mut refills = Refills::new();
        let routed = panic::catch_unwind(AssertUnwindSafe(|| {
            route_each(&mut self.lock(), inputs, &mut refills);
        }));
        if let Err(panic) = routed {
            // The refills begun before it would hold their sessions' inputs for ever (and a
            // wait at a durable host's end would never end): finished as failed, the lock
            // released by then.
            self.fail_refills(refills, "routing stopped before the refill was paged");
            panic::resume_unwind(panic);
        }
        refills
    }

    /// Whether opening `opening` of session `session_id` holds the inputs routed for its
    /// refill.
    fn holds_for(&self, session_id: &str, opening: u64) -> bool {
        let state = self.lock();
        state
            .slots
            .get(session_id)
            .is_some_and(|slot| slot.opening == opening && matches!(slot.hold, Hold::Held(_)))
    }

    /// Finishes each of `refills` as failed, and those the inputs they held begin.
    fn fail_refills(&self, mut refills: Refills, reason: &str) {
        while let Some(mut refilling) = refills.pop() {
            refilling.refill.failed(None, reason);
            refills.extend(self.finish_refill(refilling));
        }
    }

    /// Ends a refill: its outcomes to the events, then the inputs held
    /// meanwhile folded as live ones (the fold refuses those a page served, once).
    pub(crate) fn finish_refill(&self, refilling: Refilling) -> Refills {
        let mut state = self.lock();
        let state = &mut *state;
        let slot = state.slots.get_mut(&refilling.session_id);
        let Some(slot) = slot.filter(|slot| slot.opening == refilling.opening) else {
            return Vec::new();
        };
        let mut refill = refilling.refill;
        if slot.fold.is_discarded() {
            // Its ephemeral host ended while it paged: what the pages bring is refused.
            refill.failed(None, "the host ended while the refill paged");
        }
        let held = match std::mem::replace(&mut slot.hold, Hold::Idle) {
            Hold::Held(held) => held,
            Hold::Folding => {
                // The core holds a refill's inputs itself: the refill holds none.
                refill.overflowed()
            }
            Hold::Idle => Vec::new(),
        };
        // Failed for no other reason first (a host that fails a page is not asked again).
        let overflowed = refill.failure() == Some(&RefillFailure::Overflow);
        let outcomes = slot.fold.finish_refill(*refill);
        for outcome in &outcomes {
            slot.follow(outcome);
        }
        // A session its ephemeral host took along ended its events already.
        if !slot.fold.is_discarded() {
            slot.push(Event::Refilled { outcomes });
        }
        slot.waiting.wake_into(&mut state.woken);
        slot.overflows = if overflowed { slot.overflows + 1 } else { 0 };
        if overflowed && slot.overflows < OVERFLOWS && state.ended.is_none() {
            debug_assert!(
                held.is_empty(),
                "a refill folding as inputs come holds none"
            );
            // The hole is still open (and any gap shown since merged into it): refilled
            // again, holding the inputs anew.
            return slot.begin_refill().into_iter().collect();
        }
        let mut refills = Refills::new();
        route_each(state, held.into_iter(), &mut refills);
        if let Some(ended) = &state.ended {
            // In flight at the end: what it held came before the end.
            if let Some(slot) = state.slots.get_mut(&refilling.session_id) {
                slot.tell_closed(&ended.reason);
            }
        }
        refills
    }

    /// Opens session `session_id`: a fold seeded by `seed`, then given what the host said of
    /// the session before. A gap among those is the caller's to refill (returned): the pump
    /// routed it before the session was open, so it started none. A session open already
    /// is shared as it is (its fold has followed the session since; `seed` is not applied),
    /// until every handle of each opening is gone. The place lasts as long as the opening.
    pub(crate) fn open<T>(&self, session_id: &str, seed: impl FnOnce(&mut Fold) -> T) -> Opened {
        let mut state = self.lock();
        let state = &mut *state;
        if let Some(&at) = state.slots.by_id.get(session_id) {
            state.slots.open[at].opened += 1;
            return Opened {
                place: Place(at),
                refills: Vec::new(),
            };
        }
        state.openings += 1;
        let mut slot = Slot::new(
            state.openings,
            Fold::for_session(session_id, self.rules.clone()),
            self.capacity,
            take_sent_before(&mut state.sent_before, session_id),
        );
        // The caller has the result: what it seeded is no event.
        seed(&mut slot.fold);
        let (mine, others): (VecDeque<Input>, VecDeque<Input>) =
            std::mem::take(&mut state.unclaimed)
                .into_iter()
                .partition(|input| input.session_id() == Some(session_id));
        state.unclaimed = others;
        // A gap among them is refilled below, from the fold's own state.
        for input in mine {
            slot.fold_in(input);
        }
        // A refill begun (the host said of a gap before its end) tells the end after it.
        let refills = slot.begin_refill().into_iter().collect();
        if let Some(ended) = &state.ended {
            slot.host_ended(&ended.reason, ended.durable);
        }
        let place = state.slots.insert(session_id, slot);
        Opened { place, refills }
    }

    /// Forgets one opening of session `session_id` (its last handle is gone); the session
    /// itself once no opening is left.
    pub(crate) fn forget(&self, session_id: &str) {
        let mut state = self.lock();
        let Some(slot) = state.slots.get_mut(session_id) else {
            return;
        };
        slot.opened -= 1;
        if slot.opened == 0 {
            let sent = std::mem::take(&mut slot.asked.sent);
            if !sent.is_empty() {
                if state.sent_before.len() == SENT_BEFORE {
                    state.sent_before.pop_front();
                }
                state.sent_before.push_back((session_id.to_owned(), sent));
            }
            let forgotten = state.slots.remove(session_id);
            // A session's fold may hold thousands of items: freed once the lock is released.
            drop(state);
            drop(forgotten);
        }
    }

    /// Wakes the waits on session `session_id`, to check again (an approval handler's stop).
    pub(crate) fn wake(&self, session_id: &str) {
        let mut state = self.lock();
        let state = &mut *state;
        if let Some(slot) = state.slots.get_mut(session_id) {
            slot.waiting.wake_into(&mut state.woken);
        }
    }

    /// The connection closed: every session's items in progress end unknown when the host
    /// was ephemeral (the inputs held for a refill folded first, as live ones: the fold
    /// refuses any later), and every wait is woken. A durable host's session keeps its inputs
    /// held for the refill, which ends soon (its pages fail with the connection) and folds
    /// them after the pages it had; its waits end then.
    pub(crate) fn end(&self, reason: CloseReason, durable: bool) {
        let mut state = self.lock();
        let state = &mut *state;
        if state.ended.is_some() {
            return;
        }
        for (_, slot) in state.slots.open.iter_mut() {
            if !durable {
                if let Hold::Held(held) = &mut slot.hold {
                    for input in std::mem::take(held) {
                        slot.fold_in(input);
                    }
                    slot.hold = Hold::Folding;
                }
            }
            slot.host_ended(&reason, durable);
            slot.waiting.wake_into(&mut state.woken);
        }
        state.ended = Some(Ended { reason, durable });
        state.woken.extend(state.ending.drain());
        state.woken.extend(state.pumping.pump.take());
    }

    /// A wait for the connection's end ([`EndWait::poll`]).
    pub(crate) fn end_wait(&self) -> EndWait<'_> {
        EndWait {
            core: self,
            key: None,
        }
    }

    /// A handle begins a wait on the session at `place` (see `pump.rs` and [`HandleWait`]).
    pub(crate) fn handle_wait(&self, place: Place) -> HandleWait<'_> {
        HandleWait {
            core: self,
            place,
            counted: false,
            key: None,
        }
    }

    /// The role for the pump thread, when nobody holds it, no handle's wait is parked and
    /// none was served since the pump's last look (`seen`); else when to look again (`cx` is
    /// woken early when the connection ends).
    pub(crate) fn pump_turn(&self, seen: &mut u64, cx: &mut Context<'_>) -> PumpTurn<'_> {
        let mut state = self.lock();
        if state.ended.is_some() {
            return PumpTurn::Ended;
        }
        let pumping = &mut state.pumping;
        let again = if pumping.held || pumping.handles > 0 {
            BUSY_LOOK
        } else if pumping.served != *seen {
            STALL
        } else {
            pumping.held = true;
            return PumpTurn::Role(PumpRole(self));
        };
        *seen = pumping.served;
        pumping.pump = Some(cx.waker().clone());
        PumpTurn::Later(again)
    }

    /// Where session `session_id` is kept (for the models: the drivers' handles keep what
    /// [`Core::open`] gave).
    #[cfg(all(test, loom))]
    fn place_of(&self, session_id: &str) -> Place {
        Place(self.lock().slots.by_id[session_id])
    }

    /// Reads session `session_id`'s fold.
    pub(crate) fn read<T>(&self, session_id: &str, read: impl FnOnce(&Fold) -> T) -> T {
        let state = self.lock();
        let slot = state
            .slots
            .get(session_id)
            .expect("a handle keeps its session open");
        read(&slot.fold)
    }

    /// A task's wait on the session at `place` (see [`SlotWait`]).
    #[cfg(any(feature = "tokio", all(test, loom)))]
    pub(crate) fn slot_wait(&self, place: Place) -> SlotWait<'_> {
        SlotWait {
            core: self,
            place,
            key: None,
        }
    }

    fn slot(&self, session_id: &str, act: impl FnOnce(&mut Slot)) {
        let mut state = self.lock();
        if let Some(slot) = state.slots.get_mut(session_id) {
            act(slot);
        }
    }

    /// Notes a command this client sends in the session; one whose params name another
    /// `commandId` than its own is refused, noted nowhere ([`shared::names_its_id`]).
    pub(crate) fn sent<M: Request>(
        &self,
        session_id: &str,
        command: &Command<M>,
    ) -> Result<(), Error> {
        // Encoded before the lock: a turn's input can be long.
        let params = serde_json::to_value(command.params());
        if let Ok(params) = &params {
            crate::shared::names_its_id(M::METHOD, command.command_id(), params)?;
        }
        let mut state = self.lock();
        let Some(slot) = state.slots.get_mut(session_id) else {
            return Ok(());
        };
        slot.asked.sent.insert(command.command_id().to_owned());
        if let Ok(params) = params {
            let (fold, asked) = (&slot.fold, &slot.asked);
            slot.ledger.sent(session_id, command, params, |entry| {
                asked.outcome_seen(fold, entry)
            });
        }
        Ok(())
    }

    /// Notes that a send of command `command_id` was given up before its attempts were
    /// over, while one of them may have been applied (`in_doubt`) or not.
    #[cfg(feature = "tokio")]
    pub(crate) fn given_up(&self, session_id: &str, command_id: &str, in_doubt: bool) {
        self.slot(session_id, |slot| {
            slot.ledger.given_up(command_id, in_doubt)
        });
    }

    /// Notes that command `command_id`, about to be sent again from an earlier
    /// connection's pending commands, may have been applied already.
    pub(crate) fn doubted(&self, session_id: &str, command_id: &str) {
        self.slot(session_id, |slot| slot.ledger.doubted(command_id));
    }

    /// Notes that command `command_id` failed, as `failure` says.
    pub(crate) fn failed(&self, session_id: &str, command_id: &str, failure: &Unacknowledged) {
        self.slot(session_id, |slot| slot.ledger.failed(command_id, failure));
    }

    /// The session's commands whose outcome is not seen yet.
    pub(crate) fn pending(&self, session_id: &str) -> Vec<PendingCommand> {
        let state = self.lock();
        let Some(slot) = state.slots.get(session_id) else {
            return Vec::new();
        };
        slot.ledger
            .pending(|entry| slot.asked.outcome_seen(&slot.fold, entry))
    }

    /// Keeps the turns the resume shows ended before it (with those an earlier resume of
    /// the session showed), and wakes the session's waits: a turn waited on may be one.
    pub(crate) fn resumed(&self, session_id: &str, result: &SessionResumeResult) {
        // Read out of a long snapshot before the lock, which every session waits on.
        let ended = EndedBefore::of(result);
        let mut state = self.lock();
        let state = &mut *state;
        if let Some(slot) = state.slots.get_mut(session_id) {
            slot.asked.ended_before.extend(ended);
            slot.waiting.wake_into(&mut state.woken);
        }
    }

    /// Notes a prompt this client answers (or cancels, or clarifies), or, `false`, one whose
    /// answer the host refused or that was dropped in flight: the prompt is offered again
    /// once no answer of it is in flight or accepted.
    pub(crate) fn answered(&self, session_id: &str, user_input_id: &str, answered: bool) {
        self.tally(session_id, |asked| {
            count(&mut asked.answered, user_input_id.to_owned(), answered)
        });
    }

    /// Notes a decision of an approval stage sent (`decided`), or one that failed leaving
    /// the stage to decide (`!decided`), as [`Core::answered`] does for a prompt: the stage
    /// is offered again once no decision of it is in flight or accepted.
    pub(crate) fn decided(
        &self,
        session_id: &str,
        approval_id: &str,
        requirement: &ApprovalRequirementRef,
        decided: bool,
    ) {
        let key = Asked::decided_key(approval_id, requirement);
        self.tally(session_id, |asked| count(&mut asked.decided, key, decided));
    }

    /// Counts, through `count`, a command settling something session `session_id` offers;
    /// once none of it is in flight or accepted (`count` says so), the session's waits look
    /// again: a wait for the next prompt or approval finds it.
    fn tally(&self, session_id: &str, count: impl FnOnce(&mut Asked) -> bool) {
        let mut state = self.lock();
        let state = &mut *state;
        let Some(slot) = state.slots.get_mut(session_id) else {
            return;
        };
        if count(&mut slot.asked) {
            slot.waiting.wake_into(&mut state.woken);
        }
    }

    /// Keeps command `command_id`'s acknowledgement (the latest
    /// [`KEPT`](crate::acks::KEPT) are); one kept before that differs is
    /// [`Error::ReplayDiffers`].
    pub(crate) fn acknowledged<M: Request>(
        &self,
        session_id: &str,
        command_id: &str,
        result: &M::Result,
    ) -> Result<(), Error> {
        let Ok(value) = serde_json::to_value(result) else {
            return Ok(());
        };
        let mut state = self.lock();
        let Some(slot) = state.slots.get_mut(session_id) else {
            return Ok(());
        };
        slot.ledger.acknowledged(M::METHOD, command_id, &value);
        if slot.acks.note(command_id, value) {
            return Ok(());
        }
        Err(Error::ReplayDiffers {
            method: M::METHOD,
            command_id: command_id.to_owned(),
        })
    }

    /// A follower of the turn command `command_id` starts, from its first event, while the
    /// command is in flight ([`Following::started`] takes its result).
    pub(crate) fn follow_command<'a>(
        &'a self,
        session_id: &'a str,
        command_id: &str,
    ) -> Following<'a> {
        let mut state = self.lock();
        let key = state.slots.named(session_id).followers.insert(Follower {
            follows: Follows::Command(command_id.to_owned()),
            items: VecDeque::new(),
            queued: HashSet::new(),
        });
        Following {
            core: self,
            session_id,
            key: Some(key),
        }
    }

    /// A follower of turn `turn_id`'s items, from those the fold holds already: its key.
    pub(crate) fn follow_turn(&self, session_id: &str, turn_id: &str) -> usize {
        let mut state = self.lock();
        let slot = state.slots.named(session_id);
        let follower = Follower::of(&slot.fold, turn_id);
        slot.followers.insert(follower)
    }

    /// Forgets follower `key` (its handle was dropped, or its `turn/start` failed).
    pub(crate) fn unfollow(&self, session_id: &str, key: usize) {
        self.slot(session_id, |slot| {
            slot.followers.try_remove(key);
        });
    }
}

/// The checks a handle waits on, each `None` while it finds nothing; `ended`: why the
/// connection ended, once the session sees it ([`seen_end`]). Each returns `Some` once it
/// ended: a wait ends then.
impl Slot {
    /// The oldest event not taken; `Some(None)` once the connection ended and all were taken.
    pub(crate) fn next_event(&mut self, ended: Option<&CloseReason>) -> Option<Option<Event>> {
        match self.events.pop_front() {
            Some(event) => Some(Some(event)),
            None => ended.map(|_| None),
        }
    }

    /// What `check` finds in the fold, with what this client did in the session; `Err` once
    /// the connection ended without it.
    pub(crate) fn check_fold<T>(
        &self,
        ended: Option<&CloseReason>,
        check: impl FnOnce(&Fold, &Asked) -> Option<T>,
    ) -> Option<Result<T, CloseReason>> {
        match check(&self.fold, &self.asked) {
            Some(found) => Some(Ok(found)),
            None => ended.map(|reason| Err(reason.clone())),
        }
    }

    /// The next change follower `key` has not taken to one of turn `turn_id`'s items;
    /// `Some(None)` once the turn is over and every change was taken, or the connection ended.
    pub(crate) fn next_turn_item(
        &mut self,
        key: usize,
        turn_id: &str,
        ended: Option<&CloseReason>,
    ) -> Option<Option<ItemEntry>> {
        let follower = &mut self.followers[key];
        while let Some(item_id) = follower.items.pop_front() {
            follower.queued.remove(&item_id);
            if let Some(entry) = self.fold.item(&item_id) {
                return Some(Some(entry.clone()));
            }
        }
        let over = self.asked.turn_over(&self.fold, turn_id);
        (over || ended.is_some()).then_some(None)
    }
}

/// The pump's look ([`Core::pump_turn`]).
pub(crate) enum PumpTurn<'a> {
    /// Its turn: the role.
    Role(PumpRole<'a>),
    /// Not yet: look again after this long.
    Later(Duration),
    /// The connection ended.
    Ended,
}

/// The role of taking and routing frames, held (see `pump.rs`); given back when dropped,
/// waking the handles that wait for it.
pub(crate) struct PumpRole<'a>(&'a Core);

impl PumpRole<'_> {
    pub(crate) fn core(&self) -> &Core {
        self.0
    }
}

impl PumpRole<'_> {
    /// Gives the role back under the lock the caller holds (the drop takes the lock itself).
    fn give_back(self, state: &mut State) {
        release(state);
        // Only a reference: nothing is leaked by skipping the drop.
        std::mem::forget(self);
    }
}

impl Drop for PumpRole<'_> {
    fn drop(&mut self) {
        release(&mut self.0.lock());
    }
}

/// The role given back: the handles waiting for it are woken.
fn release(state: &mut State) {
    state.pumping.held = false;
    state.woken.append(&mut state.pumping.waiting);
}

/// A handle's wait (see `pump.rs`), a lock a step: [`HandleWait::check_or_role`], then,
/// holding the role, [`HandleWait::route_and_check`]. Counted among the handles that wait
/// from its first park to its end (the guard dropped), so that the pump leaves the routing to
/// it; while it routes or finds what it waits for without parking, being served tells the
/// pump as much (a handle taking events the pump routed would otherwise leave the pump
/// routing every frame, made on the pump's thread and freed on the handle's).
pub(crate) struct HandleWait<'a> {
    core: &'a Core,
    place: Place,
    counted: bool,
    /// Its waker's key among the session's waiters, while one is kept.
    key: Option<WaitKey>,
}

/// What a handle's wait found after routing ([`HandleWait::route_and_check`]).
pub(crate) enum Checked<'a, T> {
    /// What it waits for.
    Found(T),
    /// Not yet: the role kept for the refills the input asks for, paged before it is
    /// given back.
    Refill(PumpRole<'a>, Refills),
    /// Not yet (the role given back).
    NotYet,
}

impl<'a> HandleWait<'a> {
    /// `check` in the session's slot; when it finds nothing, the role if nobody
    /// holds it (`Err(Some)`: the holder checks again after routing, so no waker is kept),
    /// else `Err(None)`: `cx` is woken by an input routed to the session, the role given
    /// back, or the end.
    pub(crate) fn check_or_role<T>(
        &mut self,
        cx: &mut Context<'_>,
        check: impl FnOnce(&mut Slot, Option<&CloseReason>) -> Option<T>,
    ) -> Result<T, Option<PumpRole<'a>>> {
        let mut state = self.core.lock();
        let state = &mut *state;
        let slot = state.slots.at(self.place);
        let pumping = &mut state.pumping;
        if let Some(found) = check(slot, seen_end(&state.ended, slot)) {
            pumping.served += 1;
            return Ok(found);
        }
        if !pumping.held {
            pumping.held = true;
            pumping.served += 1;
            return Err(Some(PumpRole(self.core)));
        }
        slot.waiting.keep(&mut self.key, cx.waker());
        keep(&mut pumping.waiting, cx.waker());
        self.count(pumping);
        Err(None)
    }

    /// Holding `role`: `input` routed (none when nothing was ready or the connection
    /// ended), the role given back unless a refill needs it, and `check` again. When it finds
    /// nothing and the handle will `park`, `cx` is woken by an input routed to the session
    /// or the end.
    pub(crate) fn route_and_check<T>(
        &mut self,
        role: PumpRole<'a>,
        input: Option<Input>,
        park: bool,
        cx: &mut Context<'_>,
        check: impl FnOnce(&mut Slot, Option<&CloseReason>) -> Option<T>,
    ) -> Checked<'a, T> {
        let mut state = self.core.lock();
        let state = &mut *state;
        if let Some(input) = input {
            if let Routed::Refill(refilling) = route(state, input) {
                return Checked::Refill(role, vec![refilling]);
            }
        }
        role.give_back(state);
        let slot = state.slots.at(self.place);
        if let Some(found) = check(slot, seen_end(&state.ended, slot)) {
            return Checked::Found(found);
        }
        if park {
            slot.waiting.keep(&mut self.key, cx.waker());
            self.count(&mut state.pumping);
        }
        Checked::NotYet
    }

    /// `check`, and `cx` kept when it finds nothing (the wait will park).
    pub(crate) fn check<T>(
        &mut self,
        cx: &mut Context<'_>,
        check: impl FnOnce(&mut Slot, Option<&CloseReason>) -> Option<T>,
    ) -> Poll<T> {
        let mut state = self.core.lock();
        let state = &mut *state;
        let slot = state.slots.at(self.place);
        if let Some(found) = check(slot, seen_end(&state.ended, slot)) {
            return Poll::Ready(found);
        }
        slot.waiting.keep(&mut self.key, cx.waker());
        self.count(&mut state.pumping);
        Poll::Pending
    }

    fn count(&mut self, pumping: &mut Pumping) {
        if !self.counted {
            pumping.handles += 1;
            self.counted = true;
        }
    }
}

impl Drop for HandleWait<'_> {
    fn drop(&mut self) {
        if !self.counted && self.key.is_none() {
            return;
        }
        let mut state = self.core.lock();
        if self.counted {
            state.pumping.handles -= 1;
        }
        // The handle the wait borrows keeps the session open.
        state.slots.at(self.place).waiting.forget(&mut self.key);
    }
}

/// Sessions no longer open whose commands sent are kept for their next opening (each a
/// set of ids, the oldest session's forgotten first).
const SENT_BEFORE: usize = 64;

/// The commands sent in session `session_id` before it was last closed, taken out of
/// `sent_before`.
fn take_sent_before(
    sent_before: &mut VecDeque<(String, HashSet<String>)>,
    session_id: &str,
) -> HashSet<String> {
    match sent_before.iter().position(|(id, _)| id == session_id) {
        Some(at) => sent_before
            .remove(at)
            .map(|(_, sent)| sent)
            .unwrap_or_default(),
        None => HashSet::new(),
    }
}

fn keep(list: &mut Vec<Waker>, waker: &Waker) {
    if !list.iter().any(|held| held.will_wake(waker)) {
        list.push(waker.clone());
    }
}

/// The connection's end as the waits on `slot` see it: once no refill of it is in flight (it
/// ends soon after the connection, its pages failing, folds what it held and wakes them),
/// so that nothing the host said before its end is missed; at once when its ephemeral host
/// took the session along (the fold refuses anything more).
fn seen_end<'a>(ended: &'a Option<Ended>, slot: &Slot) -> Option<&'a CloseReason> {
    ended
        .as_ref()
        .filter(|_| matches!(slot.hold, Hold::Idle) || slot.fold.is_discarded())
        .map(|ended| &ended.reason)
}

/// Routes each of `inputs`, the refills they begin added to `refills` as they begin.
fn route_each(state: &mut State, inputs: impl Iterator<Item = Input>, refills: &mut Refills) {
    for input in inputs {
        if let Routed::Refill(refilling) = route(state, input) {
            refills.push(refilling);
        }
    }
}

fn route(state: &mut State, input: Input) -> Routed {
    let Some(session_id) = input.session_id() else {
        let slot = state.slots.at(CLIENT);
        slot.waiting.wake_into(&mut state.woken);
        slot.fold_in(input);
        return Routed::Done;
    };
    let Some(slot) = state.slots.get_mut(session_id) else {
        if state.unclaimed.len() >= UNCLAIMED {
            let dropped = state.unclaimed.pop_front();
            state.unclaimed_dropped += 1;
            tracing::debug!(
                method = ?dropped.as_ref().and_then(Input::method),
                session = ?dropped.as_ref().and_then(Input::session_id),
                dropped = state.unclaimed_dropped,
                "an input for a session not open, dropped for a later one"
            );
        }
        state.unclaimed.push_back(input);
        return Routed::Done;
    };
    slot.waiting.wake_into(&mut state.woken);
    match &mut slot.hold {
        Hold::Held(held) if held.len() < slot.fold.rules().refill_held_frames => {
            held.push(input);
            return Routed::Done;
        }
        Hold::Held(held) => {
            // Past the budget: what was held is folded now, this and what comes next as
            // they come, so that a refill that does not end holds no more and no more.
            for input in std::mem::take(held).into_iter().chain([input]) {
                slot.fold_in(input);
            }
            slot.hold = Hold::Folding;
            return Routed::Done;
        }
        // A gap it shows is refilled with the hole still open, once the refill in flight is
        // finished.
        Hold::Folding => {
            slot.fold_in(input);
            return Routed::Done;
        }
        Hold::Idle => {}
    }
    if slot.fold_in(input) {
        if let Some(refilling) = slot.begin_refill() {
            return Routed::Refill(refilling);
        }
    }
    Routed::Done
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Waker;

    use msp_types::{Frame, Message, Sender};

    use super::*;

    fn started(n: usize) -> Input {
        notification(&format!(
            r#"{{"jsonrpc":"2.0","method":"item/started","params":{{"sessionId":"s","viewCursor":"v:{n}","item":{{"itemId":"i{n}","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}}}}"#
        ))
    }

    fn gap(after: usize, next: usize) -> Input {
        notification(&format!(
            r#"{{"jsonrpc":"2.0","method":"view/gap","params":{{"sessionId":"s","after":"v:{after}","next":"v:{next}"}}}}"#
        ))
    }

    fn notification(line: &str) -> Input {
        match Frame::parse(Sender::Server, line).unwrap().message {
            Message::Notification(n) => Input::Notification(n),
            other => panic!("{other:?}"),
        }
    }

    /// Session `s`'s refill of the gap after its first item, begun.
    fn refill_begun(core: &Core) -> Refilling {
        let _ = core.route(started(1));
        match core.route(gap(1, 3)) {
            Routed::Refill(refilling) => refilling,
            Routed::Done => panic!("a refill"),
        }
    }

    /// The events of the session at `place` not taken yet, taken.
    fn events(core: &Core, place: Place) -> Vec<Event> {
        let mut state = core.lock();
        let slot = state.slots.at(place);
        std::iter::from_fn(|| slot.next_event(None).flatten()).collect()
    }

    /// Whether the session at `place` holds the inputs routed for a refill.
    fn holding(core: &Core, place: Place) -> bool {
        matches!(core.lock().slots.at(place).hold, Hold::Held(_))
    }

    /// What names no session is the client's own event, in the order routed, and reaches
    /// no session; the connection's end is its last, as a session's.
    #[test]
    fn an_input_naming_no_session_is_the_clients_own_event() {
        let core = Core::new(FoldRules::default(), 8);
        let place = core.open("s", |_| ()).place;
        let usage = || {
            notification(
                r#"{"jsonrpc":"2.0","method":"usage/changed","params":{"observedAtMs":1,"tier":"pro","weekly":{"resetsAtMs":2,"usedPercent":10},"window":{"resetsAtMs":3,"usedPercent":20,"windowDurationMins":300}}}"#,
            )
        };
        let _ = core.route(usage());
        let _ = core.route(started(1));
        let _ = core.route(usage());
        let methods = |events: Vec<Event>| {
            events
                .iter()
                .map(|event| match event {
                    Event::Folded { input, outcome } => {
                        let ignored = matches!(outcome, Outcome::Ignored { .. });
                        format!("{} {ignored}", input.method().unwrap_or_default())
                    }
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            methods(events(&core, CLIENT)),
            ["usage/changed true", "usage/changed true"]
        );
        assert_eq!(methods(events(&core, place)), ["item/started false"]);
        core.end(CloseReason::PeerClosed, true);
        assert!(matches!(
            events(&core, CLIENT).as_slice(),
            [Event::Closed { .. }]
        ));
    }

    /// An ephemeral host's end marks its items in progress ended unknown: a follower that
    /// took one in progress takes it again, ended, and the session's last event names it.
    #[test]
    fn an_ephemeral_hosts_end_reaches_the_followers_and_the_events() {
        let core = Core::new(FoldRules::default(), 8);
        let place = core.open("s", |_| ()).place;
        let follower = core.follow_turn("s", "t");
        let _ = core.route(started(1));
        let take = || {
            let mut state = core.lock();
            let slot = state.slots.at(place);
            slot.next_turn_item(follower, "t", None).flatten()
        };
        assert!(!take().expect("in progress").terminal_unknown());
        assert!(take().is_none(), "nothing more yet");
        core.end(CloseReason::PeerClosed, false);
        assert!(take().expect("again, ended").terminal_unknown());
        match events(&core, place).last() {
            Some(Event::Closed { ended_unknown, .. }) => assert_eq!(ended_unknown, &["i1"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_follower_of_a_turn_takes_every_change_and_a_dropped_one_is_forgotten() {
        let core = Core::new(FoldRules::default(), 0);
        let place = core.open("s", |_| ()).place;
        let _ = core.route(started(1));
        let early = core.follow_turn("s", "t");
        let _ = core.route(started(2));
        let late = core.follow_turn("s", "t");
        let _ = core.route(started(3));
        let taken = |key| {
            let mut state = core.lock();
            let slot = state.slots.at(place);
            std::iter::from_fn(|| slot.next_turn_item(key, "t", None).flatten())
                .map(|entry| entry.id().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(taken(early), ["i1", "i2", "i3"]);
        assert_eq!(taken(late), ["i1", "i2", "i3"], "from what the fold held");
        core.unfollow("s", early);
        core.unfollow("s", late);
        let _ = core.route(started(4));
        assert!(core.lock().slots.at(place).followers.is_empty());
    }

    /// A refill still paging when every handle of its session was dropped, finished after
    /// the session was opened again, is dropped: the new opening's fold and the inputs it
    /// holds for its own refill are left alone.
    #[test]
    fn a_refill_begun_before_the_session_was_opened_again_is_dropped() {
        let core = Core::new(FoldRules::default(), 8);
        let _ = core.open("s", |_| ());
        let orphan = refill_begun(&core);
        core.forget("s");
        let place = core.open("s", |_| ()).place;
        let _ = core.route(started(2));
        assert!(core.finish_refill(orphan).is_empty());
        let mut state = core.lock();
        let slot = state.slots.at(place);
        assert_eq!(
            slot.fold.items().len(),
            1,
            "the new opening's fold, untouched"
        );
        let events: Vec<_> = std::iter::from_fn(|| slot.events.pop_front()).collect();
        assert!(
            events.iter().all(|e| matches!(e, Event::Folded { .. })),
            "no refill reported"
        );
        assert_eq!(events.len(), 1);
    }

    /// Inputs held for a refill still paging when the connection ends are not lost with it
    /// (a request's copy among them, a prompt the program is to see): when the host was
    /// durable, the waits see the end only once the refill folded them, after its pages;
    /// when it was ephemeral, they are folded at the end, before the fold refuses every later
    /// input, and the refill adds nothing.
    #[test]
    fn what_a_refill_held_is_folded_when_the_connection_ends() {
        let method = |event: Event| match event {
            Event::Folded { input, .. } => input.method().unwrap_or_default().to_owned(),
            Event::Refilled { .. } => "refilled".to_owned(),
            Event::Lagged { .. } => "lagged".to_owned(),
            Event::Closed { .. } => "closed".to_owned(),
        };
        for durable in [true, false] {
            let core = Core::new(FoldRules::default(), 8);
            let place = core.open("s", |_| ()).place;
            let refilling = refill_begun(&core);
            let _ = core.route(started(4));
            assert_eq!(core.read("s", |fold| fold.items().len()), 1, "held");
            core.end(CloseReason::PeerClosed, durable);
            // What a wait for the next event finds: `None` while it would park.
            let next = || {
                let mut state = core.lock();
                let state = &mut *state;
                let slot = state.slots.at(place);
                slot.next_event(seen_end(&state.ended, slot))
                    .map(|event| event.map(method))
            };
            let mut taken: Vec<String> = std::iter::from_fn(|| next().flatten()).collect();
            match durable {
                true => assert_eq!(next(), None, "the wait goes on while the refill holds"),
                false => assert_eq!(next(), Some(None), "the end"),
            }
            // The refill, failed with the connection, ends.
            assert!(core.finish_refill(refilling).is_empty());
            taken.extend(std::iter::from_fn(|| next().flatten()));
            assert_eq!(next(), Some(None), "the end, once nothing is held");
            assert_eq!(core.read("s", |fold| fold.items().len()), 2);
            let expected: &[&str] = match durable {
                true => &[
                    "item/started",
                    "view/gap",
                    "refilled",
                    "item/started",
                    "closed",
                ],
                false => &["item/started", "view/gap", "item/started", "closed"],
            };
            assert_eq!(taken, expected, "durable {durable}, the close last");
        }
    }

    /// A prompt is offered again once no answer of it is in flight or accepted: one of two
    /// answers dropped in flight while the other was accepted leaves it answered.
    #[test]
    fn a_prompt_is_hidden_while_any_answer_of_it_is_in_flight_or_accepted() {
        let core = Core::new(FoldRules::default(), 0);
        let place = core.open("s", |_| ()).place;
        let hidden = |core: &Core| {
            let mut state = core.lock();
            state.slots.at(place).asked.answered.contains_key("p")
        };
        core.answered("s", "p", true);
        core.answered("s", "p", true);
        // The second accepted (nothing to note), the first dropped in flight.
        core.answered("s", "p", false);
        assert!(hidden(&core), "the accepted answer keeps it answered");
        core.answered("s", "p", false);
        assert!(!hidden(&core), "both refused: offered again");
        core.answered("s", "p", false);
        assert!(!hidden(&core));
    }

    /// A stage is offered again once no decision of it is in flight or accepted, as a
    /// prompt is.
    #[test]
    fn a_stage_is_hidden_while_any_decision_of_it_is_in_flight_or_accepted() {
        let core = Core::new(FoldRules::default(), 0);
        let place = core.open("s", |_| ()).place;
        let requirement = ApprovalRequirementRef::builder()
            .approval_id("a")
            .source_index(0)
            .build();
        let hidden = |core: &Core| {
            let mut state = core.lock();
            let key = Asked::decided_key("a", &requirement);
            state.slots.at(place).asked.decided.contains_key(&key)
        };
        core.decided("s", "a", &requirement, true);
        core.decided("s", "a", &requirement, true);
        core.decided("s", "a", &requirement, false);
        assert!(hidden(&core), "the accepted decision keeps it decided");
        core.decided("s", "a", &requirement, false);
        assert!(!hidden(&core), "both failed: offered again");
        core.decided("s", "a", &requirement, false);
        assert!(!hidden(&core));
    }

    /// The close is a session's last event though a refill that overflowed (holding
    /// nothing, folding the inputs as they come) was in flight at the end of a durable
    /// host: its outcomes come first.
    #[test]
    fn the_close_comes_after_an_overflowed_refill_in_flight() {
        let mut rules = FoldRules::default();
        rules.refill_held_frames = 0;
        let core = Core::new(rules, 16);
        let place = core.open("s", |_| ()).place;
        let refilling = refill_begun(&core);
        let _ = core.route(started(4));
        assert!(!holding(&core, place), "overflowed: folding as they come");
        core.end(CloseReason::PeerClosed, true);
        assert!(core.finish_refill(refilling).is_empty());
        let events = events(&core, place);
        let last_two: Vec<_> = events.iter().rev().take(2).collect();
        assert!(
            matches!(last_two[..], [Event::Closed { .. }, Event::Refilled { .. }]),
            "{events:?}"
        );
    }

    /// A refill that pages while more inputs come than the rules let it hold holds no more:
    /// what it held is folded, in order, then each input as it comes, and the refill ends
    /// overflowed (its gap left open, the failure said); once the connection ended it
    /// begins no other.
    #[test]
    fn a_refill_holds_no_more_inputs_than_the_rules_let_it() {
        let mut rules = FoldRules::default();
        rules.refill_held_frames = 2;
        let core = Core::new(rules, 0);
        let place = core.open("s", |_| ()).place;
        let refilling = refill_begun(&core);
        for n in 4..6 {
            assert!(matches!(core.route(started(n)), Routed::Done));
        }
        assert!(holding(&core, place));
        assert_eq!(core.read("s", |fold| fold.items().len()), 1, "two held");
        // The third: the two held, then it, folded in order; then a gap (no second refill
        // while this one pages).
        assert!(matches!(core.route(started(6)), Routed::Done));
        assert!(!holding(&core, place));
        let ids = |core: &Core| {
            core.read("s", |f| {
                f.items()
                    .iter()
                    .map(|i| i.id().to_owned())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(ids(&core), ["i1", "i4", "i5", "i6"]);
        assert!(
            matches!(core.route(gap(7, 9)), Routed::Done),
            "refilled after the one in flight"
        );
        assert!(matches!(core.route(started(10)), Routed::Done));
        assert_eq!(ids(&core).len(), 5);
        // What its page served is not applied after the newer inputs folded meanwhile.
        let mut refilling = refilling;
        let page = serde_json::json!({"events": [{"method": "item/started", "params": {"sessionId": "s", "viewCursor": "v:2", "sourceRange": {"first": {"id": "r2", "sequence": 2}, "last": {"id": "r2", "sequence": 2}, "stream": {"id": "s", "kind": "session"}}, "item": {"itemId": "i2", "kind": "agentMessage", "revision": 1, "status": "inProgress", "turnId": "t"}}}], "nextCursor": null});
        assert!(refilling.refill.next_request().is_some());
        refilling.refill.page(serde_json::from_value(page).unwrap());
        // A durable host's end is seen once the refill in flight is finished.
        core.end(CloseReason::PeerClosed, true);
        let end_seen = |core: &Core| {
            let mut state = core.lock();
            let state = &mut *state;
            seen_end(&state.ended, state.slots.at(place)).is_some()
        };
        assert!(!end_seen(&core), "the refill in flight first");
        assert!(core.finish_refill(refilling).is_empty());
        assert!(end_seen(&core));
        assert_eq!(ids(&core).len(), 5, "nothing of the page");
        let failure = core.read("s", |fold| fold.gap().failure().cloned());
        assert_eq!(failure, Some(msp_session::RefillFailure::Overflow));
    }

    /// An overflowed refill is followed by another, from the first hole still open (a gap
    /// shown meanwhile merged into it), once it is finished; not one that failed a page
    /// first (the host is not asked again).
    #[test]
    fn an_overflowed_refill_is_begun_again_once_finished() {
        for case in ["overflow", "a gap since", "a page failed first"] {
            let mut rules = FoldRules::default();
            rules.refill_held_frames = 1;
            let core = Core::new(rules, 0);
            let place = core.open("s", |_| ()).place;
            let mut refilling = refill_begun(&core);
            let wanted = |core: &Core| core.holds_for("s", refilling.opening);
            assert!(wanted(&core));
            let _ = core.route(started(4));
            let _ = core.route(started(5));
            assert!(!wanted(&core), "its pages are no longer wanted");
            if case == "a gap since" {
                assert!(
                    matches!(core.route(gap(5, 7)), Routed::Done),
                    "one in flight"
                );
            }
            if case == "a page failed first" {
                refilling.refill.failed(Some(-32000), "no such cursor");
            }
            let _ = core.route(started(8));
            let mut again = core.finish_refill(refilling);
            let failure = core.read("s", |fold| fold.gap().failure().cloned());
            if case == "a page failed first" {
                assert!(again.is_empty(), "{case}");
                assert!(matches!(
                    failure,
                    Some(msp_session::RefillFailure::Page { .. })
                ));
                continue;
            }
            assert_eq!(failure, Some(msp_session::RefillFailure::Overflow));
            let Some(mut next) = again.pop().filter(|_| again.is_empty()) else {
                panic!("one refill: {}", again.len());
            };
            assert!(holding(&core, place), "what comes is held for it");
            let ask = next.refill.next_request().expect("a page to ask");
            assert_eq!(
                ask.cursor.as_deref(),
                Some("v:1"),
                "the first hole still open"
            );
            let page = serde_json::json!({"events": [], "nextCursor": null});
            next.refill.page(serde_json::from_value(page).unwrap());
            assert!(core.finish_refill(next).is_empty());
            assert!(!holding(&core, place));
            assert!(core.read("s", |fold| fold.is_current()), "{case}: filled");
        }
    }

    /// A session busier than a refill may hold (here: none) has at most [`OVERFLOWS`]
    /// refills overflow in a row; then its hole is left open, and the next gap begins one.
    #[test]
    fn refills_overflow_at_most_so_many_times_in_a_row() {
        let mut rules = FoldRules::default();
        rules.refill_held_frames = 0;
        let core = Core::new(rules, 0);
        let place = core.open("s", |_| ()).place;
        let mut refilling = refill_begun(&core);
        let mut began = 1;
        for n in 4.. {
            let _ = core.route(started(n));
            assert!(
                !core.holds_for("s", refilling.opening),
                "overflowed at once"
            );
            match core.finish_refill(refilling).pop() {
                Some(again) => (refilling, began) = (again, began + 1),
                None => break,
            }
        }
        assert_eq!(began, OVERFLOWS);
        assert!(matches!(core.lock().slots.at(place).hold, Hold::Idle));
        assert!(
            matches!(core.route(gap(9, 11)), Routed::Refill(_)),
            "a new gap"
        );
    }

    /// A command whose acknowledgement never came is no longer pending once the fold shows
    /// its outcome: a `turn/start`'s turn (named by its `commandId`) ended, a prompt settled
    /// by it; while its turn runs, a `turn/start` still is.
    #[test]
    fn a_command_is_not_pending_once_the_fold_shows_its_outcome() {
        use msp_types::protocol::methods;
        let notification = |value: serde_json::Value| {
            let line = serde_json::json!({"jsonrpc": "2.0", "method": value["method"], "params": value["params"]});
            notification(&line.to_string())
        };
        let range = serde_json::json!({"first": {"id": "r", "sequence": 1}, "last": {"id": "r", "sequence": 1}, "stream": {"id": "s", "kind": "session"}});
        let core = Core::new(FoldRules::default(), 0);
        let _ = core.open("s", |_| ());
        let start: Command<methods::TurnStart> = Command::with_id("c1", |id| {
            serde_json::from_value(
                serde_json::json!({"commandId": id, "sessionId": "s", "input": []}),
            )
            .unwrap()
        });
        let answer: Command<methods::UserInputAnswerMethod> = Command::with_id("c2", |id| {
            serde_json::from_value(serde_json::json!({"commandId": id, "sessionId": "s", "userInputId": "p", "answers": []})).unwrap()
        });
        core.sent("s", &start).unwrap();
        core.sent("s", &answer).unwrap();
        // One whose params name another id is refused, noted nowhere.
        let other: Command<methods::GoalSet> = Command::with_id("c3", |_| {
            serde_json::from_value(
                serde_json::json!({"commandId": "c4", "sessionId": "s", "objective": "o"}),
            )
            .unwrap()
        });
        assert!(matches!(
            core.sent("s", &other),
            Err(Error::Misdirected { .. })
        ));
        let pending = |core: &Core| {
            core.pending("s")
                .iter()
                .map(|c| c.command_id().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(pending(&core), ["c1", "c2"]);
        let _ = core.route(notification(serde_json::json!({"method": "turn/started", "params": {"sessionId": "s", "turnId": "t", "commandId": "c1", "viewCursor": "v:1", "sourceRange": range}})));
        assert_eq!(pending(&core), ["c1", "c2"], "its turn runs");
        let _ = core.route(notification(serde_json::json!({"method": "userInput/settled", "params": {"sessionId": "s", "userInputId": "p", "outcome": "answered", "answers": [], "clarification": null, "reason": null, "decidedAt": null, "decidedByCommandId": "c2", "viewCursor": "v:2", "sourceRange": range}})));
        assert_eq!(pending(&core), ["c1"], "settled by it");
        let _ = core.route(notification(serde_json::json!({"method": "turn/completed", "params": {"sessionId": "s", "turnId": "t", "terminal": "completed", "viewCursor": "v:3", "sourceRange": range}})));
        assert!(pending(&core).is_empty(), "its turn ended");
    }

    /// A waker that counts its wake-ups.
    struct Count(AtomicUsize);

    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A wait for the connection's end that was given up (dropped) leaves no waker behind;
    /// one polled again keeps one, and is woken at the end.
    #[test]
    fn a_wait_for_the_end_given_up_leaves_nothing_behind() {
        let core = Core::new(FoldRules::default(), 0);
        for _ in 0..100 {
            let count = Arc::new(Count(AtomicUsize::new(0)));
            let waker = Waker::from(count);
            let mut wait = core.end_wait();
            assert!(wait.poll(&mut Context::from_waker(&waker)).is_pending());
        }
        assert!(core.lock().ending.is_empty(), "each taken out when dropped");
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let mut wait = core.end_wait();
        for _ in 0..3 {
            let waker = Waker::from(count.clone());
            assert!(wait.poll(&mut Context::from_waker(&waker)).is_pending());
        }
        assert_eq!(core.lock().ending.len(), 1, "one a wait");
        core.end(CloseReason::PeerClosed, true);
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "woken at the end");
        let waker = Waker::from(count.clone());
        assert!(wait.poll(&mut Context::from_waker(&waker)).is_ready());
        drop(wait);
    }

    /// A pump that stops before the connection closed (a panic of a routing) ends the
    /// connection, and the core with it: a wait for the end is woken and ends.
    #[test]
    fn a_pump_stopped_early_ends_the_connection_and_every_wait() {
        let (reader, _host_writes) = msp_rpc::pipe::pipe();
        let (_host_reads, writer) = msp_rpc::pipe::pipe();
        let options = msp_rpc::Options::new();
        let connection = msp_rpc::blocking::Connection::new(reader, writer, options);
        let core = Core::new(FoldRules::default(), 0);
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut wait = core.end_wait();
        assert!(wait.poll(&mut Context::from_waker(&waker)).is_pending());
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ending = crate::shared::Ending {
                connection: &connection,
                core: &core,
            };
            panic!("a routing's bug");
        }));
        assert!(unwound.is_err());
        assert_eq!(connection.close_reason(), Some(CloseReason::Local));
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "woken at the end");
        let ended = wait.poll(&mut Context::from_waker(&waker));
        assert_eq!(ended, Poll::Ready(CloseReason::Local));
    }

    /// Waits on a session that were given up (dropped) leave no waker behind, a task's two
    /// waits keep one each (one dropped takes nothing of the other's), and an input routed
    /// wakes the waits kept, whose keys of the round before then name nothing.
    #[test]
    #[cfg(feature = "tokio")]
    fn a_session_wait_given_up_leaves_nothing_behind() {
        let core = Core::new(FoldRules::default(), 16);
        let place = core.open("s", |_| ()).place;
        let waiters = |core: &Core| core.lock().slots.open[place.0].waiting.len();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        for _ in 0..100 {
            let mut wait = core.handle_wait(place);
            assert!(wait.check(&mut cx, Slot::next_event).is_pending());
            let mut task = core.slot_wait(place);
            assert!(task.poll(&mut cx, Slot::next_event).is_pending());
        }
        assert_eq!(waiters(&core), 0, "each taken out when dropped");
        // One task, two waits, one waker: dropping one keeps the other's.
        let mut first = core.slot_wait(place);
        let mut second = core.slot_wait(place);
        for _ in 0..3 {
            assert!(first.poll(&mut cx, Slot::next_event).is_pending());
            assert!(second.poll(&mut cx, Slot::next_event).is_pending());
        }
        assert_eq!(waiters(&core), 2, "one a wait");
        drop(second);
        assert_eq!(waiters(&core), 1);
        let _ = core.route(started(1));
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "the one left, woken");
        assert_eq!(waiters(&core), 0);
        // Another wait kept in the next round, at the place the first round gave `first`:
        // `first`, dropped now, takes nothing of it.
        let mut later = core.handle_wait(place);
        assert!(later.check(&mut cx, Slot::next_event).is_ready());
        assert!(later.check(&mut cx, Slot::next_event).is_pending());
        assert_eq!(later.key.map(|(_, at)| at), first.key.map(|(_, at)| at));
        drop(first);
        assert_eq!(waiters(&core), 1, "a key of the round before names nothing");
        drop(later);
        assert_eq!(waiters(&core), 0);
    }

    /// A panic while a batch is routed finishes, as failed, the refills begun before it:
    /// nothing stays held for them, and a wait sees a durable host's end.
    #[test]
    fn a_refill_begun_in_a_batch_that_panicked_is_finished_as_failed() {
        let core = Core::new(FoldRules::default(), 8);
        let place = core.open("s", |_| ()).place;
        let inputs = [started(1), gap(1, 3), started(4)]
            .into_iter()
            .map(Some)
            .chain([None])
            .map(|input| input.expect("a bug in the fold"));
        let routed = panic::catch_unwind(AssertUnwindSafe(|| core.route_all(inputs)));
        assert!(routed.is_err(), "the panic passed on");
        core.end(CloseReason::PeerClosed, true);
        let mut state = core.lock();
        let state = &mut *state;
        let slot = state.slots.at(place);
        assert!(matches!(slot.hold, Hold::Idle), "nothing held");
        assert_eq!(slot.fold.items().len(), 2, "what was held folded");
        assert!(seen_end(&state.ended, slot).is_some());
        assert!(matches!(
            slot.fold.gap().failure(),
            Some(msp_session::RefillFailure::Page { .. })
        ));
    }

    /// A refill whose ephemeral host ended while it paged ends failed: the pages it had are
    /// refused by the fold, so the gap is not said to be filled.
    #[test]
    fn a_refill_finished_after_an_ephemeral_host_ended_fails() {
        let core = Core::new(FoldRules::default(), 0);
        let _ = core.open("s", |_| ());
        let mut refilling = refill_begun(&core);
        // Its walk done (the view's end), the host ends before it is finished.
        let page = serde_json::json!({"events": [], "nextCursor": null});
        let page: msp_types::ViewPageResult = serde_json::from_value(page).unwrap();
        assert!(refilling.refill.next_request().is_some());
        refilling.refill.page(page);
        assert!(refilling.refill.is_over() && refilling.refill.failure().is_none());
        core.end(CloseReason::PeerClosed, false);
        assert!(core.finish_refill(refilling).is_empty());
        core.read("s", |fold| {
            assert!(!fold.is_current(), "not filled");
            let failure = fold.gap().failure();
            assert!(
                matches!(failure, Some(msp_session::RefillFailure::Page { .. })),
                "the host's end, not an overflow: {failure:?}"
            );
        });
    }

    /// A refill dropped before it was paged to its end (a panic, a task cancelled, a thread
    /// that never started) is finished as failed: the inputs held for it are folded.
    #[test]
    fn a_refill_never_paged_to_its_end_is_finished_as_failed() {
        let core = Arc::new(Core::new(FoldRules::default(), 8));
        let _place = core.open("s", |_| ()).place;
        let refilling = refill_begun(&core);
        let _ = core.route(started(4));
        assert_eq!(core.read("s", |fold| fold.items().len()), 1, "held");
        drop(Paging::new(core.clone(), vec![refilling]));
        assert_eq!(core.read("s", |fold| fold.items().len()), 2, "folded");
        assert!(core.read("s", |fold| fold.gap().failure().is_some()));
    }

    /// Events not taken past the capacity: the oldest go, counted in one `Lagged` in front
    /// of the rest, and the queue holds no more than the capacity and that `Lagged`.
    #[test]
    fn events_past_the_capacity_drop_the_oldest_counted_in_one_lagged() {
        for capacity in [1, 2, 5] {
            let core = Core::new(FoldRules::default(), capacity);
            let place = core.open("s", |_| ()).place;
            for n in 1..=10 {
                let _ = core.route(started(n));
                let state = &mut core.lock();
                assert!(state.slots.at(place).events.len() <= capacity + 1);
            }
            let state = &mut core.lock();
            let events = &state.slots.at(place).events;
            let missed = match events.front() {
                Some(Event::Lagged { missed }) => *missed,
                _ => panic!("a Lagged in front"),
            };
            assert_eq!(missed, 10 - capacity as u64, "capacity {capacity}");
            let kept: Vec<_> = events
                .iter()
                .skip(1)
                .map(|event| match event {
                    Event::Folded { input, .. } => {
                        input.view_cursor().unwrap_or_default().to_owned()
                    }
                    _ => panic!("one Lagged"),
                })
                .collect();
            let newest: Vec<_> = (11 - capacity..=10).map(|n| format!("v:{n}")).collect();
            assert_eq!(kept, newest, "the newest kept");
        }
    }

    /// Changes to an item not taken yet coalesce: it is taken once, as it is now.
    #[test]
    fn an_item_changed_again_before_it_is_taken_is_taken_once() {
        let core = Core::new(FoldRules::default(), 0);
        let place = core.open("s", |_| ()).place;
        let key = core.follow_turn("s", "t");
        let _ = core.route(started(1));
        let _ = core.route(started(2));
        let line = r#"{"jsonrpc":"2.0","method":"item/completed","params":{"sessionId":"s","viewCursor":"v:c1","sourceRange":{"stream":{"kind":"run","id":"t"},"first":{"id":"r","sequence":1},"last":{"id":"r","sequence":1}},"item":{"itemId":"i1","kind":"agentMessage","revision":2,"status":"completed","turnId":"t"}}}"#;
        let Message::Notification(completed) = Frame::parse(Sender::Server, line).unwrap().message
        else {
            panic!("a notification");
        };
        let _ = core.route(Input::Notification(completed));
        let mut state = core.lock();
        let slot = state.slots.at(place);
        let taken: Vec<_> = std::iter::from_fn(|| slot.next_turn_item(key, "t", None).flatten())
            .map(|entry| (entry.id().to_owned(), entry.item().revision))
            .collect();
        assert_eq!(taken, [("i1".to_owned(), 2), ("i2".to_owned(), 1)]);
    }

    /// A turn whose event comes while its `turn/start` is in flight, after items of it the
    /// fold holds (a turn sent again after a resume ran before): the follower starts from
    /// them, as one made once the start returned does.
    #[test]
    fn a_follower_seeing_its_turn_start_takes_the_items_the_fold_held() {
        let core = Core::new(FoldRules::default(), 0);
        let place = core.open("s", |_| ()).place;
        let _ = core.route(started(1));
        let following = core.follow_command("s", "c");
        let line = r#"{"jsonrpc":"2.0","method":"turn/started","params":{"sessionId":"s","viewCursor":"v:t","turnId":"t","commandId":"c","sourceRange":{"stream":{"kind":"run","id":"t"},"first":{"id":"r","sequence":1},"last":{"id":"r","sequence":1}}}}"#;
        let Message::Notification(turn_started) =
            Frame::parse(Sender::Server, line).unwrap().message
        else {
            panic!("a notification");
        };
        let _ = core.route(Input::Notification(turn_started));
        let _ = core.route(started(2));
        let result = serde_json::from_value(serde_json::json!({"commandId": "c",
            "disposition": "started", "startedNewTurn": true, "status": "accepted", "turnId": "t"}))
        .unwrap();
        let (_, key) = following.started(Ok(result)).expect("started");
        let mut state = core.lock();
        let slot = state.slots.at(place);
        let taken: Vec<_> = std::iter::from_fn(|| slot.next_turn_item(key, "t", None).flatten())
            .map(|entry| entry.id().to_owned())
            .collect();
        assert_eq!(taken, ["i1", "i2"]);
    }

    #[test]
    fn a_turn_start_dropped_in_flight_leaves_no_follower() {
        let core = Core::new(FoldRules::default(), 0);
        let place = core.open("s", |_| ()).place;
        drop(core.follow_command("s", "c1"));
        let failed = core
            .follow_command("s", "c2")
            .started(Err(Error::Closed(CloseReason::Local)));
        assert!(failed.is_err());
        let state = core.lock();
        assert!(state.slots.open[place.0].followers.is_empty());
    }

    #[test]
    fn a_handle_taking_what_the_pump_routed_keeps_the_pump_from_routing_more() {
        let core = Core::new(FoldRules::default(), 16);
        let place = core.open("s", |_| ()).place;
        let mut cx = Context::from_waker(Waker::noop());
        let mut seen = 0;
        let PumpTurn::Role(role) = core.pump_turn(&mut seen, &mut cx) else {
            panic!("nobody was served: the pump's turn");
        };
        assert!(role
            .core()
            .route_all([started(1), started(2)].into_iter())
            .is_empty());
        drop(role);

        // A handle takes an event the pump routed, without taking the role.
        let mut wait = core.handle_wait(place);
        let taken = wait.check_or_role(&mut cx, Slot::next_event);
        assert!(matches!(taken, Ok(Some(Event::Folded { .. }))));
        drop(wait);
        // The pump leaves the routing to it for a while, then looks again.
        assert!(matches!(
            core.pump_turn(&mut seen, &mut cx),
            PumpTurn::Later(look) if look == STALL
        ));
        assert!(matches!(
            core.pump_turn(&mut seen, &mut cx),
            PumpTurn::Role(_)
        ));
    }

    #[test]
    fn a_waiting_handle_routes_and_checks_under_one_lock_and_gives_the_role_back() {
        let core = Core::new(FoldRules::default(), 16);
        let place = core.open("s", |_| ()).place;
        let mut cx = Context::from_waker(Waker::noop());
        let mut wait = core.handle_wait(place);
        let Err(Some(role)) = wait.check_or_role(&mut cx, Slot::next_event) else {
            panic!("no event yet, and nobody holds the role");
        };
        let checked =
            wait.route_and_check(role, Some(started(1)), false, &mut cx, Slot::next_event);
        assert!(matches!(
            checked,
            Checked::Found(Some(Event::Folded { .. }))
        ));
        // Given back: another handle takes it.
        let mut other = core.handle_wait(place);
        assert!(matches!(
            other.check_or_role(&mut cx, Slot::next_event),
            Err(Some(_))
        ));
        // Neither parked: neither counted.
        assert_eq!(core.lock().pumping.handles, 0);
    }

    #[test]
    fn the_commands_sent_in_a_session_are_known_at_its_next_opening() {
        use msp_types::protocol::methods;
        let core = Core::new(FoldRules::default(), 0);
        let _ = core.open("s", |_| ());
        let answer: Command<methods::UserInputAnswerMethod> = Command::with_id("c1", |id| {
            serde_json::from_value(serde_json::json!({"commandId": id, "sessionId": "s", "userInputId": "p", "answers": []})).unwrap()
        });
        core.sent("s", &answer).unwrap();
        core.forget("s");
        assert!(core.lock().slots.get("s").is_none(), "closed");
        let _ = core.open("s", |_| ());
        let sent = |core: &Core| core.lock().slots.get("s").unwrap().asked.sent.clone();
        assert_eq!(sent(&core), HashSet::from(["c1".to_owned()]));
        assert!(core.lock().sent_before.is_empty(), "handed to the opening");
    }
}
