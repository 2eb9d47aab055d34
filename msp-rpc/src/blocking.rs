//! The blocking driver: std threads, no async runtime.
//!
//! A connection runs a reader thread, a writer thread and, when it has a handler, a handler
//! thread (a spawned host adds one that copies its stderr, and one that watches for its exit:
//! `process.rs`'s `watch_host`); what each does is in `shared.rs`. Every other wait parks
//! the thread that waits: a request blocks its caller until its typed result, its error, its
//! timeout or the connection's close, and the notifications block their consumer until the
//! next one.
//!
//! A caller writes its own request while the peer has read all but [`CALLER_WRITE_BYTES`] of
//! what was sent, so that the write cannot block: a peer that stops reading then blocks only
//! the writer thread, never the reader, and no caller past its deadline.
//!
//! ```
//! use msp_rpc::blocking::Connection;
//! use msp_rpc::{pipe, Options};
//! use msp_types::protocol::methods;
//! use msp_types::ModelListParams;
//! use std::io::{BufRead, BufReader, Write};
//!
//! // A host in a thread, over in-memory pipes: it answers one request.
//! let (client_reads, mut host_writes) = pipe::pipe();
//! let (host_reads, client_writes) = pipe::pipe();
//! std::thread::spawn(move || {
//!     let mut line = String::new();
//!     BufReader::new(host_reads).read_line(&mut line).unwrap();
//!     host_writes.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"models\":[],\"providerId\":\"fake\",\"source\":\"fakeCatalog\"}}\n").unwrap();
//! });
//!
//! let conn = Connection::new(client_reads, client_writes, Options::new());
//! let models = conn.request::<methods::ModelList>(&ModelListParams::new()).unwrap();
//! assert!(models.models.is_empty());
//! ```

use std::io::{self, BufWriter, Read, Write};
use std::marker::PhantomData;
use std::process::{ChildStdin, ChildStdout};
use std::sync::{Arc, OnceLock, TryLockError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use msp_types::protocol::{methods, notifications};
use msp_types::rpc::{Id, Notification, Request};
use msp_types::InitializeParams;

use crate::command::Command;
use crate::endpoint::{Client, Response, Role, Sends};
use crate::error::{CloseReason, RpcError};
use crate::framing::{LineDecoder, READ_BYTES};
use crate::handshake::Handshake;
use crate::options::{trace, Handlers, Inbound, Settings, Traced};
use crate::process::{
    close_reason, watch_host, HostCommand, HostExit, HostProcess, SpawnError, TERM_GRACE,
};
use crate::shared::{Closing, Output, Shared, STALL};
use crate::sync::{wait, Mutex};

pub use crate::options::Options;

/// How many bytes the peer may have left unread for a caller to write on its own thread: the
/// least a pipe holds (a page; a socket holds more), so that the write cannot block.
pub const CALLER_WRITE_BYTES: u64 = 4096;

/// A connection to a peer, over any reader and writer or a spawned host.
///
/// Cheap to clone: clones share the connection. The last one dropped closes it (and kills a
/// spawned host; use [`Connection::close`] for an orderly shutdown).
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
    settings: Settings,
    handshake: OnceLock<Handshake>,
}

/// What the driver's threads share: the state, the stream they write, the host.
struct Io<R: Role> {
    shared: Shared<R>,
    /// The peer's input: whoever holds the lock writes; `None` once closed.
    stream: Mutex<Option<BufWriter<Box<dyn Write + Send>>>>,
    process: Option<Arc<HostProcess>>,
    grace: Duration,
}

impl<R: Role> Io<R> {
    /// Writes what is queued on this thread, when the stream is free and the write cannot
    /// block; otherwise the writer thread writes it.
    fn write_here(&self) {
        let mut stream = match self.stream.try_lock() {
            Ok(stream) => stream,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return self.shared.wake_writer(),
        };
        let mut lines = Vec::new();
        while self.shared.take_lines(&mut lines, Some(CALLER_WRITE_BYTES)) {
            if let Err(e) = self.write(&mut stream, &mut lines) {
                drop(stream);
                return self.write_failed(&e);
            }
        }
    }

