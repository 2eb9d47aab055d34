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
    let text: String = text
        .lines()
        .map(|line| {
            let line = line.trim();
            if line.starts_with("```") && line.len() == 3 {
                "```text".to_owned()
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.split('\n') {
        if !out.is_empty() {
            out.push('\n');
        }
        if line.starts_with("```") {
            in_fence = !in_fence;
            out.push_str(line);
        } else if in_fence {
            out.push_str(line);
        } else {
            out.push_str(&prose_line(line));
        }
    }
    if in_fence {
        out.push_str("\n```");
    }
    out
}

// Outside code spans: links to code, escape angle brackets, wrap URLs.
fn prose_line(line: &str) -> String {
    let mut out = String::new();
    for (index, part) in split_code_spans(line).into_iter().enumerate() {
        if index % 2 == 1 {
            out.push('`');
            out.push_str(part);
            out.push('`');
        } else {
            out.push_str(&plain(part));
        }
    }
    out
}

// Alternating prose and code: even indices are prose. An unclosed backtick is prose.
fn split_code_spans(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let Some(close) = rest[open + 1..].find('`') else {
            break;
        };
        parts.push(&rest[..open]);
        parts.push(&rest[open + 1..open + 1 + close]);
        rest = &rest[open + 2 + close..];
    }
    parts.push(rest);
    parts
}

fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(stripped) = rest.strip_prefix('[') {
            if let Some(close) = stripped.find(']') {
                let inner = &stripped[..close];
                let after = &stripped[close + 1..];
                if after.starts_with('(') {
                    out.push('[');
                    out.push_str(&plain(inner));
                    out.push(']');
                    rest = after;
                    continue;
                }
                if !inner.is_empty() {
                    out.push('`');
                    out.push_str(&inner.replace('`', ""));
                    out.push('`');
                    rest = after;
                    continue;
                }
            }
            out.push_str("\\[");
            rest = stripped;
        } else if let Some(url_len) = url_at(rest) {
            let url = rest[..url_len].trim_end_matches(['.', ',', ';', ':', ')']);
            out.push('<');
            out.push_str(url);
            out.push('>');
            rest = &rest[url.len()..];
        } else {
            let c = rest.chars().next().unwrap_or_default();
            match c {
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                ']' => out.push_str("\\]"),
                _ => out.push(c),
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::sanitize;

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
}
