//! What the schema says about a place in a frame: the payload type of a method, and whether a
//! member of the object at some path is required-nullable.

use std::collections::HashMap;

use msp_codegen::model::{Def, DefKind, FieldKind, Method, Model, Struct, Ty};
use serde_json::Value;

/// The schema the generated crate was built from, checked into the repository.
pub const SCHEMA_TEXT: &str = include_str!("../../schema/msp.schema.json");

/// One step of a path inside a JSON value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// A member of an object.
    Member(&'a str),
    /// An element of an array.
    Index(usize),
}

/// Which table a method was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// `methods`: requests a client sends.
    Methods,
    /// `requests`: requests a server sends.
    Requests,
    /// `notifications`: either direction.
    Notifications,
}

/// The model of the schema, indexed for lookups by name.
pub struct Shapes {
    model: Model,
    defs: HashMap<String, usize>,
    methods: HashMap<String, usize>,
    requests: HashMap<String, usize>,
    notifications: HashMap<String, usize>,
}

impl Shapes {
    /// Builds the model of the checked-in schema.
    pub fn load() -> Result<Self, msp_codegen::Error> {
        Self::from_text(SCHEMA_TEXT)
    }

    /// Builds the model of a schema text: the generator's pipeline up to the checked model.
    pub fn from_text(text: &str) -> Result<Self, msp_codegen::Error> {
        let doc = msp_codegen::schema::load::parse(text)?;
        Ok(Self::new(msp_codegen::model::build_document(&doc)?))
    }

    /// Indexes a model.
    pub fn new(model: Model) -> Self {
        fn index<'a>(names: impl Iterator<Item = &'a String>) -> HashMap<String, usize> {
            names.enumerate().map(|(i, n)| (n.clone(), i)).collect()
        }
        Shapes {
            defs: index(model.defs.iter().map(|d| &d.name)),
            methods: index(model.methods.iter().map(|m| &m.name)),
            requests: index(model.requests.iter().map(|m| &m.name)),
            notifications: index(model.notifications.iter().map(|m| &m.name)),
            model,
        }
    }

    /// The checked model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// A definition by its schema name.
    pub fn def(&self, name: &str) -> Option<&Def> {
        self.defs.get(name).map(|&i| &self.model.defs[i])
    }

    /// The request method `name`, looked up as the generated decoder does: the `requests` table
    /// first, then `methods`.
    pub fn request(&self, name: &str) -> Option<(Table, &Method)> {
        if let Some(&i) = self.requests.get(name) {
            return Some((Table::Requests, &self.model.requests[i]));
        }
        let &i = self.methods.get(name)?;
        Some((Table::Methods, &self.model.methods[i]))
    }

    /// The method `name` of one request table.
    pub fn method(&self, table: Table, name: &str) -> Option<&Method> {
        let (index, list) = match table {
            Table::Methods => (&self.methods, &self.model.methods),
            Table::Requests => (&self.requests, &self.model.requests),
            Table::Notifications => (&self.notifications, &self.model.notifications),
        };
        index.get(name).map(|&i| &list[i])
    }

    /// The notification `name`.
    pub fn notification(&self, name: &str) -> Option<&Method> {
        let &i = self.notifications.get(name)?;
        Some(&self.model.notifications[i])
    }

    /// The kind of `member` in the object at `path` below a value of definition `root`, reading
    /// tags and union arms from `value` (the payload as it was received). `None` when the schema
    /// does not type that place (an unknown member, an unknown tag, an untyped value).
    pub fn member_kind(
        &self,
        root: &str,
        value: &Value,
        path: &[Step<'_>],
        member: &str,
    ) -> Option<FieldKind> {
        let mut ty = Ty::Ref(root.to_owned());
        let mut value = value;
        for step in path {
            let (next_ty, next_value) = self.step(&ty, value, *step)?;
            ty = next_ty;
            value = next_value;
        }
        match self.container(&ty, value)? {
            Container::Struct(body) => body
                .fields
                .iter()
                .find(|f| f.wire == member)
                .map(|f| f.kind),
            _ => None,
        }
    }

    fn step<'v>(&self, ty: &Ty, value: &'v Value, step: Step<'_>) -> Option<(Ty, &'v Value)> {
        match (self.container(ty, value)?, step) {
            (Container::Struct(body), Step::Member(name)) => {
                let field = body.fields.iter().find(|f| f.wire == name)?;
                Some((field.ty.clone(), value.get(name)?))
            }
            (Container::Array(inner), Step::Index(i)) => Some((inner.clone(), value.get(i)?)),
            (Container::Map(inner), Step::Member(name)) => Some((inner.clone(), value.get(name)?)),
            _ => None,
        }
    }

    /// What holds the members or elements of `value` when it is read as `ty`.
    fn container<'m>(&'m self, ty: &'m Ty, value: &Value) -> Option<Container<'m>> {
        match ty {
            Ty::Array(inner) => Some(Container::Array(inner)),
            Ty::Map(inner) => Some(Container::Map(inner)),
            Ty::Nullable(inner) => self.container(inner, value),
            Ty::Ref(name) => match &self.def(name)?.kind {
                DefKind::Struct(body) => Some(Container::Struct(body)),
                DefKind::Tagged(tagged) => {
                    let tag = value.get(&tagged.tag)?.as_str()?;
                    let arm = tagged.arms.iter().find(|a| a.tag_value == tag)?;
                    Some(Container::Struct(&arm.body))
                }
                DefKind::Alias(inner) => self.container(inner, value),
                DefKind::Untagged(arms) => {
                    let arm = arms.iter().find(|a| self.decodes(&a.ty, value))?;
                    self.container(&arm.ty, value)
                }
                DefKind::Enum(_) => None,
            },
            _ => None,
        }
    }

    /// Whether `value` decodes as `ty`: how an untagged union picks its arm (the first that does).
    fn decodes(&self, ty: &Ty, value: &Value) -> bool {
        match ty {
            Ty::String => value.is_string(),
            Ty::Integer => value.is_i64() || value.is_u64(),
            Ty::Number => value.is_number(),
            Ty::Boolean => value.is_boolean(),
            Ty::Any => true,
            Ty::Object => value.is_object(),
            Ty::Array(inner) => value
                .as_array()
                .is_some_and(|items| items.iter().all(|v| self.decodes(inner, v))),
            Ty::Map(inner) => value
                .as_object()
                .is_some_and(|map| map.values().all(|v| self.decodes(inner, v))),
            Ty::Nullable(inner) => value.is_null() || self.decodes(inner, value),
            Ty::Inline(arms) => arms.iter().any(|a| self.decodes(a, value)),
            Ty::Ref(name) => msp_types::reflect::reencode(name, value.clone())
                .is_some_and(|result| result.is_ok()),
        }
    }
}

enum Container<'m> {
    Struct(&'m Struct),
    Array(&'m Ty),
    Map(&'m Ty),
}
