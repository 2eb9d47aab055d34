//! `schemars::JsonSchema` for every generated type (feature `schemars`): each type's schema is
//! its definition exactly as the source schema states it (openness, required-nullable members,
//! the vendor keywords and all), not one derived from the Rust shape. The definitions it refers
//! to are added to the generator's definitions the same way.

use serde_json::Value;
use std::sync::OnceLock;

/// `schemars::JsonSchema` for generated type `$name`: definition `$wire` as the schema states it.
macro_rules! impl_json_schema {
    ($name:ident, $wire:literal) => {
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $wire.into()
            }
            fn schema_id() -> std::borrow::Cow<'static, str> {
                concat!(module_path!(), "::", $wire).into()
            }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                $crate::json_schema::schema_of($wire, generator)
            }
        }
    };
}

pub(crate) use impl_json_schema;

/// The source schema document, parsed once.
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(DOCUMENT).unwrap_or(Value::Null))
}

/// The definition `name` of the source schema, as written.
pub fn definition(name: &str) -> Option<&'static Value> {
    document().get("$defs")?.get(name)
}

/// The schema of definition `name` for `generator`: its `$ref`s point into the generator's
/// definitions, where every definition they reach is added.
pub fn schema_of(name: &str, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut value = definition(name).cloned().unwrap_or(Value::Bool(true));
    let path = generator.settings().definitions_path.to_string();
    let mut refs = Vec::new();
    rewrite_refs(&mut value, &path, &mut refs);
    for target in refs {
        if !generator.definitions().contains_key(&target) {
            // A placeholder first, so that a definition reaching itself stops here.
            generator.definitions_mut().insert(target.clone(), Value::Bool(true));
            let schema = schema_of(&target, generator);
            generator.definitions_mut().insert(target, schema.to_value());
        }
    }
    schemars::Schema::try_from(value).unwrap_or_default()
}

// `#/$defs/Name` becomes `#{path}/Name`; the names reached are collected.
fn rewrite_refs(value: &mut Value, path: &str, refs: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref") {
                if let Some(name) = reference.strip_prefix("#/$defs/") {
                    let name = name.replace("~1", "/").replace("~0", "~");
                    *reference = format!("#{}/{}", path.trim_end_matches('/'), escape(&name));
                    refs.push(name);
                }
            }
            map.values_mut()
                .for_each(|child| rewrite_refs(child, path, refs));
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| rewrite_refs(item, path, refs)),
        _ => {}
    }
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
