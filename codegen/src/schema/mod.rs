//! The schema as read: text to JSON ([`load`]), inline types moved into `$defs` ([`hoist`]),
//! `$ref`s resolved and keywords checked, every node with its JSON pointer ([`resolve`]).

pub mod hoist;
pub mod load;
pub mod resolve;
