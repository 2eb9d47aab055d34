//! JSON pointers (RFC 6901): from a path of steps, and from a `serde_path_to_error` path.

use std::fmt::Write;

use serde_path_to_error::{Path, Segment};

use crate::shape::Step;

/// Appends `token` to `pointer`, escaped.
pub fn push(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// The pointer of a path of steps.
pub fn of_steps(steps: &[Step<'_>]) -> String {
    let mut pointer = String::new();
    for step in steps {
        match step {
            Step::Member(name) => push(&mut pointer, name),
            Step::Index(i) => {
                let _ = write!(pointer, "/{i}");
            }
        }
    }
    pointer
}

/// The pointer of a deserializer's path, below `base`. Segments the deserializer could not
/// follow (`?`) end the pointer: what comes after them is unknown.
pub fn of_path(base: &str, path: &Path) -> String {
    let mut pointer = base.to_owned();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => {
                let _ = write!(pointer, "/{index}");
            }
            Segment::Map { key } => push(&mut pointer, key),
            Segment::Enum { variant } => push(&mut pointer, variant),
            Segment::Unknown => break,
        }
    }
    pointer
}

/// The member a serde "missing field" message names, if it is one.
pub fn missing_member(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    Some(&rest[..rest.find('`')?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_escaped() {
        let steps = [Step::Member("a/b"), Step::Index(3), Step::Member("c~d")];
        assert_eq!(of_steps(&steps), "/a~1b/3/c~0d");
    }

    #[test]
    fn missing_member_is_read_from_the_message() {
        assert_eq!(
            missing_member("missing field `commandId`"),
            Some("commandId")
        );
        assert_eq!(missing_member("invalid type: null"), None);
    }
}
