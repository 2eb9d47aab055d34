//! The model built: the schema checked, its definitions mapped, named and passed over.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::names::{def_name, Scope, ROOT_RESERVED};
use super::passes::{
    box_large, mark_boxes, mark_validating, name_inline_unions, propagate_experimental,
};
use super::rules::{def_kind, is_experimental, object, text};
use super::tables::{area_of, areas, errors, reserved, served, strings, table};
use super::*;
use crate::error::Error;
use crate::schema::resolve::{check_keywords, Schema};

/// Checks a schema document, moves its inline types into `$defs` and builds the model.
pub fn build_document(doc: &Value) -> Result<Model, Error> {
    // References and shapes are checked where they were written, before anything moves.
    let original = Schema::new(doc)?;
    let hoisted = crate::schema::hoist::hoist(doc);
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

pub(crate) fn build_model(schema: &Schema<'_>) -> Result<Model, Error> {
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
            validates: false,
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
    box_large(&mut defs);
    mark_validating(&mut defs);
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
