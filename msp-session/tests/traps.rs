//! One test for each trap the session layer's clients fell into: what the default rules do,
//! and, where the Python SDK 1.4.13 does otherwise, what its preset does.

mod support;

use msp_session::{
    ApprovalChange, DeltaChange, Fold, FoldRules, Input, ItemChange, Outcome, PromptChange,
    RefillFailure, StateChange, TurnChange, TurnState,
};
use msp_types::{
    ItemKind, ProtocolNotification, ServerRequest, SessionResumeResult, TurnTerminal,
    UserInputOutcome,
};
use serde_json::{json, Value};
use support::*;

#[test]
fn a_delta_delivered_twice_is_appended_once() {
    let events = || {
        [
            started("i1", 1, 1),
            delta("i1", "He", "1.1"),
            delta("i1", "He", "1.1"),
        ]
    };
    let mut fold = fold();
    let outcomes = feed(&mut fold, events());
    assert!(
        matches!(&outcomes[2], Outcome::DuplicateCursor { cursor, .. } if cursor == "v:s1:1.1")
    );
    assert_eq!(fold.item("i1").unwrap().text("text"), Some("He"));
    // Python has no cursor memory: "HeHe".
    let mut python = python();
    feed(&mut python, events());
    assert_eq!(python.item("i1").unwrap().text("text"), Some("HeHe"));
    assert!(fold.seen("v:s1:1.1") && !python.seen("v:s1:1.1"));
}

#[test]
fn the_final_form_at_the_same_revision_replaces_an_open_item() {
    let events = || [started("i1", 2, 1), completed("i1", 2, "done", 2)];
    let mut fold = fold();
    let outcomes = feed(&mut fold, events());
    assert_eq!(
        outcomes[1],
        Outcome::Item {
            item_id: "i1".into(),
            change: ItemChange::Replaced { from: 2, to: 2 }
        }
    );
    assert!(fold.item("i1").unwrap().is_final());
    // Python: stale; the item stays in progress.
    let mut python = python();
    let outcomes = feed(&mut python, events());
    assert!(matches!(
        outcomes[1],
        Outcome::Item {
            change: ItemChange::Stale {
                held: 2,
                offered: 2
            },
            ..
        }
    ));
    assert!(!python.item("i1").unwrap().is_final());
}

#[test]
fn a_higher_open_revision_reopens_a_final_item_and_says_so() {
    let mut fold = fold();
    let outcomes = feed(
        &mut fold,
        [
            completed("i1", 2, "a", 1),
            updated("i1", 3, "inProgress", 2),
        ],
    );
    assert!(matches!(
        outcomes[1],
        Outcome::Item {
            change: ItemChange::Reopened { from: 2, to: 3 },
            ..
        }
    ));
    // Lower or equal revisions never reopen.
    let stale = fold.apply(updated("i1", 3, "inProgress", 3));
    assert!(matches!(
        stale,
        Outcome::Item {
            change: ItemChange::Stale { .. },
            ..
        }
    ));
    // Python reopens it too (and calls it a replacement).
    let mut python = python();
    feed(
        &mut python,
        [
            completed("i1", 2, "a", 1),
            updated("i1", 3, "inProgress", 2),
        ],
    );
    assert!(!python.item("i1").unwrap().is_final());
}

#[test]
fn deltas_build_the_open_revisions_text_and_stop_at_its_end() {
    let events = || {
        [
            delta("i1", "Hel", "0.1"),
            started("i1", 1, 1),
            delta("i1", "lo", "1.1"),
            completed("i1", 2, "Hello", 2),
            delta("i1", " again", "2.1"),
        ]
    };
    let mut fold = fold();
    let outcomes = feed(&mut fold, events());
    assert!(matches!(
        &outcomes[0],
        Outcome::Delta {
            change: DeltaChange::Held,
            ..
        }
    ));
    assert!(matches!(
        &outcomes[1],
        Outcome::Item {
            change: ItemChange::Inserted {
                held_applied: 3,
                ..
            },
            ..
        }
    ));
    assert!(matches!(
        &outcomes[4],
        Outcome::Delta {
            change: DeltaChange::ItemFinal,
            ..
        }
    ));
    let entry = fold.item("i1").unwrap();
    // The final revision's text is authoritative: the deltas were cleared with it.
    assert_eq!(entry.text("text"), None);
    assert_eq!(entry.rendered().text.as_deref(), Some("Hello"));
    // Python keeps every delta beside the item, whatever it became.
    let mut python = python();
    feed(&mut python, events());
    assert_eq!(python.item("i1").unwrap().text("text"), Some("Hello again"));
}

#[test]
fn held_deltas_are_dropped_when_their_item_arrives_final_and_bounded_meanwhile() {
    let mut fold = fold();
    fold.apply(delta("i1", "draft", "0.1"));
    let outcome = fold.apply(completed("i1", 1, "final", 1));
    assert!(matches!(
        outcome,
        Outcome::Item {
            change: ItemChange::Inserted {
                held_applied: 0,
                held_dropped: 5
            },
            ..
        }
    ));
    let mut rules = FoldRules::default();
    // Counted: the text, and the id and field it is held under ("old" "text" "ab": 9).
    rules.held_delta_bytes = 20;
    let mut bounded = Fold::for_session(SESSION, rules.clone());
    bounded.apply(delta("old", "ab", "0.1"));
    let overflow = bounded.apply(delta("new", "cdefgh", "0.2"));
    assert!(matches!(
        overflow,
        Outcome::Delta { change: DeltaChange::HeldOverflow { dropped }, .. } if dropped == "old"
    ));
    assert_eq!(bounded.held_deltas().count(), 1);
    // Deltas of no text, each for another absent item, fill it too: the names count.
    let mut bounded = Fold::for_session(SESSION, rules);
    let outcomes: Vec<_> = (0..100)
        .map(|n| bounded.apply(delta(&format!("i{n}"), "", &format!("0.{n}"))))
        .collect();
    assert!(bounded.held_deltas().count() <= 3);
    assert!(outcomes.iter().any(|o| matches!(
        o,
        Outcome::Delta {
            change: DeltaChange::HeldOverflow { .. },
            ..
        }
    )));
    // And so many absent items at most, however small.
    let mut rules = FoldRules::default();
    rules.held_delta_bytes = usize::MAX;
    let mut bounded = Fold::for_session(SESSION, rules);
    for n in 0..1_100 {
        bounded.apply(delta(&format!("i{n}"), "x", &format!("0.{n}")));
    }
    assert_eq!(bounded.held_deltas().count(), 1_024);
}

#[test]
fn a_turns_first_end_wins_and_a_second_terminal_is_reported() {
    let events = || {
        [
            turn_started("t1", 1),
            turn_completed("t1", "failed", 2),
            turn_completed("t1", "completed", 3),
        ]
    };
    let mut fold = fold();
    let outcomes = feed(&mut fold, events());
    assert_eq!(
        outcomes[2],
        Outcome::Turn {
            turn_id: "t1".into(),
            change: TurnChange::AlreadyOver
        }
    );
    let turn = fold.turn("t1").unwrap();
    assert_eq!(turn.completed().unwrap().terminal, TurnTerminal::Failed);
    // Python: the last terminal wins, the first one's error stays.
    let mut python = python();
    feed(&mut python, events());
    let turn = python.turn("t1").unwrap();
    let completed = turn.completed().unwrap();
    assert_eq!(completed.terminal, TurnTerminal::Completed);
    assert!(completed.error.is_some());
}