    /// Writes `lines` (taking them) and flushes.
    fn write(
        &self,
        stream: &mut Option<BufWriter<Box<dyn Write + Send>>>,
        lines: &mut Vec<String>,
    ) -> io::Result<()> {
        let Some(stream) = stream else {
            lines.clear();
            return Ok(());
        };
        for line in lines.drain(..) {
            trace(self.shared.tracer(), Traced::Sent, &line);
            stream.write_all(line.as_bytes())?;
            stream.write_all(b"\n")?;
        }
        stream.flush()
    }

    /// Closes after a failed write, for the reason the process gives, if it can.
    fn write_failed(&self, error: &io::Error) {
        tracing::debug!(%error, "write failed");
        let reason = close_reason(self.process.as_deref(), CloseReason::io(error));
        self.shared.close(reason);
    }
}

impl<R: Role> Connection<R> {
    /// A connection for either role over `reader` (what the peer writes) and `writer` (what
    /// it reads): `Connection::<Host>::over(stdin, stdout, options)` for a host.
    pub fn over(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        options: Options<R>,
    ) -> Self {
        Self::launch(reader, writer, options, None)
    }

    fn launch(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
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
            stream: Mutex::new(Some(BufWriter::new(Box::new(writer)))),
            process,
            grace: settings.close_grace,
        });
        spawn("msp-reader", {
            let io = io.clone();
            move || read_loop(reader, max_frame_bytes, &io)
        });
        spawn("msp-writer", {
            let io = io.clone();
            move || write_loop(&io)
        });
        if let Some(handler) = handler {
            let io = io.clone();
            spawn("msp-handler", move || handle_loop(handler, &io));
        }
        if io.process.is_some() {
            watch_host(&io, |io| (&io.shared, io.process.as_deref()));
        }
        Connection {
            inner: Arc::new(Inner {
                io,
                settings,
                handshake: OnceLock::new(),
            }),
        }
    }

    /// Sends a request and waits for its typed result, up to the method's timeout.
    pub fn request<M: Request>(&self, params: &M::Params) -> Result<M::Result, RpcError>
    where
        R: Sends<M>,
    {
        self.request_with_timeout::<M>(params, self.inner.settings.timeout_of(M::METHOD))
    }

    /// Sends a request and waits for its typed result, up to `timeout`.
    pub fn request_with_timeout<M: Request>(
        &self,
        params: &M::Params,
        timeout: Duration,
    ) -> Result<M::Result, RpcError>
    where
        R: Sends<M>,
    {
        self.start::<M>(params, timeout)?.wait()
    }

    /// Sends a request now and returns the call to wait on later; several calls may be in
    /// flight at once. Dropping the call forgets the request.
    pub fn start<M: Request>(
        &self,
        params: &M::Params,
        timeout: Duration,
    ) -> Result<Call<R, M>, RpcError>
    where
        R: Sends<M>,
    {
        let deadline = crate::shared::deadline_in(timeout);
        let id = self.inner.io.shared.request::<M>(params, deadline)?;
        self.inner.io.write_here();
        Ok(Call {
            io: self.inner.io.clone(),
            id: Some(id),
            deadline,
            method: PhantomData,
        })
    }

    /// Sends a command (params with a minted `commandId`) and waits for its result. After a
    /// timeout, send the same command again: the retry carries the same `commandId`.
    pub fn command<M: Request>(&self, command: &Command<M>) -> Result<M::Result, RpcError>
    where
        R: Sends<M>,
    {
        self.request::<M>(command.params())
    }

    /// Sends a notification.
    pub fn notify<N: Notification>(&self, params: &N::Params) -> Result<(), RpcError> {
        self.inner.io.shared.notify::<N>(params)?;
        self.inner.io.write_here();
        Ok(())
    }

    /// The notifications and undecodable frames (and the peer's requests, with
    /// [`Options::inbound_requests`]), in wire order, blocking for each; the
    /// iterator ends when the connection closes. Everything read before a response is queued
    /// before that response is delivered.
    pub fn notifications(&self) -> Notifications<'_, R> {
        Notifications(&self.inner.io.shared)
    }

    /// The next notification or undecodable frame (or request's copy), waiting up to
    /// `timeout`; `None` when nothing came in time or the connection closed.
    pub fn next_timeout(&self, timeout: Duration) -> Option<Inbound<R>> {
        let shared = &self.inner.io.shared;
        // A timeout past what an `Instant` holds is none.
        let deadline = Instant::now().checked_add(timeout);
        wait(deadline, |cx| shared.poll_inbound(cx)).flatten()
    }

    /// The next notification or undecodable frame (or request's copy) if one is ready (its
    /// line decoded on this thread); `Ready(None)` once the connection closed and every
    /// frame was taken. When none is ready, `cx`'s waker is woken once one may be: for a
    /// thread that waits on more than this connection (as `msp-client`'s session handles
    /// do), and parks itself.
    pub fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Inbound<R>>> {
        self.inner.io.shared.poll_inbound(cx)
    }

    /// Why the connection closed, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.inner.io.shared.close_reason()
    }

    /// Ends the connection at once, as dropping its last clone does: pending requests fail,
    /// what was read until then is still delivered and nothing more is, and a spawned host
    /// is killed, with no grace ([`Connection::close`] drains it instead). The close reason
    /// is `Local`, even for a close in progress, which still returns the host's exit.
    pub fn abort(&self) {
        self.inner.abort();
    }

    /// Closes the connection in order: requests of the peer already received are answered
    /// (within the grace period; later ones get `-32601`), the writer finishes what is queued
    /// and closes its side (a host's stdin, so it drains), a spawned host gets the grace
    /// period to exit before it is stopped ([`HostProcess::stop`]: `SIGTERM`, then a kill),
    /// what it wrote until then is still delivered to
    /// [`Connection::notifications`], and pending requests fail. Returns the host's exit,
    /// classified (`None` for a connection over plain pipes). Closing again returns the same.
    pub fn close(&self) -> Option<HostExit> {
        let io = &self.inner.io;
        // A grace too long for a deadline (`Duration::MAX`) waits without one.
        let within_grace = || Instant::now().checked_add(io.grace);
        io.shared.stop_handling();
        wait(within_grace(), |cx| {
            io.shared.poll_closing(Closing::Handled, cx)
        });
        io.shared.close_output();
        if io.process.is_none() {
            // Over plain streams nothing else waits for the writer: what is queued is
            // written before the close.
            wait(within_grace(), |cx| {
                io.shared.poll_closing(Closing::Written, cx)
            });
        }
        let exit = io.process.as_ref().map(|process| {
            let exit = process.stop(io.grace);
            // What the host wrote before it exited is in the pipe already, and still
            // delivered; a descendant keeping its stdout open does not hold the close long.
            let read_all = Instant::now() + TERM_GRACE;
            wait(Some(read_all), |cx| {
                io.shared.poll_closing(Closing::ReadAll, cx)
            });
            exit
        });
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
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        options: Options<Client>,
    ) -> Self {
        Self::over(reader, writer, options)
    }

    /// Spawns a host (`HostCommand::muse()` for `muse serve`) and connects to it over its
    /// stdin and stdout.
    pub fn spawn(command: &HostCommand, options: Options<Client>) -> Result<Self, SpawnError> {
        let (process, stdin, stdout): (HostProcess, ChildStdin, ChildStdout) =
            HostProcess::spawn(command)?;
        Ok(Self::launch(
            stdout,
            stdin,
            options,
            Some(Arc::new(process)),
        ))
    }

    /// Opens the session: `initialize`, the checks of [`Handshake::from_wire`] (the envelope
    /// version and the host's release first, then the rest of the result), then
    /// `initialized`. A host that fails the checks is refused with [`RpcError::Handshake`].
    pub fn initialize(&self, params: &InitializeParams) -> Result<&Handshake, RpcError> {
        self.inner.io.shared.begin_initialize(params)?;
        let timeout = self.inner.settings.timeout_of(methods::Initialize::METHOD);
        let response = self
            .start::<methods::Initialize>(params, timeout)?
            .response()?;
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
    }
}

