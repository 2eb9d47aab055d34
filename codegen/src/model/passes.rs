//! Passes over the whole model once every definition is built: inline unions named,
//! experimental marks spread, members boxed.

use std::collections::{BTreeMap, BTreeSet};

use super::names::{def_name, type_name, Scope};
use super::*;
use crate::schema::resolve::push;

// Members of several primitive types become untagged unions named after their place.
pub(crate) fn name_inline_unions(defs: &mut Vec<Def>, names: &mut Scope) {
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
                            doc: None,
                        })
                        .collect(),
                ),
                name: name.clone(),
                rust: name.clone(),
                area: area.clone(),
                experimental,
                validates: false,
            });
            replace_inline(&mut field.ty, &name);
        }
    }
    defs.extend(added);
    defs.sort_by(|a, b| a.name.cmp(&b.name));
}

pub(crate) fn json_type(ty: &Ty) -> &'static str {
    match ty {
        Ty::String => "string",
        Ty::Integer => "integer",
        Ty::Number => "number",
        Ty::Boolean => "boolean",
        _ => "value",
    }
}

pub(crate) fn take_inline(ty: &mut Ty) -> Option<Vec<Ty>> {
    match ty {
        Ty::Inline(arms) => Some(arms.clone()),
        Ty::Array(inner) | Ty::Map(inner) | Ty::Nullable(inner) => take_inline(inner),
        _ => None,
    }
}

pub(crate) fn replace_inline(ty: &mut Ty, name: &str) {
    match ty {
        Ty::Inline(_) => *ty = Ty::Ref(name.to_owned()),
        Ty::Array(inner) | Ty::Map(inner) | Ty::Nullable(inner) => replace_inline(inner, name),
        _ => {}
    }
}

pub(crate) fn def_refs(def: &Def) -> BTreeSet<String> {
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
pub(crate) fn propagate_experimental(defs: &mut [Def]) {
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
pub(crate) fn mark_boxes(defs: &mut [Def]) {
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

pub(crate) fn direct_refs(ty: &Ty, out: &mut BTreeSet<String>) {
    match ty {
        Ty::Ref(name) => {
            out.insert(name.clone());
        }
        Ty::Nullable(inner) => direct_refs(inner, out),
        _ => {}
    }
}

/// Members held in a `Box` because their value is large: moving it inline would dominate
/// decoding. Members that may be absent or `null` are boxed from a lower size: then a box
/// costs nothing, and the parent stays small. Runs after [`mark_boxes`]: a member boxed to
/// break a cycle counts as a pointer, which also ends the size recursion.
pub(crate) fn box_large(defs: &mut [Def]) {
    let mut large = BTreeSet::new();
    {
        let sizes = Sizes {
            by_name: defs.iter().map(|d| (d.name.as_str(), d)).collect(),
            known: Default::default(),
        };
        for (at, def) in defs.iter().enumerate() {
            for (arm, fields) in field_lists(def).into_iter().enumerate() {
                for (place, field) in fields.iter().enumerate() {
                    if !field.boxed && sizes.boxed(field) {
                        large.insert((at, arm, place));
                    }
                }
            }
        }
    }
    for (at, arm, place) in large {
        match &mut defs[at].kind {
            DefKind::Struct(s) => s.fields[place].boxed = true,
            DefKind::Tagged(t) => t.arms[arm].body.fields[place].boxed = true,
            _ => {}
        }
    }
}

/// The member lists of a definition: a struct's one, a tagged union's one an arm.
fn field_lists(def: &Def) -> Vec<&[Field]> {
    match &def.kind {
        DefKind::Struct(s) => vec![&s.fields],
        DefKind::Tagged(t) => t.arms.iter().map(|a| a.body.fields.as_slice()).collect(),
        _ => Vec::new(),
    }
}

/// Rough inline sizes in bytes, for boxing decisions; a definition's filled on first use.
struct Sizes<'a> {
    by_name: BTreeMap<&'a str, &'a Def>,
    known: std::cell::RefCell<BTreeMap<String, usize>>,
}

impl Sizes<'_> {
    fn boxed(&self, field: &Field) -> bool {
        const LARGE: usize = 512;
        const LARGE_OPTIONAL: usize = 96;
        if field.boxed {
            return true;
        }
        if !matches!(field.ty, Ty::Ref(_)) {
            return false;
        }
        let size = self.of(&field.ty);
        size > LARGE || (field.kind != FieldKind::Required && size > LARGE_OPTIONAL)
    }

    fn of(&self, ty: &Ty) -> usize {
        match ty {
            Ty::Boolean => 1,
            Ty::Integer => 8,
            Ty::Number => 16,
            Ty::String | Ty::Array(_) | Ty::Map(_) | Ty::Object => 24,
            Ty::Any | Ty::Inline(_) => 32,
            Ty::Nullable(inner) => self.of(inner) + 8,
            Ty::Ref(name) => self.of_def(name),
        }
    }

    fn of_def(&self, name: &str) -> usize {
        if let Some(&size) = self.known.borrow().get(name) {
            return size;
        }
        let size = match self.by_name.get(name).map(|d| &d.kind) {
            Some(DefKind::Struct(s)) => {
                24 + s
                    .fields
                    .iter()
                    .map(|f| match self.boxed(f) {
                        true => 8,
                        false => self.of(&f.ty) + 8,
                    })
                    .sum::<usize>()
            }
            Some(DefKind::Alias(inner)) => self.of(inner),
            _ => 32,
        };
        self.known.borrow_mut().insert(name.to_owned(), size);
        size
    }
}

/// Marks the definitions whose `validate()` has something to check, directly or inside a
/// member.
pub(crate) fn mark_validating(defs: &mut [Def]) {
    let mut out = BTreeSet::new();
    loop {
        let before = out.len();
        for def in defs.iter() {
            let fields: Vec<&Field> = match &def.kind {
                DefKind::Struct(s) => s.fields.iter().collect(),
                DefKind::Tagged(t) => t.arms.iter().flat_map(|a| &a.body.fields).collect(),
                _ => Vec::new(),
            };
            let own = match &def.kind {
                DefKind::Struct(s) => !s.dependent_required.is_empty(),
                DefKind::Tagged(t) => t.arms.iter().any(|a| !a.body.dependent_required.is_empty()),
                _ => false,
            };
            let mut refs = BTreeSet::new();
            for field in &fields {
                field.ty.refs(&mut refs);
            }
            let nested = match &def.kind {
                DefKind::Untagged(arms) => arms.iter().any(|a| {
                    let mut r = BTreeSet::new();
                    a.ty.refs(&mut r);
                    r.iter().any(|n| out.contains(n))
                }),
                DefKind::Alias(ty) => {
                    let mut r = BTreeSet::new();
                    ty.refs(&mut r);
                    r.iter().any(|n| out.contains(n))
                }
                _ => false,
            };
            if own
                || nested
                || fields.iter().any(|f| !f.checks.is_empty())
                || refs.iter().any(|r| out.contains(r))
            {
                out.insert(def.name.clone());
            }
        }
        if out.len() == before {
            break;
        }
    }
    for def in defs.iter_mut() {
        def.validates = out.contains(&def.name);
    }
}
