//! `$ref` resolution and keyword checks over the raw schema, with a JSON pointer for every node.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind};

/// Keywords that shape the generated types.
pub const TYPING: &[&str] = &[
    "$ref",
    "type",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "x-msp-openness",
    "x-msp-stability",
];

/// Keywords that constrain values without changing the types: checked by `validate()` where a
/// member carries them (see the dialect).
pub const VALIDATION: &[&str] = &[
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "dependentRequired",
];

/// Keywords that annotate without changing the types.
pub const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "examples",
    "$comment",
    "default",
    "deprecated",
    "format",
    "readOnly",
    "writeOnly",
    "x-msp-descriptor",
];

/// The schema's definitions by name, sorted, with checked references.
pub struct Schema<'a> {
    /// The whole document.
    pub root: &'a Map<String, Value>,
    /// `$defs`, sorted by name.
    pub defs: BTreeMap<&'a str, &'a Value>,
    /// Definitions moved out of place ([`crate::schema::hoist`]) → the pointer they were written at.
    pub origins: BTreeMap<String, String>,
}

/// JSON pointer of `parent` extended by `token`.
pub fn push(parent: &str, token: &str) -> String {
    let mut pointer = parent.to_owned();
    push_token(&mut pointer, token);
    pointer
}

/// Appends `/token` to `pointer`, escaped as RFC 6901 asks.
fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    if token.contains(['~', '/']) {
        pointer.push_str(&token.replace('~', "~0").replace('/', "~1"));
    } else {
        pointer.push_str(token);
    }
}

impl<'a> Schema<'a> {
    /// The JSON pointer definition `name` was written at (its place before hoisting, if moved).
    pub fn pointer_of(&self, name: &str) -> String {
        match self.origins.get(name) {
            Some(origin) => origin.clone(),
            None => push("/$defs", name),
        }
    }

    /// Checks the document's top-level shape and every `$ref` in it.
    pub fn new(doc: &'a Value) -> Result<Self, Error> {
        let root = doc.as_object().ok_or_else(|| {
            Error::at(
                ErrorKind::Unsupported,
                "",
                "the schema must be a JSON object",
            )
        })?;
        let defs = match root.get("$defs") {
            None => BTreeMap::new(),
            Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            Some(_) => {
                return Err(Error::at(
                    ErrorKind::Unsupported,
                    "/$defs",
                    "`$defs` must be an object",
                ))
            }
        };
        let schema = Schema {
            root,
            defs,
            origins: BTreeMap::new(),
        };
        schema.check_refs(doc, &mut String::new())?;
        schema.check_alias_cycles()?;
        Ok(schema)
    }

    /// The definition name a `$ref` at `pointer` names.
    pub fn ref_target(&self, reference: &str, pointer: &str) -> Result<&'a str, Error> {
        let name = reference
            .strip_prefix("#/$defs/")
            .map(|n| n.replace("~1", "/").replace("~0", "~"));
        match name.and_then(|n| self.defs.get_key_value(n.as_str()).map(|(k, _)| *k)) {
            Some(name) => Ok(name),
            None => Err(Error::at(
                ErrorKind::Reference,
                &push(pointer, "$ref"),
                format!("`$ref` \"{reference}\" does not resolve"),
            )
            .help("point it at an entry of `$defs`, as `#/$defs/Name`")),
        }
    }

    // `pointer` is one buffer grown and cut back on the way down: the walk visits every node of
    // the document, and a new string per node was a visible share of generation time.
    fn check_refs(&self, node: &Value, pointer: &mut String) -> Result<(), Error> {
        match node {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref") {
                    let reference = reference.as_str().ok_or_else(|| {
                        Error::at(
                            ErrorKind::Reference,
                            &push(pointer, "$ref"),
                            "`$ref` must be a string",
                        )
                    })?;
                    self.ref_target(reference, pointer)?;
                }
                for (key, value) in map {
                    // Examples are data, not schema: a `$ref` member there is a value.
                    if key != "examples" && key != "enum" && key != "const" && key != "default" {
                        let len = pointer.len();
                        push_token(pointer, key);
                        self.check_refs(value, pointer)?;
                        pointer.truncate(len);
                    }
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    let len = pointer.len();
                    push_token(pointer, &index.to_string());
                    self.check_refs(item, pointer)?;
                    pointer.truncate(len);
                }
            }
            _ => {}
        }
        Ok(())
    }

    // A definition that is only a `$ref` to another must end in a real type.
    fn check_alias_cycles(&self) -> Result<(), Error> {
        for start in self.defs.keys() {
            let mut seen = vec![*start];
            let mut current = *start;
            while let Some(reference) = self.defs[current].get("$ref").and_then(Value::as_str) {
                let pointer = push("/$defs", current);
                current = self.ref_target(reference, &pointer)?;
                if seen.contains(&current) {
                    return Err(Error::at(
                        ErrorKind::Reference,
                        &push(&pointer, "$ref"),
                        format!(
                            "definitions {} refer to each other in a cycle with no type",
                            seen.join(" -> ")
                        ),
                    ));
                }
                seen.push(current);
            }
        }
        Ok(())
    }
}

/// Rejects keywords the generator does not know, unless they are vendor annotations.
pub fn check_keywords(node: &Map<String, Value>, pointer: &str) -> Result<(), Error> {
    for key in node.keys() {
        let known = [TYPING, VALIDATION, ANNOTATIONS]
            .iter()
            .any(|list| list.contains(&key.as_str()));
        if !known && !key.starts_with("x-") {
            return Err(Error::at(
                ErrorKind::UnknownKeyword,
                &push(pointer, key),
                format!(
                    "keyword `{key}` is not supported here: it would change the generated types"
                ),
            )
            .help(format!(
                "the generator maps: {}; checks: {}; remove `{key}` or extend the generator",
                TYPING.join(", "),
                VALIDATION.join(", ")
            )));
        }
    }
    Ok(())
}
