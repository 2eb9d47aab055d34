//! The resolved schema to the checked model: every mapping rule of the MSP dialect lives here.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorKind};
use crate::model::*;
use crate::naming::{def_name, field_name, type_name, Scope};
use crate::resolve::{check_keywords, push, Schema};

/// Names the generated crate root uses for itself; definitions yield to them.
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

/// Checks a schema document, moves its inline types into `$defs` and builds the model.
pub fn build_document(doc: &Value) -> Result<Model, Error> {
    // References and shapes are checked where they were written, before anything moves.
    let original = Schema::new(doc)?;
    let hoisted = crate::hoist::hoist(doc);
    if hoisted.origins.is_empty() {
        return build(&original, original.root);
    }
    let mut schema = Schema::new(&hoisted.doc)?;
    schema.origins = hoisted.origins;
    build(&schema, original.root)
}

/// Builds the model of the whole schema; the content hash is that of `as_written`.
pub fn build(schema: &Schema<'_>, as_written: &Map<String, Value>) -> Result<Model, Error> {
    // The fingerprint reads the whole document and needs nothing else: work it out meanwhile.
    std::thread::scope(|scope| {
        let fingerprint = scope.spawn(|| fingerprint(as_written));
        let model = build_model(schema)?;
        let fingerprint = match fingerprint.join() {
            Ok(fingerprint) => fingerprint,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        Ok(Model {
            fingerprint,
            ..model
        })
    })
}

fn build_model(schema: &Schema<'_>) -> Result<Model, Error> {
    let mut names = Scope::with_reserved(ROOT_RESERVED);
    let rust_names: BTreeMap<&str, String> = schema
        .defs
        .keys()
        .map(|name| (*name, names.claim(def_name(name))))
        .collect();
    let tables = [
        table(schema, "methods", true)?,
        table(schema, "requests", true)?,
        table(schema, "notifications", false)?,
    ];
    let areas = areas(&tables);
    let mut defs = Vec::new();
    for (name, node) in &schema.defs {
        let pointer = schema.pointer_of(name);
        let node = object(node, &pointer)?;
        check_keywords(node, &pointer)?;
        let rust = rust_names[name].clone();
        defs.push(Def {
            kind: def_kind(schema, node, &pointer, &rust)?,
            area: area_of(name, &areas),
            name: (*name).to_owned(),
            rust,
            doc: text(node, "description"),
            experimental: is_experimental(node),
            pointer,
        });
    }
    // Arm structs share the crate root with the definitions.
    for def in &mut defs {
        if let DefKind::Tagged(tagged) = &mut def.kind {
            for arm in &mut tagged.arms {
                arm.struct_name = names.claim(std::mem::take(&mut arm.struct_name));
            }
        }
    }
    name_inline_unions(&mut defs, &mut names);
    // Builders (and their private parts) share the crate root too.
    for def in &mut defs {
        let mut name = |body: &mut Struct, of: &str| {
            body.builder = names.claim(format!("{of}Builder"));
            names.claim(format!("{}Rest", body.builder));
        };
        match &mut def.kind {
            DefKind::Struct(body) => name(body, &def.rust),
            DefKind::Tagged(tagged) => {
                for arm in &mut tagged.arms {
                    name(&mut arm.body, &arm.struct_name);
                }
            }
            _ => {}
        }
    }
    propagate_experimental(&mut defs);
    mark_boxes(&mut defs);
    let [mut methods, mut requests, mut notifications] = tables;
    let root: BTreeSet<&str> = defs.iter().map(|d| d.rust.as_str()).collect();
    for table in [&mut methods, &mut requests, &mut notifications] {
        for method in table.iter_mut() {
            if root.contains(method.marker.as_str()) {
                method.marker.push_str("Method");
            }
            let uses_experimental = [&method.params, &method.result]
                .into_iter()
                .flatten()
                .any(|name| defs.iter().any(|d| &d.name == name && d.experimental));
            method.experimental |= uses_experimental;
        }
    }
    Ok(Model {
        defs,
        methods,
        requests,
        notifications,
        errors: errors(schema)?,
        grantable: strings(
            schema
                .root
                .get("capabilities")
                .and_then(|c| c.get("grantable")),
        ),
        reserved_capabilities: reserved(
            schema
                .root
                .get("capabilities")
                .and_then(|c| c.get("reserved")),
            "name",
        ),
        reserved: reserved(schema.root.get("reserved"), "identifier"),
        version: text(schema.root, "x-msp-version"),
        fingerprint: String::new(),
        served: served(schema.root)?,
        doc: text(schema.root, "description"),
        title: text(schema.root, "title"),
        document: serde_json::to_string(schema.root).unwrap_or_default(),
    })
}

/// `x-msp-served-schema`: `{version, fingerprints: {stable, experimental}}`, each optional, and
/// `x-msp-host-releases`.
fn served(root: &Map<String, Value>) -> Result<Served, Error> {
    const KEY: &str = "x-msp-served-schema";
    let (releases, fixtures) = host_releases(root)?;
    let Some(node) = root.get(KEY) else {
        return Ok(Served {
            releases,
            fixtures,
            ..Served::default()
        });
    };
    let pointer = push("", KEY);
    let node = object(node, &pointer)?;
    let bad = |at: &str, what: &str| Error::at(ErrorKind::Unsupported, &push(&pointer, at), what);
    let version = match node.get("version") {
        None => None,
        Some(v) => Some(
            v.as_i64()
                .ok_or_else(|| bad("version", "`version` must be an integer"))?,
        ),
    };
    let fingerprints = match node.get("fingerprints") {
        None => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(bad("fingerprints", "`fingerprints` must be an object")),
    };
    let at = push(&pointer, "fingerprints");
    Ok(Served {
        version,
        fingerprint: surface_fingerprint(&fingerprints, "stable", &at)?,
        experimental_fingerprint: surface_fingerprint(&fingerprints, "experimental", &at)?,
        releases,
        fixtures,
    })
}

/// The fingerprint of `surface` in a `fingerprints` object at `pointer`, if it states one.
fn surface_fingerprint(
    fingerprints: &Map<String, Value>,
    surface: &str,
    pointer: &str,
) -> Result<Option<String>, Error> {
    match fingerprints.get(surface) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(Error::at(
            ErrorKind::Unsupported,
            &push(pointer, surface),
            "a fingerprint must be a string",
        )),
    }
}

