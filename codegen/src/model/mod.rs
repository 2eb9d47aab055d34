//! The checked model: what the generated crate will contain, independent of Rust syntax.
//!
//! Built from the resolved schema in steps, one module each: [`mod@build`] (the order of the
//! steps), `rules` (the dialect's mapping of a schema node to a definition or a type),
//! `tables` (methods, requests, notifications and their areas, errors, capabilities),
//! `passes` (over the whole model: inline unions named, experimental marks spread, members
//! boxed), [`names`] (wire names to Rust identifiers, and the names the output keeps for
//! itself) and [`mod@fingerprint`].

pub mod build;
pub mod fingerprint;
pub mod names;
mod passes;
mod rules;
mod tables;

use std::collections::BTreeSet;

pub use build::{build, build_document};
pub use fingerprint::fingerprint;

/// Everything the schema states, checked and named.
#[derive(Debug, Clone)]
pub struct Model {
    /// `$defs`, sorted by name.
    pub defs: Vec<Def>,
    /// Client-to-server requests (`methods`).
    pub methods: Vec<Method>,
    /// Server-to-client requests (`requests`).
    pub requests: Vec<Method>,
    /// Notifications, either direction (`notifications`).
    pub notifications: Vec<Method>,
    /// The error registry (`errors`).
    pub errors: Vec<ErrorSpec>,
    /// Capability names a client may ask for.
    pub grantable: Vec<String>,
    /// Capability names reserved for later, with the reason.
    pub reserved_capabilities: Vec<(String, String)>,
    /// Reserved method names and error codes, with the reason.
    pub reserved: Vec<(String, String)>,
    /// The protocol version the schema states, if it states one.
    pub version: Option<String>,
    /// `sha256:` of the schema's canonical wire facts.
    pub fingerprint: String,
    /// What hosts of this protocol version serve in the `initialize` result
    /// (`x-msp-served-schema`), when the schema states it.
    pub served: Served,
    /// The schema's own description.
    pub doc: Option<String>,
    /// The schema's `title`.
    pub title: Option<String>,
    /// The schema document the model was built from (inline types moved into `$defs`),
    /// compact JSON.
    pub document: String,
}

/// `x-msp-served-schema`: facts of the published protocol that a connection checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Served {
    /// The envelope schema version hosts report (`schema.version`).
    pub version: Option<i64>,
    /// The fingerprint hosts serve: the published stable surface's.
    pub fingerprint: Option<String>,
    /// The published experimental surface's fingerprint.
    pub experimental_fingerprint: Option<String>,
    /// Host releases a client may meet, oldest first (`x-msp-host-releases`).
    pub releases: Vec<Release>,
    /// Fingerprints recorded hosts serve (test fixtures, not releases).
    pub fixtures: Vec<String>,
}

/// A host release and the fingerprints its hosts serve.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Release {
    /// The release, such as `1.4.14`.
    pub release: String,
    /// Its stable surface's fingerprint.
    pub stable: Option<String>,
    /// Its experimental surface's fingerprint.
    pub experimental: Option<String>,
}

/// One definition of `$defs`.
#[derive(Debug, Clone)]
pub struct Def {
    /// The definition's name in the schema.
    pub name: String,
    /// The Rust type name.
    pub rust: String,
    /// The protocol area (module) it belongs to.
    pub area: String,
    /// Its description.
    pub doc: Option<String>,
    /// Whether it sits behind the `experimental` feature.
    pub experimental: bool,
    /// Whether its `validate()` has something to check: a constraint of its own, or of a
    /// type it holds.
    pub validates: bool,
    /// JSON pointer of the definition.
    pub pointer: String,
    /// What kind of type it is.
    pub kind: DefKind,
}

/// The kinds of definitions.
#[derive(Debug, Clone)]
pub enum DefKind {
    /// An object with named members.
    Struct(Struct),
    /// A string enumeration.
    Enum(StringEnum),
    /// A `oneOf` of objects told apart by a `const` member.
    Tagged(Tagged),
    /// An `anyOf` (or multi-type) union told apart by shape.
    Untagged(Vec<Arm>),
    /// Another name for a type.
    Alias(Ty),
}

/// An object definition.
#[derive(Debug, Clone, Default)]
pub struct Struct {
    /// Its members, in schema order.
    pub fields: Vec<Field>,
    /// The Rust name of the field that keeps unknown members.
    pub unknown_field: String,
    /// `dependentRequired`: when the first member is present, the others must be.
    pub dependent_required: Vec<(String, Vec<String>)>,
    /// The Rust name of its builder (`FooBuilder`); the builder's private part adds `Rest`.
    pub builder: String,
}

/// A member of an object.
#[derive(Debug, Clone)]
pub struct Field {
    /// The wire name.
    pub wire: String,
    /// The Rust field name.
    pub rust: String,
    /// Its description.
    pub doc: Option<String>,
    /// Its type, without the nullability and optionality the kind adds.
    pub ty: Ty,
    /// Requiredness and nullability.
    pub kind: FieldKind,
    /// Constraints checked by `validate()`.
    pub checks: Checks,
    /// Whether the type refers to an experimental definition.
    pub experimental: bool,
    /// Whether the member is held in a `Box`: to break a cycle, or for its size (the one
    /// place this is decided is the model's passes).
    pub boxed: bool,
}

