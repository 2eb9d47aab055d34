//! The gap refill, as a planner without I/O: given the hole, the `view/page` requests to send;
//! given their results, when to stop; meanwhile, the live inputs to hold.
//!
//! ```text
//! let mut refill = fold.begin_refill()?;        // the hole (after, next)
//! while let Some(params) = refill.next_request() {
//!     let page = send view/page(params)?;       // the caller's I/O
//!     refill.page(page);                        // or refill.failed(error)
//! }                                             // live inputs meanwhile: refill.hold(input)
//! fold.finish_refill(refill);                   // pages, then held inputs; current again
//! ```
//!
//! The walk asks from the hole's first `after` (from the view's oldest event for a hole a
//! resume left, its history not served) and stops at the page that serves its target
//! (`next`, compared for equality, never ordered), or at the end of the view (`nextCursor:
//! null`: the target may be an ephemeral event no page serves). It refuses any cursor it
//! has asked for or a page has served before (a cycle of any length), a page that serves
//! nothing yet names a next cursor, a page of another session, a page that does not decode,
//! more than [`FoldRules::refill_page_budget`] pages, more than
//! [`FoldRules::refill_held_frames`] held inputs: each a [`RefillFailure`].

use std::collections::BTreeSet;

use crate::Set;

use msp_types::{ProtocolNotification, ViewPageDirection, ViewPageParams, ViewPageResult};

use crate::fold::{cursor_of, Input};
use crate::rules::FoldRules;

/// How many events a refill asks for a page.
pub const PAGE_LIMIT: i64 = 200;

/// Why a refill failed. The fold stays not current, with the reason ([`GapState::failure`]);
/// re-anchoring (`view/page` with `anchor`) or a new resume can recover.
///
/// [`GapState::failure`]: crate::fold::GapState::failure
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefillFailure {
    /// A page served nothing yet named a next cursor, or named the cursor just asked for.
    Stalled {
        /// The cursor asked for (the one named, for the view's first page).
        cursor: String,
    },
    /// A page named a cursor asked for, or served, before.
    Cycle {
        /// The cursor named again.
        cursor: String,
    },
    /// The `view/page` request failed (an error answer, a timeout, the connection closed).
    Page {
        /// The JSON-RPC error code, when the host answered with one.
        code: Option<i64>,
        /// What went wrong.
        reason: String,
    },
    /// A page served an event of another session.
    ForeignEvent {
        /// The session it named.
        session_id: String,
    },
    /// A page did not decode (a legacy `{"items": ...}` page, an event of a known method whose
    /// params do not).
    Malformed {
        /// Where and why.
        reason: String,
    },
    /// More live inputs arrived during the walk than it holds.
    Overflow,
    /// More pages than the budget.
    Budget,
}

impl std::fmt::Display for RefillFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefillFailure::Stalled { cursor } => {
                write!(f, "the page from {cursor} served nothing new")
            }
            RefillFailure::Cycle { cursor } => write!(f, "the pages came back to {cursor}"),
            RefillFailure::Page { code, reason } => match code {
                Some(code) => write!(f, "view/page failed ({code}): {reason}"),
                None => write!(f, "view/page failed: {reason}"),
            },
            RefillFailure::ForeignEvent { session_id } => {
                write!(f, "a page served an event of session {session_id}")
            }
            RefillFailure::Malformed { reason } => write!(f, "a page did not decode: {reason}"),
            RefillFailure::Overflow => f.write_str("too many live frames arrived meanwhile"),
            RefillFailure::Budget => f.write_str("too many pages"),
        }
    }
}

/// Where a refill stands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Walk {
    /// The next page to ask for is from `cursor`.
    Ask,
    /// A request was handed out; its page is awaited.
    Waiting,
    /// Reached the target or the end of the view.
    Done,
    /// Failed.
    Failed(RefillFailure),
}

