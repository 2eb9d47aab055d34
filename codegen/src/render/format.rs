//! Token streams to formatted source text with the generated-file header.

use proc_macro2::TokenStream;

use crate::error::{Error, ErrorInfo, ErrorKind};

/// Formats one generated file; `header` is its first line (without `//`).
pub fn format(tokens: TokenStream, header: &str, path: &str) -> Result<String, Error> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| -> Error {
        ErrorInfo {
            kind: ErrorKind::Unsupported,
            file: path.to_owned(),
            pointer: None,
            line: None,
            message: format!("the generator produced invalid Rust: {e}"),
            help: Some("this is a generator bug; please report it with the schema".into()),
        }
        .into()
    })?;
    let text = builders_laid_out(&one_member_a_line(&prettyplease::unparse(&file)));
    Ok(format!("// {header}\n\n{text}"))
}

/// The start of a builder's entries (`support::builder!`).
const BUILDER_MACRO: &str = "crate::support::builder! {\n";

/// prettyplease fills a `builder!` invocation like prose; lay it out as its entries: the
/// header, then `required [`, one member a line, `]`, and the same for `optional`.
fn builders_laid_out(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(BUILDER_MACRO) {
        let body_start = start + BUILDER_MACRO.len();
        let Some(len) = rest[body_start..].find("\n}\n") else {
            break;
        };
        out.push_str(&rest[..body_start]);
        out.push_str(&builder_entries(&rest[body_start..body_start + len]));
        rest = &rest[body_start + len..];
    }
    out.push_str(rest);
    out
}

// The body of one `builder!`: its tokens as prettyplease filled them, one entry a line.
fn builder_entries(body: &str) -> String {
    let mut out = String::from("    ");
    // Open entry lists, and open brackets kept on their line (attributes, groups in entries).
    let (mut depth, mut inline) = (0, 0);
    for (literal, piece) in literals_apart(body) {
        if literal {
            out.push_str(piece);
            continue;
        }
        // Code between string literals: whitespace runs as one space, tokens spaced as written.
        let code = piece
            .split(char::is_whitespace)
            .filter(|word| !word.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let edge = |at: bool| if at { " " } else { "" };
        let code = format!(
            "{}{code}{}",
            edge(piece.starts_with(char::is_whitespace)),
            edge(piece.ends_with(char::is_whitespace) && !code.is_empty())
        )
        .replace(" : ", ": ")
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace(" :: ", "::");
        for c in code.chars() {
            match c {
                // No space after a line break or another space.
                ' ' if out.ends_with([' ', '\n']) => {}
                // An attribute's brackets, or a group inside an entry (`[name_null]`).
                '[' if inline > 0 || depth > 0 || out.trim_end().ends_with('#') => {
                    if out.trim_end().ends_with('#') {
                        out.truncate(out.trim_end().len());
                    } else if inline == 0 && !out.ends_with(' ') {
                        out.push(' ');
                    }
                    inline += 1;
                    out.push('[');
                }
                ']' if inline > 0 => {
                    inline -= 1;
                    out.push(']');
                }
                '[' => {
                    depth += 1;
                    out.push_str(" [\n        ");
                }
                ']' => {
                    depth -= 1;
                    out.truncate(out.trim_end().len());
                    out.push_str("\n    ]\n    ");
                }
                ';' => out.push_str(if depth > 0 { ";\n        " } else { ";\n    " }),
                c => out.push(c),
            }
        }
    }
    out.trim_end().replace(" [\n    ]", " []")
}

/// `text` cut into code and string literals, in order: `(true, literal)` for each literal
/// with its quotes (escapes kept), `(false, code)` for what lies between.
fn literals_apart(text: &str) -> Vec<(bool, &str)> {
    let mut pieces = Vec::new();
    let (mut start, mut in_string, mut escaped) = (0, false, false);
    for (at, c) in text.char_indices() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => {
                pieces.push((true, &text[start..=at]));
                (start, in_string) = (at + 1, false);
            }
            (false, _, '"') => {
                pieces.push((false, &text[start..at]));
                (start, in_string) = (at, true);
            }
            _ => {}
        }
    }
    pieces.push((in_string, &text[start..]));
    pieces
}

/// The macros whose entries are laid out one a line, so that adding one is a one-line diff.
const TABLE_MACROS: &[&str] = &[
    "crate::support::impl_serde!(",
    "crate::support::impl_string_enum!(",
    "crate::sample::impl_sample!(",
];

/// prettyplease fills a macro's tokens like prose; lay the entries of the table macros out one
/// a line instead: `Name {`, each `…,` entry, `} tail`.
fn one_member_a_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let next = |rest: &str| {
        TABLE_MACROS
            .iter()
            .filter_map(|m| rest.find(m).map(|at| (at, m.len())))
            .min()
    };
    while let Some((start, len)) = next(rest) {
        let line_start = rest[..start].rfind('\n').map_or(0, |i| i + 1);
        let indent = &rest[line_start..start];
        let body_start = start + len;
        let first_line = rest[body_start..].split('\n').next().unwrap_or_default();
        let Some(len) = rest[body_start..]
            .find("\n);")
            .filter(|_| indent.trim().is_empty() && !first_line.ends_with(");"))
        else {
            out.push_str(&rest[..body_start]);
            rest = &rest[body_start..];
            continue;
        };
        let body = &rest[body_start..body_start + len];
        out.push_str(&rest[..body_start]);
        match layout(body, indent) {
            Some(laid) => out.push_str(&laid),
            None => out.push_str(body),
        }
        rest = &rest[body_start + len..];
    }
    out.push_str(rest);
    out
}

