//! What the emitter makes of a file: Rust tokens, which the renderer formats, and the runtime
//! macros' tables (`impl_serde!`, `impl_sample!`, `impl_string_enum!`, `builder!`), written
//! here as text in their final layout, one entry a line. Tables are a third of the output and
//! the same shape every time: formatting them would only undo a general layout.

use proc_macro2::{Literal, TokenStream};

/// Tokens and tables, in file order.
#[derive(Default)]
pub struct Code(Vec<Piece>);

/// A part of a file.
pub enum Piece {
    /// Items to format.
    Tokens(TokenStream),
    /// Items written as they are.
    Text(String),
}

impl Code {
    /// Adds items to format.
    pub fn push(&mut self, tokens: TokenStream) {
        if tokens.is_empty() {
            return;
        }
        match self.0.last_mut() {
            Some(Piece::Tokens(last)) => last.extend(tokens),
            _ => self.0.push(Piece::Tokens(tokens)),
        }
    }

    /// Adds items written as they are (whole lines).
    pub fn text(&mut self, text: String) {
        if !text.is_empty() {
            self.0.push(Piece::Text(text));
        }
    }

    /// Adds `other`'s parts after these.
    pub fn append(&mut self, other: Code) {
        for piece in other.0 {
            match piece {
                Piece::Tokens(tokens) => self.push(tokens),
                Piece::Text(text) => self.text(text),
            }
        }
    }

    /// The parts, in order.
    pub fn into_pieces(self) -> Vec<Piece> {
        self.0
    }
}

impl From<TokenStream> for Code {
    fn from(tokens: TokenStream) -> Self {
        let mut code = Code::default();
        code.push(tokens);
        code
    }
}

/// A string literal as Rust source writes it.
pub fn lit(text: &str) -> String {
    Literal::string(text).to_string()
}

/// A type or an attribute as source text: `Vec<Box<Foo>>`, `#[cfg(feature = "x")]`. (Their
/// tokens hold no string literal with spaces in it, the only place the spacing would matter.)
pub fn text(tokens: &TokenStream) -> String {
    tokens
        .to_string()
        .replace(" :: ", "::")
        .replace("# [", "#[")
        .replace(" (", "(")
        .replace(" ,", ",")
        .replace(" < ", "<")
        .replace(" >", ">")
}

/// A table macro's invocation: `gate` on a line of its own (when any), then `path!(head {`,
/// one entry a line with its comma, and `} tail);` (`head {} tail` on one line when empty).
pub fn table(gate: &str, path: &str, head: &str, entries: &[String], tail: &str) -> String {
    let mut out = String::new();
    if !gate.is_empty() {
        out.push_str(gate);
        out.push('\n');
    }
    if entries.is_empty() {
        out.push_str(&format!("{path}!({head} {{}}{tail});\n"));
        return out;
    }
    out.push_str(&format!("{path}!(\n    {head} {{\n"));
    for entry in entries {
        out.push_str(&format!("        {entry},\n"));
    }
    out.push_str(&format!("    }}{tail}\n);\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn types_and_attributes_read_as_written() {
        let ty = quote!(serde_json::Map<String, Vec<Box<serde_json::Value>>>);
        assert_eq!(
            text(&ty),
            "serde_json::Map<String, Vec<Box<serde_json::Value>>>"
        );
        let gate = quote!(#[cfg(all(feature = "sample", not(feature = "experimental")))]);
        assert_eq!(
            text(&gate),
            "#[cfg(all(feature = \"sample\", not(feature = \"experimental\")))]"
        );
        assert_eq!(lit("a \"b\"\n"), "\"a \\\"b\\\"\\n\"");
    }

    #[test]
    fn a_table_is_one_entry_a_line() {
        let entries = [
            "optional a = \"a\"".to_owned(),
            "#[x] required b = \"b\"".to_owned(),
        ];
        assert_eq!(
            table("#[g]", "m::t", "Name", &entries, " unknown"),
            "#[g]\nm::t!(\n    Name {\n        optional a = \"a\",\n        #[x] required b = \"b\",\n    } unknown\n);\n"
        );
        assert_eq!(
            table("", "m::t", "Name", &[], " unknown"),
            "m::t!(Name {} unknown);\n"
        );
    }

    #[test]
    fn tokens_merge_and_text_stays_apart() {
        let mut code = Code::from(quote!(
            struct A;
        ));
        code.push(quote!(
            struct B;
        ));
        code.text("t!();\n".to_owned());
        code.push(TokenStream::new());
        code.append(Code::from(quote!(
            struct C;
        )));
        let pieces = code.into_pieces();
        assert_eq!(pieces.len(), 3);
        assert!(matches!(&pieces[0], Piece::Tokens(t) if t.to_string() == "struct A ; struct B ;"));
        assert!(matches!(&pieces[1], Piece::Text(t) if t == "t!();\n"));
    }
}