#[test]
fn a_late_turn_completed_after_a_retraction_settles_nothing() {
    for mut fold in [fold(), python()] {
        let outcomes = feed(
            &mut fold,
            [
                turn_started("t1", 1),
                retracted("t1", "accepted", 2),
                turn_completed("t1", "completed", 3),
            ],
        );
        assert!(matches!(
            outcomes[2],
            Outcome::Turn {
                change: TurnChange::AlreadyOver,
                ..
            }
        ));
        assert_eq!(fold.turn("t1").unwrap().state(), TurnState::Retracted);
        assert!(fold.active_turn().is_none());
    }
    // A retract after the end: refused by default, applied by Python.
    let events = || {
        [
            turn_started("t1", 1),
            turn_completed("t1", "completed", 2),
            retracted("t1", "accepted", 3),
        ]
    };
    let mut fold = fold();
    feed(&mut fold, events());
    assert_eq!(fold.turn("t1").unwrap().state(), TurnState::Ended);
    let mut python = python();
    feed(&mut python, events());
    assert_eq!(python.turn("t1").unwrap().state(), TurnState::Retracted);
}

#[test]
fn a_turns_end_of_any_kind_clears_its_retry_hints() {
    let retry = |turn: &str, at: u32| {
        event(
            "turn/retryScheduled",
            json!({"turnId": turn, "attempt": 1, "maxAttempts": 5, "nextAttempt": 2,
                "reason": "overloaded", "retryDelayMs": 100, "viewCursor": cursor(at)}),
        )
    };
    let mut fold = fold();
    feed(
        &mut fold,
        [
            turn_started("t1", 1),
            retry("t1", 2),
            turn_started("t2", 3),
            retry("t2", 4),
            turn_started("t3", 5),
            retry("t3", 6),
        ],
    );
    feed(
        &mut fold,
        [
            retracted("t1", "accepted", 7),
            unqueued("t2", 8),
            turn_completed("t3", "completed", 9),
        ],
    );
    for id in ["t1", "t2", "t3"] {
        assert!(fold.turn(id).unwrap().state().is_over(), "{id}");
        assert!(fold.turn(id).unwrap().retry_scheduled().is_none(), "{id}");
    }
    // Python clears them at `turn/completed` only.
    let mut python = python();
    feed(
        &mut python,
        [
            turn_started("t1", 1),
            retry("t1", 2),
            retracted("t1", "accepted", 3),
        ],
    );
    assert!(python.turn("t1").unwrap().retry_scheduled().is_some());
}

#[test]
fn a_declined_retract_of_an_unknown_turn_is_stale_and_an_unqueued_turn_never_ran() {
    let mut fold = fold();
    assert!(matches!(
        fold.apply(retracted("t9", "declined", 1)),
        Outcome::Turn {
            change: TurnChange::Stale,
            ..
        }
    ));
    assert!(fold.turn("t9").is_none());
    fold.apply(unqueued("t2", 2));
    assert_eq!(fold.turn("t2").unwrap().state(), TurnState::Unqueued);
    assert!(matches!(
        fold.apply(turn_started("t2", 3)),
        Outcome::Turn {
            change: TurnChange::Stale,
            ..
        }
    ));
}

#[test]
fn a_multi_stage_approval_shows_each_stage_until_it_resolves() {
    let mut fold = fold();
    let asked = fold.apply(approval_request("a1", 5));
    assert_eq!(
        asked,
        Outcome::Approval {
            approval_id: "a1".into(),
            change: ApprovalChange::Pending { stage: true }
        }
    );
    // The view event of the same ask feeds the same entry.
    fold.apply(approval_requested("a1", 5));
    assert_eq!(fold.pending_approvals().len(), 1);
    let stage = |fold: &Fold| {
        let pending = fold.pending_approval("a1").expect("pending");
        let stage = pending.stage().expect("a stage");
        (
            stage.requirement.source_index,
            stage.choices[0].choice_id.clone(),
        )
    };
    assert_eq!(stage(&fold), (0, "s0-allow".into()));
    fold.apply(approval_updated("a1", 1, 6));
    assert_eq!(stage(&fold), (1, "s1-allow".into()));
    fold.apply(approval_updated("a1", 2, 7));
    assert_eq!(stage(&fold), (2, "s2-allow".into()));
    let resolved = fold.apply(approval_resolved("a1", "approved", 8));
    assert_eq!(
        resolved,
        Outcome::Approval {
            approval_id: "a1".into(),
            change: ApprovalChange::Resolved { first: true }
        }
    );
    assert!(fold.pending_approvals().is_empty());
    // An echo of the resolution, and an update after it, change nothing.
    let echo = fold.apply(approval_resolved("a1", "denied", 9));
    assert!(matches!(
        echo,
        Outcome::Approval {
            change: ApprovalChange::Resolved { first: false },
            ..
        }
    ));
    assert!(matches!(
        fold.apply(approval_updated("a1", 3, 10)),
        Outcome::Approval {
            change: ApprovalChange::Stale,
            ..
        }
    ));
    assert_eq!(
        fold.resolved_approvals()[0].decision.as_str(),
        "approved",
        "the first resolution wins"
    );
    // Python never folds the server request: an approval known only from it is not pending.
    let mut python = python();
    python.apply(approval_request("a2", 1));
    assert!(python.pending_approvals().is_empty());
}

/// `approval/reviewing` carries the cursor of the record that opened the approval: it is
/// reported, and the `approval/requested` it shares its cursor with is not refused for it,
/// whichever comes first (a page serving the request after the notice came live).
#[test]
fn the_reviewers_notice_shares_its_approvals_cursor_and_refuses_nothing() {
    let reviewing = || event("approval/reviewing", approval_params("a1", 5));
    let noticed = Outcome::Approval {
        approval_id: "a1".into(),
        change: ApprovalChange::Reviewing,
    };
    let mut fold = fold();
    fold.apply(approval_requested("a1", 5));
    assert_eq!(fold.apply(reviewing()), noticed);
    let mut fold = support::fold();
    assert_eq!(fold.apply(reviewing()), noticed);
    assert!(matches!(
        fold.apply(approval_requested("a1", 5)),
        Outcome::Approval { .. }
    ));
    assert!(fold.pending_approval("a1").is_some());
}

#[test]
fn an_update_at_the_stage_its_request_shows_is_no_new_stage() {
    let mut fold = fold();
    let change = |outcome: Outcome| match outcome {
        Outcome::Approval { change, .. } => change,
        other => panic!("{other:?}"),
    };
    let stage = |stage| ApprovalChange::Pending { stage };
    assert_eq!(change(fold.apply(approval_requested("a1", 5))), stage(true));
    // An update of the stage the request shows (its choices changed): the same stage.
    let mut same = approval_params("a1", 6);
    same["change"] = json!({"kind": "choicesChanged"});
    let same = event("approval/updated", same);
    assert_eq!(change(fold.apply(same)), stage(false));
    assert_eq!(
        change(fold.apply(approval_updated("a1", 1, 7))),
        stage(true)
    );
    assert_eq!(
        change(fold.apply(approval_updated("a1", 1, 8))),
        stage(false)
    );
}