/// One refill of a hole (see the module docs).
#[derive(Clone, Debug)]
pub struct Refill {
    session_id: String,
    /// The hole's first `after` (`None`: from the view's oldest event).
    after: Option<String>,
    target: String,
    /// Where the next page starts after (`None`: the view's oldest event).
    cursor: Option<String>,
    /// Every cursor asked for.
    asked: BTreeSet<String>,
    /// Every cursor a page served.
    served: Set<String>,
    /// Cursors served past the target: live copies of them are late twins.
    twins: Set<String>,
    events: Vec<ProtocolNotification>,
    held: Vec<Input>,
    pages: usize,
    walk: Walk,
    direction: bool,
    stops_at_target: bool,
    page_budget: usize,
    held_budget: usize,
}

/// What a finished refill hands the fold.
pub(crate) struct RefillEnd {
    pub(crate) after: Option<String>,
    pub(crate) target: String,
    pub(crate) events: Vec<ProtocolNotification>,
    pub(crate) held: Vec<Input>,
    pub(crate) served: Set<String>,
    pub(crate) twins: Set<String>,
    pub(crate) failure: Option<RefillFailure>,
}

impl Refill {
    pub(crate) fn new(
        session_id: String,
        after: Option<String>,
        target: String,
        rules: &FoldRules,
    ) -> Self {
        Refill {
            session_id,
            target,
            cursor: after.clone(),
            after,
            asked: BTreeSet::new(),
            served: Set::default(),
            twins: Set::default(),
            events: Vec::new(),
            held: Vec::new(),
            pages: 0,
            walk: Walk::Ask,
            direction: rules.refill_direction,
            stops_at_target: rules.refill_stops_at_target,
            page_budget: rules.refill_page_budget,
            held_budget: rules.refill_held_frames,
        }
    }

    /// The next `view/page` request to send; `None` once the walk is over (or while a page is
    /// awaited).
    pub fn next_request(&mut self) -> Option<ViewPageParams> {
        if self.walk != Walk::Ask {
            return None;
        }
        if self.page_budget > 0 && self.pages >= self.page_budget {
            self.walk = Walk::Failed(RefillFailure::Budget);
            return None;
        }
        self.pages += 1;
        if let Some(cursor) = &self.cursor {
            self.asked.insert(cursor.clone());
        }
        self.walk = Walk::Waiting;
        let mut params = ViewPageParams::builder()
            .limit(PAGE_LIMIT)
            .session_id(self.session_id.clone())
            .build();
        params.cursor = self.cursor.clone();
        if self.direction {
            params.direction = Some(ViewPageDirection::Forward);
        }
        Some(params)
    }

    /// Takes the result of the request handed out last.
    pub fn page(&mut self, page: ViewPageResult) {
        if self.walk != Walk::Waiting {
            return;
        }
        let sent = self.cursor.clone();
        let count = page.events.len();
        let mut reached = false;
        // A page names the cursor of its last event as the next: only what earlier pages
        // served makes a cycle.
        let mut served_here = Vec::new();
        for unframed in page.events {
            // Every page event names its session and cursor, whatever its kind.
            if unframed.params.session_id != self.session_id {
                let session_id = unframed.params.session_id;
                return self.fail(RefillFailure::ForeignEvent { session_id });
            }
            let method = &unframed.method;
            let decoded = serde_json::to_value(&unframed.params)
                .map_err(|e| e.to_string())
                .and_then(|params| {
                    ProtocolNotification::decode(method, Some(params)).map_err(|e| e.to_string())
                });
            let event = match decoded {
                Ok(event) => event,
                Err(reason) => {
                    let reason = format!("{method}: {reason}");
                    return self.fail(RefillFailure::Malformed { reason });
                }
            };
            // A kind of a later schema is folded as live (reported, nothing changed). The
            // target is reached at its cursor, whatever the kind (one whose cursor names
            // another record too: the host named it).
            reached |= unframed.params.view_cursor == self.target;
            if let Some(cursor) = cursor_of(&event) {
                served_here.push(cursor.to_owned());
                if reached {
                    self.twins.insert(cursor.to_owned());
                }
            }
            self.events.push(event);
        }
        let cycle = |next: &String| self.asked.contains(next) || self.served.contains(next);
        let cycle = page.next_cursor.as_ref().is_some_and(cycle);
        let last_served = served_here.last().cloned();
        self.served.extend(served_here);
        let next = match page.next_cursor {
            None => {
                // The end of the view: everything the hole missed was served (its target may
                // have been an ephemeral event no page serves). A `view/gap` merged later
                // walks on from the last event served ([`Refill::retarget`]).
                if let Some(last) = last_served {
                    self.cursor = Some(last);
                }
                self.walk = Walk::Done;
                return;
            }
            Some(next) => next,
        };
        if reached && self.stops_at_target {
            // A `view/gap` merged later walks on from here ([`Refill::retarget`]).
            self.cursor = Some(next);
            self.walk = Walk::Done;
            return;
        }
        if count == 0 || sent.as_ref() == Some(&next) {
            let cursor = sent.unwrap_or(next);
            return self.fail(RefillFailure::Stalled { cursor });
        }
        if reached {
            self.cursor = Some(next);
            self.walk = Walk::Done;
            return;
        }
        if cycle {
            return self.fail(RefillFailure::Cycle { cursor: next });
        }
        self.cursor = Some(next);
        self.walk = Walk::Ask;
    }

