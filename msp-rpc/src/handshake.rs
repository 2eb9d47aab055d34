//! The `initialize` exchange: which host answered, and whether this crate speaks with it.
//!
//! The crates speak protocol [`PROTOCOL_VERSION`] (the schema's `x-msp-version`). A host
//! reports what it serves as `schema` in its `initialize` result; that is read first, from the
//! wire text, before anything else is typed:
//!
//! - `schema.version`, the envelope format, is the hard gate: another version is refused.
//! - `schema.fingerprint` says which release built the host. Hosts of every release in
//!   [`HOST_RELEASES`] are known (their frames read with this crate's types, members they do
//!   not send staying absent), and so are the recorded hosts of test fixtures
//!   ([`FIXTURE_FINGERPRINTS`], classified apart); an unknown fingerprint is a [`Warning`].
//!   [`FingerprintPolicy`] can refuse unknown hosts, or every host but one of this release.
//!
//! Then the rest of the result is typed. A host of another release may lack a member this
//! release requires: the handshake still succeeds when the envelope version matches, with a
//! [`Warning::Incomplete`] naming the member and the two releases, and what does decode stays
//! usable ([`Handshake::granted`], [`Handshake::session_durability`], the raw result).

use std::fmt;

use msp_types::registry::{
    host_release, HostRelease, FIXTURE_FINGERPRINTS, HOST_RELEASES, PROTOCOL_VERSION,
    SERVED_FINGERPRINT, SERVED_FINGERPRINT_EXPERIMENTAL, SERVED_SCHEMA_VERSION,
};
use msp_types::rpc::decode_text;
use msp_types::{CapabilityName, InitializeResult, ServerInfo, SessionDurability};
use serde_json::{Map, Value};

/// How the host's fingerprint is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum FingerprintPolicy {
    /// Any known release or fixture is accepted as it is; an unknown fingerprint is a
    /// [`Warning::UnknownFingerprint`] (logged, and kept in the [`Handshake`]).
    #[default]
    Warn,
    /// Any known release or fixture is accepted; an unknown fingerprint is refused.
    RequireKnown,
    /// Only hosts of this crate's release ([`PROTOCOL_VERSION`]) are accepted.
    Require,
}

/// Which host answered, by the fingerprint it serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Served {
    /// A release this crate knows, and which of its surfaces.
    Release {
        /// The release.
        release: &'static HostRelease,
        /// Whether the host serves the release's experimental surface.
        experimental: bool,
    },
    /// A recorded host (a test fixture, such as a golden transcript's).
    Fixture,
    /// A fingerprint no known release serves.
    Unknown,
}

impl Served {
    /// What `fingerprint` says about the host.
    pub fn of(fingerprint: &str) -> Self {
        match host_release(fingerprint) {
            Some(release) => Served::Release {
                release,
                experimental: release.stable != Some(fingerprint),
            },
            None if FIXTURE_FINGERPRINTS.contains(&fingerprint) => Served::Fixture,
            None => Served::Unknown,
        }
    }

    /// The release's name, when it is a known one.
    pub fn release(&self) -> Option<&'static str> {
        match self {
            Served::Release { release, .. } => Some(release.release),
            _ => None,
        }
    }
}

impl fmt::Display for Served {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Served::Release {
                release,
                experimental,
            } => {
                let surface = if *experimental {
                    "experimental"
                } else {
                    "stable"
                };
                write!(f, "a {} host ({surface} surface)", release.release)
            }
            Served::Fixture => f.write_str("a recorded host (a test fixture)"),
            Served::Unknown => f.write_str("a host of an unknown release"),
        }
    }
}

