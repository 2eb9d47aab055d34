//! The session's commands, built and checked once for both drivers: each function checks
//! what it can against the fold (an offered label, an offered choice), notes what the client
//! does, and gives the command to send, its `commandId` minted.

use msp_rpc::Command;
use msp_session::PendingApproval;
use msp_types::protocol::methods;
use msp_types::{
    ApprovalDecideParams, ApprovalMode, ApprovalRequirementRef, GoalClearParams, GoalEditParams,
    GoalPauseParams, GoalResumeParams, GoalSetParams, ModelSelection, ReasoningEffort,
    SessionCompactParams, SessionLeaveParams, SessionRenameParams, SessionSetApprovalModeParams,
    SessionSetModelParams, SessionSetReasoningEffortParams, SessionSideChatParams, Tristate,
    TurnCancelParams, TurnInputPart, TurnInterruptParams, TurnStartParams, TurnSteerParams,
    TurnUnqueueParams, UserInputAnswerParams, UserInputCancelParams, UserInputClarification,
    UserInputClarifyParams, UserInputInterruptParams,
};

use crate::asks::{
    check_answers, check_choice, check_clarification, check_every_answer, Answer, AskError,
};
use crate::core::Core;
use crate::outcome::Error;
use crate::shared;

/// `turn/start` with `input`.
pub(crate) fn user_turn(
    session_id: &str,
    input: Vec<TurnInputPart>,
) -> impl FnOnce(String) -> TurnStartParams + '_ {
    move |command_id| {
        TurnStartParams::builder()
            .command_id(command_id)
            .input(input)
            .session_id(session_id)
            .build()
    }
}

/// `turn/interrupt` of `turn_id` (the running turn when `None`).
pub(crate) fn interrupt(
    session_id: &str,
    turn_id: Option<&str>,
    retract: bool,
) -> Command<methods::TurnInterrupt> {
    Command::new(|command_id| {
        let mut params = TurnInterruptParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .build();
        params.retract = retract.then_some(true);
        params.turn_id = turn_id.map(str::to_owned);
        params
    })
}

/// `turn/cancel` of `turn_id`, through the command queue.
pub(crate) fn cancel_turn(session_id: &str, turn_id: &str) -> Command<methods::TurnCancel> {
    Command::new(|command_id| {
        let mut params = TurnCancelParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .build();
        params.turn_id = Some(turn_id.to_owned());
        params
    })
}

/// `session/setModel`.
pub(crate) fn set_model(
    session_id: &str,
    model: ModelSelection,
) -> Command<methods::SessionSetModel> {
    Command::new(|command_id| {
        SessionSetModelParams::builder()
            .command_id(command_id)
            .model(model)
            .session_id(session_id)
            .build()
    })
}

/// `session/setApprovalMode`.
pub(crate) fn set_approval_mode(
    session_id: &str,
    mode: ApprovalMode,
) -> Command<methods::SessionSetApprovalMode> {
    Command::new(|command_id| {
        SessionSetApprovalModeParams::builder()
            .command_id(command_id)
            .mode(mode)
            .session_id(session_id)
            .build()
    })
}

/// `session/setReasoningEffort`.
pub(crate) fn set_reasoning_effort(
    session_id: &str,
    reasoning_effort: ReasoningEffort,
) -> Command<methods::SessionSetReasoningEffort> {
    Command::new(|command_id| {
        SessionSetReasoningEffortParams::builder()
            .command_id(command_id)
            .reasoning_effort(reasoning_effort)
            .session_id(session_id)
            .build()
    })
}

/// `session/rename`.
pub(crate) fn rename(session_id: &str, name: &str) -> Command<methods::SessionRename> {
    Command::new(|command_id| {
        SessionRenameParams::builder()
            .command_id(command_id)
            .name(name)
            .session_id(session_id)
            .build()
    })
}

