//! Answers to questions and decisions on approvals, checked against what the host offered
//! before anything is sent: a label no option has, a choice no stage offers, feedback where
//! the choice takes none are refused here, with what was offered.

use msp_session::Stage;
use msp_types::{
    ApprovalChoice, ApprovalDecision, UserInputAnswer, UserInputClarification, UserInputQuestion,
    UserInputRequestParams, UserInputSelectionMode,
};

/// The longest `freeText` and `note` the schema allows, in characters.
pub const FREE_TEXT_CHARS: usize = 500;

/// One answer to one question of a prompt: exactly one of a label, labels or free text, and
/// an optional note (the schema's `UserInputAnswer`).
#[derive(Clone, Debug, PartialEq)]
pub struct Answer(UserInputAnswer);

impl Answer {
    /// Picks the option labelled `label` of a `single` question.
    pub fn label(question_id: impl Into<String>, label: impl Into<String>) -> Self {
        Answer(
            UserInputAnswer::builder()
                .question_id(question_id)
                .selected_label(label)
                .build(),
        )
    }

    /// Picks the options labelled `labels` of a `multiple` question.
    pub fn labels<I, S>(question_id: impl Into<String>, labels: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let labels: Vec<String> = labels.into_iter().map(Into::into).collect();
        Answer(
            UserInputAnswer::builder()
                .question_id(question_id)
                .selected_labels(labels)
                .build(),
        )
    }

    /// Picks the options labelled `labels` of `question` in the form its selection mode
    /// takes: `selectedLabel` for a `single` question given one label, `selectedLabels`
    /// otherwise (a `single` question given none or several is refused when sent, as any
    /// label no option has).
    pub fn select<I, S>(question: &UserInputQuestion, labels: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut labels: Vec<String> = labels.into_iter().map(Into::into).collect();
        match (question.selection.mode, labels.len()) {
            (UserInputSelectionMode::Single, 1) => Answer::label(&question.id, labels.remove(0)),
            _ => Answer::labels(&question.id, labels),
        }
    }

    /// A typed answer in place of an option (at most [`FREE_TEXT_CHARS`] characters).
    pub fn free_text(question_id: impl Into<String>, text: impl Into<String>) -> Self {
        Answer(
            UserInputAnswer::builder()
                .question_id(question_id)
                .free_text(text)
                .build(),
        )
    }

    /// Adds a remark (at most [`FREE_TEXT_CHARS`] characters).
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.0.note = Some(note.into());
        self
    }

    /// The wire value.
    pub fn as_wire(&self) -> &UserInputAnswer {
        &self.0
    }

    /// The wire value, owned.
    pub fn into_wire(self) -> UserInputAnswer {
        self.0
    }
}

impl From<UserInputAnswer> for Answer {
    /// An answer as the wire has it (a recorded one, one built with its builder): checked
    /// like the others when sent.
    fn from(answer: UserInputAnswer) -> Self {
        Answer(answer)
    }
}

/// A decision on one stage of an approval, as an approval handler gives it
/// ([`blocking::Turn::completed_deciding`](crate::blocking::Turn::completed_deciding)): a
/// choice the stage offers, with feedback only where that choice accepts it (both checked
/// when sent, as [`blocking::Session::decide`](crate::blocking::Session::decide) checks them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    choice_id: String,
    feedback: Option<String>,
}

impl Decision {
    /// The offered choice `choice_id`.
    pub fn choose(choice_id: impl Into<String>) -> Self {
        Decision {
            choice_id: choice_id.into(),
            feedback: None,
        }
    }

    /// The first choice `stage` offers that applies one of `decisions`, tried in the order
    /// given; `None` when it offers none of them. A policy in one line: `[Denied, Abort]`
    /// refuses whatever is asked, `[Approved]` allows each action once.
    pub fn first_offered(stage: Stage<'_>, decisions: &[ApprovalDecision]) -> Option<Self> {
        decisions.iter().find_map(|decision| {
            stage
                .choices
                .iter()
                .find(|choice| &choice.decision == decision)
                .map(|choice| Decision::choose(&choice.choice_id))
        })
    }