#[test]
fn a_request_routed_after_an_update_of_its_stage_or_a_later_one_keeps_the_update() {
    let mut fold = fold();
    let stage = |fold: &Fold| {
        let pending = fold.pending_approval("a1").expect("pending");
        pending.stage().expect("a stage").requirement.source_index
    };
    fold.apply(approval_requested("a1", 5));
    fold.apply(approval_updated("a1", 1, 6));
    // The server request of stage 0, routed after the update: its identity, not its stage.
    let late = fold.apply(approval_request("a1", 5));
    assert_eq!(
        late,
        Outcome::Approval {
            approval_id: "a1".into(),
            change: ApprovalChange::Pending { stage: false }
        }
    );
    assert_eq!(stage(&fold), 1);
    assert!(fold.pending_approval("a1").unwrap().request().is_some());
    // A request at a later stage than the update's (sent again, at a resume) is the stage.
    let mut again = approval_params("a1", 7);
    again["currentRequirementId"] = requirement("a1", 2);
    again["availableChoices"] = choices("s2");
    let again: msp_types::ApprovalRequestParams =
        serde_json::from_value(again).expect("approval/request params");
    fold.apply(ServerRequest::ApprovalRequest(Box::new(again.clone())));
    assert_eq!(stage(&fold), 2);
    // At the same requirement, an update's choices are the later word: a late request of
    // that stage keeps them.
    let refreshed = event(
        "approval/updated",
        json!({
            "approvalId": "a1", "change": {"kind": "stageApproved", "requirementId": requirement("a1", 1)},
            "currentRequirementId": requirement("a1", 2), "availableChoices": choices("u2"),
            "subject": {"kind": "fileAccess", "toolName": "shell", "path": "/x", "access": "write"},
            "viewCursor": cursor(8)
        }),
    );
    fold.apply(refreshed);
    fold.apply(ServerRequest::ApprovalRequest(Box::new(again)));
    let pending = fold.pending_approval("a1").expect("pending");
    let offered = &pending.stage().expect("a stage").choices[0].choice_id;
    assert_eq!((stage(&fold), offered.as_str()), (2, "u2-allow"));
}

/// An update of an earlier requirement than the stage shown (a refill's page serving what
/// came before the live update) changes nothing: a requirement's index only grows.
#[test]
fn an_update_of_an_earlier_requirement_is_stale() {
    let mut fold = fold();
    fold.apply(approval_requested("a1", 5));
    fold.apply(approval_updated("a1", 2, 8));
    let late = fold.apply(approval_updated("a1", 1, 7));
    assert!(matches!(
        late,
        Outcome::Approval {
            change: ApprovalChange::Stale,
            ..
        }
    ));
    let pending = fold.pending_approval("a1").expect("pending");
    assert_eq!(
        pending.stage().expect("a stage").requirement.source_index,
        2
    );
    // The same requirement again is the later word on its choices.
    let again = fold.apply(approval_updated("a1", 2, 9));
    assert!(matches!(
        again,
        Outcome::Approval {
            change: ApprovalChange::Pending { stage: false },
            ..
        }
    ));
}

#[test]
fn an_update_never_opens_an_approval() {
    let mut fold = fold();
    assert!(matches!(
        fold.apply(approval_updated("a1", 1, 1)),
        Outcome::Approval {
            change: ApprovalChange::Stale,
            ..
        }
    ));
    assert!(fold.pending_approvals().is_empty());
}

#[test]
fn a_settlement_for_a_prompt_never_seen_is_recorded_and_the_first_wins() {
    let mut fold = fold();
    let outcome = fold.apply(prompt_settled("q1", "timedOut", None, 1));
    assert_eq!(
        outcome,
        Outcome::Prompt {
            user_input_id: "q1".into(),
            change: PromptChange::Settled { first: true }
        }
    );
    fold.apply(prompt_settled("q1", "answered", Some("c"), 2));
    assert_eq!(fold.settled_prompts().len(), 1);
    assert_eq!(
        fold.settled_prompts()[0].outcome,
        UserInputOutcome::TimedOut
    );
    // A request after the settlement does not reopen it.
    assert!(matches!(
        fold.apply(prompt_request("q1", 3)),
        Outcome::Prompt {
            change: PromptChange::Stale,
            ..
        }
    ));
}

#[test]
fn session_state_refuses_a_repeated_event_and_keeps_the_last_write() {
    let mut fold = fold();
    fold.apply(goal_changed(Some("ship"), 4));
    fold.apply(goal_changed(None, 5));
    let repeat = fold.apply(goal_changed(Some("ship"), 4));
    assert!(matches!(repeat, Outcome::DuplicateCursor { .. }));
    assert!(
        fold.state().goal().unwrap().goal.is_none(),
        "goal: null is no goal"
    );
    // Python refuses only a family's own last cursor: A, B, A applies A again.
    let mut python = python();
    python.apply(goal_changed(Some("ship"), 4));
    let refused = python.apply(goal_changed(Some("ship"), 4));
    assert!(matches!(
        refused,
        Outcome::State(StateChange::Repeated { .. })
    ));
    python.apply(goal_changed(None, 5));
    python.apply(goal_changed(Some("ship"), 4));
    assert!(python.state().goal().unwrap().goal.is_some());
}

#[test]
fn unknown_methods_kinds_and_values_are_kept_and_reported() {
    let mut fold = fold();
    let unknown = ProtocolNotification::decode(
        "session/auraChanged",
        Some(json!({"sessionId": SESSION, "aura": "calm"})),
    )
    .unwrap();
    assert_eq!(
        fold.apply(unknown),
        Outcome::Unrecognized {
            method: "session/auraChanged".into()
        }
    );
    let strange = event(
        "item/completed",
        json!({"item": {"itemId": "i1", "kind": "hologram", "revision": 1, "status": "evaporated", "turnId": "t1"}, "viewCursor": cursor(1)}),
    );
    fold.apply(strange);
    let item = fold.item("i1").unwrap();
    assert_eq!(item.item().kind, ItemKind::Unknown("hologram".into()));
    assert!(item.is_final(), "an unknown status counts as final");
    let ended = event(
        "turn/completed",
        json!({"turnId": "t1", "terminal": "vanished", "viewCursor": cursor(2)}),
    );
    fold.apply(ended);
    assert_eq!(fold.turn("t1").unwrap().state(), TurnState::Ended);
}

#[test]
fn malformed_input_and_another_sessions_events_change_nothing() {
    let mut fold = fold();
    let malformed = fold.apply(Input::Undecodable {
        method: Some("item/started".into()),
        pointer: "/params/item/revision".into(),
        reason: "missing field `revision`".into(),
        session_id: None,
    });
    assert!(matches!(malformed, Outcome::Malformed { .. }));
    let mut foreign = started("x", 1, 1);
    if let ProtocolNotification::ItemStarted(params) = &mut foreign {
        params.session_id = "other".into();
    }
    assert!(matches!(
        fold.apply(foreign),
        Outcome::ForeignSession { session_id, .. } if session_id == "other"
    ));
    assert!(fold.items().is_empty());
}

