//! What can go wrong with a request, and why a connection closed.

use std::fmt;
use std::io;

use msp_types::registry::ErrorCode;
use msp_types::rpc::{DecodeError, Id};
use msp_types::ErrorObject;

use crate::handshake::HandshakeError;
use crate::process::HostExit;

/// Why a request did not give its result.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RpcError {
    /// The peer answered with a JSON-RPC error.
    #[error(transparent)]
    Remote(RemoteError),
    /// The response arrived but its result does not decode as the method's result type.
    #[error("the result does not decode: {0}")]
    Decode(DecodeError),
    /// No response before the deadline. The request is forgotten (a late response is dropped);
    /// for a command, the outcome is unknown: retry it with the same `commandId`.
    #[error("{method} (id {id}) timed out")]
    TimedOut {
        /// The request's method.
        method: &'static str,
        /// The request's id.
        id: Id,
    },
    /// The connection closed before the response arrived, or was closed already.
    #[error("the connection is closed: {0}")]
    Closed(CloseReason),
    /// The params (or a reply) could not be encoded.
    #[error("could not encode {method}: {message}")]
    Encode {
        /// The method being sent.
        method: String,
        /// Why.
        message: String,
    },
    /// The `initialize` exchange refused the host.
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    /// A response was decoded as another method's result than the one it answers.
    #[error("the response to {answered} was decoded as {asked}")]
    WrongMethod {
        /// The method of the request the response answers.
        answered: &'static str,
        /// The method whose result type was asked for.
        asked: &'static str,
    },
}

/// A JSON-RPC error the peer sent in answer to a request, with its registry entry.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteError {
    /// The method of the request it answers.
    pub method: &'static str,
    /// The error as sent.
    pub error: ErrorObject,
    /// The error registry's entry for it (by `data.kind`, else by code), when it has one.
    pub entry: Option<&'static ErrorCode>,
}

impl RemoteError {
    pub(crate) fn new(method: &'static str, error: ErrorObject) -> Self {
        let entry = error.registry_entry();
        RemoteError {
            method,
            error,
            entry,
        }
    }

    /// The error's kind: `data.kind` when sent, else the registry's kind for its code.
    pub fn kind(&self) -> Option<&str> {
        match &self.error.data {
            Some(data) => Some(data.kind.as_str()),
            None => self.entry.map(|e| e.kind),
        }
    }

    /// Whether the same call may succeed later: as the error's `data.retryable` says when
    /// sent (the host's word overrides its code's default), else as the registry says.
    pub fn retryable(&self) -> Option<bool> {
        let said = self.error.data.as_ref().and_then(|data| data.retryable);
        said.or_else(|| self.entry.and_then(|e| e.retryable))
    }

    /// How long the host asks to wait before the call is tried again (`data.retryAfterMs`,
    /// an experimental member: read from the data as sent, whether or not this build names
    /// it).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        let data = serde_json::to_value(self.error.data.as_ref()?).ok()?;
        let millis = data.get("retryAfterMs")?.as_u64()?;
        Some(std::time::Duration::from_millis(millis))
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        self.error.code
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.method, self.error)?;
        if let Some(kind) = self.kind() {
            write!(f, " [{kind}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for RemoteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Why a connection closed: every request still waiting fails with it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The peer's output ended, with no process exit to say more.
    PeerClosed,
    /// The host process exited: its classification and stderr tail.
    HostExited(HostExit),
    /// This side closed the connection.
    Local,
    /// Reading or writing failed.
    Io {
        /// The I/O error's kind.
        kind: io::ErrorKind,
        /// Its message.
        message: String,
    },
}

impl CloseReason {
    pub(crate) fn io(error: &io::Error) -> Self {
        CloseReason::Io {
            kind: error.kind(),
            message: error.to_string(),
        }
    }

    /// The host's exit, when that is why.
    pub fn host_exit(&self) -> Option<&HostExit> {
        match self {
            CloseReason::HostExited(exit) => Some(exit),
            _ => None,
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::PeerClosed => f.write_str("the peer closed the connection"),
            CloseReason::HostExited(exit) => write!(f, "{exit}"),
            CloseReason::Local => f.write_str("this side closed the connection"),
            CloseReason::Io { message, .. } => write!(f, "I/O failed: {message}"),
        }
    }
}

impl RpcError {
    /// The peer's JSON-RPC error, when that is what this is.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            RpcError::Remote(remote) => Some(remote),
            _ => None,
        }
    }

    /// The host's exit, when the connection closed because the host exited.
    pub fn host_exit(&self) -> Option<&HostExit> {
        match self {
            RpcError::Closed(reason) => reason.host_exit(),
            _ => None,
        }
    }
}