    /// Adds feedback for the model (only a choice with `acceptsFeedback` takes it).
    pub fn with_feedback(mut self, feedback: impl Into<String>) -> Self {
        self.feedback = Some(feedback.into());
        self
    }

    /// Adds feedback for the model when the choice, as `stage` offers it, accepts some (a
    /// policy's reason, given where it can be).
    pub fn with_feedback_where_accepted(
        self,
        stage: Stage<'_>,
        feedback: impl Into<String>,
    ) -> Self {
        let accepts = stage
            .choices
            .iter()
            .any(|c| c.choice_id == self.choice_id && c.accepts_feedback == Some(true));
        if accepts {
            self.with_feedback(feedback)
        } else {
            self
        }
    }

    /// The choice.
    pub fn choice_id(&self) -> &str {
        &self.choice_id
    }

    /// The feedback, when given.
    pub fn feedback(&self) -> Option<&str> {
        self.feedback.as_deref()
    }
}

/// An answer or decision that does not fit what was offered; nothing was sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// No prompt of this id is pending in the session.
    #[error("no question {user_input_id} is pending in this session")]
    UnknownPrompt {
        /// The prompt named.
        user_input_id: String,
    },
    /// The prompt is known only from a resume's pointer: its questions have not arrived yet.
    #[error("question {user_input_id} is pending but its questions have not arrived yet")]
    QuestionsUnknown {
        /// The prompt.
        user_input_id: String,
    },
    /// The prompt has no question of this id.
    #[error("question {user_input_id} has no question {question_id} (it has {asked:?})")]
    UnknownQuestion {
        /// The prompt.
        user_input_id: String,
        /// The question named.
        question_id: String,
        /// The questions it has.
        asked: Vec<String>,
    },
    /// An answer that leaves questions of the prompt unanswered (`userInput/answer` answers
    /// every question at once).
    #[error("question {user_input_id}: {unanswered:?} not answered")]
    Unanswered {
        /// The prompt.
        user_input_id: String,
        /// The questions with no answer.
        unanswered: Vec<String>,
    },
    /// A label no option of the question has.
    #[error("{question_id}: {label:?} is not offered (offered: {offered:?})")]
    NotOffered {
        /// The question.
        question_id: String,
        /// The label sent.
        label: String,
        /// The labels offered.
        offered: Vec<String>,
    },
    /// A count of labels the question's selection does not allow, or several answers to one
    /// question, or an answer that is not exactly one of label, labels and free text.
    #[error("{question_id}: {reason}")]
    Selection {
        /// The question.
        question_id: String,
        /// What is wrong.
        reason: String,
    },
    /// A free text, note or clarification over [`FREE_TEXT_CHARS`] characters.
    #[error("{question_id}: {what} is {chars} characters, over {FREE_TEXT_CHARS}")]
    TooLong {
        /// The question (the prompt, for a clarification).
        question_id: String,
        /// `freeText`, `note`, or a clarification's `content`.
        what: &'static str,
        /// Its length.
        chars: usize,
    },
    /// No approval of this id is pending in the session.
    #[error("no approval {approval_id} is pending in this session")]
    UnknownApproval {
        /// The approval named.
        approval_id: String,
    },
    /// The approval is known only from a resume's pointer: its stage has not arrived yet.
    #[error("approval {approval_id} is pending but its choices have not arrived yet")]
    StageUnknown {
        /// The approval.
        approval_id: String,
    },
    /// A choice the current stage does not offer.
    #[error("approval {approval_id}: choice {choice_id:?} is not offered (offered: {offered:?})")]
    ChoiceNotOffered {
        /// The approval.
        approval_id: String,
        /// The choice sent.
        choice_id: String,
        /// The choices offered.
        offered: Vec<String>,
    },
    /// Feedback for a choice that does not accept it.
    #[error("approval {approval_id}: choice {choice_id:?} takes no feedback")]
    FeedbackNotAccepted {
        /// The approval.
        approval_id: String,
        /// The choice.
        choice_id: String,
    },
}

