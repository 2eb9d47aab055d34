//! Decoding a payload as a definition by name, with the JSON pointer of whatever fails.

use std::fmt;

use msp_types::reflect::{self, WithType};
use msp_types::Validate;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::pointer;

/// Why a payload did not decode, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayloadError {
    /// JSON pointer of the offending member (for a missing member: where it should be).
    pub pointer: String,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for PayloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pointer, self.message)
    }
}

/// Decodes `value` as the definition `name` and reports the first error with its pointer,
/// below `base` (the payload's own pointer in the frame). `None` when the build has no such
/// definition.
pub fn check(name: &str, value: &Value, base: &str) -> Option<Result<(), PayloadError>> {
    reflect::with_type(name, Decode { value, base })
}

struct Decode<'a> {
    value: &'a Value,
    base: &'a str,
}

impl WithType for Decode<'_> {
    type Output = Result<(), PayloadError>;

    fn call<T: Serialize + DeserializeOwned + Validate + 'static>(self) -> Self::Output {
        match serde_path_to_error::deserialize::<_, T>(self.value) {
            Ok(_) => Ok(()),
            Err(e) => {
                let mut at = pointer::of_path(self.base, e.path());
                let message = e.inner().to_string();
                if let Some(member) = pointer::missing_member(&message) {
                    pointer::push(&mut at, member);
                }
                Err(PayloadError {
                    pointer: at,
                    message,
                })
            }
        }
    }
}