/// `x-msp-host-releases`: `{releases: [{release, fingerprints: {stable?, experimental?}}],
/// fixtures: [{fingerprint}]}`, each list optional.
fn host_releases(root: &Map<String, Value>) -> Result<(Vec<Release>, Vec<String>), Error> {
    const KEY: &str = "x-msp-host-releases";
    let Some(node) = root.get(KEY) else {
        return Ok((Vec::new(), Vec::new()));
    };
    let pointer = push("", KEY);
    let node = object(node, &pointer)?;
    // Each item of list `key` with its pointer.
    type Items<'a> = Vec<(String, &'a Map<String, Value>)>;
    let list = |key: &str| -> Result<Items<'_>, Error> {
        let at = push(&pointer, key);
        match node.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let at = push(&at, &i.to_string());
                    object(item, &at).map(|item| (at, item))
                })
                .collect(),
            Some(_) => Err(Error::at(
                ErrorKind::Unsupported,
                &at,
                format!("`{key}` must be an array"),
            )),
        }
    };
    let string = |item: &Map<String, Value>, key: &str, at: &str| -> Result<String, Error> {
        item.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                let what = format!("`{key}` must be a string");
                Error::at(ErrorKind::Unsupported, &push(at, key), &what)
            })
    };
    let mut releases = Vec::new();
    for (at, item) in list("releases")? {
        let fingerprints = match item.get("fingerprints") {
            None => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => {
                let at = push(&at, "fingerprints");
                return Err(Error::at(
                    ErrorKind::Unsupported,
                    &at,
                    "`fingerprints` must be an object",
                ));
            }
        };
        let fingerprints_at = push(&at, "fingerprints");
        releases.push(Release {
            release: string(item, "release", &at)?,
            stable: surface_fingerprint(&fingerprints, "stable", &fingerprints_at)?,
            experimental: surface_fingerprint(&fingerprints, "experimental", &fingerprints_at)?,
        });
    }
    let fixtures = list("fixtures")?
        .into_iter()
        .map(|(at, item)| string(item, "fingerprint", &at))
        .collect::<Result<_, _>>()?;
    Ok((releases, fixtures))
}