/// Checks `answers` against the questions of `request`.
pub(crate) fn check_answers(
    request: &UserInputRequestParams,
    answers: &[Answer],
) -> Result<(), AskError> {
    let mut answered: Vec<&str> = Vec::new();
    for Answer(answer) in answers {
        let question_id = answer.question_id.as_str();
        let Some(question) = request.questions.iter().find(|q| q.id == question_id) else {
            return Err(AskError::UnknownQuestion {
                user_input_id: request.user_input_id.clone(),
                question_id: question_id.to_owned(),
                asked: request.questions.iter().map(|q| q.id.clone()).collect(),
            });
        };
        if answered.contains(&question_id) {
            return Err(selection(question_id, "answered twice"));
        }
        answered.push(question_id);
        check_answer(question, answer)?;
    }
    Ok(())
}

/// [`check_answers`], and every question of the prompt answered: what `userInput/answer`
/// takes (the host refuses a wrong count as `userInputAnswerInvalid`).
pub(crate) fn check_every_answer(
    request: &UserInputRequestParams,
    answers: &[Answer],
) -> Result<(), AskError> {
    check_answers(request, answers)?;
    let unanswered: Vec<String> = request
        .questions
        .iter()
        .filter(|q| !answers.iter().any(|Answer(a)| a.question_id == q.id))
        .map(|q| q.id.clone())
        .collect();
    match unanswered.is_empty() {
        true => Ok(()),
        false => Err(AskError::Unanswered {
            user_input_id: request.user_input_id.clone(),
            unanswered,
        }),
    }
}

fn check_answer(question: &UserInputQuestion, answer: &UserInputAnswer) -> Result<(), AskError> {
    let id = &question.id;
    let forms = [
        answer.selected_label.is_some(),
        answer.selected_labels.is_some(),
        answer.free_text.is_some(),
    ];
    if forms.iter().filter(|&&f| f).count() != 1 {
        return Err(selection(
            id,
            "an answer carries exactly one of a label, labels and free text",
        ));
    }
    for (what, text) in [("freeText", &answer.free_text), ("note", &answer.note)] {
        check_length(id, what, text.as_deref().unwrap_or_default())?;
    }
    let labels: Vec<&String> = match (&answer.selected_label, &answer.selected_labels) {
        (Some(label), _) => {
            if question.selection.mode == UserInputSelectionMode::Multiple {
                return Err(selection(id, "a multiple question takes `labels`"));
            }
            vec![label]
        }
        (_, Some(labels)) => {
            if question.selection.mode == UserInputSelectionMode::Single {
                return Err(selection(id, "a single question takes one `label`"));
            }
            // A label picked twice is one pick: the bounds count options, not entries.
            if let Some(twice) = labels
                .iter()
                .enumerate()
                .find_map(|(at, label)| labels[..at].contains(label).then_some(label))
            {
                return Err(selection(id, &format!("{twice:?} picked twice")));
            }
            let count = labels.len() as i64;
            if let Some(min) = question.selection.min_selections.filter(|&min| count < min) {
                return Err(selection(id, &format!("{count} picked, at least {min}")));
            }
            if let Some(max) = question.selection.max_selections.filter(|&max| count > max) {
                return Err(selection(id, &format!("{count} picked, at most {max}")));
            }
            labels.iter().collect()
        }
        (None, None) => Vec::new(),
    };
    for label in labels {
        if !question.options.iter().any(|o| &o.label == label) {
            return Err(AskError::NotOffered {
                question_id: id.clone(),
                label: label.clone(),
                offered: question.options.iter().map(|o| o.label.clone()).collect(),
            });
        }
    }
    Ok(())
}

