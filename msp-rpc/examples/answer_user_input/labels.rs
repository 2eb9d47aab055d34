//! Answers made only of labels the agent offered.
//!
//! The host rejects a label it did not offer (`userInputAnswerInvalid`); these types make
//! sending one impossible: an [`OfferedLabel`] exists only after a label was found in a
//! question's options, and a [`Choice`] only holds offered labels of its own question.

use std::fmt;

use msp_types::{UserInputAnswer, UserInputQuestion, UserInputSelectionMode};

/// A label the agent offered for one question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfferedLabel {
    question_id: String,
    label: String,
}

impl OfferedLabel {
    /// Looks `text` up in the question's options; only an exact label match is offered.
    pub fn pick(question: &UserInputQuestion, text: &str) -> Result<Self, NotOffered> {
        match question.options.iter().find(|option| option.label == text) {
            Some(option) => Ok(OfferedLabel {
                question_id: question.id.clone(),
                label: option.label.clone(),
            }),
            None => Err(NotOffered {
                question_id: question.id.clone(),
                text: text.to_owned(),
                offered: question.options.iter().map(|o| o.label.clone()).collect(),
            }),
        }
    }

    /// The question's first option: the default when the user names no label.
    pub fn first(question: &UserInputQuestion) -> Result<Self, NotOffered> {
        let text = question.options.first().map_or("", |o| o.label.as_str());
        Self::pick(question, text)
    }
}

/// A label the question did not offer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotOffered {
    pub question_id: String,
    pub text: String,
    pub offered: Vec<String>,
}

impl fmt::Display for NotOffered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offered: Vec<String> = self.offered.iter().map(|l| format!("{l:?}")).collect();
        write!(
            f,
            "{:?} is not an offered label of question {} (offered: {})",
            self.text,
            self.question_id,
            offered.join(", ")
        )
    }
}

/// One question's answer: offered labels of that question, as many as its selection allows.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    question_id: String,
    mode: UserInputSelectionMode,
    labels: Vec<OfferedLabel>,
}

impl Choice {
    /// Checks that every label comes from `question` and that the count fits its selection.
    pub fn new(question: &UserInputQuestion, labels: Vec<OfferedLabel>) -> Result<Self, String> {
        if let Some(stray) = labels.iter().find(|l| l.question_id != question.id) {
            return Err(format!(
                "label {:?} was offered by question {}, not {}",
                stray.label, stray.question_id, question.id
            ));
        }
        let count = labels.len() as i64;
        let selection = &question.selection;
        let (min, max) = match selection.mode {
            UserInputSelectionMode::Single => (1, Some(1)),
            _ => (
                selection.min_selections.unwrap_or(1),
                selection.max_selections,
            ),
        };
        if count < min || max.is_some_and(|max| count > max) {
            let max = max.map_or("any".to_owned(), |m| m.to_string());
            return Err(format!(
                "question {} takes {min} to {max} labels, got {count}",
                question.id
            ));
        }
        Ok(Choice {
            question_id: question.id.clone(),
            mode: selection.mode,
            labels,
        })
    }

    /// The wire answer: `selectedLabel` for a `single` question, `selectedLabels` otherwise.
    pub fn to_answer(&self) -> UserInputAnswer {
        let mut answer = UserInputAnswer::builder()
            .question_id(self.question_id.clone())
            .build();
        let labels: Vec<String> = self.labels.iter().map(|l| l.label.clone()).collect();
        match self.mode {
            UserInputSelectionMode::Single => answer.selected_label = labels.into_iter().next(),
            _ => answer.selected_labels = Some(labels),
        }
        answer
    }
}
