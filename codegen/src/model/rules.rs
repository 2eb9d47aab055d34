//! The mapping rules of the MSP dialect: a schema node to a definition kind or a type.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::names::{field_name, type_name, Scope};
use super::passes::json_type;
use super::*;
use crate::error::{Error, ErrorKind};
use crate::schema::resolve::{check_keywords, push, Schema};

// A schema node: an object, or `true` (anything, as `{}`); `false` admits nothing and is refused.
pub(crate) fn object<'a>(node: &'a Value, pointer: &str) -> Result<&'a Map<String, Value>, Error> {
    static ANYTHING: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    match node {
        Value::Object(map) => Ok(map),
        Value::Bool(true) => Ok(&ANYTHING),
        Value::Bool(false) => Err(Error::at(
            ErrorKind::Unsupported,
            pointer,
            "the schema `false` admits no value, so it cannot be a type",
        )
        .help("leave the member out of `properties` instead")),
        _ => Err(Error::at(
            ErrorKind::Unsupported,
            pointer,
            "expected a schema object",
        )),
    }
}

pub(crate) fn text(node: &Map<String, Value>, key: &str) -> Option<String> {
    node.get(key).and_then(Value::as_str).map(str::to_owned)
}

pub(crate) fn is_experimental(node: &Map<String, Value>) -> bool {
    node.get("x-msp-stability").and_then(Value::as_str) == Some("experimental")
}

pub(crate) fn openness(node: &Map<String, Value>, pointer: &str) -> Result<bool, Error> {
    match node.get("x-msp-openness").map(|v| v.as_str()) {
        None | Some(Some("closed")) => Ok(false),
        Some(Some("open")) => Ok(true),
        Some(_) => Err(Error::at(
            ErrorKind::Unsupported,
            &push(pointer, "x-msp-openness"),
            "`x-msp-openness` must be \"open\" or \"closed\"",
        )),
    }
}

pub(crate) fn def_kind(
    schema: &Schema<'_>,
    node: &Map<String, Value>,
    pointer: &str,
    rust: &str,
) -> Result<DefKind, Error> {
    if let Some(values) = node.get("enum") {
        return string_enum(node, values, pointer).map(DefKind::Enum);
    }
    if let Some(arms) = node.get("oneOf") {
        return tagged(schema, node, arms, pointer, rust).map(DefKind::Tagged);
    }
    let multi_type = node
        .get("type")
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().filter(|t| t.as_str() != Some("null")).count() > 1);
    let any_of = node.get("anyOf").and_then(Value::as_array);
    let non_null_arms = any_of.map_or(0, |arms| arms.iter().filter(|a| !is_null(a)).count());
    if multi_type || non_null_arms > 1 {
        return untagged(schema, node, pointer).map(DefKind::Untagged);
    }
    if node.get("type").and_then(Value::as_str) == Some("object")
        && !matches!(node.get("additionalProperties"), Some(Value::Object(_)))
    {
        return structure(schema, node, pointer).map(DefKind::Struct);
    }
    let (ty, nullable, _) = ty_of(schema, node, pointer)?;
    Ok(DefKind::Alias(if nullable {
        Ty::Nullable(Box::new(ty))
    } else {
        ty
    }))
}

pub(crate) fn string_enum(
    node: &Map<String, Value>,
    values: &Value,
    pointer: &str,
) -> Result<StringEnum, Error> {
    let pointer_enum = push(pointer, "enum");
    let values = values.as_array().ok_or_else(|| {
        Error::at(
            ErrorKind::Unsupported,
            &pointer_enum,
            "`enum` must be an array",
        )
    })?;
    let open = openness(node, pointer)?;
    let docs = value_docs(
        node.get("description")
            .and_then(Value::as_str)
            .unwrap_or(""),
    );
    let mut scope = Scope::default();
    let unknown_variant = "Unknown".to_owned();
    if open {
        scope = Scope::with_reserved(&["Unknown"]);
    }
    let mut variants = Vec::new();
    let mut seen = BTreeSet::new();
    for (index, value) in values.iter().enumerate() {
        let wire = value.as_str().ok_or_else(|| {
            Error::at(
                ErrorKind::Unsupported,
                &push(&pointer_enum, &index.to_string()),
                "only string enumerations can be mapped",
            )
            .help("use strings, or model the values as a `const` union")
        })?;
        if !seen.insert(wire) {
            continue;
        }
        let base = type_name(wire);
        let base = if open && base == "Unknown" {
            "UnknownValue".to_owned()
        } else {
            base
        };
        variants.push(Variant {
            wire: wire.to_owned(),
            rust: scope.claim(base),
            doc: docs.get(wire).cloned(),
        });
    }
    Ok(StringEnum {
        open,
        variants,
        unknown_variant,
    })
}

