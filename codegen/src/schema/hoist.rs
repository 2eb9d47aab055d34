//! Inline types to definitions: an object with members, an `enum`, a `oneOf` or an `anyOf` of
//! several arms written in place (at any depth) moves into `$defs` under a name made from its
//! path (`Outer` member `inner` → `OuterInner`; array items add `Item`, map values `Value`,
//! union arms their tag or `Arm{n}`), and a `$ref` takes its place. Names that are taken get
//! `2`, `3`, ... Each moved definition remembers the JSON pointer it came from, so errors still
//! point into the file as written.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;
use serde_json::{Map, Value};

use crate::schema::resolve::push;

/// The document with every inline type moved into `$defs`, and where each moved one was.
pub struct Hoisted {
    /// The rewritten document.
    pub doc: Value,
    /// Moved definition name → JSON pointer of the node it was in the original document.
    pub origins: BTreeMap<String, String>,
}

/// Moves the inline types of `doc`; a document without any comes back unchanged.
pub fn hoist(doc: &Value) -> Hoisted {
    let mut doc = doc.clone();
    let mut origins = BTreeMap::new();
    let Some(Value::Object(defs)) = doc.get_mut("$defs") else {
        return Hoisted { doc, origins };
    };
    let mut taken: BTreeSet<String> = defs.keys().cloned().collect();
    let mut moved = Vec::new();
    let names: Vec<String> = defs.keys().cloned().collect();
    for name in names {
        let pointer = push("/$defs", &name);
        let node = defs.get_mut(&name).expect("listed");
        walk_def(node, &name, &pointer, &mut taken, &mut moved);
    }
    for (name, pointer, node) in moved {
        origins.insert(name.clone(), pointer);
        defs.insert(name, node);
    }
    Hoisted { doc, origins }
}

// The places inside one definition where a type may be written in place.
fn walk_def(
    node: &mut Value,
    name: &str,
    pointer: &str,
    taken: &mut BTreeSet<String>,
    moved: &mut Vec<(String, String, Value)>,
) {
    let Value::Object(map) = node else { return };
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        let props_pointer = push(pointer, "properties");
        for (member, schema) in props.iter_mut() {
            let at = push(&props_pointer, member);
            place(
                schema,
                &format!("{name}{}", camel(member)),
                &at,
                taken,
                moved,
            );
        }
    }
    if let Some(items) = map.get_mut("items") {
        place(
            items,
            &format!("{name}Item"),
            &push(pointer, "items"),
            taken,
            moved,
        );
    }
    if let Some(values @ Value::Object(_)) = map.get_mut("additionalProperties") {
        let at = push(pointer, "additionalProperties");
        place(values, &format!("{name}Value"), &at, taken, moved);
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(arms)) = map.get_mut(keyword) {
            let arms_pointer = push(pointer, keyword);
            // `anyOf [X, null]` is X, nullable: X is named for the place itself.
            let wrapper = keyword == "anyOf" && arms.iter().filter(|a| !is_null(a)).count() == 1;
            for (index, arm) in arms.iter_mut().enumerate() {
                let at = push(&arms_pointer, &index.to_string());
                let arm_name = match wrapper {
                    true => name.to_owned(),
                    false => format!("{name}{}", arm_label(arm, index)),
                };
                if keyword == "oneOf" {
                    // A tagged union's arms stay in place: their members are walked.
                    walk_def(arm, &arm_name, &at, taken, moved);
                } else {
                    place(arm, &arm_name, &at, taken, moved);
                }
            }
        }
    }
}

// A schema in a place where a type is used: moved out when it is an inline type, else walked.
fn place(
    schema: &mut Value,
    name: &str,
    pointer: &str,
    taken: &mut BTreeSet<String>,
    moved: &mut Vec<(String, String, Value)>,
) {
    let Value::Object(map) = schema else { return };
    if !is_inline_type(map) {
        // A nullable wrapper, an array, a map: its own inner places.
        walk_def(schema, name, pointer, taken, moved);
        return;
    }
    let claimed = claim(taken, name);
    let mut def = std::mem::take(map);
    // `type: ["object", "null"]` with members: the definition is the object, the use nullable.
    let nullable = match def.get_mut("type") {
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let only = types.remove(0);
                def.insert("type".into(), only);
            }
            true
        }
        _ => false,
    };
    let reference = Value::String(push("#/$defs", &claimed));
    let mut use_site = Map::new();
    for keyword in ["description", "x-msp-stability"] {
        if let Some(value) = def.get(keyword) {
            use_site.insert(keyword.into(), value.clone());
        }
    }
    if nullable {
        let arms = vec![
            Value::Object(Map::from_iter([("$ref".to_owned(), reference)])),
            serde_json::json!({"type": "null"}),
        ];
        use_site.insert("anyOf".into(), Value::Array(arms));
    } else {
        use_site.insert("$ref".into(), reference);
    }
    *map = use_site;
    let mut def = Value::Object(def);
    walk_def(&mut def, &claimed, pointer, taken, moved);
    moved.push((claimed, pointer.to_owned(), def));
}

fn is_inline_type(map: &Map<String, Value>) -> bool {
    if map.contains_key("$ref") {
        return false;
    }
    let members = map
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let several_arms = map
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|arms| arms.iter().filter(|a| !is_null(a)).count() > 1);
    members || map.contains_key("enum") || map.contains_key("oneOf") || several_arms
}

// An arm's name part: the value of its `const` member (a tag), else its position.
fn arm_label(arm: &Value, index: usize) -> String {
    arm.get("properties")
        .and_then(Value::as_object)
        .and_then(|props| {
            props
                .values()
                .find_map(|p| p.get("const").and_then(Value::as_str))
        })
        .map(camel)
        .filter(|label| !label.is_empty())
        .unwrap_or_else(|| format!("Arm{index}"))
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

fn camel(text: &str) -> String {
    text.to_upper_camel_case()
}

fn claim(taken: &mut BTreeSet<String>, name: &str) -> String {
    if taken.insert(name.to_owned()) {
        return name.to_owned();
    }
    (2..)
        .map(|n| format!("{name}{n}"))
        .find(|candidate| taken.insert(candidate.clone()))
        .expect("some number is free")
}