    /// The request handed out last failed: the walk is over.
    pub fn failed(&mut self, code: Option<i64>, reason: impl Into<String>) {
        let reason = reason.into();
        self.fail(RefillFailure::Page { code, reason });
    }

    /// A `view/gap` arrived during the walk and the fold merged it: walk on to its `next`.
    pub fn retarget(&mut self, next: impl Into<String>) {
        self.target = next.into();
        if self.walk == Walk::Done {
            self.walk = Walk::Ask;
        }
    }

    /// More live inputs arrived during the walk than [`FoldRules::refill_held_frames`] lets a
    /// refill hold, and the caller folds them as they come: the walk is over
    /// ([`RefillFailure::Overflow`]), and what its pages served is dropped, since applied
    /// after newer live inputs it would fold what was folded already, older state over newer
    /// and text out of order. The hole stays open. A walk that failed before keeps its
    /// reason ([`Refill::failure`]: a host that failed a page, say, is not one to ask again).
    /// Gives back the inputs it held ([`Refill::hold`]), for the caller to fold first, in
    /// order.
    #[must_use = "the inputs it held are folded first"]
    pub fn overflowed(&mut self) -> Vec<Input> {
        self.fail(RefillFailure::Overflow);
        self.events.clear();
        self.twins.clear();
        self.served.clear();
        std::mem::take(&mut self.held)
    }

    /// Holds a live input that arrived during the walk, to apply after the pages; the walk
    /// fails when it holds too many.
    pub fn hold(&mut self, input: impl Into<Input>) {
        self.held.push(input.into());
        if self.held.len() > self.held_budget {
            self.fail(RefillFailure::Overflow);
        }
    }

    /// Whether the walk is over (finish it with [`crate::Fold::finish_refill`]).
    pub fn is_over(&self) -> bool {
        matches!(self.walk, Walk::Done | Walk::Failed(_))
    }

    /// Why it failed, once it did.
    pub fn failure(&self) -> Option<&RefillFailure> {
        match &self.walk {
            Walk::Failed(failure) => Some(failure),
            _ => None,
        }
    }

    /// The cursor it walks to.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// How many pages it asked for.
    pub fn pages(&self) -> usize {
        self.pages
    }

    fn fail(&mut self, failure: RefillFailure) {
        if !matches!(self.walk, Walk::Failed(_)) {
            self.walk = Walk::Failed(failure);
        }
    }

    pub(crate) fn into_end(self) -> RefillEnd {
        let failure = match self.walk {
            Walk::Failed(failure) => Some(failure),
            Walk::Done => None,
            Walk::Ask | Walk::Waiting => Some(RefillFailure::Page {
                code: None,
                reason: "the refill was finished before its walk ended".into(),
            }),
        };
        RefillEnd {
            after: self.after,
            target: self.target,
            events: self.events,
            held: self.held,
            served: self.served,
            twins: self.twins,
            failure,
        }
    }
}
