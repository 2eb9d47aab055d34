//! Wire names to Rust identifiers: keywords, collisions and odd values, deterministically.

use std::collections::BTreeSet;

use heck::{ToSnakeCase, ToUpperCamelCase};

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "crate", "do", "dyn", "else",
    "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop",
    "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "self",
    "static", "struct", "super", "trait", "true", "try", "type", "typeof", "unsafe", "unsized",
    "use", "virtual", "where", "while", "yield", "abstract", "become", "union",
];

/// Names the generated code uses unqualified (the std prelude's types and traits, the serde and
/// serde_json items it imports); a definition named so would shadow them through the modules'
/// glob imports, so it gets `Type` added.
const PRELUDE: &[&str] = &[
    // std's prelude
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "Self",
    "Default",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "Into",
    "TryFrom",
    "TryInto",
    "AsRef",
    "AsMut",
    "Iterator",
    "IntoIterator",
    "Extend",
    "FromIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "ToOwned",
    "ToString",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "Hash",
    "Debug",
    // what the generated modules import
    "Serialize",
    "Deserialize",
    "Serializer",
    "Deserializer",
    "DeserializeOwned",
    "DeserializeSeed",
    "SerializeMap",
    "MapAccess",
    "Visitor",
    "Value",
    "Map",
    "Number",
    "RawValue",
    "Cow",
    "BTreeMap",
    "Id",
];

/// A Rust field name for a wire member name.
pub fn field_name(wire: &str) -> String {
    let snake = identifier_chars(&wire.to_snake_case(), '_');
    let snake = if snake.is_empty() {
        "field".to_owned()
    } else {
        snake
    };
    let snake = if snake.starts_with(|c: char| c != '_' && !unicode_ident::is_xid_start(c)) {
        format!("n{snake}")
    } else {
        snake
    };
    if KEYWORDS.contains(&snake.as_str()) {
        format!("{snake}_")
    } else {
        snake
    }
}

/// A Rust type name for a definition; prelude names, and names like the generated code's type
/// parameters (one capital letter, `T0`, `T1`, ...), get a `Type` suffix.
pub fn def_name(wire: &str) -> String {
    let camel = type_name(wire);
    let generic = camel.len() == 1
        || camel
            .strip_prefix('T')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if generic || PRELUDE.contains(&camel.as_str()) {
        format!("{camel}Type")
    } else {
        camel
    }
}

/// A Rust variant (or type) name for an enum value or a name.
pub fn type_name(wire: &str) -> String {
    let negative = wire.starts_with('-');
    let camel = identifier_chars(&wire.to_upper_camel_case(), '\0');
    let camel = match camel.as_str() {
        "" => "Empty".to_owned(),
        c if c.starts_with(|c: char| !unicode_ident::is_xid_start(c)) => {
            format!("{}{c}", if negative { "Minus" } else { "V" })
        }
        _ => camel,
    };
    if camel == "Self" {
        "SelfValue".to_owned()
    } else {
        camel
    }
}

// Letters of any script are kept (Rust identifiers may hold them, and the lints accept them
// once the case is converted); other characters are dropped, or replaced by `replacement`.
fn identifier_chars(text: &str, replacement: char) -> String {
    text.chars()
        .filter_map(|c| {
            if c == '_' || unicode_ident::is_xid_continue(c) {
                Some(c)
            } else if replacement == '\0' {
                None
            } else {
                Some(replacement)
            }
        })
        .collect()
}

/// Hands out names within one scope, suffixing a number on collision.
#[derive(Default)]
pub struct Scope {
    taken: BTreeSet<String>,
}

impl Scope {
    /// A scope where `reserved` names are already taken.
    pub fn with_reserved(reserved: &[&str]) -> Self {
        Scope {
            taken: reserved.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// `name`, or `name2`, `name3`, ... when taken.
    pub fn claim(&mut self, name: String) -> String {
        if self.taken.insert(name.clone()) {
            return name;
        }
        let sep = if name.ends_with(|c: char| c.is_ascii_digit()) {
            "_"
        } else {
            ""
        };
        (2..)
            .map(|n| format!("{name}{sep}{n}"))
            .find(|candidate| self.taken.insert(candidate.clone()))
            .unwrap_or(name)
    }

    /// Whether `name` is taken.
    pub fn contains(&self, name: &str) -> bool {
        self.taken.contains(name)
    }
}

/// Type names the generated crate root uses for itself; definitions yield to them (a
/// definition named `Frame` becomes `Frame2`).
pub const ROOT_RESERVED: &[&str] = &[
    "Tristate",
    "StringEnum",
    "UnknownValue",
    "Validate",
    "Violation",
    "ClientRequest",
    "ServerRequest",
    "ProtocolNotification",
    "ClientResult",
    "ServerResult",
    "Message",
    "Frame",
    "Sender",
];

/// Module names the generated crate root uses for itself; an area (a method namespace) named
/// so gets `_area` added.
pub const ROOT_MODULES: &[&str] = &[
    "rpc",
    "support",
    "protocol",
    "registry",
    "methods",
    "requests",
    "notifications",
    "common",
    "json_schema",
    "reflect",
    "sample",
    "pattern",
    "pointer",
    "members",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_avoid_keywords_and_odd_characters() {
        assert_eq!(field_name("decidedAt"), "decided_at");
        assert_eq!(field_name("type"), "type_");
        assert_eq!(field_name("base64Data"), "base64_data");
        assert_eq!(field_name("$schema"), "schema");
        assert_eq!(field_name("2fa"), "n2fa");
        assert_eq!(field_name(""), "field");
    }

    #[test]
    fn types_and_variants_are_identifiers() {
        assert_eq!(type_name("allow_once"), "AllowOnce");
        assert_eq!(type_name("-32700"), "Minus32700");
        assert_eq!(type_name("32700"), "V32700");
        assert_eq!(type_name("file://"), "File");
        assert_eq!(type_name(""), "Empty");
        assert_eq!(type_name("self"), "SelfValue");
        assert_eq!(type_name("none"), "None");
        assert_eq!(def_name("Option"), "OptionType");
    }

    #[test]
    fn collisions_get_numbers() {
        let mut scope = Scope::with_reserved(&["Unknown"]);
        assert_eq!(scope.claim("Unknown".into()), "Unknown2");
        assert_eq!(scope.claim("A".into()), "A");
        assert_eq!(scope.claim("A".into()), "A2");
        assert_eq!(scope.claim("V1".into()), "V1");
        assert_eq!(scope.claim("V1".into()), "V1_2");
    }
}