#[test]
fn an_ephemeral_host_death_ends_open_items_unknown_and_discards_the_session() {
    let mut fold = fold();
    feed(
        &mut fold,
        [started("open", 1, 1), completed("done", 1, "x", 2)],
    );
    assert!(
        fold.host_died(true).is_empty(),
        "a durable host's session survives"
    );
    assert_eq!(fold.host_died(false), ["open"]);
    assert!(fold.item("open").unwrap().terminal_unknown());
    assert!(!fold.item("done").unwrap().terminal_unknown());
    assert!(matches!(
        fold.apply(completed("open", 2, "late", 3)),
        Outcome::Discarded { .. }
    ));
    assert!(fold.is_discarded());
}

// Gaps and the refill walk.

/// Runs `refill` against `pages` served by cursor asked (as a host would).
fn walk(fold: &mut Fold, pages: &[(u32, msp_types::ViewPageResult)]) -> Vec<Option<String>> {
    let mut refill = fold.begin_refill().expect("a hole to fill");
    let mut asked = Vec::new();
    while let Some(request) = refill.next_request() {
        asked.push(request.cursor.clone());
        match pages
            .iter()
            .find(|(from, _)| Some(cursor(*from)) == request.cursor)
        {
            Some((_, page)) => refill.page(page.clone()),
            None => refill.failed(Some(-32040), "no such page"),
        }
    }
    fold.finish_refill(refill);
    asked
}

#[test]
fn a_refill_walks_from_the_hole_to_its_next_and_the_fold_is_current_again() {
    let mut fold = fold();
    fold.apply(started("i1", 1, 1));
    // Events 2 and 3 were not delivered; 4 was, before the gap was reported.
    fold.apply(completed("i4", 1, "four", 4));
    assert!(matches!(fold.apply(gap(1, 4)), Outcome::Gap { .. }));
    assert!(!fold.is_current());
    let pages = [
        (1, page(&[completed("i2", 1, "two", 2)], Some(cursor(2)))),
        (
            2,
            page(
                &[
                    completed("i3", 1, "three", 3),
                    completed("i4", 1, "four", 4),
                ],
                Some(cursor(4)),
            ),
        ),
    ];
    let asked = walk(&mut fold, &pages);
    assert_eq!(asked, [Some(cursor(1)), Some(cursor(2))]);
    assert!(fold.is_current());
    // Seen: live (1, 4) or from a page (2, 3); 5 never came.
    let seen: Vec<bool> = (1..=5).map(|n| fold.seen(&cursor(n))).collect();
    assert_eq!(seen, [true, true, true, true, false]);
    let order: Vec<_> = fold.items().iter().map(|i| i.id().to_owned()).collect();
    assert_eq!(
        order,
        ["i1", "i4", "i2", "i3"],
        "first opened, the refilled last"
    );
}

#[test]
fn an_overflowed_refill_applies_none_of_its_pages_and_leaves_the_hole_open() {
    // The caller folded the live inputs as they came (more than it could hold): the pages,
    // older than those, are not applied after them.
    let mut fold = fold();
    fold.apply(started("i1", 1, 1));
    assert!(matches!(fold.apply(gap(1, 3)), Outcome::Gap { .. }));
    let mut refill = fold.begin_refill().expect("a hole to fill");
    assert!(refill.next_request().is_some());
    refill.page(page(&[completed("i2", 1, "two", 2)], None));
    fold.apply(completed("i4", 1, "four", 4));
    assert!(refill.overflowed().is_empty(), "it held nothing");
    assert!(fold.finish_refill(refill).is_empty(), "nothing applied");
    assert!(fold.item("i2").is_none());
    assert!(!fold.is_current());
    assert_eq!(fold.gap().failure(), Some(&RefillFailure::Overflow));
}

#[test]
fn a_refill_refuses_cursor_cycles_of_any_length() {
    for cycle in [[2u32, 3, 2].as_slice(), &[2, 3, 5, 2]] {
        let mut fold = fold();
        fold.apply(gap(1, 9));
        let pages: Vec<_> = cycle
            .windows(2)
            .enumerate()
            .map(|(n, w)| {
                let from = if n == 0 { 1 } else { w[0] };
                let served = completed(&format!("i{n}"), 1, "x", 100 + n as u32);
                (from, page(&[served], Some(cursor(w[1]))))
            })
            .chain(std::iter::once((
                *cycle.last().unwrap(),
                page(&[completed("z", 1, "x", 199)], Some(cursor(cycle[1]))),
            )))
            .collect();
        walk(&mut fold, &pages);
        assert!(
            matches!(fold.gap().failure(), Some(RefillFailure::Cycle { .. })),
            "{cycle:?}: {:?}",
            fold.gap().failure()
        );
        assert!(!fold.is_current());
    }
}

#[test]
fn a_refill_holds_live_events_drops_the_overlap_and_refuses_late_twins() {
    let mut fold = fold();
    fold.apply(gap(1, 3));
    let mut refill = fold.begin_refill().unwrap();
    let request = refill.next_request().unwrap();
    assert_eq!(request.cursor, Some(cursor(1)));
    // Live meanwhile: the hole's last event (served by the page too) and a newer one.
    refill.hold(completed("i3", 1, "three", 3));
    refill.hold(completed("i5", 1, "five", 5));
    refill.page(page(
        &[completed("i2", 1, "two", 2), completed("i3", 1, "three", 3)],
        None,
    ));
    let outcomes = fold.finish_refill(refill);
    assert!(fold.is_current());
    assert!(
        outcomes
            .iter()
            .any(|o| matches!(o, Outcome::DuplicateCursor { cursor: c, .. } if *c == cursor(3))),
        "{outcomes:?}"
    );
    let order: Vec<_> = fold.items().iter().map(|i| i.id().to_owned()).collect();
    assert_eq!(order, ["i2", "i3", "i5"]);
    // A late twin of a served event is refused.
    assert!(matches!(
        fold.apply(completed("i3", 1, "three", 3)),
        Outcome::DuplicateCursor { .. }
    ));
}