/// `session/compact` of `turn_id`'s context (the host's pick when `None`).
pub(crate) fn compact(session_id: &str, turn_id: Option<&str>) -> Command<methods::SessionCompact> {
    Command::new(|command_id| {
        let mut params = SessionCompactParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .build();
        params.turn_id = turn_id.map(str::to_owned);
        params
    })
}

/// `session/sideChat` from session `session_id`.
pub(crate) fn side_chat(session_id: &str) -> Command<methods::SessionSideChat> {
    Command::new(|command_id| {
        SessionSideChatParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .build()
    })
}

/// `session/leave`; `stop` also stops the work in progress.
pub(crate) fn leave(session_id: &str, stop: bool) -> Command<methods::SessionLeave> {
    Command::new(|command_id| {
        let mut params = SessionLeaveParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .build();
        params.stop = stop.then_some(true);
        params
    })
}

/// `turn/steer`: more input for the running turn `expected_turn_id`.
pub(crate) fn steer(
    session_id: &str,
    expected_turn_id: &str,
    input: Vec<TurnInputPart>,
) -> Command<methods::TurnSteer> {
    Command::new(|command_id| {
        TurnSteerParams::builder()
            .command_id(command_id)
            .expected_turn_id(expected_turn_id)
            .input(input)
            .session_id(session_id)
            .build()
    })
}

/// `turn/unqueue` of a queued turn.
pub(crate) fn unqueue(session_id: &str, turn_id: &str) -> Command<methods::TurnUnqueue> {
    Command::new(|command_id| {
        TurnUnqueueParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .turn_id(turn_id)
            .build()
    })
}

/// `goal/set`: the session's objective.
pub(crate) fn goal_set(session_id: &str, objective: &str) -> Command<methods::GoalSet> {
    Command::new(|command_id| {
        GoalSetParams::builder()
            .command_id(command_id)
            .objective(objective)
            .session_id(session_id)
            .build()
    })
}

/// `goal/edit`: the objective reworded.
pub(crate) fn goal_edit(session_id: &str, objective: &str) -> Command<methods::GoalEdit> {
    Command::new(|command_id| {
        GoalEditParams::builder()
            .command_id(command_id)
            .objective(objective)
            .session_id(session_id)
            .build()
    })
}

/// `goal/pause`.
pub(crate) fn goal_pause(session_id: &str) -> Command<methods::GoalPause> {
    Command::new(|command_id| {
        GoalPauseParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .build()
    })
}

/// `goal/resume`.
pub(crate) fn goal_resume(session_id: &str) -> Command<methods::GoalResume> {
    Command::new(|command_id| {
        GoalResumeParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .build()
    })
}

/// `goal/clear`.
pub(crate) fn goal_clear(session_id: &str) -> Command<methods::GoalClear> {
    Command::new(|command_id| {
        GoalClearParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .build()
    })
}

/// `userInput/interrupt`: stops the turn waiting on the prompt, with answers to pass on
/// (checked as `answer` checks them, though questions may be left out) or none.
pub(crate) fn interrupt_prompt(
    core: &Core,
    session_id: &str,
    user_input_id: &str,
    answers: Vec<Answer>,
) -> Result<Command<methods::UserInputInterrupt>, Error> {
    if answers.is_empty() {
        core.read(session_id, |fold| {
            shared::prompt_pending(fold, user_input_id)
        })?;
    } else {
        let request = core.read(session_id, |fold| {
            shared::prompt_request(fold, user_input_id)
        })?;
        check_answers(&request, &answers)?;
    }
    Ok(Command::new(|command_id| {
        let mut params = UserInputInterruptParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .user_input_id(user_input_id)
            .build();
        if !answers.is_empty() {
            params.answers = Some(answers.into_iter().map(Answer::into_wire).collect());
        }
        params
    }))
}