/// `- `value`: text` lines of an enum's description document its values.
pub(crate) fn value_docs(description: &str) -> BTreeMap<String, String> {
    description
        .lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("- `")?;
            let (value, doc) = rest.split_once('`')?;
            let doc = doc.trim_start().strip_prefix(':')?.trim();
            Some((value.to_owned(), doc.to_owned()))
        })
        .collect()
}

pub(crate) fn tagged(
    schema: &Schema<'_>,
    node: &Map<String, Value>,
    arms: &Value,
    pointer: &str,
    rust: &str,
) -> Result<Tagged, Error> {
    let arms_pointer = push(pointer, "oneOf");
    let arms = arms.as_array().ok_or_else(|| {
        Error::at(
            ErrorKind::Unsupported,
            &arms_pointer,
            "`oneOf` must be an array",
        )
    })?;
    // An arm is written in place or as a `$ref` to a definition (the usual way to write a
    // tagged union): either way its object is read the same.
    let arm_nodes: Vec<(String, &Map<String, Value>)> = arms
        .iter()
        .enumerate()
        .map(|(i, arm)| {
            let p = push(&arms_pointer, &i.to_string());
            let arm = object(arm, &p)?;
            match arm.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    let target = schema.ref_target(reference, &p)?;
                    let target_pointer = schema.pointer_of(target);
                    object(schema.defs[target], &target_pointer).map(|a| (target_pointer, a))
                }
                None => Ok((p, arm)),
            }
        })
        .collect::<Result<_, _>>()?;
    let tag = common_const_member(&arm_nodes).ok_or_else(|| {
        Error::at(
            ErrorKind::Unsupported,
            &arms_pointer,
            "`oneOf` arms must be objects told apart by a member with a `const` string value",
        )
        .help("give every arm the same member with a distinct `const`, or use `anyOf`")
    })?;
    let mut variant_names = Scope::default();
    let mut result = Vec::new();
    let mut seen = BTreeSet::new();
    for (arm_pointer, arm) in &arm_nodes {
        check_keywords(arm, arm_pointer)?;
        let tag_value = const_of(arm, &tag).unwrap_or_default().to_owned();
        if !seen.insert(tag_value.clone()) {
            return Err(Error::at(
                ErrorKind::Unsupported,
                &push(&push(&push(arm_pointer, "properties"), &tag), "const"),
                format!("two `oneOf` arms use the tag value \"{tag_value}\""),
            ));
        }
        let mut body = structure(schema, arm, arm_pointer)?;
        body.fields.retain(|f| f.wire != tag);
        let variant = variant_names.claim(type_name(&tag_value));
        result.push(TaggedArm {
            struct_name: format!("{rust}{variant}"),
            rust: variant,
            doc: text(arm, "description"),
            tag_value,
            body,
            experimental: false,
        });
    }
    Ok(Tagged {
        tag,
        open: openness(node, pointer)?,
        arms: result,
    })
}

/// The `const` string of member `name` of an object schema, if it has one.
fn const_of<'a>(arm: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    arm.get("properties")?.get(name)?.get("const")?.as_str()
}

pub(crate) fn common_const_member(arms: &[(String, &Map<String, Value>)]) -> Option<String> {
    let (_, first) = arms.first()?;
    let candidates = first.get("properties")?.as_object()?;
    candidates
        .iter()
        .filter(|(_, prop)| prop.get("const").and_then(Value::as_str).is_some())
        .map(|(name, _)| name.clone())
        .find(|name| {
            arms.iter().all(|(_, arm)| {
                let required = arm
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(name)));
                required && const_of(arm, name).is_some()
            })
        })
}