/// A page may serve a durable event of a kind a later schema added: folded as a live one
/// would be (reported, nothing changed), the walk going on past it, or ending at it when it
/// is the hole's target.
#[test]
fn a_page_serving_an_event_of_an_unknown_kind_is_walked_past() {
    let aura = || {
        event(
            "session/auraChanged",
            json!({"viewCursor": cursor(3), "aura": "calm"}),
        )
    };
    for (target, served, items) in [(4, 3, ["i1", "i2", "i4"].as_slice()), (3, 2, &["i1", "i2"])] {
        let mut fold = fold();
        fold.apply(started("i1", 1, 1));
        fold.apply(gap(1, target));
        let events = [
            completed("i2", 1, "two", 2),
            aura(),
            completed("i4", 1, "four", 4),
        ];
        let served = &events[..served];
        let next = cursor(target);
        let mut refill = fold.begin_refill().expect("a hole to fill");
        refill.next_request().expect("the page");
        refill.page(page(served, Some(next)));
        assert_eq!(refill.next_request(), None, "target {target}: reached");
        let outcomes = fold.finish_refill(refill);
        assert!(
            fold.is_current(),
            "target {target}: {:?}",
            fold.gap().failure()
        );
        assert!(
            outcomes.contains(&Outcome::Unrecognized {
                method: "session/auraChanged".into()
            }),
            "{outcomes:?}"
        );
        let folded: Vec<_> = fold.items().iter().map(|i| i.id().to_owned()).collect();
        assert_eq!(folded, items);
        // Its cursor is the fold's as any other's: seen, and a live copy refused.
        assert!(fold.seen(&cursor(3)));
        assert!(matches!(
            fold.apply(aura()),
            Outcome::DuplicateCursor { .. }
        ));
    }
}

#[test]
fn a_stalled_foreign_or_failed_page_fails_the_refill_with_its_reason() {
    let mut fold = fold();
    fold.apply(gap(1, 5));
    walk(&mut fold, &[(1, page(&[], Some(cursor(1))))]);
    assert!(matches!(
        fold.gap().failure(),
        Some(RefillFailure::Stalled { .. })
    ));
    let mut fold = support::fold();
    fold.apply(gap(1, 5));
    let mut other = completed("i2", 1, "x", 2);
    if let ProtocolNotification::ItemCompleted(params) = &mut other {
        params.session_id = "other".into();
    }
    walk(&mut fold, &[(1, page(&[other], Some(cursor(2))))]);
    assert!(matches!(
        fold.gap().failure(),
        Some(RefillFailure::ForeignEvent { .. })
    ));
    let mut fold = support::fold();
    fold.apply(gap(1, 5));
    walk(&mut fold, &[]);
    assert!(matches!(
        fold.gap().failure(),
        Some(RefillFailure::Page {
            code: Some(-32040),
            ..
        })
    ));
    assert!(!fold.is_current());
}

#[test]
fn a_view_gap_delivered_again_after_its_hole_was_filled_opens_none() {
    let mut fold = fold();
    fold.apply(started("i1", 1, 1));
    fold.apply(gap(1, 3));
    let pages = [(
        1,
        page(
            &[completed("i2", 1, "two", 2), completed("i3", 1, "three", 3)],
            Some(cursor(3)),
        ),
    )];
    walk(&mut fold, &pages);
    assert!(fold.is_current());
    // The host repeats the gap (a resume boundary): the hole is filled already.
    assert!(matches!(
        fold.apply(gap(1, 3)),
        Outcome::GapRepeated { next } if next == cursor(3)
    ));
    assert!(fold.is_current());
    // A new hole still opens.
    assert!(matches!(fold.apply(gap(3, 5)), Outcome::Gap { .. }));
    assert!(!fold.is_current());
    // Python opens the filled hole again.
    let mut python = python();
    python.apply(gap(1, 3));
    walk(&mut python, &pages);
    assert!(python.is_current());
    assert!(matches!(python.apply(gap(1, 3)), Outcome::Gap { .. }));
}

/// Two holes merged into one: the events the pages serve past the live event between them
/// are newer than it, and are applied over it (an approval's update of the same stage),
/// where those before it yield to it.
#[test]
fn past_a_live_event_between_merged_holes_the_pages_are_newer() {
    let changed = |prefix: &str, at: u32| {
        event(
            "approval/updated",
            json!({
                "approvalId": "a1", "change": {"kind": "choicesChanged"},
                "currentRequirementId": requirement("a1", 0), "availableChoices": choices(prefix),
                "subject": {"kind": "fileAccess", "toolName": "shell", "path": "/x", "access": "write"},
                "viewCursor": cursor(at)
            }),
        )
    };
    let first_choice = |fold: &Fold| {
        let stage = fold.pending_approval("a1").unwrap().stage().unwrap();
        stage.choices[0].choice_id.clone()
    };
    let mut merged = fold();
    merged.apply(approval_requested("a1", 3));
    // 4 lost; 5 live; 6 lost; 7 live.
    merged.apply(changed("live-5", 5));
    merged.apply(gap(3, 5));
    merged.apply(turn_started("t7", 7));
    merged.apply(gap(5, 7));
    assert_eq!(first_choice(&merged), "live-5-allow");
    let served = [
        changed("page-4", 4),
        changed("live-5", 5),
        changed("page-6", 6),
        turn_started("t7", 7),
    ];
    walk(&mut merged, &[(3, page(&served, None))]);
    assert!(merged.is_current());
    assert_eq!(
        first_choice(&merged),
        "page-6-allow",
        "newer than the live 5"
    );

    // A page's event is no live one for a later walk: after a refill that failed past
    // event 4, a walk again from 3 still yields to the live 6.
    let live_6_after_a_hole = || {
        let mut fold = fold();
        fold.apply(approval_requested("a1", 3));
        fold.apply(changed("live-6", 6));
        fold.apply(gap(3, 6));
        fold
    };
    let mut again = live_6_after_a_hole();
    let failing = [(3, page(&[turn_started("t4", 4)], Some(cursor(4))))];
    walk(&mut again, &failing);
    assert!(!again.is_current(), "the page from 4 failed");
    let served = [
        turn_started("t4", 4),
        turn_started("t4", 4),
        changed("page-5", 5),
        changed("live-6", 6),
    ];
    walk(&mut again, &[(3, page(&served, None))]);
    assert!(again.is_current());
    assert_eq!(
        first_choice(&again),
        "live-6-allow",
        "older than the live 6"
    );

    // Nor is a page's event served twice in one walk.
    let mut twice = live_6_after_a_hole();
    walk(&mut twice, &[(3, page(&served, None))]);
    assert!(twice.is_current());
    assert_eq!(first_choice(&twice), "live-6-allow", "served twice");
}

/// A hole whose `after` this fold never saw (it joined later, or forgot it): the pages'
/// events are older than what came live after the hole began, whether `next` came before
/// the `view/gap` or after it.
#[test]
fn a_hole_from_a_cursor_never_seen_yields_to_what_came_live_since() {
    let goal = |fold: &Fold| fold.state().goal().and_then(|g| g.goal.clone());
    let served = [goal_changed(Some("old"), 5), goal_changed(Some("new"), 10)];
    // `next` live before the gap (trap 1), then after it.
    let mut early = fold();
    early.apply(goal_changed(Some("new"), 10));
    early.apply(gap(1, 10));
    let mut late = fold();
    late.apply(gap(1, 10));
    late.apply(goal_changed(Some("new"), 10));
    for (name, mut fold) in [("early", early), ("late", late)] {
        walk(&mut fold, &[(1, page(&served, Some(cursor(10))))]);
        assert!(fold.is_current(), "{name}");
        let goal = goal(&fold).map(|g| g.objective);
        assert_eq!(goal.as_deref(), Some("new"), "{name}");
    }
    // Python remembers no cursor: the page's older value is the last write, and wins.
    for (mut fold, wins) in [(support::fold(), "live"), (python(), "page")] {
        fold.apply(gap(1, 5));
        fold.apply(goal_changed(Some("live"), 6));
        walk(
            &mut fold,
            &[(1, page(&[goal_changed(Some("page"), 5)], None))],
        );
        let goal = goal(&fold).map(|g| g.objective);
        assert_eq!(goal.as_deref(), Some(wins));
    }
}

