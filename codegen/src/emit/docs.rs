//! Descriptions to rustdoc that `cargo doc` accepts without warnings.

use proc_macro2::TokenStream;
use quote::quote;

/// `#[doc = "..."]` attributes for a description, one per line.
pub fn doc_attrs(doc: Option<&str>) -> TokenStream {
    let Some(doc) = doc.filter(|d| !d.trim().is_empty()) else {
        return TokenStream::new();
    };
    let lines = sanitize(doc)
        .lines()
        .map(|line| format!(" {line}"))
        .collect::<Vec<_>>();
    quote! { #(#[doc = #lines])* }
}

/// `#![doc = "..."]` attributes for a module or crate.
pub fn inner_doc_attrs(doc: &str) -> TokenStream {
    let lines = doc
        .lines()
        .map(|line| format!(" {line}"))
        .collect::<Vec<_>>();
    quote! { #(#![doc = #lines])* }
}

/// Markdown that renders as written: brackets that would be links become code, angle
/// brackets are escaped, bare URLs become autolinks, indentation cannot start a code block.
pub fn sanitize(text: &str) -> String {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("```") {
            // An opening fence without a language would be compiled as a doctest.
            out.push(if !in_fence && line == "```" {
                "```text".to_owned()
            } else {
                line.to_owned()
            });
            in_fence = !in_fence;
        } else if in_fence {
            out.push(line.to_owned());
        } else {
            out.push(prose_line(line));
        }
    }
    if in_fence {
        out.push("```".to_owned());
    }
    out.join("\n")
}

// Outside code spans: brackets that would be links become code, angle brackets are escaped,
// URLs are wrapped.
fn prose_line(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '`' => match chars[i + 1..].iter().position(|c| *c == '`') {
                Some(len) => {
                    out.extend(&chars[i..i + len + 2]);
                    i += len + 2;
                }
                None => {
                    out.push('`');
                    i += 1;
                }
            },
            '[' => match closing_bracket(&chars, i) {
                Some(close) if chars.get(close + 1) == Some(&'(') => {
                    out.push('[');
                    out.push_str(&prose_line(&chars[i + 1..close].iter().collect::<String>()));
                    out.push(']');
                    i = close + 1;
                }
                Some(close) if close > i + 1 => {
                    let inner: String = chars[i + 1..close].iter().filter(|c| **c != '`').collect();
                    out.push('`');
                    out.push_str(&inner);
                    out.push('`');
                    i = close + 1;
                }
                _ => {
                    out.push_str("\\[");
                    i += 1;
                }
            },
            ']' => {
                out.push_str("\\]");
                i += 1;
            }
            '<' => {
                out.push_str("&lt;");
                i += 1;
            }
            '>' => {
                out.push_str("&gt;");
                i += 1;
            }
            'h' if chars[i..].starts_with(&['h', 't', 't', 'p']) => {
                let rest: String = chars[i..].iter().collect();
                if let Some(len) = url_at(&rest) {
                    let url = rest[..len].trim_end_matches(['.', ',', ';', ':', ')']);
                    out.push('<');
                    out.push_str(url);
                    out.push('>');
                    i += url.chars().count();
                } else {
                    out.push('h');
                    i += 1;
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

// The `]` closing the `[` at `open`, skipping code spans.
fn closing_bracket(chars: &[char], open: usize) -> Option<usize> {
    let mut i = open + 1;
    while i < chars.len() {
        match chars[i] {
            '`' => i += chars[i + 1..].iter().position(|c| *c == '`')? + 2,
            ']' => return Some(i),
            '[' => return None,
            _ => i += 1,
        }
    }
    None
}

fn url_at(text: &str) -> Option<usize> {
    if !(text.starts_with("http://") || text.starts_with("https://")) {
        return None;
    }
    Some(
        text.find(|c: char| c.is_whitespace() || c == '>' || c == '"')
            .unwrap_or(text.len()),
    )
}

/// The generator's doc examples, written for `msp_types`, made to name `crate_path`; without
/// one they are marked `ignore` (shown, not run: the crate they would run in is unknown).
pub fn examples(text: &str, crate_path: Option<&str>) -> String {
    if !text.contains("```") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_start();
        let Some(doc) = body
            .strip_prefix("///")
            .or_else(|| body.strip_prefix("//!"))
        else {
            out.push_str(line);
            continue;
        };
        let doc = doc.trim_start();
        if let Some(info) = doc.strip_prefix("```") {
            let opens_rust = !in_fence && matches!(info.trim(), "" | "rust");
            in_fence = !in_fence;
            if opens_rust && crate_path.is_none() {
                let fence = line.find("```").unwrap_or(0);
                out.push_str(&line[..fence]);
                out.push_str("```ignore\n");
                continue;
            }
        }
        match crate_path {
            Some(path) if in_fence && path != "msp_types" => {
                out.push_str(&line.replace("msp_types::", &format!("{path}::")))
            }
            _ => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{examples, sanitize};

    #[test]
    fn links_that_would_not_resolve_become_code() {
        assert_eq!(sanitize("see [`Foo::Bar`] now"), "see `Foo::Bar` now");
        assert_eq!(
            sanitize("a [link](http://x) stays"),
            "a [link](<http://x>) stays"
        );
    }

    #[test]
    fn html_and_urls_and_indentation_are_defused() {
        assert_eq!(
            sanitize("Vec<T> at https://a.b/c."),
            "Vec&lt;T&gt; at <https://a.b/c>."
        );
        assert_eq!(sanitize("`Vec<T>` stays"), "`Vec<T>` stays");
        assert_eq!(sanitize("x\n    indented"), "x\nindented");
        assert_eq!(sanitize("```\ncode\n```"), "```text\ncode\n```");
    }

    #[test]
    fn examples_name_the_crate_or_are_not_run() {
        let text = "/// ```\n/// use msp_types::Frame;\n/// ```\n/// ```json\n/// {}\n/// ```\nfn f() {}\n";
        assert_eq!(
            examples(text, Some("mine::protocol")),
            text.replace("use msp_types::", "use mine::protocol::")
        );
        assert_eq!(examples(text, Some("msp_types")), text);
        let ignored = examples(text, None);
        assert!(
            ignored.starts_with("/// ```ignore\n/// use msp_types::Frame;\n/// ```\n/// ```json\n")
        );
    }
}
