//! Tokens to files: formatted source text with the generated-file header ([`mod@format`]),
//! written only where changed and atomically ([`mod@write`]).

pub mod format;
pub mod write;
