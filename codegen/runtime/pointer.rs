//! Where in a JSON text a decoding error happened, as a JSON pointer.
//!
//! serde_json reports an error by the position it had reached: just after the value it could
//! not take (a wrong type, an unknown enum value, the closing brace of an object that lacks a
//! member), or at the start of one it refused on sight. Walking the text to that position
//! names the value, so decoding needs no path tracking at all: the cost is paid only when a
//! decode has already failed.

/// The byte offset of serde_json's `line` (1-based) and `column` in `text`.
pub(crate) fn offset(text: &str, line: usize, column: usize) -> usize {
    let start = match line {
        0 | 1 => 0,
        _ => text
            .match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(at, _)| at + 1),
    };
    (start + column).min(text.len())
}

/// The JSON pointer of the value of `text` that ends at byte `offset`, else of the one that
/// starts there, else of the innermost object or array around it; empty for the whole text.
pub(crate) fn at(text: &str, offset: usize) -> String {
    let mut walk = Walk {
        text,
        at: 0,
        offset,
        path: Vec::new(),
        ends: None,
        starts: None,
        around: None,
    };
    walk.value();
    walk.ends.or(walk.starts).or(walk.around).unwrap_or_default()
}

/// How deep the walk goes: serde_json reads no deeper (past it, its error is at this depth),
/// and walking a deeper text by recursion would overflow the stack.
const DEPTH: usize = 128;

struct Walk<'a> {
    text: &'a str,
    at: usize,
    offset: usize,
    /// Escaped reference tokens down to the current value.
    path: Vec<String>,
    ends: Option<String>,
    starts: Option<String>,
    around: Option<String>,
}

impl Walk<'_> {
    fn pointer(&self) -> String {
        self.path.iter().map(|token| format!("/{token}")).collect()
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Walks one value; `false` once the walk is over (the text ends, stops making sense, or
    /// went past the offset, after which nothing can match).
    fn value(&mut self) -> bool {
        self.space();
        let start = self.at;
        if start == self.offset && self.starts.is_none() {
            self.starts = Some(self.pointer());
        }
        let read = match self.peek() {
            Some(b'{') => self.container(b'}', true),
            Some(b'[') => self.container(b']', false),
            Some(b'"') => self.string().is_some(),
            Some(_) => self.scalar(),
            None => false,
        };
        if read && self.at == self.offset && self.ends.is_none() {
            self.ends = Some(self.pointer());
        }
        read && self.at <= self.offset
    }

    /// An object (`members`) or an array, from its opening to its closing byte.
    fn container(&mut self, close: u8, members: bool) -> bool {
        if self.at < self.offset {
            self.around = Some(self.pointer());
        }
        if self.path.len() >= DEPTH {
            return false;
        }
        self.at += 1;
        self.space();
        let mut index = 0usize;
        if self.peek() == Some(close) {
            self.at += 1;
            return self.closed();
        }
        loop {
            let token = if members {
                self.space();
                let Some(key) = self.string() else {
                    return false;
                };
                self.space();
                if self.peek() != Some(b':') {
                    return false;
                }
                self.at += 1;
                key.replace('~', "~0").replace('/', "~1")
            } else {
                index.to_string()
            };
            self.path.push(token);
            let more = self.value();
            self.path.pop();
            if !more {
                return false;
            }
            index += 1;
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(byte) if byte == close => {
                    self.at += 1;
                    return self.closed();
                }
                _ => return false,
            }
        }
    }

    /// After a container closed: if that was before the offset, it does not hold it.
    fn closed(&mut self) -> bool {
        if self.at <= self.offset {
            self.around = self
                .path
                .split_last()
                .map(|(_, parent)| parent.iter().map(|token| format!("/{token}")).collect());
        }
        true
    }

    /// A string, decoded; `None` when it does not end.
    fn string(&mut self) -> Option<String> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut at = start + 1;
        loop {
            match bytes.get(at)? {
                b'\\' => at += 2,
                b'"' => break,
                _ => at += 1,
            }
        }
        self.at = at + 1;
        serde_json::from_str(self.text.get(start..self.at)?).ok()
    }

    fn scalar(&mut self) -> bool {
        let start = self.at;
        while !matches!(
            self.peek(),
            None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
        ) {
            self.at += 1;
        }
        self.at > start
    }
}
