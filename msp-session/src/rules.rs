//! The fold's rules as a value: the project's defaults, and a preset that reproduces the
//! official Python SDK 1.4.13 for differential testing.

/// How the fold treats what the two official SDKs, and the protocol, leave open. Each field
/// is one decision of the rules table in the crate docs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FoldRules {
    /// An `item/completed` at the revision held replaces the held form when that form is
    /// still open (the final form wins); otherwise only a higher revision replaces.
    pub final_at_same_revision: bool,
    /// A replacement clears the text the item's deltas built (the new revision already
    /// carries what was streamed so far).
    pub reset_deltas_on_replace: bool,
    /// Deltas build text only while the item is `inProgress`; later ones are reported and
    /// dropped.
    pub deltas_only_while_open: bool,
    /// Deltas for an item not seen yet are held apart, up to [`FoldRules::held_delta_bytes`],
    /// and applied if the item arrives open, dropped if it arrives final (`false`: they
    /// accumulate beside the item whatever it turns out to be, and stay).
    pub hold_absent_deltas: bool,
    /// How many bytes of deltas for absent items are held at most (their text, and the item
    /// ids and field names they are held under); past it the oldest items' are dropped, and
    /// reported. Deltas of at most 1,024 absent items are held, likewise (when they are held
    /// apart: [`FoldRules::hold_absent_deltas`]).
    pub held_delta_bytes: usize,
    /// How many view cursors are surely remembered to refuse a repeated event: the last this
    /// many always, up to twice this many at times (`0`: none; session state then refuses
    /// only a family's own last cursor, as Python does).
    pub cursor_window: usize,
    /// A turn's first end wins; a later `turn/completed`, retract or unqueue is reported as a
    /// duplicate and not applied (`false`: the last `turn/completed` wins, an accepted retract
    /// or an unqueue applies from any state, as Python does).
    pub first_end_wins: bool,
    /// A retract or an unqueue clears the turn's hints (a retry scheduled, the foreground
    /// completed), as `turn/completed` does (`false`: only `turn/completed` clears them, as
    /// Python does).
    pub any_end_clears_hints: bool,
    /// How many filled holes' targets are remembered, so that a `view/gap` delivered again
    /// after its hole was filled (at a resume, a reconnect) opens none (`0`: none, as Python
    /// does: it opens the hole again and pages it).
    pub filled_gaps_remembered: usize,
    /// The `approval/request` and `userInput/request` server requests feed the same entries
    /// as their view events.
    pub requests_feed_the_fold: bool,
    /// A `session/start` or `session/resume` result seeds the fold (items, state, turns,
    /// pending questions and approvals).
    pub seed_from_results: bool,
    /// Events naming another session than the fold's are reported and not applied.
    pub bind_to_session: bool,
    /// The refill asks for pages with `direction: "forward"` (`false`: the member is left
    /// out, as Python does).
    pub refill_direction: bool,
    /// The refill stops at the page that serves the target cursor; `false` runs the stall
    /// check on that page too (a page that reaches the target without a `nextCursor` fails),
    /// as Python does.
    pub refill_stops_at_target: bool,
    /// How many pages a refill asks for at most before it fails (`0`: no bound).
    pub refill_page_budget: usize,
    /// How many live frames a refill holds while it walks before it fails.
    pub refill_held_frames: usize,
}

impl Default for FoldRules {
    /// The project's rules (see the crate docs' table for each choice).
    fn default() -> Self {
        FoldRules {
            final_at_same_revision: true,
            reset_deltas_on_replace: true,
            deltas_only_while_open: true,
            hold_absent_deltas: true,
            held_delta_bytes: 1024 * 1024,
            cursor_window: 4096,
            first_end_wins: true,
            any_end_clears_hints: true,
            filled_gaps_remembered: 64,
            requests_feed_the_fold: true,
            seed_from_results: true,
            bind_to_session: true,
            refill_direction: true,
            refill_stops_at_target: true,
            refill_page_budget: 1000,
            refill_held_frames: 10_000,
        }
    }
}

impl FoldRules {
    /// The rules of the official Python SDK, `muse-code-sdk` 1.4.13, where they terminate:
    /// for differential testing against it. Some things stay as the defaults have them, by
    /// design: a refill refuses a cursor it already asked for (Python pages a cycle
    /// forever), a malformed frame is an outcome (Python raises), an `approval/updated` of an
    /// earlier requirement than the stage shown is stale, an approval's request coming after
    /// an update of its stage or a later one keeps the update (Python drops it: a
    /// requirement's index only grows, so the request is the older word), and a refill's
    /// page applies no delta of an item folded live while its hole was open (Python applies
    /// both).
    pub fn python_sdk_1_4_13() -> Self {
        FoldRules {
            final_at_same_revision: false,
            reset_deltas_on_replace: false,
            deltas_only_while_open: false,
            hold_absent_deltas: false,
            cursor_window: 0,
            first_end_wins: false,
            any_end_clears_hints: false,
            filled_gaps_remembered: 0,
            requests_feed_the_fold: false,
            seed_from_results: false,
            bind_to_session: false,
            refill_direction: false,
            refill_stops_at_target: false,
            refill_page_budget: 0,
            ..FoldRules::default()
        }
    }
}
