//! One-line renderings of what clients show: an item, an approval's subject, a question.

use std::fmt;

use msp_session::ItemEntry;
use msp_types::{ApprovalSubject, TurnInputPart, TurnInputPartType, UserInputQuestion};

/// A text part of a turn's input.
pub fn text(text: impl Into<String>) -> TurnInputPart {
    TurnInputPart::builder()
        .type_(TurnInputPartType::Text)
        .text(text)
        .build()
}

/// An item as one line: its kind, its status and its text (built by the deltas so far, cut
/// at 80 characters).
pub struct ItemLine<'a>(pub &'a ItemEntry);

impl fmt::Display for ItemLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let item = self.0.item();
        let status = if self.0.terminal_unknown() {
            "ended unknown".to_owned()
        } else {
            item.status.to_string()
        };
        write!(f, "{} {status}", item.kind)?;
        if let Some(tool) = &item.tool {
            write!(f, " {tool}")?;
        }
        let rendered = self.0.rendered();
        if let Some(text) = rendered.text.as_deref().filter(|t| !t.is_empty()) {
            write!(f, ": {}", cut(text, 80))?;
        }
        Ok(())
    }
}

/// An approval's subject as one line: what would run, be written or be reached.
pub struct SubjectLine<'a>(pub &'a ApprovalSubject);

impl fmt::Display for SubjectLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        write!(f, "{}", s.kind)?;
        let detail = [
            s.command.as_deref(),
            s.path.as_deref(),
            s.target.as_deref(),
            s.host.as_deref(),
            s.tool_name.as_deref(),
        ]
        .into_iter()
        .flatten()
        .next();
        if let Some(detail) = detail {
            write!(f, ": {}", cut(detail, 80))?;
        }
        if let Some(stages) = s.stages.as_ref().filter(|stages| stages.len() > 1) {
            write!(f, " ({} stages)", stages.len())?;
        }
        Ok(())
    }
}

/// A question as one line: its header, its text and the labels offered.
pub struct QuestionLine<'a>(pub &'a UserInputQuestion);

impl fmt::Display for QuestionLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = self.0;
        write!(f, "{}: {} [", q.header, q.question)?;
        for (n, option) in q.options.iter().enumerate() {
            if n > 0 {
                f.write_str(" | ")?;
            }
            f.write_str(&option.label)?;
        }
        f.write_str("]")
    }
}

fn cut(text: &str, chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(chars) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None if line.len() < text.len() => format!("{line}..."),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn long_and_multi_line_texts_are_cut() {
        assert_eq!(cut("short", 80), "short");
        assert_eq!(cut("one\ntwo", 80), "one...");
        assert_eq!(cut("ééééé", 3), "ééé...");
    }
}
