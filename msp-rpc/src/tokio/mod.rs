//! The async driver (feature `tokio`): the same connection on tokio tasks.
//!
//! A reader task, a writer task and, with a handler, a handler task do what the blocking
//! driver's threads do (see `shared.rs`); a spawned host's exit is watched on a thread of
//! its own, as there (`process.rs`'s `watch_host`: its looks sleep, and it needs no
//! runtime); every other wait is the waiting task's own. A request's future writes its own
//! line in the poll that sends it, when the stream takes it at once (see `stream.rs`). The
//! request future is cancel-safe: dropping it (a `select!` that went the other way, a
//! `timeout`) forgets the request, and its late response is dropped.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use msp_rpc::tokio::Connection;
//! use msp_rpc::Options;
//! use msp_types::protocol::methods;
//! use msp_types::ModelListParams;
//! use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
//!
//! let (client, host) = tokio::io::duplex(64 * 1024);
//! let (client_reads, client_writes) = tokio::io::split(client);
//! let (host_reads, mut host_writes) = tokio::io::split(host);
//! tokio::spawn(async move {
//!     let mut line = String::new();
//!     BufReader::new(host_reads).read_line(&mut line).await.unwrap();
//!     let answer = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"models\":[],\"providerId\":\"fake\",\"source\":\"fakeCatalog\"}}\n";
//!     host_writes.write_all(answer).await.unwrap();
//! });
//!
//! let conn = Connection::new(client_reads, client_writes, Options::new());
//! let models = conn.request::<methods::ModelList>(&ModelListParams::new()).await.unwrap();
//! assert!(models.models.is_empty());
//! # }
//! ```

mod stream;

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use ::tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use ::tokio::time::Instant;
use msp_types::protocol::{methods, notifications};
use msp_types::rpc::{Id, Notification, Request};
use msp_types::InitializeParams;

use crate::command::Command;
use crate::endpoint::{Client, Response, Role, Sends};
use crate::error::{CloseReason, RpcError};
use crate::framing::{LineDecoder, READ_BYTES};
use crate::handshake::Handshake;
use crate::options::{trace, Handlers, Inbound, Settings, Traced};
use crate::process::{close_reason, HostCommand, HostExit, SpawnError, TERM_GRACE};
use crate::shared::{Closing, Output, Shared, STALL};
use crate::sync::Mutex;

use self::stream::Stream;

pub use crate::options::Options;
pub use crate::process::HostProcess;

/// A connection to a peer over any `AsyncRead`/`AsyncWrite` pair or a spawned host.
///
/// Cheap to clone: clones share the connection; the last one dropped closes it and kills a
/// spawned host ([`Connection::close`] shuts down in order).
pub struct Connection<R: Role = Client> {
    inner: Arc<Inner<R>>,
}