/// Every `next` of a hole merged from several gaps counts as filled once the hole is: each
/// of those gaps repeated opens none.
#[test]
fn every_gap_merged_into_a_filled_hole_is_filled() {
    let mut fold = fold();
    fold.apply(started("i1", 1, 1));
    fold.apply(gap(1, 3));
    fold.apply(gap(3, 5));
    let served = (2..=5)
        .map(|n| completed(&format!("i{n}"), 1, "x", n))
        .collect::<Vec<_>>();
    walk(&mut fold, &[(1, page(&served, Some(cursor(5))))]);
    assert!(fold.is_current());
    for (after, next) in [(1, 3), (3, 5)] {
        assert!(
            matches!(fold.apply(gap(after, next)), Outcome::GapRepeated { .. }),
            "{after}..{next}"
        );
    }
}

/// The `view/gap` flushed after its `next` (a turn started live): the page's older turn,
/// started and ended in the hole, leaves the live one running as the session's active turn.
#[test]
fn a_refills_older_turn_does_not_take_the_live_turns_place_as_active() {
    let mut fold = fold();
    fold.apply(turn_started("t0", 1));
    fold.apply(turn_completed("t0", "completed", 2));
    fold.apply(turn_started("t2", 5));
    fold.apply(gap(2, 5));
    let pages = [(
        2,
        page(
            &[
                turn_started("t1", 3),
                turn_completed("t1", "completed", 4),
                turn_started("t2", 5),
            ],
            None,
        ),
    )];
    walk(&mut fold, &pages);
    assert!(fold.is_current());
    assert_eq!(fold.turn("t1").unwrap().state(), TurnState::Ended);
    assert_eq!(fold.active_turn().map(|t| t.id()), Some("t2"));
}

/// A hole merged after the walk ended (at its target, or at the end of the view) walks on
/// from where the last page left off, not from the hole's start again.
#[test]
fn a_refill_retargeted_after_its_walk_ended_walks_on_from_the_last_page() {
    let mut fold = fold();
    fold.apply(turn_started("t1", 1));
    fold.apply(gap(1, 3));
    let mut refill = fold.begin_refill().unwrap();
    assert_eq!(refill.next_request().unwrap().cursor, Some(cursor(1)));
    let served = [
        turn_started("t2", 2),
        turn_started("t3", 3),
        turn_started("t4", 4),
    ];
    refill.page(page(&served, Some(cursor(4))));
    assert!(refill.is_over());
    refill.retarget(cursor(6));
    assert_eq!(refill.next_request().unwrap().cursor, Some(cursor(4)));
    refill.page(page(&[turn_started("t5", 5), turn_started("t6", 6)], None));
    assert!(refill.is_over() && refill.failure().is_none());
    // Over at the end of the view: a later target walks on from the last event served.
    refill.retarget(cursor(8));
    assert_eq!(refill.next_request().unwrap().cursor, Some(cursor(6)));
    refill.page(page(&[turn_started("t7", 7), turn_started("t8", 8)], None));
    assert!(refill.is_over() && refill.failure().is_none());
    let fold_outcomes = fold.finish_refill(refill);
    assert!(
        !fold_outcomes
            .iter()
            .any(|o| matches!(o, Outcome::DuplicateCursor { .. })),
        "no event served twice: {fold_outcomes:?}"
    );
}

#[test]
fn gaps_merge_and_a_repeated_next_is_refused_while_the_hole_is_open() {
    let mut fold = fold();
    fold.apply(gap(1, 4));
    fold.apply(gap(6, 9));
    assert_eq!(
        fold.gap().pending(),
        Some((Some(cursor(1).as_str()), cursor(9).as_str()))
    );
    assert!(matches!(fold.apply(gap(6, 9)), Outcome::GapRepeated { .. }));
}

#[test]
fn the_python_refill_runs_its_stall_check_on_the_targets_page_and_asks_without_direction() {
    let mut python = Fold::for_session(SESSION, FoldRules::python_sdk_1_4_13());
    python.apply(gap(1, 2));
    let mut refill = python.begin_refill().unwrap();
    let request = refill.next_request().unwrap();
    assert_eq!(request.direction, None);
    // The target served, but the page names the cursor it was asked from: Python stalls.
    refill.page(page(&[completed("i2", 1, "two", 2)], Some(cursor(1))));
    python.finish_refill(refill);
    assert!(matches!(
        python.gap().failure(),
        Some(RefillFailure::Stalled { .. })
    ));
    // The default rules stop at the target's page.
    let mut fold = fold();
    fold.apply(gap(1, 2));
    walk(
        &mut fold,
        &[(1, page(&[completed("i2", 1, "two", 2)], Some(cursor(1))))],
    );
    assert!(fold.is_current());
}

#[test]
fn an_input_shared_with_the_caller_keeps_its_item_and_terminal_where_they_are() {
    // A client that keeps events would otherwise hold every item twice (an item is over 2 KB).
    let input = std::sync::Arc::new(Input::from(completed("i1", 1, "done", 1)));
    let Input::Notification(ProtocolNotification::ItemCompleted(params)) = &*input else {
        unreachable!("built as item/completed")
    };
    let mut fold = fold();
    let outcome = fold.apply_shared(input.clone());
    assert!(matches!(
        outcome,
        Outcome::Item {
            change: ItemChange::Inserted { .. },
            ..
        }
    ));
    assert!(std::ptr::eq(fold.item("i1").unwrap().item(), &*params.item));
    // So are a turn's terminal params.
    let input = std::sync::Arc::new(Input::from(turn_completed("t1", "completed", 2)));
    let Input::Notification(ProtocolNotification::TurnCompleted(params)) = &*input else {
        unreachable!("built as turn/completed")
    };
    fold.apply_shared(input.clone());
    assert!(std::ptr::eq(
        fold.turn("t1").unwrap().completed().unwrap(),
        &**params
    ));
}

/// A summary part's index is the host's: parts are made up to the 4,096th; past that, its
/// text stays in `texts` (a huge index neither overflows nor asks for terabytes).
#[test]
fn a_summary_delta_past_any_part_there_could_be_stays_in_its_texts() {
    let summary = |index: &str, text: &str, at: &str| {
        event(
            "item/delta",
            json!({"itemId": "i1", "field": format!("summary.{index}"), "delta": text, "viewCursor": format!("v:{SESSION}:{at}")}),
        )
    };
    let mut fold = fold();
    feed(
        &mut fold,
        [
            started("i1", 1, 1),
            summary("0", "first", "1.1"),
            summary("2", "third", "1.2"),
            summary("18446744073709551615", "max", "1.3"),
            summary("100000000000", "huge", "1.4"),
        ],
    );
    let entry = fold.item("i1").unwrap();
    assert_eq!(
        entry.rendered().summary,
        Some(vec!["first".to_owned(), String::new(), "third".to_owned()])
    );
    assert_eq!(entry.text("summary.100000000000"), Some("huge"));
    assert_eq!(entry.texts().len(), 4);
}