/// `userInput/clarify`: the user's reply in their own words to a pending prompt, in place of
/// its options (the model reads it and decides again), once it fits.
pub(crate) fn clarify(
    core: &Core,
    session_id: &str,
    user_input_id: &str,
    clarification: UserInputClarification,
) -> Result<Command<methods::UserInputClarify>, Error> {
    check_clarification(user_input_id, &clarification)?;
    core.read(session_id, |fold| {
        shared::prompt_pending(fold, user_input_id)
    })?;
    Ok(Command::new(|command_id| {
        UserInputClarifyParams::builder()
            .clarification(clarification)
            .command_id(command_id)
            .session_id(session_id)
            .user_input_id(user_input_id)
            .build()
    }))
}

/// `userInput/answer`, once `answers` fit the prompt's questions.
pub(crate) fn answer(
    core: &Core,
    session_id: &str,
    user_input_id: &str,
    answers: Vec<Answer>,
) -> Result<Command<methods::UserInputAnswerMethod>, Error> {
    let request = core.read(session_id, |fold| {
        shared::prompt_request(fold, user_input_id)
    })?;
    check_every_answer(&request, &answers)?;
    Ok(Command::new(|command_id| {
        UserInputAnswerParams::builder()
            .answers(
                answers
                    .into_iter()
                    .map(Answer::into_wire)
                    .collect::<Vec<_>>(),
            )
            .command_id(command_id)
            .session_id(session_id)
            .user_input_id(user_input_id)
            .build()
    }))
}

/// `userInput/cancel` of a pending prompt.
pub(crate) fn cancel(
    core: &Core,
    session_id: &str,
    user_input_id: &str,
    reason: Option<&str>,
) -> Result<Command<methods::UserInputCancel>, Error> {
    core.read(session_id, |fold| {
        shared::prompt_pending(fold, user_input_id)
    })?;
    Ok(Command::new(|command_id| {
        let mut params = UserInputCancelParams::builder()
            .command_id(command_id)
            .session_id(session_id)
            .user_input_id(user_input_id)
            .build();
        params.reason = reason.map(str::to_owned);
        params
    }))
}

/// `approval/decide` of the stage `approval` was offered at (the stage the program saw,
/// whatever the fold holds by now: a stage the host moved past since is its
/// `approvalRequirementStale`, never a decision of a stage nobody was shown), once the
/// approval is pending in the session (one resolved meanwhile, or of another session, is
/// refused, nothing sent) and the choice is one that stage offers (and takes the feedback,
/// if any); with the requirement decided, to note once accepted.
pub(crate) fn decide(
    core: &Core,
    session_id: &str,
    approval: &PendingApproval,
    choice_id: &str,
    feedback: Option<&str>,
) -> Result<(Command<methods::ApprovalDecide>, ApprovalRequirementRef), Error> {
    let pending = core.read(session_id, |fold| {
        fold.pending_approval(approval.id()).is_some()
    });
    if !pending {
        return Err(AskError::UnknownApproval {
            approval_id: approval.id().to_owned(),
        }
        .into());
    }
    let stage = approval.stage().ok_or_else(|| AskError::StageUnknown {
        approval_id: approval.id().to_owned(),
    })?;
    check_choice(approval.id(), stage.choices, choice_id, feedback.is_some())?;
    let requirement = stage.requirement.clone();
    let command = decide_command(session_id, approval.id(), &requirement, choice_id, feedback);
    Ok((command, requirement))
}

fn decide_command(
    session_id: &str,
    approval_id: &str,
    requirement: &ApprovalRequirementRef,
    choice_id: &str,
    feedback: Option<&str>,
) -> Command<methods::ApprovalDecide> {
    Command::new(|command_id| {
        let mut params = ApprovalDecideParams::builder()
            .approval_id(approval_id)
            .choice_id(choice_id)
            .command_id(command_id)
            .requirement_id(requirement.clone())
            .session_id(session_id)
            .build();
        params.feedback = feedback.map_or(Tristate::Absent, |f| Tristate::Value(f.to_owned()));
        params
    })
}