/// A request in flight.
pub struct Call<R: Role, M: Request> {
    io: Arc<Io<R>>,
    /// `None` once its response was taken.
    id: Option<Id>,
    deadline: Instant,
    method: PhantomData<fn() -> M>,
}

impl<R: Role, M: Request> Call<R, M> {
    /// The request's id.
    pub fn id(&self) -> Option<&Id> {
        self.id.as_ref()
    }

    /// Waits for the typed result, the error, the timeout or the close.
    pub fn wait(self) -> Result<M::Result, RpcError> {
        self.response()?.decode::<M>()
    }

    /// Waits for the response, its result still wire text.
    fn response(mut self) -> Result<Response, RpcError> {
        let Some(id) = self.id.take() else {
            return Err(RpcError::Closed(CloseReason::Local));
        };
        let shared = &self.io.shared;
        loop {
            match wait(Some(self.deadline), |cx| shared.poll_response(&id, cx)) {
                Some(Some(response)) => return Ok(response),
                Some(None) => {
                    let reason = shared.close_reason().unwrap_or(CloseReason::Local);
                    return Err(RpcError::Closed(reason));
                }
                // The endpoint decides what timed out; this request's outcome comes next.
                None => shared.handle_timeout(Instant::now()),
            }
        }
    }
}

impl<R: Role, M: Request> Drop for Call<R, M> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.io.shared.cancel(&id);
        }
    }
}