/// A refill whose hole stayed open while later inputs were folded live (one that overflowed
/// or failed, paged again): its pages' deltas of an item folded live meanwhile would append
/// their text after later ones, so they are not applied (the item's next revision carries it
/// whole), while an item wholly in the hole gets its text; and its session state yields to
/// what came live, even once the cursor window forgot where the hole began. A gap merged
/// meanwhile changes nothing of that.
#[test]
fn a_refill_after_inputs_folded_live_applies_no_delta_and_no_older_state() {
    let name = |name: &str, at: u32| {
        event(
            "session/nameChanged",
            json!({"name": name, "viewCursor": cursor(at)}),
        )
    };
    let mut rules = FoldRules::default();
    rules.cursor_window = 2;
    let mut fold = Fold::for_session(SESSION, rules);
    fold.apply(started("i1", 1, 1));
    fold.apply(gap(1, 4));
    // Folded live while the hole is open: the text's end, a newer name, more after them.
    fold.apply(delta("i1", "end", "5.1"));
    fold.apply(gap(1, 5));
    fold.apply(name("new", 6));
    for at in 7..20 {
        fold.apply(completed(&format!("x{at}"), 1, "", at));
    }
    let pages = [(
        1,
        page(
            &[
                event(
                    "item/delta",
                    json!({"itemId": "i1", "field": "text", "delta": "start ", "viewCursor": cursor(2),
                        "sourceRange": {"stream": {"kind": "run", "id": "t1"}, "first": {"id": "r2", "sequence": 2}, "last": {"id": "r2", "sequence": 2}}}),
                ),
                name("old", 3),
                started("i4", 1, 4),
                event(
                    "item/delta",
                    json!({"itemId": "i4", "field": "text", "delta": "four", "viewCursor": cursor(5),
                        "sourceRange": {"stream": {"kind": "run", "id": "t1"}, "first": {"id": "r5", "sequence": 5}, "last": {"id": "r5", "sequence": 5}}}),
                ),
            ],
            None,
        ),
    )];
    walk(&mut fold, &pages);
    assert!(fold.is_current());
    assert_eq!(fold.item("i1").unwrap().text("text"), Some("end"));
    assert_eq!(fold.state().name().map(|n| n.name.as_str()), Some("new"));
    assert_eq!(
        fold.item("i4").unwrap().text("text"),
        Some("four"),
        "wholly in the hole"
    );
}

/// A refill's page serves an approval's updates and a turn's hint older than those that
/// arrived live since the hole began, of the same requirement and the same kind: the live
/// ones are the later word and stand, whatever the pages bring after them. Of an approval
/// and a turn the hole alone holds, the page's latest stands.
#[test]
fn a_refill_keeps_an_approvals_update_and_a_turns_hint_that_arrived_live_since_the_hole() {
    // Approval `id`'s stage `stage` with choices named `prefix`.
    let changed_at = |id: &str, stage: i64, prefix: &str, at: u32| {
        event(
            "approval/updated",
            json!({
                "approvalId": id, "change": {"kind": "choicesChanged"},
                "currentRequirementId": requirement(id, stage), "availableChoices": choices(prefix),
                "subject": {"kind": "fileAccess", "toolName": "shell", "path": "/x", "access": "write"},
                "viewCursor": cursor(at)
            }),
        )
    };
    let changed = |id: &str, prefix: &str, at: u32| changed_at(id, 1, prefix, at);
    let retry = |turn: &str, attempt: i64, at: u32| {
        event(
            "turn/retryScheduled",
            json!({"turnId": turn, "attempt": attempt, "maxAttempts": 5, "nextAttempt": attempt + 1,
                "reason": "overloaded", "retryDelayMs": 100, "viewCursor": cursor(at)}),
        )
    };
    let mut fold = fold();
    fold.apply(turn_started("t1", 1));
    fold.apply(turn_started("t2", 2));
    fold.apply(approval_requested("a1", 3));
    fold.apply(approval_requested("a2", 4));
    assert!(matches!(fold.apply(gap(4, 11)), Outcome::Gap { .. }));
    // Live while the hole is open: the later word on a1's stage and t1's retry; and a3,
    // asked in the hole, asked again (as after a resume): its request shows the stage now.
    fold.apply(changed("a1", "live", 12));
    fold.apply(retry("t1", 3, 13));
    fold.apply(approval_request("a3", 14));
    let pages = [(
        4,
        page(
            &[
                changed("a1", "page-5", 5),
                approval_requested("a3", 6),
                changed_at("a3", 0, "page-a3", 7),
                changed("a2", "page-8", 8),
                retry("t1", 1, 9),
                retry("t2", 2, 10),
                changed("a1", "page-11", 11),
            ],
            None,
        ),
    )];
    walk(&mut fold, &pages);
    assert!(fold.is_current());
    let first_choice = |id: &str| {
        let approval = fold.pending_approval(id).expect("pending");
        approval.stage().expect("a stage").choices[0]
            .choice_id
            .clone()
    };
    assert_eq!(first_choice("a1"), "live-allow", "the live update stands");
    assert_eq!(first_choice("a2"), "page-8-allow", "the hole's own");
    assert_eq!(
        first_choice("a3"),
        "s0-allow",
        "the request asked again stands"
    );
    let attempt = |id: &str| fold.turn(id).unwrap().retry_scheduled().unwrap().attempt;
    assert_eq!(attempt("t1"), 3, "the live hint stands");
    assert_eq!(attempt("t2"), 2, "the hole's own");
}