fn selection(question_id: &str, reason: &str) -> AskError {
    AskError::Selection {
        question_id: question_id.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Checks a decision against the choices the approval's current stage offers.
pub(crate) fn check_choice(
    approval_id: &str,
    choices: &[ApprovalChoice],
    choice_id: &str,
    feedback: bool,
) -> Result<(), AskError> {
    let Some(choice) = choices.iter().find(|c| c.choice_id == choice_id) else {
        return Err(AskError::ChoiceNotOffered {
            approval_id: approval_id.to_owned(),
            choice_id: choice_id.to_owned(),
            offered: choices.iter().map(|c| c.choice_id.clone()).collect(),
        });
    };
    if feedback && choice.accepts_feedback != Some(true) {
        return Err(AskError::FeedbackNotAccepted {
            approval_id: approval_id.to_owned(),
            choice_id: choice_id.to_owned(),
        });
    }
    Ok(())
}

/// `text`, `what` of `question_id`, is at most [`FREE_TEXT_CHARS`] characters.
fn check_length(question_id: &str, what: &'static str, text: &str) -> Result<(), AskError> {
    let chars = text.chars().count();
    if chars > FREE_TEXT_CHARS {
        return Err(AskError::TooLong {
            question_id: question_id.to_owned(),
            what,
            chars,
        });
    }
    Ok(())
}

/// A clarification of prompt `user_input_id` fits: its `content` is at most
/// [`FREE_TEXT_CHARS`] characters.
pub(crate) fn check_clarification(
    user_input_id: &str,
    clarification: &UserInputClarification,
) -> Result<(), AskError> {
    check_length(user_input_id, "content", &clarification.content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use msp_types::{UserInputOption, UserInputSelection};

    fn request(
        mode: UserInputSelectionMode,
        min: Option<i64>,
        max: Option<i64>,
    ) -> UserInputRequestParams {
        let mut selection = UserInputSelection::builder().mode(mode).build();
        selection.min_selections = min;
        selection.max_selections = max;
        let options = ["Postgres", "SQLite", "MySQL"]
            .map(|label| UserInputOption::builder().label(label).build())
            .to_vec();
        let question = UserInputQuestion::builder()
            .header("Database")
            .id("db")
            .options(options)
            .question("Which database?")
            .selection(selection)
            .build();
        UserInputRequestParams::builder()
            .item_id("i")
            .questions(vec![question])
            .session_id("s")
            .tool_call_id("c")
            .tool_name("request_user_input")
            .turn_id("t")
            .user_input_id("q")
            .view_cursor("v:1")
            .build()
    }

    #[test]
    fn a_selection_takes_the_form_its_question_takes() {
        let single = request(UserInputSelectionMode::Single, None, None);
        let multiple = request(UserInputSelectionMode::Multiple, Some(1), None);
        for (request, labels, label, several) in [
            (&single, vec!["SQLite"], Some("SQLite"), None),
            (&multiple, vec!["SQLite"], None, Some(vec!["SQLite"])),
            (
                &multiple,
                vec!["SQLite", "MySQL"],
                None,
                Some(vec!["SQLite", "MySQL"]),
            ),
        ] {
            let question = &request.questions[0];
            let answer = Answer::select(question, labels.clone());
            let wire = answer.as_wire();
            assert_eq!(wire.question_id, "db");
            assert_eq!(wire.selected_label.as_deref(), label, "{labels:?}");
            let picked: Option<Vec<&str>> = wire
                .selected_labels
                .as_ref()
                .map(|l| l.iter().map(String::as_str).collect());
            assert_eq!(picked, several, "{labels:?}");
            assert_eq!(check_every_answer(request, &[answer]), Ok(()));
        }
        // A single question given none or two: refused when checked, not sent as a guess.
        for labels in [vec![], vec!["SQLite", "MySQL"]] {
            let answer = Answer::select(&single.questions[0], labels);
            assert!(matches!(
                check_every_answer(&single, &[answer]),
                Err(AskError::Selection { .. })
            ));
        }
    }

    #[test]
    fn offered_labels_pass_and_others_are_refused_with_what_was_offered() {
        let single = request(UserInputSelectionMode::Single, None, None);
        assert_eq!(
            check_answers(&single, &[Answer::label("db", "Postgres")]),
            Ok(())
        );
        assert_eq!(
            check_answers(&single, &[Answer::free_text("db", "Oracle")]),
            Ok(())
        );
        let Err(AskError::NotOffered { label, offered, .. }) =
            check_answers(&single, &[Answer::label("db", "Oracle")])
        else {
            panic!("refused")
        };
        assert_eq!(label, "Oracle");
        assert_eq!(offered, ["Postgres", "SQLite", "MySQL"]);
        assert!(matches!(
            check_answers(&single, &[Answer::label("nope", "Postgres")]),
            Err(AskError::UnknownQuestion { .. })
        ));
        assert!(matches!(
            check_answers(&single, &[Answer::labels("db", ["Postgres"])]),
            Err(AskError::Selection { .. })
        ));
        assert!(matches!(
            check_answers(
                &single,
                &[Answer::label("db", "SQLite"), Answer::label("db", "SQLite")]
            ),
            Err(AskError::Selection { .. })
        ));
        let long = "x".repeat(FREE_TEXT_CHARS + 1);
        assert!(matches!(
            check_answers(&single, &[Answer::label("db", "SQLite").note(long)]),
            Err(AskError::TooLong { what: "note", .. })
        ));
    }

    #[test]
    fn a_clarification_is_at_most_so_many_characters() {
        let said = |chars: usize| {
            let content = "é".repeat(chars);
            let clarification = UserInputClarification::builder()
                .content(content)
                .format("text")
                .build();
            check_clarification("p", &clarification)
        };
        assert_eq!(said(FREE_TEXT_CHARS), Ok(()), "characters, not bytes");
        assert!(matches!(
            said(FREE_TEXT_CHARS + 1),
            Err(AskError::TooLong {
                what: "content",
                chars: 501,
                ..
            })
        ));
    }

    #[test]
    fn an_answer_answers_every_question_of_its_prompt() {
        let mut two = request(UserInputSelectionMode::Single, None, None);
        let mut second = two.questions[0].clone();
        second.id = "cache".to_owned();
        two.questions.push(second);
        let both = [
            Answer::label("db", "Postgres"),
            Answer::free_text("cache", "none"),
        ];
        assert_eq!(check_every_answer(&two, &both), Ok(()));
        assert_eq!(
            check_every_answer(&two, &both[..1]),
            Err(AskError::Unanswered {
                user_input_id: "q".to_owned(),
                unanswered: vec!["cache".to_owned()],
            })
        );
        // An interrupt passes on what was answered so far.
        assert_eq!(check_answers(&two, &both[..1]), Ok(()));
        // A wrong answer is named before the missing one.
        assert!(matches!(
            check_every_answer(&two, &[Answer::label("db", "Oracle")]),
            Err(AskError::NotOffered { .. })
        ));
    }

    #[test]
    fn a_multiple_question_keeps_its_bounds() {
        let multiple = request(UserInputSelectionMode::Multiple, Some(1), Some(2));
        assert_eq!(
            check_answers(&multiple, &[Answer::labels("db", ["SQLite", "MySQL"])]),
            Ok(())
        );
        assert!(matches!(
            check_answers(
                &multiple,
                &[Answer::labels("db", ["SQLite", "MySQL", "Postgres"])]
            ),
            Err(AskError::Selection { .. })
        ));
        assert!(matches!(
            check_answers(&multiple, &[Answer::labels("db", Vec::<String>::new())]),
            Err(AskError::Selection { .. })
        ));
        assert!(matches!(
            check_answers(&multiple, &[Answer::labels("db", ["Oracle"])]),
            Err(AskError::NotOffered { .. })
        ));
        // The same label twice is one pick, not two.
        let twice = request(UserInputSelectionMode::Multiple, Some(2), None);
        assert!(matches!(
            check_answers(&twice, &[Answer::labels("db", ["SQLite", "SQLite"])]),
            Err(AskError::Selection { reason, .. }) if reason.contains("twice")
        ));
    }
}