impl<R: Role> Clone for Connection<R> {
    fn clone(&self) -> Self {
        Connection {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<R: Role> {
    io: Arc<Io<R>>,
    /// Held by the one consumer of notifications at a time.
    turn: ::tokio::sync::Mutex<()>,
    settings: Settings,
    handshake: OnceLock<Handshake>,
    /// The driver's tasks, ended with the last clone: a peer that neither closes its
    /// output nor reads would otherwise keep them, and the stream, for ever.
    tasks: Vec<::tokio::task::AbortHandle>,
}

/// What the driver's tasks share: the state, the stream they write, the host.
struct Io<R: Role> {
    shared: Shared<R>,
    /// Polled by whoever holds it, never across an await: a std mutex.
    stream: Mutex<Stream>,
    process: Option<Arc<HostProcess>>,
    grace: Duration,
}

impl<R: Role> Io<R> {
    /// Writes what is queued within this poll, when nothing is in flight and the stream takes
    /// it at once; otherwise the writer task writes it.
    fn write_here(&self, cx: &mut Context<'_>) {
        if let Ok(mut stream) = self.stream.try_lock() {
            if stream.is_idle() {
                if !self.load(&mut stream) {
                    return; // Written already, by whoever took the queue before.
                }
                if let Poll::Ready(Ok(())) = stream.poll_flight(cx) {
                    return;
                }
            }
        }
        // The writer task writes what the stream did not take, meets the error, or writes
        // after what it has in flight.
        self.shared.wake_writer();
    }

    /// Puts what is queued in flight (nothing is), showing it to the tracer; whether there was
    /// anything.
    fn load(&self, stream: &mut Stream) -> bool {
        let mut lines = Vec::new();
        if !self.shared.take_lines(&mut lines, None) {
            return false;
        }
        for line in &lines {
            trace(self.shared.tracer(), Traced::Sent, line);
        }
        stream.load(&mut lines);
        true
    }

    /// Writes everything queued (the writer task) until the output closes (then closes the
    /// stream) or lines wait for a consumer and the writer does not watch them yet.
    fn poll_write(&self, watching: bool, cx: &mut Context<'_>) -> Poll<std::io::Result<Output>> {
        let mut stream = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if stream.is_idle() && !self.load(&mut stream) {
                match ready!(self.shared.poll_output(watching, cx)) {
                    Output::Lines => continue,
                    Output::Watch => return Poll::Ready(Ok(Output::Watch)),
                    Output::Closed => {
                        ready!(stream.poll_close(cx))?;
                        return Poll::Ready(Ok(Output::Closed));
                    }
                }
            }
            ready!(stream.poll_flight(cx))?;
        }
    }

    /// Why reading or writing stopped, as the process tells within [`crate::process::EXIT_LINGER`].
    async fn close_reason(&self, fallback: CloseReason) -> CloseReason {
        let Some(process) = self.process.clone() else {
            return fallback;
        };
        let waited = ::tokio::task::spawn_blocking(move || close_reason(Some(&process), fallback));
        waited.await.unwrap_or(CloseReason::Local)
    }
}

fn now() -> std::time::Instant {
    Instant::now().into_std()
}

impl<R: Role> Connection<R> {
    /// A connection for either role over `reader` and `writer` (call within a tokio runtime).
    pub fn over(
        reader: impl AsyncRead + Unpin + Send + 'static,
        writer: impl AsyncWrite + Unpin + Send + 'static,
        options: Options<R>,
    ) -> Self {
        Self::launch(reader, writer, options, None)
    }

    fn launch(
        reader: impl AsyncRead + Unpin + Send + 'static,
        writer: impl AsyncWrite + Unpin + Send + 'static,
        options: Options<R>,
        process: Option<Arc<HostProcess>>,
    ) -> Self {
        let (handler, settings, max_frame_bytes) = options.split();
        let io = Arc::new(Io {
            shared: Shared::new(
                handler.as_ref().is_some_and(|h| h.typed.is_some()),
                handler.as_ref().is_some_and(|h| h.bad.is_some()),
                settings.inbound_requests,
                settings.tracer.clone(),
            ),
            stream: Mutex::new(Stream::new(writer)),
            process,
            grace: settings.close_grace,
        });
        let mut tasks = vec![
            ::tokio::spawn(read_loop(reader, max_frame_bytes, io.clone())).abort_handle(),
            ::tokio::spawn(write_loop(io.clone())).abort_handle(),
        ];
        if let Some(handler) = handler {
            tasks.push(::tokio::spawn(handle_loop(handler, io.clone())).abort_handle());
        }
        if io.process.is_some() {
            crate::process::watch_host(&io, |io| (&io.shared, io.process.as_deref()));
        }
        Connection {
            inner: Arc::new(Inner {
                io,
                turn: ::tokio::sync::Mutex::new(()),
                settings,
                handshake: OnceLock::new(),
                tasks,
            }),
        }
    }

    /// Sends a request and waits for its typed result, up to the method's timeout.
    pub async fn request<M: Request>(&self, params: &M::Params) -> Result<M::Result, RpcError>
    where
        R: Sends<M>,
    {
        let timeout = self.inner.settings.timeout_of(M::METHOD);
        self.request_with_timeout::<M>(params, timeout).await
    }

    /// Sends a request and waits for its typed result, up to `timeout`. Dropping the future
    /// forgets the request.
    pub async fn request_with_timeout<M: Request>(
        &self,
        params: &M::Params,
        timeout: Duration,
    ) -> Result<M::Result, RpcError>
    where
        R: Sends<M>,
    {
        self.response::<M>(params, timeout).await?.decode::<M>()
    }

    /// Sends a request and waits for its response, the result still wire text.
    async fn response<M: Request>(
        &self,
        params: &M::Params,
        timeout: Duration,
    ) -> Result<Response, RpcError>
    where
        R: Sends<M>,
    {
        let io = &self.inner.io;
        let deadline = Instant::from_std(crate::shared::deadline_in(timeout));
        let id = io.shared.request::<M>(params, deadline.into_std())?;
        let mut forget = Forget {
            io,
            id: Some(id.clone()),
        };
        // Its line, written here if the stream takes it at once; nothing is awaited before,
        // so a future dropped from now on leaves no half line.
        poll_fn(|cx| {
            io.write_here(cx);
            Poll::Ready(())
        })
        .await;
        let waited =
            ::tokio::time::timeout_at(deadline, poll_fn(|cx| io.shared.poll_response(&id, cx)));
        let response = match waited.await {
            Ok(Some(response)) => response,
            Ok(None) => {
                let reason = io.shared.close_reason().unwrap_or(CloseReason::Local);
                return Err(RpcError::Closed(reason));
            }
            // The endpoint decides what timed out; this request's outcome comes next.
            Err(_) => {
                io.shared.handle_timeout(now());
                match io.shared.take_response(&id) {
                    Some(response) => response,
                    None => {
                        return Err(RpcError::TimedOut {
                            method: M::METHOD,
                            id,
                        })
                    }
                }
            }
        };
        forget.id = None;
        Ok(response)
    }

    /// Sends a command and waits for its result; after a timeout, send the same command again
    /// (it carries the same `commandId`).
    pub async fn command<M: Request>(&self, command: &Command<M>) -> Result<M::Result, RpcError>
    where
        R: Sends<M>,
    {
        self.request::<M>(command.params()).await
    }

    /// Sends a notification (the writer task writes it).
    pub fn notify<N: Notification>(&self, params: &N::Params) -> Result<(), RpcError> {
        self.inner.io.shared.notify::<N>(params)?;
        self.inner.io.shared.wake_writer();
        Ok(())
    }

    /// The notifications and undecodable frames (and the peer's requests, with
    /// [`Options::inbound_requests`]) as a `Stream`, in wire order; it ends when the
    /// connection closes. One consumer at a time: a second call waits for the first to drop.
    pub async fn notifications(&self) -> Notifications<'_, R> {
        let turn = self.inner.turn.lock().await;
        Notifications {
            shared: &self.inner.io.shared,
            _turn: turn,
        }
    }

    /// The next notification or undecodable frame (or request's copy); `None` once the
    /// connection closed.
    pub async fn recv(&self) -> Option<Inbound<R>> {
        self.notifications().await.next().await
    }

    /// Why the connection closed, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.inner.io.shared.close_reason()
    }

