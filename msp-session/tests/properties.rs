//! Properties of the fold over generated sessions: what a client sees does not depend on how
//! the host delivered it.
//!
//! - Delivered live, or with a hole at any point that a refill fills (pages cut anywhere,
//!   live events arriving during the walk, the hole's events delivered again late), the
//!   fold ends in the same state.
//! - Seeding from a resume that carries the first part of the history, then folding the rest,
//!   ends where folding the whole history live does.
//! - Inputs shared with the caller (`apply_shared`, as a client keeping events does) fold as
//!   inputs given away do, outcome by outcome, whoever still holds them.

mod support;

use std::sync::Arc;

use msp_session::{Fold, FoldRules, Input, Outcome};
use msp_types::{ProtocolNotification, SessionResumeResult};
use proptest::prelude::*;
use serde_json::{json, Value};
use support::*;

/// A durable event of a generated session (no deltas: pages never serve them).
#[derive(Clone, Debug)]
enum Step {
    /// An item opens, changes or completes at the next revision.
    Item { id: u8, done: bool },
    /// A turn starts or completes.
    Turn { id: u8, end: bool },
    /// The goal changes.
    Goal,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => (0u8..6, any::<bool>()).prop_map(|(id, done)| Step::Item { id, done }),
        2 => (0u8..3, any::<bool>()).prop_map(|(id, end)| Step::Turn { id, end }),
        1 => Just(Step::Goal),
    ];
    prop::collection::vec(step, 1..40)
}

/// The events of `steps`, each with its own cursor (1, 2, ...), revisions counting up.
fn events(steps: &[Step]) -> Vec<ProtocolNotification> {
    let mut revisions = [0i64; 6];
    steps
        .iter()
        .enumerate()
        .map(|(n, step)| {
            let at = n as u32 + 1;
            match step {
                Step::Item { id, done } => {
                    let revision = &mut revisions[*id as usize];
                    *revision += 1;
                    let name = format!("i{id}");
                    match done {
                        true => completed(&name, *revision, &format!("text {at}"), at),
                        false => updated(&name, *revision, "inProgress", at),
                    }
                }
                Step::Turn { id, end: false } => turn_started(&format!("t{id}"), at),
                Step::Turn { id, end: true } => turn_completed(&format!("t{id}"), "completed", at),
                Step::Goal => goal_changed(Some(&format!("goal {at}")), at),
            }
        })
        .collect()
}

/// What a client reads of a fold.
fn view(fold: &Fold) -> Value {
    let mut items: Vec<Value> = fold
        .items()
        .iter()
        .map(|i| {
            json!([
                i.id(),
                i.item().revision,
                i.item().status.as_str(),
                i.rendered().text
            ])
        })
        .collect();
    // A refilled item is opened later than a live one: the order is the delivery's.
    items.sort_by_key(|i| i[0].as_str().unwrap_or_default().to_owned());
    let mut turns: Vec<Value> = fold
        .turns()
        .iter()
        .map(|t| json!([t.id(), format!("{:?}", t.state())]))
        .collect();
    turns.sort_by_key(|t| t[0].as_str().unwrap_or_default().to_owned());
    let goal = fold.state().goal().map(|g| g.view_cursor.clone());
    json!({"items": items, "turns": turns, "goal": goal, "current": fold.is_current()})
}

fn live(events: &[ProtocolNotification]) -> Fold {
    let mut fold = fold();
    for event in events {
        fold.apply(event.clone());
    }
    fold
}

