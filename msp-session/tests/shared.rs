//! An input shared with the caller (`Fold::apply_shared`, as a client keeping events folds)
//! folds as one given away (`Fold::apply`), for every notification kind of the schema: the
//! shared path names each kind the fold keeps something of, and this catches one it misses.

use std::sync::Arc;

mod support;

use msp_session::{Fold, FoldRules, Input};
use msp_types::{reflect, ProtocolNotification, TurnTerminal};
use serde_json::Value;
use support::*;

/// Every notification method with its params' definition, from the schema.
fn notifications() -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/msp.schema.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let table = schema["notifications"]
        .as_object()
        .expect("a notifications table");
    table
        .iter()
        .filter_map(|(method, entry)| {
            let reference = entry["params"]["$ref"].as_str()?;
            let definition = reference.strip_prefix("#/$defs/")?;
            Some((method.clone(), definition.to_owned()))
        })
        .collect()
}

/// Seeds a method is sampled with: enough for the optional members to come and go.
const SEEDS: u64 = 12;

#[test]
fn every_notification_kind_folds_shared_as_given_away() {
    let kinds = notifications();
    assert!(kinds.len() > 50, "{} notification kinds", kinds.len());
    for rules in [FoldRules::default(), FoldRules::python_sdk_1_4_13()] {
        let (mut given, mut shared) = (Fold::new(rules.clone()), Fold::new(rules.clone()));
        // The caller's share of every input, kept to the end (as a client's queue may);
        // and a caller that drops its share at once (as a program taking each event does).
        let mut held = Vec::new();
        let mut dropped = Fold::new(rules);
        for seed in 0..SEEDS {
            for (method, definition) in &kinds {
                let params = reflect::sample(definition, seed)
                    .unwrap_or_else(|| panic!("no sampler for {definition}"));
                let notification = ProtocolNotification::decode(method, Some(params))
                    .unwrap_or_else(|e| panic!("{method} seed {seed}: {e}"));
                let input = Arc::new(Input::from(notification));
                let expected = given.apply(Input::clone(&input));
                held.push(Arc::clone(&input));
                assert_eq!(
                    dropped.apply_shared(Arc::clone(&input)),
                    expected,
                    "{method}, seed {seed}, dropped"
                );
                assert_eq!(
                    shared.apply_shared(input),
                    expected,
                    "{method}, seed {seed}"
                );
            }
        }
        assert_eq!(shared.items(), given.items());
        assert_eq!(shared.turns(), given.turns());
        assert_eq!(shared.pending_approvals(), given.pending_approvals());
        assert_eq!(shared.resolved_approvals(), given.resolved_approvals());
        assert_eq!(shared.pending_prompts(), given.pending_prompts());
        assert_eq!(shared.settled_prompts(), given.settled_prompts());
        assert_eq!(shared.state(), given.state());
        assert_eq!(shared.gap(), given.gap());
        assert_eq!(shared.arrivals(), given.arrivals());
        assert!(shared.held_deltas().eq(given.held_deltas()));
        assert_eq!(dropped.items(), given.items());
        assert_eq!(dropped.turns(), given.turns());
        assert_eq!(dropped.state(), given.state());
    }
}

#[test]
fn a_kept_terminal_the_python_rules_change_is_copied_and_the_callers_input_left_alone() {
    // Python keeps the first terminal's error on a later one that carries none: the fold
    // changes what it keeps, never the input it shares with the caller.
    let mut fold = python();
    let inputs = [
        turn_started("t1", 1),
        turn_completed("t1", "failed", 2),
        turn_completed("t1", "completed", 3),
    ]
    .map(|n| Arc::new(Input::from(n)));
    for input in &inputs {
        fold.apply_shared(Arc::clone(input));
    }
    let completed = fold.turn("t1").unwrap().completed().unwrap();
    assert_eq!(completed.terminal, TurnTerminal::Completed);
    assert!(completed.error.is_some());
    let Input::Notification(ProtocolNotification::TurnCompleted(last)) = &*inputs[2] else {
        unreachable!("built as turn/completed")
    };
    assert!(last.error.is_none());
}

/// Every notification kind whose params name a session (`sessionId`) is routed to it, and
/// every one with a view cursor of its own (`viewCursor`, when sent) is ordered by it: a
/// kind left out of the fold's tables would reach no session's events, and would neither
/// end a refill's walk nor be refused as a repeat. Experimental kinds with the feature only.
#[test]
fn every_notification_kind_naming_a_session_or_a_cursor_is_routed_and_ordered_by_it() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/msp.schema.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    // Their `viewCursor` names another record: the one that caused the change, the one that
    // opened the approval, the view's head at unload, the view's position when a leave (no
    // view event) completed.
    const NOT_THEIR_OWN: [&str; 4] = [
        "session/statusChanged",
        "approval/reviewing",
        "session/closed",
        "session/leaveCompleted",
    ];
    let (mut sessions, mut cursors) = (0, 0);
    for (method, definition) in notifications() {
        let experimental = schema["notifications"][&method]["x-msp-stability"] == "experimental";
        if experimental && !cfg!(feature = "experimental") {
            continue;
        }
        for seed in 0..SEEDS {
            let params = reflect::sample(&definition, seed)
                .unwrap_or_else(|| panic!("no sampler for {definition}"));
            let notification = ProtocolNotification::decode(&method, Some(params.clone()))
                .unwrap_or_else(|e| panic!("{method} seed {seed}: {e}"));
            let input = Input::from(notification);
            if let Some(session_id) = params.get("sessionId").and_then(Value::as_str) {
                assert_eq!(input.session_id(), Some(session_id), "{method} seed {seed}");
                sessions += 1;
            }
            match params.get("viewCursor").and_then(Value::as_str) {
                _ if NOT_THEIR_OWN.contains(&method.as_str()) => {
                    assert_eq!(input.view_cursor(), None, "{method} seed {seed}");
                }
                Some(cursor) => {
                    assert_eq!(input.view_cursor(), Some(cursor), "{method} seed {seed}");
                    cursors += 1;
                }
                None => {}
            }
        }
    }
    assert!(
        sessions > 0 && cursors > 0,
        "{sessions} sessions, {cursors} cursors"
    );
}