    /// Ends the connection at once, as dropping its last clone does: pending requests fail,
    /// what was read until then is still delivered and nothing more is, and a spawned host
    /// is killed, with no grace ([`Connection::close`] drains it instead). The close reason
    /// is `Local`, even for a close in progress, which still returns the host's exit.
    /// Dropping the last clone also ends the driver's tasks and drops the streams, whatever
    /// the peer does.
    pub fn abort(&self) {
        self.inner.abort();
    }

    /// Closes in order: requests of the peer already received are answered (within the grace
    /// period; later ones get `-32601`), the writer finishes and closes its side (a host's
    /// stdin, so it drains), a spawned host gets the grace period to exit before it is stopped
    /// ([`HostProcess::stop`](crate::process::HostProcess::stop): `SIGTERM`, then a kill),
    /// what it wrote until then is still delivered, and pending requests fail. Returns the
    /// host's exit, classified (`None` over plain streams).
    pub async fn close(&self) -> Option<HostExit> {
        let io = &self.inner.io;
        let closing = |what| {
            ::tokio::time::timeout(
                io.grace,
                poll_fn(move |cx| io.shared.poll_closing(what, cx)),
            )
        };
        io.shared.stop_handling();
        let _ = closing(Closing::Handled).await;
        io.shared.close_output();
        let exit = match &io.process {
            Some(process) => {
                let (process, grace) = (process.clone(), io.grace);
                let exited = ::tokio::task::spawn_blocking(move || process.stop(grace));
                let exit = exited.await.ok();
                // What the host wrote before it exited is in the pipe already, and still
                // delivered; a descendant keeping its stdout open does not hold the close long.
                let read_all = poll_fn(|cx| io.shared.poll_closing(Closing::ReadAll, cx));
                let _ = ::tokio::time::timeout(TERM_GRACE, read_all).await;
                exit
            }
            None => {
                // Over plain streams nothing else waits for the writer (and dropping the
                // connection aborts it): what is queued is written before the close.
                let _ = closing(Closing::Written).await;
                None
            }
        };
        let reason = exit
            .clone()
            .map_or(CloseReason::Local, CloseReason::HostExited);
        io.shared.close(reason);
        exit
    }
}