proptest! {
    #[test]
    fn a_hole_refilled_anywhere_ends_where_live_delivery_does(
        steps in steps(),
        cut in any::<prop::sample::Index>(),
        len in any::<prop::sample::Index>(),
        page_size in 1usize..5,
        during in 0usize..4,
    ) {
        let events = events(&steps);
        let expected = view(&live(&events));
        // The hole: events [from, to) were not delivered; `to` (the gap's next) was, before
        // the gap was reported (as hosts flush it). The hole starts after an event seen.
        prop_assume!(events.len() > 1);
        let from = 1 + cut.index(events.len() - 1);
        let to = from + len.index(events.len() - from);
        let mut fold = fold();
        for event in &events[..from] {
            fold.apply(event.clone());
        }
        if to < events.len() {
            fold.apply(events[to].clone());
        }
        let after = cursor(from as u32);
        let next = if to < events.len() { cursor(to as u32 + 1) } else { "v:s1:end".to_owned() };
        let gap = event("view/gap", json!({"after": after, "next": next}));
        let reported = fold.apply(gap);
        prop_assert!(matches!(reported, Outcome::Gap { .. }), "{:?}", reported);
        let mut refill = fold.begin_refill().expect("a hole");
        // The host serves pages of `page_size` from the hole's start, through `next`.
        let served: Vec<_> = events[from..(to + 1).min(events.len())].to_vec();
        let mut live_after = to + 1;
        let mut at = 0;
        while let Some(request) = refill.next_request() {
            let expected_from = if at == 0 { after.clone() } else { cursor((from + at) as u32) };
            prop_assert_eq!(request.cursor.as_deref(), Some(expected_from.as_str()));
            // Live events keep coming during the walk: held.
            for event in events.iter().skip(live_after).take(during) {
                refill.hold(event.clone());
            }
            live_after += during;
            let end = (at + page_size).min(served.len());
            let next_cursor = (end < served.len()).then(|| cursor((from + end) as u32));
            refill.page(page(&served[at..end], next_cursor));
            at = end;
        }
        fold.finish_refill(refill);
        for event in events.iter().skip(live_after) {
            fold.apply(event.clone());
        }
        // The hole's events delivered again, late: refused.
        for event in &events[from..to] {
            let late = fold.apply(event.clone());
            prop_assert!(matches!(late, Outcome::DuplicateCursor { .. }), "{:?}", late);
        }
        prop_assert_eq!(view(&fold), expected);
    }

    #[test]
    fn seeding_from_a_resume_then_folding_the_rest_ends_where_the_whole_history_does(
        steps in steps(),
        cut in any::<prop::sample::Index>(),
    ) {
        let events = events(&steps);
        let whole = live(&events);
        let cut = cut.index(events.len() + 1);
        // The resume carries the items and turns as the first `cut` events left them.
        let before = live(&events[..cut]);
        let items: Vec<Value> = before
            .items()
            .iter()
            .map(|i| serde_json::to_value(i.item()).unwrap())
            .collect();
        let resumed: SessionResumeResult = serde_json::from_value(json!({
            "session": {
                "sessionId": SESSION, "path": "/s", "workspaceRoot": "/w", "status": "idle",
                "createdAt": "t", "updatedAt": "t", "turnCount": 0, "modelId": null,
                "providerId": null, "forkedFrom": null, "activeTurnId": null
            },
            "history": {"mode": "inline", "items": items, "snapshot": null},
            "pendingRequests": [],
            "viewCursor": cursor(cut as u32),
        }))
        .unwrap();
        let mut fold = Fold::new(FoldRules::default());
        let seeded = fold.seed_resumed(&resumed);
        prop_assert!(matches!(seeded, Outcome::Seeded(_)), "{:?}", seeded);
        for event in &events[cut..] {
            fold.apply(event.clone());
        }
        let items = |fold: &Fold| view(fold)["items"].clone();
        prop_assert_eq!(items(&fold), items(&whole));
        prop_assert_eq!(fold.session_id(), Some(SESSION));
    }

    #[test]
    fn inputs_shared_with_the_caller_fold_as_inputs_given_away(
        steps in steps(),
        again in prop::collection::vec(any::<bool>(), 40),
        caller_holds in prop::collection::vec(any::<bool>(), 80),
        python_rules in any::<bool>(),
    ) {
        // Each event, and again (a duplicate, or a stale revision under a new cursor) where
        // `again` says; the caller keeps its share of an input where `caller_holds` says.
        let mut inputs: Vec<Input> = Vec::new();
        for (n, event) in events(&steps).into_iter().enumerate() {
            inputs.push(event.clone().into());
            if again[n] {
                inputs.push(event.into());
                let at = 100 + n as u32;
                inputs.push(updated(&format!("i{}", n % 6), 1, "inProgress", at).into());
                inputs.push(delta(&format!("i{}", n % 6), "more", &format!("d{n}")).into());
            }
        }
        let new = || match python_rules {
            true => python(),
            false => fold(),
        };
        let (mut given, mut shared) = (new(), new());
        let mut held = Vec::new();
        for (n, input) in inputs.into_iter().enumerate() {
            let input = Arc::new(input);
            let expected = given.apply(Input::clone(&input));
            if caller_holds[n % caller_holds.len()] {
                held.push(Arc::clone(&input));
            }
            prop_assert_eq!(shared.apply_shared(input), expected);
        }
        prop_assert_eq!(view(&shared), view(&given));
        prop_assert_eq!(shared.items(), given.items());
    }
}
