//! Structural comparison of two JSON values, with a JSON pointer for every difference.

use serde_json::Value;

use crate::pointer;
use crate::shape::Step;

/// One place where the re-encoded value differs from the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// JSON pointer of the place.
    pub pointer: String,
    /// What differs.
    pub reason: String,
}

/// Every difference between `input` and `output`, except members absent from `input` that are
/// `null` in `output` and for which `allow_null(parent_path, member)` says so.
pub fn diff(
    input: &Value,
    output: &Value,
    allow_null: &mut dyn FnMut(&[Step<'_>], &str) -> bool,
) -> Vec<Difference> {
    let mut walk = Walk {
        path: Vec::new(),
        allow_null,
        out: Vec::new(),
    };
    walk.value(input, output);
    walk.out
}

struct Walk<'a, 'f> {
    path: Vec<Step<'a>>,
    allow_null: &'f mut dyn FnMut(&[Step<'_>], &str) -> bool,
    out: Vec<Difference>,
}

impl<'a> Walk<'a, '_> {
    fn value(&mut self, input: &'a Value, output: &'a Value) {
        match (input, output) {
            (Value::Object(a), Value::Object(b)) => {
                for (key, a_value) in a {
                    self.path.push(Step::Member(key));
                    match b.get(key) {
                        Some(b_value) => self.value(a_value, b_value),
                        None => self.report("member dropped on re-encode".to_owned()),
                    }
                    self.path.pop();
                }
                for (key, b_value) in b {
                    if a.contains_key(key) {
                        continue;
                    }
                    if b_value.is_null() && (self.allow_null)(&self.path, key) {
                        continue;
                    }
                    self.path.push(Step::Member(key));
                    let reason = if b_value.is_null() {
                        "member added as null on re-encode, and it is not a required-nullable member here"
                            .to_owned()
                    } else {
                        format!("member added on re-encode: {}", short(b_value))
                    };
                    self.report(reason);
                    self.path.pop();
                }
            }
            (Value::Array(a), Value::Array(b)) => {
                for (i, (a_item, b_item)) in a.iter().zip(b).enumerate() {
                    self.path.push(Step::Index(i));
                    self.value(a_item, b_item);
                    self.path.pop();
                }
                if a.len() != b.len() {
                    self.report(format!(
                        "array of {} elements re-encoded with {}",
                        a.len(),
                        b.len()
                    ));
                }
            }
            _ if input == output => {}
            _ => self.report(format!("{} re-encoded as {}", short(input), short(output))),
        }
    }

    fn report(&mut self, reason: String) {
        self.out.push(Difference {
            pointer: pointer::of_steps(&self.path),
            reason,
        });
    }
}

/// A value shortened for a one-line message.
fn short(value: &Value) -> String {
    const LIMIT: usize = 80;
    let text = value.to_string();
    if text.len() <= LIMIT {
        return text;
    }
    let mut end = LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn no_null(_: &[Step<'_>], _: &str) -> bool {
        false
    }

    #[test]
    fn equal_values_in_another_order_have_no_difference() {
        let a = json!({"a": 1, "b": [1, {"c": null}]});
        let b = json!({"b": [1, {"c": null}], "a": 1});
        assert!(diff(&a, &b, &mut no_null).is_empty());
    }

    #[test]
    fn each_difference_names_its_pointer() {
        let a = json!({"a": {"x/y": 1, "gone": true}, "list": [1, 2]});
        let b = json!({"a": {"x/y": 1.0, "new": null}, "list": [1]});
        let mut found: Vec<String> = diff(&a, &b, &mut no_null)
            .into_iter()
            .map(|d| d.pointer)
            .collect();
        found.sort();
        assert_eq!(found, ["/a/gone", "/a/new", "/a/x~1y", "/list"]);
    }

    #[test]
    fn an_added_null_is_allowed_only_where_the_callback_says() {
        let a = json!({"outer": {"keep": 1}});
        let b = json!({"outer": {"keep": 1, "decidedAt": null, "other": null}});
        let mut allow = |path: &[Step<'_>], member: &str| {
            path == [Step::Member("outer")] && member == "decidedAt"
        };
        let found = diff(&a, &b, &mut allow);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].pointer, "/outer/other");
    }
}