impl Connection<Client> {
    /// A client connection over `reader` (what the host writes) and `writer` (its stdin).
    pub fn new(
        reader: impl AsyncRead + Unpin + Send + 'static,
        writer: impl AsyncWrite + Unpin + Send + 'static,
        options: Options<Client>,
    ) -> Self {
        Self::over(reader, writer, options)
    }

    /// Spawns a host (`HostCommand::muse()` for `muse serve`) and connects to it over its
    /// stdin and stdout (call within a tokio runtime).
    pub fn spawn(command: &HostCommand, options: Options<Client>) -> Result<Self, SpawnError> {
        let (process, stdin, stdout) = HostProcess::spawn(command)?;
        let pipes = ::tokio::process::ChildStdin::from_std(stdin).and_then(|stdin| {
            ::tokio::process::ChildStdout::from_std(stdout).map(|stdout| (stdin, stdout))
        });
        // A pipe that cannot be registered drops `process`, which kills it.
        let (stdin, stdout) = pipes.map_err(|e| command.spawn_error(e))?;
        Ok(Self::launch(
            stdout,
            stdin,
            options,
            Some(Arc::new(process)),
        ))
    }

    /// Opens the session: `initialize`, the checks of [`Handshake::from_wire`] (the envelope
    /// version and the host's release first, then the rest of the result), then
    /// `initialized`.
    pub async fn initialize(&self, params: &InitializeParams) -> Result<&Handshake, RpcError> {
        self.inner.io.shared.begin_initialize(params)?;
        let timeout = self.inner.settings.timeout_of(methods::Initialize::METHOD);
        let response = self
            .response::<methods::Initialize>(params, timeout)
            .await?;
        let handshake =
            Handshake::from_wire(response.outcome?.get(), self.inner.settings.fingerprint)?;
        self.notify::<notifications::Initialized>(&None)?;
        Ok(self.inner.handshake.get_or_init(|| handshake))
    }

    /// The handshake, once [`Connection::initialize`] succeeded.
    pub fn handshake(&self) -> Option<&Handshake> {
        self.inner.handshake.get()
    }

    /// The spawned host, when there is one.
    pub fn process(&self) -> Option<&HostProcess> {
        self.inner.io.process.as_deref()
    }
}

impl<R: Role> Inner<R> {
    fn abort(&self) {
        self.io.shared.close(CloseReason::Local);
        if let Some(process) = &self.io.process {
            process.start_kill();
        }
    }
}

