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

/// An item as one line: its kind, its status and what it says, cut at 80 characters: its
/// text (built by the deltas so far), else its kind's own member (a user shell's command, a
/// subagent's objective, a hook's label, a workflow's message, the first
/// part of a reasoning summary), else the host's `fallbackText` (what the schema says to
/// show of a kind a client does not know).
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
        let summary = rendered.summary.as_ref().and_then(|parts| parts.first());
        let detail = [
            rendered.text.as_ref(),
            item.command_text.as_ref(),
            item.objective.as_ref(),
            item.label.as_ref(),
            item.message.as_ref(),
            summary,
            item.fallback_text.as_ref(),
        ]
        .into_iter()
        .flatten()
        .find(|detail| !detail.trim().is_empty());
        if let Some(detail) = detail {
            write!(f, ": {}", cut(detail, 80))?;
        }
        Ok(())
    }
}

/// An approval's subject as one line: what would run, be written or be reached (and how:
/// the access asked, the port and protocol).
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
            if let Some(port) = s.port {
                write!(f, ":{port}")?;
            }
        }
        // How a path or a host is reached: a read and a write are not the same ask.
        if let Some(how) = [s.access.as_deref(), s.protocol.as_deref()]
            .into_iter()
            .flatten()
            .next()
        {
            write!(f, " ({})", cut(how, 20))?;
        }
        if let Some(stages) = s.stages.as_ref().filter(|stages| stages.len() > 1) {
            write!(f, " ({} stages)", stages.len())?;
        }
        Ok(())
    }
}

/// A question as one line: its header, its text and the labels offered, whole (a person
/// answers from it), each line break a space.
pub struct QuestionLine<'a>(pub &'a UserInputQuestion);

impl fmt::Display for QuestionLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = self.0;
        write!(f, "{}: {} [", OneLine(&q.header), OneLine(&q.question))?;
        for (n, option) in q.options.iter().enumerate() {
            if n > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{}", OneLine(&option.label))?;
        }
        f.write_str("]")
    }
}

/// What ends a line, whatever the text's convention (and what a terminal may take for it).
const BREAKS: [char; 7] = [
    '\n', '\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// A text whole, on one line: each run of line breaks (and the spaces around them) a space.
struct OneLine<'a>(&'a str);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = self.0.trim().split(BREAKS).map(str::trim);
        for (n, line) in lines.filter(|line| !line.is_empty()).enumerate() {
            if n > 0 {
                f.write_str(" ")?;
            }
            f.write_str(line)?;
        }
        Ok(())
    }
}