pub(crate) fn untagged(
    schema: &Schema<'_>,
    node: &Map<String, Value>,
    pointer: &str,
) -> Result<Vec<Arm>, Error> {
    let mut scope = Scope::default();
    let mut arms = Vec::new();
    if let Some(types) = node.get("type").and_then(Value::as_array) {
        for t in types
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
        {
            let ty = primitive(t, &push(pointer, "type"))?;
            arms.push(Arm {
                rust: scope.claim(type_name(t)),
                ty,
                experimental: false,
                doc: None,
            });
        }
        return Ok(arms);
    }
    let any_of = node
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for (index, arm) in any_of.enumerate() {
        if is_null(arm) {
            continue;
        }
        let arm_pointer = push(&push(pointer, "anyOf"), &index.to_string());
        let arm_node = object(arm, &arm_pointer)?;
        check_keywords(arm_node, &arm_pointer)?;
        let (ty, _, _) = ty_of(schema, arm_node, &arm_pointer)?;
        let name = match &ty {
            Ty::Ref(target) => type_name(target),
            Ty::Array(_) => "List".to_owned(),
            Ty::Map(_) | Ty::Object => "Object".to_owned(),
            other => type_name(json_type(other)),
        };
        arms.push(Arm {
            rust: scope.claim(name),
            ty,
            experimental: false,
            doc: text(arm_node, "description"),
        });
    }
    Ok(arms)
}

pub(crate) fn is_null(node: &Value) -> bool {
    node.get("type").and_then(Value::as_str) == Some("null")
}

pub(crate) fn structure(
    schema: &Schema<'_>,
    node: &Map<String, Value>,
    pointer: &str,
) -> Result<Struct, Error> {
    let empty = Map::new();
    let props = match node.get("properties") {
        None => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(Error::at(
                ErrorKind::Unsupported,
                &push(pointer, "properties"),
                "`properties` must be an object",
            ))
        }
    };
    let required: BTreeSet<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if let Some(missing) = required.iter().find(|name| !props.contains_key(**name)) {
        return Err(Error::at(
            ErrorKind::Unsupported,
            &push(pointer, "required"),
            format!("`required` lists `{missing}`, which `properties` does not define"),
        )
        .help("add the property, or drop it from `required`"));
    }
    let mut scope = Scope::default();
    let mut fields = Vec::new();
    let mut wires: Vec<&String> = props.keys().collect();
    wires.sort();
    for wire in wires {
        let prop_pointer = push(&push(pointer, "properties"), wire);
        let prop = object(&props[wire], &prop_pointer)?;
        check_keywords(prop, &prop_pointer)?;
        let (ty, nullable, checks) = ty_of(schema, prop, &prop_pointer)?;
        let kind = match (required.contains(wire.as_str()), nullable) {
            (true, false) => FieldKind::Required,
            (true, true) => FieldKind::RequiredNullable,
            (false, false) => FieldKind::Optional,
            (false, true) => FieldKind::OptionalNullable,
        };
        fields.push(Field {
            wire: wire.clone(),
            rust: scope.claim(field_name(wire)),
            doc: text(prop, "description"),
            ty,
            kind,
            checks,
            // Marked on the member itself; members whose type is experimental join later.
            experimental: is_experimental(prop),
            boxed: false,
        });
    }
    let unknown_field = ["unknown", "unknown_members", "unknown_fields"]
        .into_iter()
        .find(|name| !scope.contains(name))
        .map_or_else(|| scope.claim("unknown".into()), str::to_owned);
    Ok(Struct {
        fields,
        unknown_field,
        dependent_required: dependent_required(node, pointer, props)?,
        builder: String::new(),
    })
}

