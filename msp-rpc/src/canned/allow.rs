//! Values a client chooses for itself, which the canned host lets differ from the recording.
//!
//! A pattern is `METHOD#POINTER`: in frames of `METHOD` (`*`: any method), the member at
//! `POINTER` within the params (for the client's reply to a host request, within the reply's
//! `result`, `METHOD` being the request's method) and everything under it may differ, or be left
//! out. A pointer segment `*` stands for any one member name or array index:
//! `turn/start#/input/*/text`.

use std::fmt;

/// What a client may choose for itself unless told otherwise: who it is, where it works, how
/// much history it pages at once, and the free text a user typed.
pub const DEFAULT_ALLOWED: &[&str] = &[
    "initialize#/clientInfo",
    "view/page#/limit",
    "session/start#/workspaceRoot",
    "session/start#/workspaceRoots",
    "turn/start#/workspaceRoots",
    "turn/start#/displayText",
    "turn/start#/input/*/text",
    "turn/steer#/input/*/text",
    "userInput/answer#/answers/*/freeText",
    "userInput/answer#/answers/*/note",
    "userInput/interrupt#/answers/*/freeText",
    "userInput/interrupt#/answers/*/note",
    "userInput/clarify#/clarification",
    "userInput/cancel#/reason",
    "approval/decide#/feedback",
];

/// One loosened place: `METHOD#POINTER` (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allow {
    method: String,
    segments: Vec<String>,
}

impl Allow {
    /// Parses `METHOD#POINTER`; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (method, pointer) = text.split_once('#').ok_or_else(|| {
            format!("{text:?}: expected METHOD#POINTER, such as session/start#/workspaceRoot")
        })?;
        if method.is_empty() {
            return Err(format!("{text:?}: no method before `#` (use `*` for any)"));
        }
        let segments = match pointer.strip_prefix('/') {
            Some(rest) => rest.split('/').map(str::to_owned).collect(),
            None => return Err(format!("{text:?}: the pointer must start with `/`")),
        };
        Ok(Allow {
            method: method.to_owned(),
            segments,
        })
    }

    /// Whether this covers the difference at `pointer` (a pointer into the whole frame, its
    /// first segment `params` or `result`) in a frame of `method`.
    pub fn covers(&self, method: &str, pointer: &str) -> bool {
        if self.method != "*" && self.method != method {
            return false;
        }
        let mut segments = pointer.split('/').skip(1);
        if !matches!(segments.next(), Some("params" | "result")) {
            return false;
        }
        for want in &self.segments {
            match segments.next() {
                Some(got) if want == "*" || want == got => {}
                _ => return false,
            }
        }
        true
    }
}

impl fmt::Display for Allow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#/{}", self.method, self.segments.join("/"))
    }
}

/// The default set, parsed.
pub fn defaults() -> Vec<Allow> {
    DEFAULT_ALLOWED
        .iter()
        .map(|text| Allow::parse(text).expect("the default patterns parse"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_covers_its_member_and_what_is_under_it_in_its_method_only() {
        let root = Allow::parse("session/start#/workspaceRoot").unwrap();
        assert!(root.covers("session/start", "/params/workspaceRoot"));
        assert!(root.covers("session/start", "/params/workspaceRoot/0"));
        assert!(!root.covers("session/resume", "/params/workspaceRoot"));
        assert!(!root.covers("session/start", "/params/workspaceRoots"));
        assert!(!root.covers("session/start", "/params"));
        assert!(!root.covers("session/start", "/id"));

        let text = Allow::parse("turn/start#/input/*/text").unwrap();
        assert!(text.covers("turn/start", "/params/input/3/text"));
        assert!(!text.covers("turn/start", "/params/input/3/type"));

        let any = Allow::parse("*#/workspaceRoot").unwrap();
        assert!(any.covers("session/fork", "/params/workspaceRoot"));
        assert!(any.covers("approval/request", "/result/workspaceRoot"));
        assert_eq!(any.to_string(), "*#/workspaceRoot");
    }

    #[test]
    fn bad_patterns_say_what_is_wrong() {
        assert!(Allow::parse("session/start/workspaceRoot")
            .unwrap_err()
            .contains("METHOD#POINTER"));
        assert!(Allow::parse("#/x").unwrap_err().contains("no method"));
        assert!(Allow::parse("m#x").unwrap_err().contains("start with `/`"));
        assert_eq!(defaults().len(), DEFAULT_ALLOWED.len());
    }
}
