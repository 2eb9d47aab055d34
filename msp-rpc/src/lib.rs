//! A typed connection for the Muse Session Protocol (MSP), for clients and hosts.
//!
//! Three layers, one module each:
//!
//! - [`endpoint`]: the protocol's state, without I/O. Lines in, typed events out; calls in,
//!   lines out; the caller brings the time. Request ids, correlation, typed results and errors,
//!   the never-silent answer to every peer request, deadlines, cancellation, close.
//! - Drivers that move the lines: [`blocking`] on std threads (no async runtime), and
//!   `tokio` (feature `tokio`) on tasks. Same vocabulary: `request::<M>(&params)` returns
//!   `M::Result`, `notify::<N>(&params)`, one handler for the peer's requests, the
//!   notifications in wire order as an iterator or a `Stream`.
//! - [`process`]: `muse serve` as a child process: stderr captured into a bounded tail, the
//!   exit classified once with its retry advice, killed when dropped.
//!
//! Also: [`framing`] (lines from bytes), [`handshake`] (`initialize` checks), [`command`]
//! (`commandId` minting and same-id retries), [`pipe`] (an in-memory pipe for tests).

mod backlog;
pub mod blocking;
#[cfg(feature = "canned-host")]
pub mod canned;
pub mod command;
mod driver;
pub mod endpoint;
pub mod error;
pub mod framing;
pub mod handshake;
mod outbox;
pub mod pipe;
pub mod process;
#[cfg(feature = "tokio")]
pub mod tokio;
mod wire;

pub use command::{new_command_id, Command};
pub use driver::{Handler, Inbound, Options, Traced, Tracer};
pub use endpoint::{BadFrame, Client, Endpoint, Event, Host, Parsed, Problem, Reply, Role};
pub use error::{CloseReason, RemoteError, RpcError};
pub use handshake::{FingerprintPolicy, Handshake, HandshakeError, Warning};
pub use process::{ExitKind, HostCommand, HostExit, Retry, SpawnError};

// The README's examples compile as doc tests (they spawn `muse serve`, so they do not run).
#[cfg(all(doctest, feature = "tokio"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