pub(crate) fn dependent_required(
    node: &Map<String, Value>,
    pointer: &str,
    props: &Map<String, Value>,
) -> Result<Vec<(String, Vec<String>)>, Error> {
    let Some(dependent) = node.get("dependentRequired") else {
        return Ok(Vec::new());
    };
    let p = push(pointer, "dependentRequired");
    let bad = || {
        Error::at(
            ErrorKind::Unsupported,
            &p,
            "`dependentRequired` must map members to lists of members",
        )
    };
    let mut out = Vec::new();
    for (member, needs) in dependent.as_object().ok_or_else(bad)? {
        let needs: Vec<String> = needs
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|n| n.as_str().map(str::to_owned).ok_or_else(bad))
            .collect::<Result<_, _>>()?;
        if let Some(unknown) = std::iter::once(member)
            .chain(&needs)
            .find(|m| !props.contains_key(*m))
        {
            return Err(Error::at(
                ErrorKind::Unsupported,
                &p,
                format!(
                    "`dependentRequired` names `{unknown}`, which `properties` does not define"
                ),
            ));
        }
        out.push((member.clone(), needs));
    }
    Ok(out)
}

pub(crate) fn primitive(name: &str, pointer: &str) -> Result<Ty, Error> {
    Ok(match name {
        "string" => Ty::String,
        "integer" => Ty::Integer,
        "number" => Ty::Number,
        "boolean" => Ty::Boolean,
        "object" => Ty::Object,
        "array" => Ty::Array(Box::new(Ty::Any)),
        other => {
            return Err(Error::at(
                ErrorKind::Unsupported,
                pointer,
                format!("type `{other}` cannot be mapped"),
            ))
        }
    })
}

/// The type of a schema node, whether it admits `null`, and its constraints.
pub(crate) fn ty_of(
    schema: &Schema<'_>,
    node: &Map<String, Value>,
    pointer: &str,
) -> Result<(Ty, bool, Checks), Error> {
    let checks = checks(node, pointer)?;
    if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        let target = schema.ref_target(reference, pointer)?;
        return Ok((Ty::Ref(target.to_owned()), false, checks));
    }
    for keyword in ["oneOf", "enum"] {
        if node.contains_key(keyword) {
            return Err(Error::at(
                ErrorKind::Unsupported,
                &push(pointer, keyword),
                format!(
                    "an inline `{keyword}` cannot be named; move it into `$defs` and refer to it"
                ),
            ));
        }
    }
    if let Some(arms) = node.get("anyOf").and_then(Value::as_array) {
        let non_null: Vec<(usize, &Value)> = arms
            .iter()
            .enumerate()
            .filter(|(_, a)| !is_null(a))
            .collect();
        let [(index, arm)] = non_null.as_slice() else {
            return Err(Error::at(
                ErrorKind::Unsupported,
                &push(pointer, "anyOf"),
                "an inline `anyOf` with several non-null arms cannot be named",
            )
            .help("move the union into `$defs` and refer to it"));
        };
        let arm_pointer = push(&push(pointer, "anyOf"), &index.to_string());
        let arm = object(arm, &arm_pointer)?;
        check_keywords(arm, &arm_pointer)?;
        let (ty, nullable, arm_checks) = ty_of(schema, arm, &arm_pointer)?;
        let checks = if checks.is_empty() {
            arm_checks
        } else {
            checks
        };
        return Ok((ty, nullable || non_null.len() < arms.len(), checks));
    }
    let (types, nullable): (Vec<&str>, bool) = match node.get("type") {
        None => {
            let ty = if node.contains_key("const") {
                Ty::String
            } else {
                Ty::Any
            };
            return Ok((ty, false, checks));
        }
        Some(Value::String(t)) => (vec![t.as_str()], false),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            let non_null: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
            (non_null, names.contains(&"null"))
        }
        Some(_) => {
            return Err(Error::at(
                ErrorKind::Unsupported,
                &push(pointer, "type"),
                "`type` must be a string or an array of strings",
            ))
        }
    };
    let [one] = types.as_slice() else {
        let arms = types
            .iter()
            .map(|t| match *t {
                "array" | "object" => Err(Error::at(
                    ErrorKind::Unsupported,
                    &push(pointer, "type"),
                    "an inline value of several types, one of them structured, cannot be named",
                )
                .help("move it into `$defs` and refer to it")),
                other => primitive(other, &push(pointer, "type")),
            })
            .collect::<Result<_, _>>()?;
        return Ok((Ty::Inline(arms), nullable, checks));
    };
    let ty = match *one {
        "array" => Ty::Array(Box::new(match node.get("items") {
            None => Ty::Any,
            Some(items) => {
                let items_pointer = push(pointer, "items");
                let items = object(items, &items_pointer)?;
                check_keywords(items, &items_pointer)?;
                let (ty, nullable, _) = ty_of(schema, items, &items_pointer)?;
                if nullable {
                    Ty::Nullable(Box::new(ty))
                } else {
                    ty
                }
            }
        })),
        "object" => object_ty(schema, node, pointer)?,
        other => primitive(other, &push(pointer, "type"))?,
    };
    Ok((ty, nullable, checks))
}