// A schema node: an object, or `true` (anything, as `{}`); `false` admits nothing and is refused.
fn object<'a>(node: &'a Value, pointer: &str) -> Result<&'a Map<String, Value>, Error> {
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

fn text(node: &Map<String, Value>, key: &str) -> Option<String> {
    node.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn is_experimental(node: &Map<String, Value>) -> bool {
    node.get("x-msp-stability").and_then(Value::as_str) == Some("experimental")
}

fn openness(node: &Map<String, Value>, pointer: &str) -> Result<bool, Error> {
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

fn def_kind(
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

fn string_enum(
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
fn value_docs(description: &str) -> BTreeMap<String, String> {
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

fn tagged(
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
        let tag_value = arm["properties"][&tag]["const"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
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

fn common_const_member(arms: &[(String, &Map<String, Value>)]) -> Option<String> {
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
                required && arm["properties"][name]["const"].is_string()
            })
        })
}

fn untagged(
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
        });
    }
    Ok(arms)
}

fn is_null(node: &Value) -> bool {
    node.get("type").and_then(Value::as_str) == Some("null")
}

fn structure(
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

fn dependent_required(
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

fn primitive(name: &str, pointer: &str) -> Result<Ty, Error> {
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
fn ty_of(
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

fn object_ty(schema: &Schema<'_>, node: &Map<String, Value>, pointer: &str) -> Result<Ty, Error> {
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

fn checks(node: &Map<String, Value>, pointer: &str) -> Result<Checks, Error> {
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

fn table(schema: &Schema<'_>, key: &str, with_result: bool) -> Result<Vec<Method>, Error> {
    let Some(entries) = schema.root.get(key) else {
        return Ok(Vec::new());
    };
    let pointer = push("", key);
    let entries = object(entries, &pointer)?;
    let mut scope = Scope::default();
    let mut out = Vec::new();
    for (name, entry) in entries {
        let entry_pointer = push(&pointer, name);
        let entry = object(entry, &entry_pointer)?;
        let payload = |part: &str| -> Result<Option<String>, Error> {
            let Some(node) = entry.get(part) else {
                return Ok(None);
            };
            let part_pointer = push(&entry_pointer, part);
            let reference = node.get("$ref").and_then(Value::as_str).ok_or_else(|| {
                Error::at(
                    ErrorKind::Unsupported,
                    &part_pointer,
                    format!("`{part}` must be a `$ref` to a definition"),
                )
            })?;
            schema
                .ref_target(reference, &part_pointer)
                .map(|t| Some(t.to_owned()))
        };
        let result = if with_result {
            payload("result")?
        } else {
            None
        };
        let rust = scope.claim(type_name(&name.replace('/', "_")));
        out.push(Method {
            marker: rust.clone(),
            rust,
            name: name.clone(),
            params: payload("params")?,
            result,
            doc: text(entry, "description"),
            experimental: is_experimental(entry),
        });
    }
    Ok(out)
}

// Namespace prefixes of the method tables, as type-name prefixes, to module names.
fn areas(tables: &[Vec<Method>]) -> BTreeMap<String, String> {
    let reserved = [
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
    tables
        .iter()
        .flatten()
        .map(|m| m.name.split('/').next().unwrap_or(&m.name))
        .map(|ns| {
            let module = field_name(ns);
            let module = if reserved.contains(&module.as_str()) {
                format!("{module}_area")
            } else {
                module
            };
            (type_name(ns), module)
        })
        .collect()
}

fn area_of(def: &str, areas: &BTreeMap<String, String>) -> String {
    areas
        .iter()
        .filter(|(prefix, _)| {
            def.strip_prefix(prefix.as_str()).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_uppercase())
            })
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or_else(|| "common".to_owned(), |(_, module)| module.clone())
}

// Members of several primitive types become untagged unions named after their place.
fn name_inline_unions(defs: &mut Vec<Def>, names: &mut Scope) {
    let mut added = Vec::new();
    for def in defs.iter_mut() {
        let (area, experimental, parent) = (def.area.clone(), def.experimental, def.name.clone());
        let fields: Vec<&mut Field> = match &mut def.kind {
            DefKind::Struct(s) => s.fields.iter_mut().collect(),
            DefKind::Tagged(t) => t
                .arms
                .iter_mut()
                .flat_map(|a| a.body.fields.iter_mut())
                .collect(),
            _ => Vec::new(),
        };
        for field in fields {
            let Some(arms) = take_inline(&mut field.ty) else {
                continue;
            };
            let name = names.claim(def_name(&format!("{parent}_{}", field.wire)));
            let kinds: Vec<&str> = arms.iter().map(json_type).collect();
            let mut scope = Scope::default();
            added.push(Def {
                doc: Some(format!(
                    "The value of `{parent}.{}`: {}.",
                    field.wire,
                    kinds.join(" or ")
                )),
                pointer: push(&push(&push("/$defs", &parent), "properties"), &field.wire),
                kind: DefKind::Untagged(
                    arms.into_iter()
                        .map(|ty| Arm {
                            rust: scope.claim(type_name(json_type(&ty))),
                            ty,
                            experimental: false,
                        })
                        .collect(),
                ),
                name: name.clone(),
                rust: name.clone(),
                area: area.clone(),
                experimental,
            });
            replace_inline(&mut field.ty, &name);
        }
    }
    defs.extend(added);
    defs.sort_by(|a, b| a.name.cmp(&b.name));
}

fn json_type(ty: &Ty) -> &'static str {
    match ty {
        Ty::String => "string",
        Ty::Integer => "integer",
        Ty::Number => "number",
        Ty::Boolean => "boolean",
        _ => "value",
    }
}

fn take_inline(ty: &mut Ty) -> Option<Vec<Ty>> {
    match ty {
        Ty::Inline(arms) => Some(arms.clone()),
        Ty::Array(inner) | Ty::Map(inner) | Ty::Nullable(inner) => take_inline(inner),
        _ => None,
    }
}

fn replace_inline(ty: &mut Ty, name: &str) {
    match ty {
        Ty::Inline(_) => *ty = Ty::Ref(name.to_owned()),
        Ty::Array(inner) | Ty::Map(inner) | Ty::Nullable(inner) => replace_inline(inner, name),
        _ => {}
    }
}

fn def_refs(def: &Def) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    match &def.kind {
        DefKind::Struct(s) => s.fields.iter().for_each(|f| f.ty.refs(&mut out)),
        DefKind::Tagged(t) => t
            .arms
            .iter()
            .flat_map(|a| &a.body.fields)
            .for_each(|f| f.ty.refs(&mut out)),
        DefKind::Untagged(arms) => arms.iter().for_each(|a| a.ty.refs(&mut out)),
        DefKind::Alias(ty) => ty.refs(&mut out),
        DefKind::Enum(_) => {}
    }
    out
}

// Aliases and unions of experimental types are experimental; struct members are gated one by
// one, by their own mark or their type's.
fn propagate_experimental(defs: &mut [Def]) {
    loop {
        let experimental: BTreeSet<String> = defs
            .iter()
            .filter(|d| d.experimental)
            .map(|d| d.name.clone())
            .collect();
        let mut changed = false;
        for def in defs.iter_mut() {
            let uses = def_refs(def).iter().any(|r| experimental.contains(r));
            if !def.experimental
                && uses
                && matches!(def.kind, DefKind::Alias(_) | DefKind::Untagged(_))
            {
                def.experimental = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let experimental: BTreeSet<String> = defs
        .iter()
        .filter(|d| d.experimental)
        .map(|d| d.name.clone())
        .collect();
    let gate = |fields: &mut Vec<Field>| {
        for field in fields {
            let mut refs = BTreeSet::new();
            field.ty.refs(&mut refs);
            field.experimental |= refs.iter().any(|r| experimental.contains(r));
        }
    };
    for def in defs.iter_mut().filter(|d| !d.experimental) {
        match &mut def.kind {
            DefKind::Struct(s) => gate(&mut s.fields),
            DefKind::Tagged(t) => t.arms.iter_mut().for_each(|a| gate(&mut a.body.fields)),
            _ => {}
        }
    }
}

// A member whose type contains its own struct without a `Vec` or map in between needs a `Box`.
fn mark_boxes(defs: &mut [Def]) {
    let direct: BTreeMap<String, BTreeSet<String>> = defs
        .iter()
        .map(|d| {
            let mut out = BTreeSet::new();
            let mut add = |ty: &Ty| direct_refs(ty, &mut out);
            match &d.kind {
                DefKind::Struct(s) => s.fields.iter().for_each(|f| add(&f.ty)),
                DefKind::Tagged(t) => t
                    .arms
                    .iter()
                    .flat_map(|a| &a.body.fields)
                    .for_each(|f| add(&f.ty)),
                DefKind::Untagged(arms) => arms.iter().for_each(|a| add(&a.ty)),
                DefKind::Alias(ty) => add(ty),
                DefKind::Enum(_) => {}
            }
            (d.name.clone(), out)
        })
        .collect();
    let reaches = |from: &str, to: &str| {
        let mut stack = vec![from.to_owned()];
        let mut seen = BTreeSet::new();
        while let Some(next) = stack.pop() {
            if next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.extend(direct.get(&next).into_iter().flatten().cloned());
            }
        }
        false
    };
    for def in defs.iter_mut() {
        let name = def.name.clone();
        let mark = |fields: &mut Vec<Field>| {
            for field in fields {
                let mut refs = BTreeSet::new();
                direct_refs(&field.ty, &mut refs);
                field.boxed = refs.iter().any(|r| reaches(r, &name));
            }
        };
        match &mut def.kind {
            DefKind::Struct(s) => mark(&mut s.fields),
            DefKind::Tagged(t) => t.arms.iter_mut().for_each(|a| mark(&mut a.body.fields)),
            _ => {}
        }
    }
}

fn direct_refs(ty: &Ty, out: &mut BTreeSet<String>) {
    match ty {
        Ty::Ref(name) => {
            out.insert(name.clone());
        }
        Ty::Nullable(inner) => direct_refs(inner, out),
        _ => {}
    }
}

fn errors(schema: &Schema<'_>) -> Result<Vec<ErrorSpec>, Error> {
    let Some(errors) = schema.root.get("errors") else {
        return Ok(Vec::new());
    };
    let bad = |p: &str, what: &str| Error::at(ErrorKind::Unsupported, p, what.to_owned());
    let list = errors
        .as_array()
        .ok_or_else(|| bad("/errors", "`errors` must be an array"))?;
    let mut out = Vec::new();
    for (index, entry) in list.iter().enumerate() {
        let p = push("/errors", &index.to_string());
        let code = entry
            .get("code")
            .and_then(Value::as_i64)
            .ok_or_else(|| bad(&p, "an error needs an integer `code`"))?;
        let kind = entry
            .get("kind")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(&p, "an error needs a string `kind`"))?;
        out.push(ErrorSpec {
            code,
            kind: kind.to_owned(),
            retryable: entry.get("retryable").and_then(Value::as_bool),
            override_kinds: strings(entry.get("overrideKinds")),
        });
    }
    Ok(out)
}

fn strings(node: Option<&Value>) -> Vec<String> {
    node.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn reserved(node: Option<&Value>, key: &str) -> Vec<(String, String)> {
    node.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let name = entry.get(key)?.as_str()?.to_owned();
            let why = entry
                .get("reference")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            Some((name, why))
        })
        .collect()
}

/// The fingerprint: SHA-256 of the schema's wire facts as canonical JSON.
///
/// Prose (`description`, `title`, `$comment`, `examples`) is dropped at every depth, object
/// keys are sorted, and the value is written without whitespace. Editing prose keeps the
/// fingerprint; changing a wire fact changes it.
pub fn fingerprint(root: &Map<String, Value>) -> String {
    let mut canonical = String::new();
    write_canonical(&Value::Object(root.clone()), &mut canonical, false);
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

// `names`: the object's keys are names (of properties, definitions, methods), not keywords.
fn write_canonical(value: &Value, out: &mut String, names: bool) {
    const PROSE: &[&str] = &["description", "title", "$comment", "examples"];
    const NAME_MAPS: &[&str] = &[
        "properties",
        "$defs",
        "dependentRequired",
        "methods",
        "notifications",
        "requests",
    ];
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map
                .keys()
                .filter(|k| names || !PROSE.contains(&k.as_str()))
                .collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out, !names && NAME_MAPS.contains(&key.as_str()));
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out, false);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
