//! Table-driven over the schema's model: every required-nullable member, every string enum and
//! every definition, through `msp_types::reflect` with instances built from the model.

use msp_codegen::model::{DefKind, FieldKind, Model, Struct, Ty};
use msp_conformance::Shapes;
use msp_types::reflect;
use serde_json::{json, Map, Value};

const UNLISTED: &str = "zz-not-a-listed-value";

fn shapes() -> Shapes {
    Shapes::load().expect("the schema builds a model")
}

fn reencode(name: &str, value: &Value) -> Result<Value, serde_json::Error> {
    reflect::reencode(name, value.clone())
        .unwrap_or_else(|| panic!("msp_types::reflect has no definition {name}"))
}

/// Minimal valid instances: required members only, the first enum value, the first arm.
struct Builder<'a> {
    shapes: &'a Shapes,
}

impl Builder<'_> {
    fn value(&self, ty: &Ty, depth: usize) -> Value {
        assert!(depth < 32, "required members nest without end at {ty:?}");
        match ty {
            Ty::String => json!("x"),
            Ty::Integer => json!(1),
            Ty::Number => json!(0.5),
            Ty::Boolean => json!(true),
            Ty::Any | Ty::Object | Ty::Map(_) => json!({}),
            Ty::Array(_) => json!([]),
            Ty::Nullable(_) => Value::Null,
            Ty::Inline(arms) => self.value(&arms[0], depth + 1),
            Ty::Ref(name) => self.def(name, depth + 1),
        }
    }

    fn def(&self, name: &str, depth: usize) -> Value {
        let def = self.shapes.def(name).expect("a defined name");
        match &def.kind {
            DefKind::Struct(body) => Value::Object(self.object(body, depth)),
            DefKind::Enum(e) => json!(e.variants[0].wire),
            DefKind::Tagged(t) => self.arm(t, 0, depth),
            DefKind::Untagged(arms) => self.value(&arms[0].ty, depth),
            DefKind::Alias(ty) => self.value(ty, depth),
        }
    }

    fn arm(&self, tagged: &msp_codegen::model::Tagged, index: usize, depth: usize) -> Value {
        let arm = &tagged.arms[index];
        let mut object = self.object(&arm.body, depth);
        object.insert(tagged.tag.clone(), json!(arm.tag_value));
        Value::Object(object)
    }

    fn object(&self, body: &Struct, depth: usize) -> Map<String, Value> {
        body.fields
            .iter()
            .filter(|f| matches!(f.kind, FieldKind::Required | FieldKind::RequiredNullable))
            .map(|f| (f.wire.clone(), self.value(&f.ty, depth)))
            .collect()
    }
}

/// An object body of the model: a struct definition, or one arm of a tagged union.
struct Body<'m> {
    def: &'m str,
    arm: Option<usize>,
    body: &'m Struct,
}