/// The four kinds of members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Listed in `required`, never `null`.
    Required,
    /// Listed in `required` and `null`-able: always written, absence tolerated.
    RequiredNullable,
    /// Not listed in `required`: omitted when absent.
    Optional,
    /// Not listed in `required` and `null`-able: absent and `null` kept apart.
    OptionalNullable,
}

/// Constraints on a value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checks {
    /// A regular expression strings must match.
    pub pattern: Option<String>,
    /// Inclusive lower bound.
    pub minimum: Option<f64>,
    /// Inclusive upper bound.
    pub maximum: Option<f64>,
    /// Exclusive lower bound.
    pub exclusive_minimum: Option<f64>,
    /// Exclusive upper bound.
    pub exclusive_maximum: Option<f64>,
    /// Numbers must be a whole multiple of this.
    pub multiple_of: Option<f64>,
    /// Fewest characters (code points) of a string.
    pub min_length: Option<u64>,
    /// Most characters (code points) of a string.
    pub max_length: Option<u64>,
    /// Fewest items of an array.
    pub min_items: Option<u64>,
    /// Most items of an array.
    pub max_items: Option<u64>,
    /// No two items of an array equal.
    pub unique_items: bool,
    /// Fewest members of a map.
    pub min_properties: Option<u64>,
    /// Most members of a map.
    pub max_properties: Option<u64>,
}

impl Checks {
    /// Whether there is nothing to check.
    pub fn is_empty(&self) -> bool {
        *self == Checks::default()
    }
}

/// A type expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// `string`.
    String,
    /// `integer`.
    Integer,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
    /// Any JSON value (no type stated).
    Any,
    /// An object with no stated members: any JSON object.
    Object,
    /// `$ref` to a definition, by schema name.
    Ref(String),
    /// `array` of items.
    Array(Box<Ty>),
    /// `object` with `additionalProperties`: string keys to values.
    Map(Box<Ty>),
    /// `T` or `null`, where nullability is not a member's (array items, map values, aliases).
    Nullable(Box<Ty>),
    /// A member of several primitive types; the converter names it as a definition.
    Inline(Vec<Ty>),
}

impl Ty {
    /// Every definition this type names directly.
    pub fn refs(&self, out: &mut BTreeSet<String>) {
        match self {
            Ty::Ref(name) => {
                out.insert(name.clone());
            }
            Ty::Array(inner) | Ty::Map(inner) | Ty::Nullable(inner) => inner.refs(out),
            Ty::Inline(arms) => arms.iter().for_each(|a| a.refs(out)),
            _ => {}
        }
    }
}

/// A string enumeration.
#[derive(Debug, Clone)]
pub struct StringEnum {
    /// Whether unknown values are kept (`open`) or rejected (`closed`).
    pub open: bool,
    /// The listed values.
    pub variants: Vec<Variant>,
    /// The Rust name of the catch-all variant of an open enum.
    pub unknown_variant: String,
}

/// One listed value of an enumeration.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The wire value.
    pub wire: String,
    /// The Rust variant name.
    pub rust: String,
    /// What the value means, when the description says.
    pub doc: Option<String>,
}

/// A union of objects told apart by a `const` member.
#[derive(Debug, Clone)]
pub struct Tagged {
    /// The discriminating member's wire name.
    pub tag: String,
    /// Whether an unknown tag is kept (open) or rejected (closed).
    pub open: bool,
    /// One arm per tag value.
    pub arms: Vec<TaggedArm>,
}

/// One arm of a tagged union.
#[derive(Debug, Clone)]
pub struct TaggedArm {
    /// The tag's value on the wire.
    pub tag_value: String,
    /// The variant name.
    pub rust: String,
    /// The Rust name of the generated struct holding the arm's other members.
    pub struct_name: String,
    /// The arm's description.
    pub doc: Option<String>,
    /// The arm's members, without the tag.
    pub body: Struct,
    /// Whether the arm refers to an experimental definition.
    pub experimental: bool,
}

/// One arm of an untagged union.
#[derive(Debug, Clone)]
pub struct Arm {
    /// The variant name.
    pub rust: String,
    /// The arm's type.
    pub ty: Ty,
    /// Whether the arm refers to an experimental definition.
    pub experimental: bool,
    /// The arm's own description, when the schema gives one.
    pub doc: Option<String>,
}

/// One entry of the `methods`, `requests` or `notifications` table.
#[derive(Debug, Clone)]
pub struct Method {
    /// The JSON-RPC method name.
    pub name: String,
    /// The dispatch variant name.
    pub rust: String,
    /// The marker type's name: `rust`, with `Method` added when a definition at the crate
    /// root has that name (`methods::UserInputAnswerMethod` beside `UserInputAnswer`), so that
    /// glob imports of the root and of a marker module never clash.
    pub marker: String,
    /// The params definition, if the method takes params.
    pub params: Option<String>,
    /// The result definition (requests only).
    pub result: Option<String>,
    /// Its description.
    pub doc: Option<String>,
    /// Whether it sits behind the `experimental` feature.
    pub experimental: bool,
}

/// One entry of the error registry.
#[derive(Debug, Clone)]
pub struct ErrorSpec {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The error kind the code stands for.
    pub kind: String,
    /// Whether retrying the same call may succeed; `None` when the schema does not say.
    pub retryable: Option<bool>,
    /// Other kinds that may arrive with this code.
    pub override_kinds: Vec<String>,
}