/// Something about the host worth knowing that does not stop the connection.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// The host serves a fingerprint no known release serves.
    UnknownFingerprint {
        /// What the host served.
        served: String,
    },
    /// The result does not decode as this release's `InitializeResult`: typically a member
    /// a host of another release does not send. What does decode stays usable.
    Incomplete {
        /// Which host it is.
        served: Served,
        /// Where the result failed to decode (a JSON pointer), and why.
        pointer: String,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ours = PROTOCOL_VERSION.unwrap_or("this schema's release");
        match self {
            Warning::UnknownFingerprint { served } => write!(
                f,
                "the host serves schema fingerprint {served}, which no known release serves \
                 (this crate speaks {ours}): it was built from another schema"
            ),
            Warning::Incomplete {
                served,
                pointer,
                reason,
            } => write!(
                f,
                "the initialize result of {served} does not decode as {ours} requires, at \
                 `{pointer}`: {reason}"
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
    /// The result does not say which schema the host serves.
    #[error("the initialize result has no readable `schema` {{version, fingerprint}}: {reason}")]
    NoSchema {
        /// Why it could not be read.
        reason: String,
    },
    /// The fingerprint is not this release's and the policy requires it.
    #[error("the host is {served} (fingerprint {fingerprint}), and {expected} is required")]
    FingerprintMismatch {
        /// Which host it is.
        served: Served,
        /// What it served.
        fingerprint: String,
        /// The release required.
        expected: &'static str,
    },
    /// The fingerprint is unknown and the policy requires a known one.
    #[error("the host serves schema fingerprint {served}, which no known release serves")]
    UnknownFingerprint {
        /// What the host served.
        served: String,
    },
    /// `initialize` was already sent on this connection.
    #[error("initialize may be sent only once per connection")]
    AlreadyInitialized,
    /// This side's `initialize` params break the schema (a `clientInfo.name` not made of
    /// lowercase letters, digits and underscores, say): nothing was sent.
    #[error("the initialize params break the schema: {}", list(violations))]
    InvalidParams {
        /// Each broken constraint, at its JSON pointer in the params.
        violations: Vec<msp_types::Violation>,
    },
}

fn list(violations: &[msp_types::Violation]) -> String {
    let each: Vec<String> = violations.iter().map(ToString::to_string).collect();
    each.join("; ")
}

/// A host that passed the handshake: what it serves, its result and the warnings it raised.
#[derive(Clone, Debug, PartialEq)]
pub struct Handshake {
    /// The envelope schema version the host reported.
    pub version: i64,
    /// The fingerprint the host serves.
    pub fingerprint: String,
    /// Which host that makes it.
    pub served: Served,
    /// The result, typed; `None` when it does not decode as this release's (see
    /// [`Warning::Incomplete`]).
    pub result: Option<InitializeResult>,
    /// The result as the host sent it.
    pub raw: Map<String, Value>,
    /// What is worth knowing (an unknown fingerprint, an incomplete result).
    pub warnings: Vec<Warning>,
}

impl Handshake {
    /// Checks an `initialize` result given as wire text: `schema` first, then the rest.
    pub fn from_wire(result: &str, policy: FingerprintPolicy) -> Result<Self, HandshakeError> {
        let raw: Map<String, Value> =
            serde_json::from_str(result).map_err(|e| HandshakeError::NoSchema {
                reason: format!("the result is not a JSON object: {e}"),
            })?;
        let schema = raw.get("schema").and_then(Value::as_object);
        let version = schema
            .and_then(|s| s.get("version"))
            .and_then(Value::as_i64);
        let fingerprint = schema
            .and_then(|s| s.get("fingerprint"))
            .and_then(Value::as_str);
        let (Some(version), Some(fingerprint)) = (version, fingerprint) else {
            return Err(HandshakeError::NoSchema {
                reason: "`schema.version` (an integer) and `schema.fingerprint` (a string) are \
                         required"
                    .into(),
            });
        };
        let mut handshake = Handshake::checked(version, fingerprint, policy)?;
        match decode_text::<InitializeResult>("initialize", result) {
            Ok(typed) => handshake.result = Some(typed),
            Err(error) => {
                let warning = Warning::Incomplete {
                    served: handshake.served,
                    pointer: error.pointer,
                    reason: error.reason,
                };
                tracing::warn!(%warning, "initialize result incomplete");
                handshake.warnings.push(warning);
            }
        }
        handshake.raw = raw;
        Ok(handshake)
    }

    /// Checks an `initialize` result already typed.
    pub fn check(
        result: InitializeResult,
        policy: FingerprintPolicy,
    ) -> Result<Self, HandshakeError> {
        let mut handshake =
            Handshake::checked(result.schema.version, &result.schema.fingerprint, policy)?;
        if let Ok(Value::Object(raw)) = serde_json::to_value(&result) {
            handshake.raw = raw;
        }
        handshake.result = Some(result);
        Ok(handshake)
    }

    /// The envelope version and fingerprint checked, nothing else read yet.
    fn checked(
        version: i64,
        fingerprint: &str,
        policy: FingerprintPolicy,
    ) -> Result<Self, HandshakeError> {
        if let Some(expected) = SERVED_SCHEMA_VERSION {
            if version != expected {
                return Err(HandshakeError::SchemaVersion {
                    served: version,
                    expected,
                });
            }
        }
        let served = Served::of(fingerprint);
        let ours = [SERVED_FINGERPRINT, SERVED_FINGERPRINT_EXPERIMENTAL];
        let mut warnings = Vec::new();
        match (policy, served) {
            (FingerprintPolicy::Require, _) if !ours.contains(&Some(fingerprint)) => {
                return Err(HandshakeError::FingerprintMismatch {
                    served,
                    fingerprint: fingerprint.to_owned(),
                    expected: PROTOCOL_VERSION.unwrap_or("this schema's release"),
                })
            }
            (FingerprintPolicy::RequireKnown, Served::Unknown) => {
                return Err(HandshakeError::UnknownFingerprint {
                    served: fingerprint.to_owned(),
                })
            }
            (_, Served::Unknown) => {
                let warning = Warning::UnknownFingerprint {
                    served: fingerprint.to_owned(),
                };
                tracing::warn!(%warning, "unknown schema fingerprint");
                warnings.push(warning);
            }
            _ => tracing::debug!(%served, "host"),
        }
        Ok(Handshake {
            version,
            fingerprint: fingerprint.to_owned(),
            served,
            result: None,
            raw: Map::new(),
            warnings,
        })
    }

    /// The host's release, when it is a known one.
    pub fn host_release(&self) -> Option<&'static str> {
        self.served.release()
    }

    /// The capabilities the host granted, fixed for the connection's life (read on their own
    /// when the whole result does not decode; a name this crate does not know stays a name).
    pub fn granted(&self) -> Vec<CapabilityName> {
        match &self.result {
            Some(result) => result.granted_capabilities.clone(),
            None => self.member("grantedCapabilities").unwrap_or_default(),
        }
    }

    /// Whether the host granted capability `name` (its wire name, such as `"userShell"`).
    pub fn has_capability(&self, name: &str) -> bool {
        self.granted().iter().any(|c| c.as_str() == name)
    }

    /// Whether the host keeps sessions on disk (`None`: not said, which counts as durable).
    pub fn session_durability(&self) -> Option<SessionDurability> {
        match &self.result {
            Some(result) => result.session_durability.clone(),
            None => self.member("sessionDurability"),
        }
    }

    /// The host program's name and version.
    pub fn server_info(&self) -> Option<ServerInfo> {
        match &self.result {
            Some(result) => Some(result.server_info.clone()),
            None => self.member("serverInfo"),
        }
    }

    /// One member of the raw result, typed on its own.
    fn member<T: serde::de::DeserializeOwned>(&self, name: &str) -> Option<T> {
        serde_json::from_value(self.raw.get(name)?.clone()).ok()
    }
}

/// The releases this crate knows, oldest first, for messages and docs.
pub fn known_releases() -> impl Iterator<Item = &'static str> {
    HOST_RELEASES.iter().map(|r| r.release)
}
