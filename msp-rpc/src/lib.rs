//! A typed connection for the Muse Session Protocol (MSP), for clients and hosts.
//!
//! A host and a client, each a [`blocking::Connection`], over an in-memory [`pipe`]: the
//! host's handler answers `model/list`, the client's request gets the typed result.
//!
//! ```
//! use msp_rpc::blocking::Connection;
//! use msp_rpc::pipe::pipe;
//! use msp_rpc::{Host, Options, Reply};
//! use msp_types::protocol::methods;
//! use msp_types::{ClientRequest, ModelListParams};
//!
//! let (client_reads, host_writes) = pipe();
//! let (host_reads, client_writes) = pipe();
//! let answers = Options::<Host>::new().on_request(|_id, request| match request {
//!     ClientRequest::ModelList(_) => Reply::ok(&serde_json::json!({
//!         "models": [], "providerId": "demo", "source": "fakeCatalog"
//!     })),
//!     other => Reply::method_not_found(other.method()),
//! });
//! let _host = Connection::<Host>::over(host_reads, host_writes, answers);
//! let client = Connection::new(client_reads, client_writes, Options::new());
//! let models = client.request::<methods::ModelList>(&ModelListParams::new())?;
//! assert_eq!(models.provider_id, "demo");
//! # Ok::<(), msp_rpc::RpcError>(())
//! ```
//!
//! Three layers:
//!
//! - [`endpoint`]: the protocol's state, without I/O. Lines in, typed events out; calls in,
//!   lines out; the caller brings the time. Request ids, correlation, typed results and errors,
//!   the never-silent answer to every peer request, deadlines, cancellation, close. Every frame
//!   goes through it, and it alone decides what happened.
//! - One state shared by the drivers, written once (`shared.rs`): the endpoint behind one
//!   lock, the frames and lines not taken yet, who decodes them, who waits for what.
//! - Drivers that only move bytes and wait: [`blocking`] on std threads (no async runtime),
//!   and `tokio` (feature `tokio`) on tasks. Same vocabulary: `request::<M>(&params)` returns
//!   `M::Result`, `notify::<N>(&params)`, one handler for the peer's requests, the
//!   notifications in wire order as an iterator or a `Stream`.
//!
//! Also: [`process`] (`muse serve` as a child: stderr in a bounded tail, the exit classified
//! once with its retry advice), [`framing`] (lines from bytes), [`handshake`] (`initialize`
//! checks), [`command`] (`commandId` minting and same-id retries), [`pipe`] (an in-memory pipe
//! for tests), and `canned` (feature `canned-host`: a host that plays recorded transcripts).
//!
//! Words, one for each idea: a *request* is sent and *pending* until its *response* (a result
//! or an error) arrives or its deadline passes; a request of the peer is *owed* a *reply*; a
//! *notification* needs none; a line is *decoded* into a frame; the *reader* reads lines, the
//! *writer* writes them; a connection *closes* once, for a [`CloseReason`].
pub mod blocking;
#[cfg(feature = "canned-host")]
pub mod canned;
pub mod command;
pub mod endpoint;
pub mod error;
pub mod framing;
pub mod handshake;
mod options;
pub mod pipe;
pub mod process;
mod shared;
mod sync;
#[cfg(feature = "tokio")]
pub mod tokio;
mod wire;

pub use command::{new_command_id, Command};
pub use endpoint::{
    BadFrame, Client, Endpoint, Event, Host, Parsed, Problem, Reply, Responses, Role,
};
pub use error::{CloseReason, RemoteError, RpcError};
pub use handshake::{FingerprintPolicy, Handshake, HandshakeError, Served, Warning};
pub use options::{BadRequestHandler, Handler, Inbound, Options, Traced, Tracer};
pub use process::{ExitKind, HostCommand, HostExit, Retry, SpawnError};

// The README's examples compile as doc tests (they spawn `muse serve`, so they do not run).
#[cfg(all(doctest, feature = "tokio"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
