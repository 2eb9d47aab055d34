//! How answers, settlements and selection rules read on screen.

use msp_types::{
    UserInputAnswer, UserInputQuestion, UserInputSelection, UserInputSelectionMode,
    UserInputSettledParams,
};

/// `Header = Label, ...`, with the questions' headers where known.
pub fn describe_answers(questions: &[UserInputQuestion], answers: &[UserInputAnswer]) -> String {
    let parts: Vec<String> = answers
        .iter()
        .map(|answer| {
            let header = questions
                .iter()
                .find(|q| q.id == answer.question_id)
                .map_or(answer.question_id.as_str(), |q| q.header.as_str());
            let value = match (
                &answer.selected_label,
                &answer.selected_labels,
                &answer.free_text,
            ) {
                (Some(label), _, _) => label.clone(),
                (_, Some(labels), _) => labels.join(", "),
                (_, _, Some(text)) => format!("{text:?}"),
                _ => "(nothing)".to_owned(),
            };
            format!("{header} = {value}")
        })
        .collect();
    parts.join("; ")
}

pub fn describe_settlement(
    questions: &[UserInputQuestion],
    settled: &UserInputSettledParams,
) -> String {
    let mut text = String::new();
    if !settled.answers.is_empty() {
        text = format!(": {}", describe_answers(questions, &settled.answers));
    }
    if let Some(reason) = &settled.reason {
        text.push_str(&format!(" (reason: {reason})"));
    }
    if let Some(clarification) = &settled.clarification {
        text.push_str(&format!(" (clarification: {:?})", clarification.content));
    }
    text
}

pub fn selection_text(selection: &UserInputSelection) -> String {
    match (
        selection.mode,
        selection.min_selections,
        selection.max_selections,
    ) {
        (UserInputSelectionMode::Single, _, _) => "pick one".to_owned(),
        (_, Some(min), Some(max)) => format!("pick {min} to {max}"),
        (_, Some(min), None) => format!("pick at least {min}"),
        (_, None, Some(max)) => format!("pick up to {max}"),
        (_, None, None) => "pick any".to_owned(),
    }
}