/// A resume whose history is of a mode this fold does not know, or a snapshot it does not
/// read, seeds nothing and leaves a hole of every event up to the view's head: the refill
/// pages from the view's oldest event (no cursor) to the head, which it does not refuse as
/// seen, and the fold is current again. Mode `none` says why the host served nothing, and
/// leaves no hole.
#[test]
fn a_resume_whose_history_is_not_served_in_a_known_form_is_paged_from_the_oldest_event() {
    let resumed = |history: Value| -> SessionResumeResult {
        serde_json::from_value(json!({
            "session": {
                "sessionId": SESSION, "path": "/s", "workspaceRoot": "/w", "status": "idle",
                "createdAt": "t", "updatedAt": "t", "turnCount": 0, "modelId": null,
                "providerId": null, "forkedFrom": null, "activeTurnId": null
            },
            "history": history,
            "pendingRequests": [],
            "viewCursor": cursor(2),
        }))
        .expect("a resume result")
    };
    let state = msp_types::reflect::sample("SnapshotState", 0).expect("a sampled state");
    let future_snapshot = json!({"mode": "snapshot", "items": null, "snapshot": {
        "schemaVersion": 99, "viewCursor": cursor(2), "state": state}});
    let unknown_mode = json!({"mode": "streamed", "items": null, "snapshot": null});
    for history in [unknown_mode, future_snapshot] {
        let mut fold = fold();
        let outcome = fold.seed_resumed(&resumed(history.clone()));
        assert!(
            matches!(outcome, Outcome::SeedRefused { .. }),
            "{outcome:?}"
        );
        assert_eq!(fold.gap().pending(), Some((None, cursor(2).as_str())));
        let mut refill = fold.begin_refill().expect("a hole to page");
        let request = refill.next_request().expect("a page to ask");
        assert_eq!(request.cursor, None, "from the view's oldest event");
        refill.page(page(
            &[started("i1", 1, 1), completed("i1", 1, "one", 2)],
            Some(cursor(2)),
        ));
        // Live after the head, while the walk was on.
        refill.hold(completed("i3", 1, "three", 3));
        assert!(refill.is_over(), "{:?}", refill.failure());
        let outcomes = fold.finish_refill(refill);
        assert!(
            !outcomes
                .iter()
                .any(|o| matches!(o, Outcome::DuplicateCursor { .. })),
            "{outcomes:?}"
        );
        assert!(fold.is_current(), "{history}");
        let ids: Vec<_> = fold.items().iter().map(|i| i.id()).collect();
        assert_eq!(ids, ["i1", "i3"], "{history}");
    }
    let mut fold = fold();
    let none =
        json!({"mode": "none", "items": null, "snapshot": null, "noneReason": "historyBudget"});
    let outcome = fold.seed_resumed(&resumed(none));
    assert!(
        matches!(outcome, Outcome::SeedRefused { .. }),
        "{outcome:?}"
    );
    assert!(fold.is_current(), "nothing to page");
    assert!(fold.begin_refill().is_none());
}

/// Deltas held for an item never seen are dropped when a resume seeds that item: its text
/// is the seeded revision's, and they would be appended to a later one.
#[test]
fn a_seeded_item_drops_the_deltas_held_for_it() {
    let mut fold = fold();
    assert_eq!(
        fold.apply(delta("i1", "early", "1.1")),
        Outcome::Delta {
            item_id: "i1".into(),
            field: "text".into(),
            change: DeltaChange::Held
        }
    );
    let seeded = item("i1", 2, "inProgress", "");
    let resumed: SessionResumeResult = serde_json::from_value(json!({
        "session": {
            "sessionId": SESSION, "path": "/s", "workspaceRoot": "/w", "status": "idle",
            "createdAt": "t", "updatedAt": "t", "turnCount": 0, "modelId": null,
            "providerId": null, "forkedFrom": null, "activeTurnId": null
        },
        "history": {"mode": "inline", "items": [seeded], "snapshot": null},
        "pendingRequests": [],
        "viewCursor": cursor(2),
    }))
    .expect("a resume result");
    assert!(matches!(fold.seed_resumed(&resumed), Outcome::Seeded(_)));
    assert_eq!(fold.held_deltas().count(), 0);
    assert_eq!(fold.item("i1").unwrap().text("text"), None);
}

/// The turn the resumed session says runs is the fold's active turn whatever the history
/// served (here inline items, which name no turn state).
#[test]
fn a_resume_seeds_the_turn_the_session_says_runs() {
    let resumed = |mode: &str| -> SessionResumeResult {
        serde_json::from_value(json!({
            "session": {
                "sessionId": SESSION, "path": "/s", "workspaceRoot": "/w", "status": "running",
                "createdAt": "t", "updatedAt": "t", "turnCount": 0, "modelId": null,
                "providerId": null, "forkedFrom": null, "activeTurnId": "t9"
            },
            "history": {"mode": mode, "items": [], "snapshot": null},
            "pendingRequests": [],
            "viewCursor": cursor(2),
        }))
        .expect("a resume result")
    };
    let mut fold = fold();
    assert!(matches!(
        fold.seed_resumed(&resumed("inline")),
        Outcome::Seeded(_)
    ));
    let active = fold.active_turn().expect("the running turn");
    assert_eq!((active.id(), active.state()), ("t9", TurnState::Running));
    fold.apply(turn_completed("t9", "completed", 3));
    assert!(fold.active_turn().is_none());
    // A history not taken is paged from the oldest event, the turn's start with it: the
    // pages' older turns are not taken for newer than it.
    let mut paged = support::fold();
    let outcome = paged.seed_resumed(&resumed("streamed"));
    assert!(
        matches!(outcome, Outcome::SeedRefused { .. }),
        "{outcome:?}"
    );
    assert!(paged.active_turn().is_none());
}

/// A hole's target is reached at its cursor whatever the kind of the event there, one whose
/// cursor is not its own (`approval/reviewing`) included.
#[test]
fn a_hole_ends_at_its_target_whatever_the_kind_there() {
    let mut fold = fold();
    fold.apply(started("i1", 1, 1));
    fold.apply(gap(1, 3));
    let reviewing = event("approval/reviewing", approval_params("a1", 3));
    let served = [completed("i2", 1, "two", 2), reviewing];
    let mut refill = fold.begin_refill().expect("a hole to fill");
    refill.next_request().expect("the page");
    refill.page(page(&served, Some(cursor(3))));
    assert_eq!(refill.next_request(), None, "reached");
    fold.finish_refill(refill);
    assert!(fold.is_current(), "{:?}", fold.gap().failure());
}

/// A fold bound to one session is not seeded from another's resume: nothing of it is taken.
#[test]
fn a_resume_of_another_session_seeds_nothing() {
    let mut fold = fold();
    let resumed: SessionResumeResult = serde_json::from_value(json!({
        "session": {
            "sessionId": "other", "path": "/s", "workspaceRoot": "/w", "status": "idle",
            "createdAt": "t", "updatedAt": "t", "turnCount": 0, "modelId": null,
            "providerId": null, "forkedFrom": null, "activeTurnId": null
        },
        "history": {"mode": "inline", "items": [item("i1", 1, "completed", "x")], "snapshot": null},
        "pendingRequests": [],
        "viewCursor": cursor(2),
    }))
    .expect("a resume result");
    let outcome = fold.seed_resumed(&resumed);
    assert!(
        matches!(&outcome, Outcome::ForeignSession { session_id, .. } if session_id == "other"),
        "{outcome:?}"
    );
    assert!(fold.items().is_empty() && !fold.seen(&cursor(2)));
    assert_eq!(fold.session_id(), Some(SESSION));
}

/// `session/statusChanged` names the cursor of the record that caused the change, sent
/// whatever the connection's view: when that record was lost in a hole, the page that
/// serves it applies it (the status's cursor is not the status's own, so never seen).
#[test]
fn a_status_change_does_not_take_the_cursor_of_the_record_that_caused_it() {
    let mut fold = fold();
    fold.apply(turn_started("t1", 1));
    let status = event(
        "session/statusChanged",
        json!({"status": "idle", "viewCursor": cursor(2)}),
    );
    fold.apply(status);
    assert!(matches!(fold.apply(gap(1, 3)), Outcome::Gap { .. }));
    let pages = [(
        1,
        page(
            &[turn_completed("t1", "completed", 2), started("i3", 1, 3)],
            None,
        ),
    )];
    walk(&mut fold, &pages);
    assert!(fold.is_current());
    assert_eq!(fold.turn("t1").unwrap().state(), TurnState::Ended);
}
