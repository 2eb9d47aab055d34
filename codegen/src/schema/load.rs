//! Schema text to a JSON value, and JSON pointers back to line numbers for errors.

use serde_json::Value;

use crate::error::{Error, ErrorInfo, ErrorKind};

/// Parses the schema text; a syntax error names the line and column.
pub fn parse(text: &str) -> Result<Value, Error> {
    serde_json::from_str(text).map_err(|e| {
        ErrorInfo {
            kind: ErrorKind::Json,
            file: String::new(),
            pointer: None,
            line: Some((e.line(), e.column())),
            message: format!("the schema is not valid JSON: {e}"),
            help: Some("fix the JSON syntax at the line shown".into()),
        }
        .into()
    })
}

/// The 1-based line and column where the node at `pointer` starts in `text`, if found.
pub fn locate(text: &str, pointer: &str) -> Option<(usize, usize)> {
    let tokens: Vec<String> = if pointer.is_empty() {
        Vec::new()
    } else {
        pointer
            .strip_prefix('/')?
            .split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect()
    };
    let bytes = text.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    for token in &tokens {
        pos = child(bytes, pos, token)?;
    }
    let line = text[..pos].matches('\n').count() + 1;
    let column = pos - text[..pos].rfind('\n').map_or(0, |i| i + 1) + 1;
    Some((line, column))
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
        pos += 1;
    }
    pos
}

// Start of the member `token` of the object or array starting at `pos`.
fn child(bytes: &[u8], pos: usize, token: &str) -> Option<usize> {
    let open = *bytes.get(pos)?;
    let mut index = 0usize;
    let mut p = skip_ws(bytes, pos + 1);
    while p < bytes.len() && bytes[p] != b'}' && bytes[p] != b']' {
        let hit = if open == b'{' {
            let key_end = skip_value(bytes, p)?;
            let key: String = serde_json::from_slice(&bytes[p..key_end]).ok()?;
            p = skip_ws(bytes, key_end);
            p = skip_ws(bytes, p + 1); // the colon
            key == token
        } else {
            let hit = token.parse() == Ok(index);
            index += 1;
            hit
        };
        if hit {
            return Some(p);
        }
        p = skip_ws(bytes, skip_value(bytes, p)?);
        if bytes.get(p) == Some(&b',') {
            p = skip_ws(bytes, p + 1);
        }
    }
    None
}

// End of the JSON value starting at `pos`.
fn skip_value(bytes: &[u8], pos: usize) -> Option<usize> {
    match *bytes.get(pos)? {
        b'"' => {
            let mut p = pos + 1;
            while p < bytes.len() {
                match bytes[p] {
                    b'\\' => p += 2,
                    b'"' => return Some(p + 1),
                    _ => p += 1,
                }
            }
            None
        }
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut p = pos;
            while p < bytes.len() {
                match bytes[p] {
                    b'"' => {
                        p = skip_value(bytes, p)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(p + 1);
                        }
                    }
                    _ => {}
                }
                p += 1;
            }
            None
        }
        _ => {
            let mut p = pos;
            while p < bytes.len()
                && !matches!(bytes[p], b',' | b'}' | b']')
                && !bytes[p].is_ascii_whitespace()
            {
                p += 1;
            }
            Some(p)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_nested_members() {
        let text = "{\n  \"a\": {\n    \"b/c\": [1, {\"d\": 2}]\n  }\n}";
        assert_eq!(locate(text, ""), Some((1, 1)));
        assert_eq!(locate(text, "/a"), Some((2, 8)));
        assert_eq!(locate(text, "/a/b~1c/1/d"), Some((3, 22)));
        assert_eq!(locate(text, "/a/x"), None);
    }
}
