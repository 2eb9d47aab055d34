//! The `initialize` exchange: what the host must say for this crate to speak with it.
//!
//! `schema.version` (the envelope format) is the hard gate: another version is refused.
//! `schema.fingerprint` is compared with the one hosts of this protocol version serve
//! ([`msp_types::registry::SERVED_FINGERPRINT`]); a different one is a [`Warning`] by default
//! (the host was built from another schema, which is usually fine), or an error under
//! [`FingerprintPolicy::Require`].

use std::fmt;

use msp_types::registry::{SERVED_FINGERPRINT, SERVED_SCHEMA_VERSION};
use msp_types::{CapabilityName, InitializeResult};

/// How a fingerprint other than [`SERVED_FINGERPRINT`] is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FingerprintPolicy {
    /// A [`Warning::FingerprintMismatch`] (logged, and kept in the [`Handshake`]).
    #[default]
    Warn,
    /// A [`HandshakeError::FingerprintMismatch`]: the connection is not used.
    Require,
}

/// Something about the host worth knowing that does not stop the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// The host serves another schema fingerprint than hosts of this protocol version.
    FingerprintMismatch {
        /// What the host served.
        served: String,
        /// What hosts of this protocol version serve.
        expected: &'static str,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::FingerprintMismatch { served, expected } => write!(
                f,
                "the host serves schema fingerprint {served}, not {expected}: it was built from another schema"
            ),
        }
    }
}

/// Why the host was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The host speaks another envelope schema version.
    #[error("the host speaks envelope schema version {served}; this crate speaks {expected}")]
    SchemaVersion {
        /// What the host reported.
        served: i64,
        /// What this crate speaks.
        expected: i64,
    },
    /// The fingerprint differs and the policy requires it to match.
    #[error("the host serves schema fingerprint {served}, and {expected} is required")]
    FingerprintMismatch {
        /// What the host served.
        served: String,
        /// What is required.
        expected: &'static str,
    },
    /// `initialize` was already sent on this connection.
    #[error("initialize may be sent only once per connection")]
    AlreadyInitialized,
}

/// A host that passed the handshake: its `initialize` result and the warnings it raised.
#[derive(Clone, Debug, PartialEq)]
pub struct Handshake {
    /// The result as the host sent it.
    pub result: InitializeResult,
    /// What is worth knowing (a fingerprint mismatch under [`FingerprintPolicy::Warn`]).
    pub warnings: Vec<Warning>,
}

impl Handshake {
    /// Checks an `initialize` result.
    pub fn check(
        result: InitializeResult,
        policy: FingerprintPolicy,
    ) -> Result<Self, HandshakeError> {
        let served = &result.schema;
        if let Some(expected) = SERVED_SCHEMA_VERSION {
            if served.version != expected {
                return Err(HandshakeError::SchemaVersion {
                    served: served.version,
                    expected,
                });
            }
        }
        let mut warnings = Vec::new();
        if let Some(expected) = SERVED_FINGERPRINT {
            if served.fingerprint != expected {
                let served = served.fingerprint.clone();
                if policy == FingerprintPolicy::Require {
                    return Err(HandshakeError::FingerprintMismatch { served, expected });
                }
                let warning = Warning::FingerprintMismatch { served, expected };
                tracing::warn!(%warning, "schema fingerprint mismatch");
                warnings.push(warning);
            }
        }
        Ok(Handshake { result, warnings })
    }

    /// The capabilities the host granted, fixed for the connection's life.
    pub fn granted(&self) -> &[CapabilityName] {
        &self.result.granted_capabilities
    }

    /// Whether the host granted capability `name` (its wire name, such as `"userShell"`).
    pub fn has_capability(&self, name: &str) -> bool {
        self.granted().iter().any(|c| c.as_str() == name)
    }
}