/// The notifications of a connection, in wire order (see [`Connection::notifications`]).
pub struct Notifications<'a, R: Role = Client>(&'a Shared<R>);

impl<R: Role> Iterator for Notifications<'_, R> {
    type Item = Inbound<R>;

    fn next(&mut self) -> Option<Inbound<R>> {
        wait(None, |cx| self.0.poll_inbound(cx)).flatten()
    }
}

fn spawn(name: &str, work: impl FnOnce() + Send + 'static) {
    // Without its threads the connection cannot work at all: that is a panic, like `spawn`'s.
    std::thread::Builder::new()
        .name(name.into())
        .spawn(work)
        .unwrap_or_else(|e| panic!("cannot start the {name} thread: {e}"));
}

/// Reads until the end of the peer's output, handing in each read's lines; then closes.
fn read_loop<R: Role>(mut reader: impl Read, max: usize, io: &Io<R>) {
    let mut lines = LineDecoder::new(max);
    let mut decoded = Vec::new();
    let stopped = loop {
        // Straight into the decoder: no copy on the way.
        let process = io.process.as_deref();
        process.inspect(|p| p.read_begun());
        let read = reader.read(lines.room(READ_BYTES));
        process.inspect(|p| p.read_ended());
        match read {
            Ok(0) => break None,
            Ok(n) => {
                lines.filled(n);
                io.shared.receive(&mut lines, &mut decoded);
                wait(None, |cx| io.shared.poll_room(cx));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Some(CloseReason::io(&e)),
        }
    };
    lines.finish();
    io.shared.receive(&mut lines, &mut decoded);
    let fallback = stopped.unwrap_or(CloseReason::PeerClosed);
    io.shared
        .close(close_reason(io.process.as_deref(), fallback));
    io.shared.reader_stopped();
}

/// Writes what callers leave to it until the output closes, then closes the stream; while
/// lines wait for a consumer, looks for a stall every [`STALL`] (see `shared.rs`).
fn write_loop<R: Role>(io: &Io<R>) {
    let mut lines = Vec::new();
    // The consumers' progress at the last look, while lines wait for them.
    let mut watch = None;
    loop {
        let deadline = watch.map(|_| Instant::now() + STALL);
        let output = wait(deadline, |cx| io.shared.poll_output(watch.is_some(), cx));
        match output {
            Some(Output::Lines | Output::Closed) => {
                let mut stream = io.stream.lock().unwrap_or_else(|e| e.into_inner());
                while io.shared.take_lines(&mut lines, None) {
                    if let Err(e) = io.write(&mut stream, &mut lines) {
                        drop(stream);
                        return io.write_failed(&e);
                    }
                }
                if output == Some(Output::Closed) {
                    // Dropping the writer closes the peer's input (a host's stdin, so it
                    // drains).
                    stream.take();
                    drop(stream);
                    io.shared.writer_stopped();
                    return;
                }
            }
            Some(Output::Watch) => watch = Some(io.shared.decoded()),
            None => watch = watch.and_then(|since| io.shared.check_stall(since)),
        }
    }
}

/// Answers the peer's requests in order until the handler is to stop.
fn handle_loop<R: Role>(mut handlers: Handlers<R>, io: &Io<R>) {
    while let Some(Some((id, request))) = wait(None, |cx| io.shared.poll_request(cx)) {
        let reply = handlers.answer(&id, request);
        io.shared.respond(&id, reply);
        io.write_here();
    }
    io.shared.handler_stopped();
}