impl<R: Role> Drop for Inner<R> {
    fn drop(&mut self) {
        self.abort();
        // Nobody can read or answer anything more: the tasks end here, not at the peer's end.
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Forgets a request whose future was dropped before its response.
struct Forget<'a, R: Role> {
    io: &'a Io<R>,
    id: Option<Id>,
}

impl<R: Role> Drop for Forget<'_, R> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.io.shared.cancel(&id);
        }
    }
}

/// The notifications of a connection as a `Stream` (see [`Connection::notifications`]).
pub struct Notifications<'a, R: Role = Client> {
    shared: &'a Shared<R>,
    _turn: ::tokio::sync::MutexGuard<'a, ()>,
}

impl<R: Role> Notifications<'_, R> {
    /// The next one; `None` once the connection closed.
    pub async fn next(&mut self) -> Option<Inbound<R>> {
        poll_fn(|cx| self.shared.poll_inbound(cx)).await
    }
}

impl<R: Role> futures_core::Stream for Notifications<'_, R> {
    type Item = Inbound<R>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Inbound<R>>> {
        self.shared.poll_inbound(cx)
    }
}

/// Reads until the end of the peer's output, handing in each read's lines; then closes.
async fn read_loop<R: Role>(mut reader: impl AsyncRead + Unpin, max: usize, io: Arc<Io<R>>) {
    let mut lines = LineDecoder::new(max);
    let mut decoded = Vec::new();
    let stopped = loop {
        // Straight into the decoder: no copy on the way.
        let process = io.process.as_deref();
        process.inspect(|p| p.read_begun());
        let read = reader.read(lines.room(READ_BYTES)).await;
        process.inspect(|p| p.read_ended());
        match read {
            Ok(0) => break None,
            Ok(n) => {
                lines.filled(n);
                io.shared.receive(&mut lines, &mut decoded);
                poll_fn(|cx| io.shared.poll_room(cx)).await;
                // Let a consumer on this thread take the frames while they are in cache.
                ::tokio::task::yield_now().await;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Some(CloseReason::io(&e)),
        }
    };
    lines.finish();
    io.shared.receive(&mut lines, &mut decoded);
    let reason = io
        .close_reason(stopped.unwrap_or(CloseReason::PeerClosed))
        .await;
    io.shared.close(reason);
    io.shared.reader_stopped();
}

/// Writes what no request writes itself until the output closes, then closes the stream;
/// while lines wait for a consumer, looks for a stall every [`STALL`] (see `shared.rs`).
async fn write_loop<R: Role>(io: Arc<Io<R>>) {
    // The consumers' progress at the last look, while lines wait for them.
    let mut watch = None;
    loop {
        let step = poll_fn(|cx| io.poll_write(watch.is_some(), cx));
        // The step keeps nothing across polls (what is in flight stays in the stream): a
        // look for a stall may cut it short.
        let step = match watch {
            Some(_) => ::tokio::time::timeout(STALL, step).await.ok(),
            None => Some(step.await),
        };
        match step {
            Some(Ok(Output::Watch)) => watch = Some(io.shared.decoded()),
            Some(Ok(_)) => return io.shared.writer_stopped(),
            Some(Err(e)) => {
                tracing::debug!(error = %e, "write failed");
                let reason = io.close_reason(CloseReason::io(&e)).await;
                io.shared.close(reason);
                return;
            }
            None => watch = watch.and_then(|since| io.shared.check_stall(since)),
        }
    }
}

/// Answers the peer's requests in order until the handler is to stop.
async fn handle_loop<R: Role>(mut handlers: Handlers<R>, io: Arc<Io<R>>) {
    while let Some((id, request)) = poll_fn(|cx| io.shared.poll_request(cx)).await {
        let reply = handlers.answer(&id, request);
        io.shared.respond(&id, reply);
        poll_fn(|cx| {
            io.write_here(cx);
            Poll::Ready(())
        })
        .await;
    }
    io.shared.handler_stopped();
}
