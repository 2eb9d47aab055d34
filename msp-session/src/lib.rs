//! The session view of the Muse Session Protocol (MSP), folded without I/O.
//!
//! A client shows a session: its items (streamed with `item/delta`, replaced by revision), its
//! turns and how they ended, the approvals and questions waiting for the user, the session's
//! state (model, name, goal, todo list, ...), and it recovers when the host reports a
//! `view/gap`. A [`Fold`] does that from typed inputs, with no threads, no clock and no I/O:
//! each input in gives an [`Outcome`] (never an error, never a panic), and the state is read
//! back typed. The gap refill is a planner beside it ([`Refill`]): the hole in, `view/page`
//! requests out, pages in. Feature `experimental` routes and orders the experimental view
//! events too (admission prompts, permission profiles).
//!
//! ```
//! use msp_session::{Fold, FoldRules, Outcome};
//! use msp_types::{Frame, Message, Sender};
//!
//! // A turn, streamed: its item starts, two deltas build its text, it completes.
//! let transcript = [
//!     r#"{"jsonrpc":"2.0","method":"turn/started","params":{"sessionId":"s","turnId":"t1","commandId":"c1","viewCursor":"v:s:1","sourceRange":{"stream":{"kind":"run","id":"t1"},"first":{"id":"r1","sequence":1},"last":{"id":"r1","sequence":1}}}}"#,
//!     r#"{"jsonrpc":"2.0","method":"item/started","params":{"sessionId":"s","viewCursor":"v:s:2","item":{"itemId":"i1","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t1","text":""}}}"#,
//!     r#"{"jsonrpc":"2.0","method":"item/delta","params":{"sessionId":"s","itemId":"i1","field":"text","delta":"Hel","viewCursor":"v:s:2.1"}}"#,
//!     r#"{"jsonrpc":"2.0","method":"item/delta","params":{"sessionId":"s","itemId":"i1","field":"text","delta":"lo","viewCursor":"v:s:2.2"}}"#,
//!     r#"{"jsonrpc":"2.0","method":"item/delta","params":{"sessionId":"s","itemId":"i1","field":"text","delta":"lo","viewCursor":"v:s:2.2"}}"#,
//! ];
//! let mut fold = Fold::for_session("s", FoldRules::default());
//! let mut outcomes = Vec::new();
//! for line in transcript {
//!     let Message::Notification(notification) = Frame::parse(Sender::Server, line)?.message else {
//!         unreachable!("the transcript holds notifications")
//!     };
//!     outcomes.push(fold.apply(notification));
//! }
//! let item = fold.item("i1").unwrap();
//! assert_eq!(item.text("text"), Some("Hello"));
//! assert_eq!(item.rendered().text.as_deref(), Some("Hello"));
//! // The last delta was delivered twice: refused by its cursor, not appended again.
//! assert!(matches!(outcomes[4], Outcome::DuplicateCursor { .. }));
//! assert_eq!(fold.active_turn().map(|t| t.id()), Some("t1"));
//! # Ok::<(), msp_types::rpc::DecodeError>(())
//! ```
//!
//! # The rules
//!
//! Both official SDKs fold, and they disagree; every rule here is a decision, most of them
//! fields of [`FoldRules`] (whose [`FoldRules::python_sdk_1_4_13`] preset reproduces the
//! Python SDK 1.4.13 for differential testing).
//!
//! | rule | default | Python SDK 1.4.13 preset |
//! | --- | --- | --- |
//! | item revisions | a higher revision replaces the held one, whole; lower or equal is stale ([`ItemChange::Stale`]); order is first opened | the same |
//! | the final form | an `item/completed` at the held revision replaces it when the held one is open (`final_at_same_revision`) | stale |
//! | reopening | a higher `inProgress` revision over a final one applies (the host decides) and is reported as [`ItemChange::Reopened`] | the same (Python calls it a replacement) |
//! | delta text | kept per field beside the item, the wire item untouched; cleared by every replacement (`reset_deltas_on_replace`); only while the item is open (`deltas_only_while_open`); [`ItemEntry::rendered`] applies it as the schema maps fields (`text`, `output` to `visibleOutput`, `summary.N`) | never cleared; appended whatever the status |
//! | deltas before their item | held (bounded: `held_delta_bytes`), applied if the item arrives open, dropped if final (`hold_absent_deltas`) | accumulated and kept, whatever the item is |
//! | a repeated event | every view event's cursor is remembered (a window of `cursor_window`; compared for equality, never ordered): a repeat is [`Outcome::DuplicateCursor`], never applied twice | none but a state family's own last cursor |
//! | turns | a first mention creates the turn running; `turn/started` for an ended turn is stale; hints apply while running and clear at any end (completed, retracted, unqueued: `any_end_clears_hints`); the active turn is the one started last, but a refill's page's start does not take the place of a turn started live since its hole began | only `turn/completed` clears the hints; the rest the same |
//! | a turn's end | the first end wins (`first_end_wins`): a second `turn/completed`, a late one after a retract, a retract or unqueue after the end are [`TurnChange::AlreadyOver`] | the last `turn/completed` wins (an earlier error kept when the later has none); a retract or unqueue applies from any state |
//! | retracts | an absent or unknown outcome counts as accepted; a declined one changes nothing but the command id, and is stale for an unknown turn | the same |
//! | approvals | keyed by `approvalId`; the server request and its view event feed one entry (`requests_feed_the_fold`); the current stage is the latest update's, else the request's ([`PendingApproval::stage`]); a request replaces the update's stage unless that update names the same or a later requirement (the request routed late); an update of an earlier requirement than the stage shown is stale (a refill's page), under both rules; a refill's page's update or request of the stage shown yields to a live one that came since its hole began, as a turn's hints do; an update never opens an entry; the first resolution wins and closes it | the request never reaches the fold |
//! | questions | keyed by `userInputId`; the request, its view event and a resume's pointer feed one entry; only `userInput/settled` settles, the first wins | the request never reaches the fold |
//! | session state | nine families, typed; last write wins after the repeat check; `tokenUsage` kept, never summed | the same |
//! | gaps | `view/gap` opens a hole (merged gaps keep the first `after`, the latest `next`; a `next` seen while the hole is open, or one of the last holes filled (`filled_gaps_remembered`, 64), is [`Outcome::GapRepeated`]); the fold is current again only after a refill reaches the target | a `view/gap` repeated after its hole was filled opens it again |
//! | refill | from the hole's first `after` (from the view's oldest event for a resume's hole), `direction: forward`, 200 a page; stops at the page serving the target or at the end of the view; refuses any cursor asked for or served before (a cycle of any length), a stalled or foreign or undecodable page, more pages than the budget; held live inputs applied after the pages, those a page served skipped; a page's delta of an item folded live while the hole was open (a refill of it overflowed or failed) is not applied ([`DeltaChange::Late`]), and a page's session state yields to what came live since its hole began (past an event a page serves that came live, as between two merged holes, only to what came after that one) | no `direction`; the stall check runs on the target's page too; no page budget; the cycle guard stays (Python pages a cycle forever), and so does the rule for deltas after live inputs |
//! | seeding | a `session/start` or `session/resume` result binds the fold and seeds it (`seed_from_results`): inline items or a snapshot's (items, state, active and queued turns, pending asks), the pending requests named; a snapshot format it does not read, or mode `none`, seeds nothing and is reported; an unknown mode or a snapshot not read leaves a hole up to the view's head, paged from the view's oldest event | no seeding |
//! | session binding | a bound fold reports another session's event as [`Outcome::ForeignSession`] (`bind_to_session`) | not bound |
//! | unknowns | an unknown method is [`Outcome::Unrecognized`]; unknown kinds, statuses, terminals stay in the typed values' `Unknown` arms; an unknown item status counts as final, an unknown terminal as ended | the same |
//! | malformed frames | [`Input::Undecodable`] gives [`Outcome::Malformed`], never a panic | the same (Python raises) |
//! | host death | an ephemeral host's death marks items in progress as ended unknown, and the fold refuses later inputs ([`Fold::host_died`]) | the same |
//!
//! Buffers are bounded: held deltas by `held_delta_bytes` (1 MiB, names counted, and 1,024
//! items; past them the oldest items' are dropped, reported), remembered cursors by `cursor_window` (4,096), a refill's held
//! inputs by `refill_held_frames` (10,000) and its pages by `refill_page_budget` (1,000).

mod approvals;
mod cursors;
mod fold;
mod index;
mod items;
mod kept;
mod prompts;
mod refill;
mod rules;
mod state;
mod turns;

/// Room a fold makes for its first cursors and items when the first arrives: a session
/// holds more than a few, and growing from nothing cost an allocation every few inputs of a
/// short session. Turns grow from nothing: a session has few.
pub(crate) const FIRST_ROOM: usize = 16;

/// The fold's sets: keys are the host's ids and cursors, hashed with a seeded fast hash
/// (SipHash showed as about 3% of parsing and folding in a profile, a sixth of what folding
/// adds).
pub(crate) type Set<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

pub use approvals::{ApprovalChange, PendingApproval, Stage};
pub use fold::{Fold, GapState, Input, Outcome, Seeded, SNAPSHOT_SCHEMA_VERSION};
pub use items::{DeltaChange, ItemChange, ItemEntry};
pub use prompts::{PendingPrompt, PromptChange};
pub use refill::{Refill, RefillFailure, PAGE_LIMIT};
pub use rules::FoldRules;
pub use state::{Family, SessionState, StateChange, StateValue};
pub use turns::{TurnChange, TurnEntry, TurnState};
