//! The top-level tables: methods, requests, notifications (and their areas), errors,
//! capabilities, and what hosts serve.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::names::{field_name, type_name, Scope, ROOT_MODULES};
use super::rules::{is_experimental, object, text};
use super::*;
use crate::error::{Error, ErrorKind};
use crate::schema::resolve::{push, Schema};

/// `x-msp-served-schema`: `{version, fingerprints: {stable, experimental}}`, each optional, and
/// `x-msp-host-releases`.
pub(crate) fn served(root: &Map<String, Value>) -> Result<Served, Error> {
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
pub(crate) fn surface_fingerprint(
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
pub(crate) fn host_releases(
    root: &Map<String, Value>,
) -> Result<(Vec<Release>, Vec<String>), Error> {
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

pub(crate) fn table(
    schema: &Schema<'_>,
    key: &str,
    with_result: bool,
) -> Result<Vec<Method>, Error> {
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
pub(crate) fn areas(tables: &[Vec<Method>]) -> BTreeMap<String, String> {
    tables
        .iter()
        .flatten()
        .map(|m| m.name.split('/').next().unwrap_or(&m.name))
        .map(|ns| {
            let module = field_name(ns);
            let module = if ROOT_MODULES.contains(&module.as_str()) {
                format!("{module}_area")
            } else {
                module
            };
            (type_name(ns), module)
        })
        .collect()
}

pub(crate) fn area_of(def: &str, areas: &BTreeMap<String, String>) -> String {
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

pub(crate) fn errors(schema: &Schema<'_>) -> Result<Vec<ErrorSpec>, Error> {
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

pub(crate) fn strings(node: Option<&Value>) -> Vec<String> {
    node.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

pub(crate) fn reserved(node: Option<&Value>, key: &str) -> Vec<(String, String)> {
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