fn cut(text: &str, chars: usize) -> String {
    // Its first line with something on it, whatever ends lines; "..." only when something
    // follows it.
    let text = text.trim();
    let line = text.split(BREAKS).next().unwrap_or_default();
    match line.char_indices().nth(chars) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None if line.len() < text.len() => format!("{line}..."),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use msp_session::{Fold, Input};
    use msp_types::{Frame, Message, Sender};

    use super::*;

    fn fold_in(fold: &mut Fold, line: &str) {
        let Message::Notification(n) = Frame::parse(Sender::Server, line).unwrap().message else {
            panic!("a notification");
        };
        fold.apply(Input::Notification(n));
    }

    #[test]
    fn an_item_shows_its_kind_status_tool_and_text_and_an_unknown_end() {
        let mut fold = Fold::for_session("s", Default::default());
        fold_in(
            &mut fold,
            r#"{"jsonrpc":"2.0","method":"item/started","params":{"sessionId":"s","viewCursor":"v:1","item":{"itemId":"i","kind":"agentMessage","revision":1,"status":"inProgress","turnId":"t"}}}"#,
        );
        fold_in(
            &mut fold,
            r#"{"jsonrpc":"2.0","method":"item/delta","params":{"sessionId":"s","viewCursor":"v:2","itemId":"i","field":"text","delta":"Hello\nworld"}}"#,
        );
        let line = |fold: &Fold| ItemLine(fold.item("i").unwrap()).to_string();
        assert_eq!(line(&fold), "agentMessage inProgress: Hello...");
        fold.host_died(false);
        assert_eq!(line(&fold), "agentMessage ended unknown: Hello...");
    }

    #[test]
    fn an_item_of_a_kind_not_known_shows_the_hosts_fallback_and_one_line_at_most() {
        let mut fold = Fold::for_session("s", Default::default());
        let item = |id: &str, members: &str| {
            let range = r#""sourceRange":{"stream":{"kind":"run","id":"t"},"first":{"id":"r","sequence":1},"last":{"id":"r","sequence":1}}"#;
            format!(
                r#"{{"jsonrpc":"2.0","method":"item/completed","params":{{"sessionId":"s","viewCursor":"v:{id}",{range},"item":{{"itemId":"{id}","revision":1,"status":"completed","turnId":"t",{members}}}}}}}"#
            )
        };
        fold_in(
            &mut fold,
            &item(
                "a",
                r#""kind":"holoDeck","fallbackText":"Rendered a scene""#,
            ),
        );
        fold_in(
            &mut fold,
            &item(
                "b",
                r#""kind":"userShell","commandText":"\r\nls -la\rrm -rf x""#,
            ),
        );
        let line = |id: &str| ItemLine(fold.item(id).unwrap()).to_string();
        assert_eq!(line("a"), "holoDeck completed: Rendered a scene");
        assert_eq!(line("b"), "userShell completed: ls -la...");
    }

    #[test]
    fn a_subject_shows_its_kind_its_first_detail_and_its_stages() {
        let stages = [1, 2].map(|position| {
            serde_json::json!({
                "argv": ["cargo", "test"], "argvComplete": true, "position": position,
                "totalStages": 2, "resolution": {"kind": "pending"},
                "requirementId": {"approvalId": "a", "sourceIndex": position}
            })
        });
        let subject: ApprovalSubject = serde_json::from_value(serde_json::json!({
            "kind": "commandExecution", "command": "cargo test", "path": "/src",
            "stages": stages
        }))
        .unwrap();
        assert_eq!(
            SubjectLine(&subject).to_string(),
            "commandExecution: cargo test (2 stages)"
        );
        let subject = |members: serde_json::Value| -> ApprovalSubject {
            serde_json::from_value(members).unwrap()
        };
        let write = subject(serde_json::json!({
            "kind": "fileAccess", "toolName": "shell", "path": "/etc/x", "access": "write"
        }));
        assert_eq!(
            SubjectLine(&write).to_string(),
            "fileAccess: /etc/x (write)"
        );
        let reach = subject(serde_json::json!({
            "kind": "network", "host": "example.com", "port": 443, "protocol": "https"
        }));
        assert_eq!(
            SubjectLine(&reach).to_string(),
            "network: example.com:443 (https)"
        );
    }

    #[test]
    fn a_question_shows_its_header_text_and_labels() {
        let question: UserInputQuestion = serde_json::from_value(serde_json::json!({
            "id": "db", "header": "Database", "question": "Which one?",
            "selection": {"mode": "single"},
            "options": [{"label": "Postgres"}, {"label": "SQLite"}]
        }))
        .unwrap();
        assert_eq!(
            QuestionLine(&question).to_string(),
            "Database: Which one? [Postgres | SQLite]"
        );
        let long: UserInputQuestion = serde_json::from_value(serde_json::json!({
            "id": "db", "header": "Database", "question": "Which one?\r\n\r\n  It stays.\u{2028}Pick\u{85}one",
            "selection": {"mode": "single"},
            "options": [{"label": "Postgres\n(recommended)"}, {"label": "SQLite"}]
        }))
        .unwrap();
        assert_eq!(
            QuestionLine(&long).to_string(),
            "Database: Which one? It stays. Pick one [Postgres (recommended) | SQLite]"
        );
    }

    #[test]
    fn long_and_multi_line_texts_are_cut() {
        assert_eq!(cut("short", 80), "short");
        assert_eq!(cut("one\ntwo", 80), "one...");
        assert_eq!(cut("\n one \r\n\n", 80), "one", "nothing follows");
        assert_eq!(cut("ééééé", 3), "ééé...");
    }
}
