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
    Ok(format!("// {header}\n\n{}", prettyplease::unparse(&file)))
}