fn bodies(model: &Model) -> Vec<Body<'_>> {
    let mut out = Vec::new();
    for def in &model.defs {
        match &def.kind {
            DefKind::Struct(body) => out.push(Body {
                def: &def.name,
                arm: None,
                body,
            }),
            DefKind::Tagged(t) => {
                for (i, arm) in t.arms.iter().enumerate() {
                    out.push(Body {
                        def: &def.name,
                        arm: Some(i),
                        body: &arm.body,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// `null` in an optional member the schema does not make nullable: the member reads as absent,
/// and the `null` is kept (among the unknown members) so that the frame is written back as read.
#[test]
fn a_null_sent_for_every_optional_member_that_is_not_nullable_is_written_back() {
    let shapes = shapes();
    let builder = Builder { shapes: &shapes };
    let mut covered = 0;
    for Body {
        def: name,
        arm,
        body,
    } in bodies(shapes.model())
    {
        for field in body.fields.iter() {
            if field.kind != FieldKind::Optional {
                continue;
            }
            let at = format!("{name}.{}", field.wire);
            let mut null = match (&shapes.def(name).unwrap().kind, arm) {
                (DefKind::Tagged(t), Some(i)) => builder.arm(t, i, 1),
                _ => builder.def(name, 1),
            };
            null[&field.wire] = Value::Null;
            let out = reencode(name, &null).unwrap_or_else(|e| panic!("{at}: null: {e}"));
            assert_eq!(out, null, "{at}: the null is written back");
            covered += 1;
        }
    }
    eprintln!("optional non-nullable members covered: {covered}");
    assert!(covered > 100, "only {covered} members");
}

#[test]
fn every_required_nullable_member_is_written_as_null_and_read_when_absent() {
    let shapes = shapes();
    let builder = Builder { shapes: &shapes };
    let model = shapes.model();
    let mut expected = 0;
    let mut covered = 0;
    for Body {
        def: name,
        arm,
        body,
    } in bodies(model)
    {
        for field in body.fields.iter() {
            if field.kind != FieldKind::RequiredNullable {
                continue;
            }
            expected += 1;
            let at = format!("{name}.{}", field.wire);
            let mut base = match (&shapes.def(name).unwrap().kind, arm) {
                (DefKind::Tagged(t), Some(i)) => builder.arm(t, i, 1),
                _ => builder.def(name, 1),
            };
            // A value, not null, where the member's type allows one at all.
            let present = builder.value(&field.ty, 1);
            base[&field.wire] = present;
            assert_eq!(
                reencode(name, &base).expect(&at),
                base,
                "{at}: a value round-trips"
            );

            let mut null = base.clone();
            null[&field.wire] = Value::Null;
            assert_eq!(
                reencode(name, &null).expect(&at),
                null,
                "{at}: null round-trips"
            );

            let mut absent = base.clone();
            absent.as_object_mut().unwrap().remove(&field.wire);
            let out = reencode(name, &absent).unwrap_or_else(|e| panic!("{at}: absent: {e}"));
            assert_eq!(
                out, null,
                "{at}: absent decodes as None, written back as null"
            );

            // The member's kind as the runner's allowance sees it.
            assert_eq!(
                shapes.member_kind(name, &absent, &[], &field.wire),
                Some(FieldKind::RequiredNullable),
                "{at}"
            );
            covered += 1;
        }
    }
    eprintln!("required-nullable members covered: {covered} of {expected}");
    assert!(covered > 0);
    assert_eq!(covered, expected);
}

#[test]
fn members_of_other_kinds_are_not_allowed_a_null() {
    let shapes = shapes();
    let mut checked = 0;
    for Body {
        def: name,
        arm,
        body,
    } in bodies(shapes.model())
    {
        if arm.is_some() {
            continue;
        }
        for field in &body.fields {
            if field.kind == FieldKind::RequiredNullable {
                continue;
            }
            let kind = shapes.member_kind(name, &json!({}), &[], &field.wire);
            assert_eq!(kind, Some(field.kind), "{name}.{}", field.wire);
            checked += 1;
        }
        assert_eq!(shapes.member_kind(name, &json!({}), &[], UNLISTED), None);
    }
    eprintln!("members of other kinds checked: {checked}");
    assert!(checked > 0);
}

#[test]
fn every_open_enum_keeps_an_unlisted_value_and_every_closed_one_rejects_it() {
    let shapes = shapes();
    let (mut open, mut closed, mut total) = (0, 0, 0);
    for def in &shapes.model().defs {
        let DefKind::Enum(e) = &def.kind else {
            continue;
        };
        total += 1;
        for variant in &e.variants {
            let value = json!(variant.wire);
            assert_eq!(reencode(&def.name, &value).expect(&def.name), value);
        }
        let unlisted = json!(UNLISTED);
        match reencode(&def.name, &unlisted) {
            Ok(out) if e.open => {
                assert_eq!(out, unlisted, "{}", def.name);
                open += 1;
            }
            Err(err) if !e.open => {
                let text = err.to_string();
                let expected = format!("unknown {} value `{UNLISTED}`", def.name);
                assert!(text.contains(&expected), "{}: {text}", def.name);
                closed += 1;
            }
            other => panic!(
                "{} (open: {}): unlisted value gave {other:?}",
                def.name, e.open
            ),
        }
    }
    eprintln!("enums covered: {open} open, {closed} closed, of {total}");
    assert!(open > 0 && closed > 0);
    assert_eq!(open + closed, total);
}

#[test]
fn every_open_tagged_union_keeps_an_unknown_arm() {
    let shapes = shapes();
    let builder = Builder { shapes: &shapes };
    let (mut open, mut closed) = (0, 0);
    for def in &shapes.model().defs {
        let DefKind::Tagged(t) = &def.kind else {
            continue;
        };
        let mut value = builder.arm(t, 0, 1);
        value[&t.tag] = json!(UNLISTED);
        value["futureMember"] = json!([1, {"x": null}]);
        match reencode(&def.name, &value) {
            Ok(out) if t.open => {
                assert_eq!(out, value, "{}", def.name);
                open += 1;
            }
            Err(_) if !t.open => closed += 1,
            other => panic!(
                "{} (open: {}): unknown arm gave {other:?}",
                def.name, t.open
            ),
        }
    }
    eprintln!("tagged unions covered: {open} open, {closed} closed");
    assert!(open + closed > 0);
}

#[test]
fn every_definition_round_trips_a_minimal_instance_and_an_unknown_member() {
    let shapes = shapes();
    let builder = Builder { shapes: &shapes };
    let mut covered = 0;
    for def in &shapes.model().defs {
        let mut value = builder.def(&def.name, 0);
        assert_eq!(
            reencode(&def.name, &value).unwrap_or_else(|e| panic!("{}: {e}: {value}", def.name)),
            value,
            "{}",
            def.name
        );
        if matches!(def.kind, DefKind::Struct(_) | DefKind::Tagged(_)) {
            value["zzFutureMember"] = json!({"nested": [true]});
            assert_eq!(
                reencode(&def.name, &value).expect(&def.name),
                value,
                "{}",
                def.name
            );
        }
        covered += 1;
    }
    eprintln!("definitions covered: {covered}");
    assert_eq!(covered, shapes.model().defs.len());
    assert_eq!(covered, reflect::DEFINITIONS.len());
}