// `Name { e1, e2, } unknown` (any whitespace) to one entry a line; `None` if it is not that.
fn layout(body: &str, indent: &str) -> Option<String> {
    let tokens = words(body);
    let open = tokens.iter().position(|t| t == "{")?;
    let close = tokens.iter().rposition(|t| t == "}")?;
    let mut out = format!("\n{indent}    {} {{\n", tokens[..open].join(" "));
    let mut entry: Vec<&str> = Vec::new();
    for token in &tokens[open + 1..close] {
        if token == "," {
            out.push_str(&format!("{indent}        {},\n", entry.join(" ")));
            entry.clear();
        } else {
            entry.push(token);
        }
    }
    if !entry.is_empty() {
        return None;
    }
    out.push_str(&format!("{indent}    }} {}", tokens[close + 1..].join(" ")));
    Some(out)
}

// Whitespace-separated words, with string literals, `#[…]` attributes, `{`, `}` and `,` as
// words of their own.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(std::mem::take(word));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                word.push(c);
                while let Some(c) = chars.next() {
                    word.push(c);
                    match c {
                        '\\' => word.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '#' if chars.peek() == Some(&'[') => {
                flush(&mut word, &mut out);
                let mut depth = 0;
                let mut attr = String::from("#");
                for c in chars.by_ref() {
                    if c.is_whitespace() && attr.ends_with(char::is_whitespace) {
                        continue;
                    }
                    attr.push(if c.is_whitespace() { ' ' } else { c });
                    match c {
                        '[' => depth += 1,
                        ']' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                out.push(attr);
            }
            '{' | '}' | ',' => {
                flush(&mut word, &mut out);
                out.push(c.to_string());
            }
            c if c.is_whitespace() => flush(&mut word, &mut out),
            _ => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builder_is_laid_out_one_member_a_line_with_attributes_in_place() {
        let text = "crate::support::builder! {\n    # [cfg(feature = \"x\")] A, AB, ABRest, unknown, \" A; [doc]\";\n    required[T0 a a : String => String, \"a\", a; T1 b b : Vec < String > =>\n    Vec < String >, \"b\", b;] optional[# [cfg(feature = \"x\")] tristate c c[c_null] :\n    i64 => Box < i64 >, \"c\";]\n}\n";
        let laid = builders_laid_out(text);
        assert_eq!(
            laid,
            "crate::support::builder! {\n    #[cfg(feature = \"x\")] A, AB, ABRest, unknown, \" A; [doc]\";\n    required [\n        T0 a a: String => String, \"a\", a;\n        T1 b b: Vec<String> => Vec<String>, \"b\", b;\n    ]\n    optional [\n        #[cfg(feature = \"x\")] tristate c c [c_null]: i64 => Box<i64>, \"c\";\n    ]\n}\n"
        );
        let empty = builders_laid_out("crate::support::builder! {\n    A, AB, ABRest, unknown, \"d\"; required[] optional[]\n}\n");
        assert!(
            empty.contains("    required []\n    optional []\n}"),
            "{empty}"
        );
    }

    #[test]
    fn entries_are_laid_out_one_a_line() {
        let text = "crate::support::impl_serde!(\n    Item { optional a = \"a, b\", \
                    #[cfg(feature = \"experimental\")] required\n    b_c = \"b}\\\"c\", } unknown\n);\n";
        assert_eq!(
            one_member_a_line(text),
            "crate::support::impl_serde!(\n    Item {\n        optional a = \"a, b\",\n        \
             #[cfg(feature = \"experimental\")] required b_c = \"b}\\\"c\",\n    } unknown\n);\n"
        );
    }

    #[test]
    fn sampler_entries_keep_their_draws_and_rules() {
        let text = "crate::sample::impl_sample!(\n    Limits { optional code = \"code\" => matching(\"^[a-z]{2,}$\"), \
                    optional step = \"step\"\n    => integer(min -5f64 max 100f64), } unknown; step needs ratio code\n);\n";
        assert_eq!(
            one_member_a_line(text),
            "crate::sample::impl_sample!(\n    Limits {\n        optional code = \"code\" => matching(\"^[a-z]{2,}$\"),\n        \
             optional step = \"step\" => integer(min -5f64 max 100f64),\n    } unknown; step needs ratio code\n);\n"
        );
    }

    #[test]
    fn other_text_is_left_alone() {
        let text = "fn f() {}\ncrate::support::impl_serde!(Odd {} unknown);\nfn g() {\n);\n";
        assert_eq!(one_member_a_line(text), text);
    }
}