pub(crate) fn object_ty(
    schema: &Schema<'_>,
    node: &Map<String, Value>,
    pointer: &str,
) -> Result<Ty, Error> {
    let has_members = node
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if has_members {
        return Err(Error::at(
            ErrorKind::Unsupported,
            &push(pointer, "properties"),
            "an inline object with members cannot be named",
        )
        .help("move it into `$defs` and refer to it"));
    }
    match node.get("additionalProperties") {
        Some(Value::Object(values)) => {
            let values_pointer = push(pointer, "additionalProperties");
            check_keywords(values, &values_pointer)?;
            let (ty, nullable, _) = ty_of(schema, values, &values_pointer)?;
            let ty = if nullable {
                Ty::Nullable(Box::new(ty))
            } else {
                ty
            };
            Ok(Ty::Map(Box::new(ty)))
        }
        _ => Ok(Ty::Object),
    }
}

pub(crate) fn checks(node: &Map<String, Value>, pointer: &str) -> Result<Checks, Error> {
    let pattern = match node.get("pattern") {
        None => None,
        Some(Value::String(p)) => {
            crate::pattern::parse_pattern(p).map_err(|why| {
                Error::at(
                    ErrorKind::Unsupported,
                    &push(pointer, "pattern"),
                    format!("pattern \"{p}\" is outside the supported subset: {why}"),
                )
            })?;
            Some(p.clone())
        }
        Some(_) => {
            return Err(Error::at(
                ErrorKind::Unsupported,
                &push(pointer, "pattern"),
                "`pattern` must be a string",
            ))
        }
    };
    let bound = |key: &str| -> Result<Option<f64>, Error> {
        match node.get(key) {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                Error::at(
                    ErrorKind::Unsupported,
                    &push(pointer, key),
                    format!("`{key}` must be a number"),
                )
            }),
        }
    };
    let count = |key: &str| -> Result<Option<u64>, Error> {
        match node.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                Error::at(
                    ErrorKind::Unsupported,
                    &push(pointer, key),
                    format!("`{key}` must be a non-negative integer"),
                )
            }),
        }
    };
    let multiple_of = bound("multipleOf")?;
    if multiple_of.is_some_and(|m| m <= 0.0) {
        return Err(Error::at(
            ErrorKind::Unsupported,
            &push(pointer, "multipleOf"),
            "`multipleOf` must be greater than 0",
        ));
    }
    let unique_items = match node.get("uniqueItems") {
        None => false,
        Some(Value::Bool(unique)) => *unique,
        Some(_) => {
            return Err(Error::at(
                ErrorKind::Unsupported,
                &push(pointer, "uniqueItems"),
                "`uniqueItems` must be a boolean",
            ))
        }
    };
    Ok(Checks {
        pattern,
        minimum: bound("minimum")?,
        maximum: bound("maximum")?,
        exclusive_minimum: bound("exclusiveMinimum")?,
        exclusive_maximum: bound("exclusiveMaximum")?,
        multiple_of,
        min_length: count("minLength")?,
        max_length: count("maxLength")?,
        min_items: count("minItems")?,
        max_items: count("maxItems")?,
        unique_items,
        min_properties: count("minProperties")?,
        max_properties: count("maxProperties")?,
    })
}
