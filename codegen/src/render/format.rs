//! Generated code to formatted source text with the generated-file header: tokens through
//! prettyplease, tables as the emitter wrote them.

use proc_macro2::TokenStream;

use crate::emit::{Code, Piece};
use crate::error::{Error, ErrorInfo, ErrorKind};

/// Formats one generated file; `header` is its first line (without `//`).
pub fn format(code: Code, header: &str, path: &str) -> Result<String, Error> {
    let mut text = format!("// {header}\n\n");
    for piece in code.into_pieces() {
        match piece {
            Piece::Tokens(tokens) => text.push_str(&prettyplease::unparse(&parse(tokens, path)?)),
            Piece::Text(table) => text.push_str(&table),
        }
    }
    Ok(text)
}

fn parse(tokens: TokenStream, path: &str) -> Result<syn::File, Error> {
    syn::parse2(tokens).map_err(|e| -> Error {
        ErrorInfo {
            kind: ErrorKind::Unsupported,
            file: path.to_owned(),
            pointer: None,
            line: None,
            message: format!("the generator produced invalid Rust: {e}"),
            help: Some("this is a generator bug; please report it with the schema".into()),
        }
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn tokens_are_formatted_and_tables_kept_in_place() {
        let mut code = Code::from(quote!(
            struct A {
                a: i64,
            }
        ));
        code.text("t!(A {} unknown);\n".to_owned());
        code.push(quote!(
            struct B;
        ));
        let text = format(code, "header", "x.rs").unwrap();
        assert_eq!(
            text,
            "// header\n\nstruct A {\n    a: i64,\n}\nt!(A {} unknown);\nstruct B;\n"
        );
    }

    #[test]
    fn invalid_tokens_name_the_file() {
        let error = format(Code::from(quote!(struct;)), "h", "x.rs").unwrap_err();
        assert!(error.to_string().contains("x.rs"), "{error}");
    }
}
