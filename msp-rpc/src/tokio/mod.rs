//! The async driver (feature `tokio`): tokio tasks and channels around the same endpoint.
//!
//! A reader task, a writer task and a handler task, as the blocking driver has threads; the
//! notification stream types the lines the reader hands it as it yields them, and the reader
//! types them itself when nobody waits for them or a consumer stopped. A request's future
//! writes its own line when the stream takes it at once (see `wire.rs`). The request future is
//! cancel-safe: dropping it (a `select!` that went the other way, a
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

mod process;
mod wire;

use std::collections::{BTreeMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ::tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use ::tokio::sync::{mpsc, oneshot, Notify};
use ::tokio::time::Instant;
use msp_types::protocol::{methods, notifications};
use msp_types::rpc::{Id, Notification, Request};
use msp_types::InitializeParams;

use crate::backlog::{Backlog, Batch, Claim, Typing, Typist, STALL};
use crate::command::Command;
use crate::driver::{pump, trace, Handler, Inbound, Settings, Sinks, Traced, Tracer};
use crate::endpoint::{Client, Endpoint, Handled, Reply, Response, Role, Sends};
use crate::error::{CloseReason, RpcError};
use crate::framing::{LineDecoder, READ_BYTES};
use crate::handshake::{Handshake, HandshakeError};
use crate::process::{HostCommand, HostExit, SpawnError};

use self::wire::{Queue, Wire};

pub use self::process::HostProcess;
pub use crate::driver::Options;

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
    shared: Arc<Shared<R>>,
    process: Option<Arc<HostProcess>>,
    /// Held by the one consumer of notifications at a time.
    turn: ::tokio::sync::Mutex<()>,
    settings: Settings,
    handshake: OnceLock<Handshake>,
}

struct Shared<R: Role> {
    // Held briefly and never across an await: a std mutex.
    state: Mutex<State<R>>,
    /// The batch the consumer of notifications types from (see `backlog.rs`); locked first.
    claim: Claim,
    /// The stream and what is in flight to it (see `wire.rs`); locked before the state.
    wire: Mutex<Wire>,
    /// Rings the writer task for lines no request writes itself, and for the close.
    bell: Arc<Notify>,
    tracer: Option<Tracer>,
    /// Told when the reader waits for room in the backlog and there is.
    room: Notify,
    /// Turns true when the reader reached the end of the peer's output.
    read_all: ::tokio::sync::watch::Sender<bool>,
    /// Turns true when the handler answered every request handed to it.
    handled_all: ::tokio::sync::watch::Sender<bool>,
}

/// Waits up to `timeout` for `flag` to turn true.
async fn wait_for(flag: &::tokio::sync::watch::Sender<bool>, timeout: Duration) {
    let mut flag = flag.subscribe();
    let _ = ::tokio::time::timeout(timeout, flag.wait_for(|set| *set)).await;
}

struct State<R: Role> {
    endpoint: Endpoint<R>,
    sinks: Channels<R>,
    initialized: bool,
    /// Lines handed to the consumer, for it to type as it yields them.
    backlog: Backlog,
    /// Whether the consumer's last poll found nothing (it waits for lines).
    waiting: bool,
    /// Whether the reader waits for room in the backlog.
    reader_waits: bool,
    tracer: Option<Tracer>,
}

struct Channels<R: Role> {
    waiters: BTreeMap<Id, oneshot::Sender<Response>>,
    out: Queue,
    inbound: VecDeque<Inbound>,
    /// Whether more inbound frames may come.
    open: bool,
    /// The consumer to wake when inbound frames are queued or the connection closes.
    consumer: Option<Waker>,
    requests: Option<mpsc::UnboundedSender<(Id, R::PeerRequest)>>,
}

impl<R: Role> Sinks<R> for Channels<R> {
    fn transmit(&mut self, line: String) {
        self.out.push(&line);
    }

    fn response(&mut self, response: Response) {
        self.flush();
        if let Some(waiter) = self.waiters.remove(&response.id) {
            let _ = waiter.send(response);
        }
    }

    fn inbound(&mut self, inbound: Inbound) {
        if self.open {
            self.inbound.push_back(inbound);
        }
    }

    fn flush(&mut self) {
        if !self.inbound.is_empty() {
            if let Some(consumer) = self.consumer.take() {
                consumer.wake();
            }
        }
        self.out.flush();
    }

    fn request(&mut self, id: Id, request: R::PeerRequest) {
        if let Some(requests) = &self.requests {
            let _ = requests.send((id, request));
        }
    }
}

impl<R: Role> Shared<R> {
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Closes for `reason` (see [`State::shut`]).
    fn shut(&self, reason: CloseReason) {
        let mut held = self.claim.lock();
        self.lock().shut(&mut held, reason);
    }

    fn wire(&self) -> MutexGuard<'_, Wire> {
        self.wire.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes what a request queued, within the poll that queued it, when the stream is free
    /// and takes it at once; otherwise the writer task is rung for it.
    fn write_own(&self, cx: &mut Context<'_>) {
        if let Ok(mut wire) = self.wire.try_lock() {
            if wire.is_idle() {
                if !self.take(&mut wire) {
                    return; // Already written by whoever took the queue before.
                }
                if let Poll::Ready(Ok(())) = wire.poll_flight(cx) {
                    return;
                }
            }
        }
        // The writer task finishes what the stream did not take, meets the error, or writes
        // after what it has in flight.
        self.bell.notify_one();
    }

    /// Writes everything queued (the writer task); `Ready(Ok(closed))` once nothing is left,
    /// with whether the connection closed (nothing more can be queued then).
    fn poll_write_queued(&self, cx: &mut Context<'_>) -> Poll<std::io::Result<bool>> {
        let mut wire = self.wire();
        loop {
            if wire.is_idle() && !self.take(&mut wire) {
                return Poll::Ready(Ok(self.lock().sinks.out.is_closed()));
            }
            std::task::ready!(wire.poll_flight(cx))?;
        }
    }

    /// Takes what is queued into flight (the wire idle and locked), showing it to the tracer.
    fn take(&self, wire: &mut Wire) -> bool {
        let taken = wire.take(&mut self.lock().sinks.out);
        if taken {
            if let Some(tracer) = &self.tracer {
                wire.each_line(|line| trace(Some(tracer), Traced::Sent, line));
            }
        }
        taken
    }
}

impl<R: Role> Typing<R> for State<R> {
    type Sinks = Channels<R>;

    fn typist(&mut self) -> (&mut Backlog, Typist<'_, R, Channels<R>>) {
        let typist = Typist {
            endpoint: &mut self.endpoint,
            sinks: &mut self.sinks,
            tracer: self.tracer.as_ref(),
        };
        (&mut self.backlog, typist)
    }

    fn pop_inbound(&mut self) -> Option<Inbound> {
        self.sinks.inbound.pop_front()
    }
}

impl<R: Role> State<R> {
    fn pump(&mut self) {
        pump(&mut self.endpoint, &mut self.sinks);
    }

    /// Pumps a request's own line, which its future writes (see `wire.rs`).
    fn pump_for_caller(&mut self) {
        self.sinks.out.set_caller_writes(true);
        self.pump();
        self.sinks.out.set_caller_writes(false);
    }

    /// Gives back the consumer's used-up batch and hands it the next; tells a reader waiting
    /// for room when there is.
    fn refill(&mut self, held: &mut Option<Batch>, room: &Notify) {
        self.backlog.refill(held);
        if self.reader_waits && self.backlog.has_room() {
            room.notify_one();
        }
    }

    /// Closes for `reason`: lines handed over (`held` the consumer's) are typed, pending
    /// requests fail, the stream and the handler end, the writer finishes and closes its side.
    fn shut(&mut self, held: &mut Option<Batch>, reason: CloseReason) {
        self.type_waiting(held);
        self.endpoint.close(reason);
        self.pump();
        self.sinks.open = false;
        if let Some(consumer) = self.sinks.consumer.take() {
            consumer.wake();
        }
        self.sinks.requests = None;
        self.sinks.out.close();
    }
}

#[derive(Clone)]
struct Closer {
    process: Option<Arc<HostProcess>>,
    grace: Duration,
}

impl Closer {
    async fn reason(&self, fallback: CloseReason) -> CloseReason {
        match &self.process {
            Some(process) => process
                .wait_exit(self.grace)
                .await
                .map_or(fallback, CloseReason::HostExited),
            None => fallback,
        }
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
        let (handler, settings, max_frame_bytes, handled) = options.split();
        let mut endpoint = Endpoint::new();
        endpoint.handle_requests(handled);
        let (requests_tx, requests_rx) = mpsc::unbounded_channel();
        let bell = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                endpoint,
                sinks: Channels {
                    waiters: BTreeMap::new(),
                    out: Queue::new(bell.clone()),
                    inbound: VecDeque::new(),
                    open: true,
                    consumer: None,
                    requests: handler.is_some().then_some(requests_tx),
                },
                initialized: false,
                backlog: Backlog::default(),
                waiting: false,
                reader_waits: false,
                tracer: settings.tracer.clone(),
            }),
            claim: Claim::default(),
            wire: Mutex::new(Wire::new(writer)),
            bell,
            tracer: settings.tracer.clone(),
            room: Notify::new(),
            read_all: ::tokio::sync::watch::Sender::new(false),
            handled_all: ::tokio::sync::watch::Sender::new(handler.is_none()),
        });
        let closer = Closer {
            process: process.clone(),
            grace: settings.close_grace,
        };
        ::tokio::spawn(write_loop(shared.clone(), closer.clone()));
        ::tokio::spawn(read_loop(reader, max_frame_bytes, shared.clone(), closer));
        if let Some(handler) = handler {
            ::tokio::spawn(handle_loop(requests_rx, handler, shared.clone()));
        }
        Connection {
            inner: Arc::new(Inner {
                shared,
                process,
                turn: ::tokio::sync::Mutex::new(()),
                settings,
                handshake: OnceLock::new(),
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
        let deadline = Instant::now() + timeout;
        let (tx, mut rx) = oneshot::channel();
        let pending = {
            let mut state = self.inner.shared.lock();
            let pending = state
                .endpoint
                .request::<M>(params, Some(deadline.into_std()))?;
            state.sinks.waiters.insert(pending.id().clone(), tx);
            state.pump_for_caller();
            pending
        };
        // Its line, written here if the stream takes it at once; nothing is awaited before,
        // so a future dropped from now on leaves no half line.
        std::future::poll_fn(|cx| {
            self.inner.shared.write_own(cx);
            Poll::Ready(())
        })
        .await;
        let mut forget = Forget {
            shared: &self.inner.shared,
            id: Some(pending.id().clone()),
        };
        let response = match ::tokio::time::timeout_at(deadline, &mut rx).await {
            Ok(Ok(response)) => response,
            Ok(Err(_)) => {
                forget.id = None;
                let reason = self.inner.shared.lock().endpoint.close_reason().cloned();
                return Err(RpcError::Closed(reason.unwrap_or(CloseReason::Local)));
            }
            // The endpoint decides what timed out; its event lands on this waiter.
            Err(_) => {
                let mut state = self.inner.shared.lock();
                state.endpoint.handle_timeout(now());
                state.pump();
                drop(state);
                match rx.try_recv() {
                    Ok(response) => response,
                    Err(_) => {
                        return Err(RpcError::TimedOut {
                            method: M::METHOD,
                            id: pending.id().clone(),
                        })
                    }
                }
            }
        };
        forget.id = None;
        pending.decode(response)
    }

    /// Sends a command and waits for its result; after a timeout, send the same command again
    /// (it carries the same `commandId`).
    pub async fn command<M: Request>(&self, command: &Command<M>) -> Result<M::Result, RpcError>
    where
        R: Sends<M>,
    {
        self.request::<M>(command.params()).await
    }

    /// Sends a notification.
    pub fn notify<N: Notification>(&self, params: &N::Params) -> Result<(), RpcError> {
        let mut state = self.inner.shared.lock();
        state.endpoint.notify::<N>(params)?;
        state.pump();
        Ok(())
    }

    /// The notifications and undecodable frames as a `Stream`, in wire order; it ends when the
    /// connection closes. One consumer at a time: a second call waits for the first to drop.
    pub async fn notifications(&self) -> Notifications<'_, R> {
        let turn = self.inner.turn.lock().await;
        Notifications {
            shared: &self.inner.shared,
            _turn: turn,
        }
    }

    /// The next notification or undecodable frame; `None` once the connection closed.
    pub async fn recv(&self) -> Option<Inbound> {
        self.notifications().await.next().await
    }

    /// Why the connection closed, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.inner.shared.lock().endpoint.close_reason().cloned()
    }

    /// Closes in order: requests of the peer already received are answered (within the grace
    /// period; later ones get `-32601`), the writer finishes and closes its side (a host's
    /// stdin, so it drains),
    /// a spawned host gets the grace period to exit before it is killed, what it wrote until
    /// then is still delivered, and pending requests fail. Returns the host's exit, classified
    /// (`None` over plain streams).
    pub async fn close(&self) -> Option<HostExit> {
        let grace = self.inner.settings.close_grace;
        {
            // Requests already taken get their replies; later ones get `-32601`.
            let mut state = self.inner.shared.lock();
            state.endpoint.handle_requests(Handled::Nothing);
            state.sinks.requests = None;
        }
        wait_for(&self.inner.shared.handled_all, grace).await;
        self.inner.shared.lock().sinks.out.close();
        let exit = match &self.inner.process {
            Some(process) => {
                let exit = match process.wait_exit(grace).await {
                    Some(exit) => exit,
                    None => process.kill().await,
                };
                // What the host wrote before it exited is still delivered.
                wait_for(&self.inner.shared.read_all, grace).await;
                Some(exit)
            }
            None => None,
        };
        let reason = exit
            .clone()
            .map_or(CloseReason::Local, CloseReason::HostExited);
        self.inner.shared.shut(reason);
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
    /// stdin and stdout.
    pub fn spawn(command: &HostCommand, options: Options<Client>) -> Result<Self, SpawnError> {
        let (process, stdin, stdout) = HostProcess::spawn(command)?;
        Ok(Self::launch(
            stdout,
            stdin,
            options,
            Some(Arc::new(process)),
        ))
    }

    /// Opens the session: `initialize`, the checks of [`Handshake::check`], then `initialized`.
    pub async fn initialize(&self, params: &InitializeParams) -> Result<&Handshake, RpcError> {
        {
            let mut state = self.inner.shared.lock();
            if state.initialized {
                return Err(HandshakeError::AlreadyInitialized.into());
            }
            state.initialized = true;
        }
        let result = self.request::<methods::Initialize>(params).await?;
        let handshake = Handshake::check(result, self.inner.settings.fingerprint)?;
        self.notify::<notifications::Initialized>(&None)?;
        Ok(self.inner.handshake.get_or_init(|| handshake))
    }

    /// The handshake, once [`Connection::initialize`] succeeded.
    pub fn handshake(&self) -> Option<&Handshake> {
        self.inner.handshake.get()
    }

    /// The spawned host, when there is one.
    pub fn process(&self) -> Option<&HostProcess> {
        self.inner.process.as_deref()
    }
}

impl<R: Role> Drop for Inner<R> {
    fn drop(&mut self) {
        self.shared.shut(CloseReason::Local);
        if let Some(process) = &self.process {
            process.start_kill();
        }
    }
}

/// Forgets a request whose future was dropped before its response.
struct Forget<'a, R: Role> {
    shared: &'a Shared<R>,
    id: Option<Id>,
}

impl<R: Role> Drop for Forget<'_, R> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let mut state = self.shared.lock();
            state.sinks.waiters.remove(&id);
            state.endpoint.cancel(&id);
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
    pub async fn next(&mut self) -> Option<Inbound> {
        std::future::poll_fn(|cx| self.poll_inbound(cx)).await
    }

    /// The next inbound frame, typing lines the reader handed over.
    fn poll_inbound(&mut self, cx: &mut Context<'_>) -> Poll<Option<Inbound>> {
        let shared = self.shared;
        let mut held = shared.claim.lock();
        loop {
            let tracer = shared.tracer.as_ref();
            if let Some(inbound) = shared.claim.next(&mut held, tracer, || shared.lock()) {
                if held.as_ref().is_some_and(Batch::is_empty) {
                    // The next batch now, or none held: a consumer that goes away then leaves
                    // no lines waiting for it.
                    let mut state = shared.lock();
                    if state.sinks.inbound.is_empty() {
                        state.refill(&mut held, &shared.room);
                    }
                }
                return Poll::Ready(Some(inbound));
            }
            let mut state = shared.lock();
            if let Some(inbound) = state.sinks.inbound.pop_front() {
                state.waiting = false;
                return Poll::Ready(Some(inbound));
            }
            state.refill(&mut held, &shared.room);
            if held.is_some() {
                state.waiting = false;
                continue;
            }
            if !state.sinks.open {
                return Poll::Ready(None);
            }
            state.waiting = true;
            state.sinks.consumer = Some(cx.waker().clone());
            return Poll::Pending;
        }
    }
}

impl<R: Role> Drop for Notifications<'_, R> {
    fn drop(&mut self) {
        // The consumer leaves: the lines it held are typed now, for the next one.
        let mut held = self.shared.claim.lock();
        let mut state = self.shared.lock();
        if held.is_some() {
            state.type_waiting(&mut held);
        }
        state.waiting = false;
        state.sinks.consumer = None;
    }
}

impl<R: Role> futures_core::Stream for Notifications<'_, R> {
    type Item = Inbound;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Inbound>> {
        self.poll_inbound(cx)
    }
}

async fn read_loop<R: Role>(
    mut reader: impl AsyncRead + Unpin,
    max: usize,
    shared: Arc<Shared<R>>,
    closer: Closer,
) {
    let mut lines = LineDecoder::new(max);
    let mut batch = Batch::default();
    let mut stall = Stall::default();
    let stopped = loop {
        // While lines wait for the consumer, look at them every `STALL` between reads. Bytes
        // go straight into the decoder: no copy on the way.
        let watching = stall.watching(&shared);
        let room = lines.room(READ_BYTES);
        let read = match watching {
            false => reader.read(room).await,
            true => match ::tokio::time::timeout(STALL, reader.read(room)).await {
                Ok(read) => read,
                Err(_) => {
                    stall.check(&shared);
                    continue;
                }
            },
        };
        match read {
            Ok(0) => break None,
            Ok(n) => {
                lines.filled(n);
                batch.fill(&mut lines);
                if !batch.is_empty() {
                    let handed;
                    (batch, handed) = deliver(&shared, batch, &mut stall).await;
                    if handed {
                        // Let a consumer on this thread type the lines while they are in cache.
                        ::tokio::task::yield_now().await;
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => break Some(CloseReason::io(&e)),
        }
    };
    lines.finish();
    batch.fill(&mut lines);
    deliver(&shared, batch, &mut stall).await;
    let reason = closer
        .reason(stopped.unwrap_or(CloseReason::PeerClosed))
        .await;
    shared.shut(reason);
    shared.read_all.send_replace(true);
}

/// The reader's watch on lines left with the consumer: those waiting while it took none for
/// [`STALL`] it types itself.
#[derive(Default)]
struct Stall {
    /// The consumer's progress at the last look.
    mark: u64,
}

impl Stall {
    /// Whether lines wait for the consumer (and so the reader should look again soon).
    fn watching<R: Role>(&mut self, shared: &Shared<R>) -> bool {
        self.mark = shared.claim.taken();
        !shared.lock().backlog.is_idle()
    }

    /// Types the lines left when the consumer took none since the last look.
    fn check<R: Role>(&mut self, shared: &Shared<R>) {
        if shared.claim.taken() == self.mark {
            let mut held = shared.claim.lock();
            let mut state = shared.lock();
            if shared.claim.taken() == self.mark && !state.backlog.is_idle() {
                tracing::trace!("typing lines a consumer left");
                state.type_waiting(&mut held);
            }
        }
        self.mark = shared.claim.taken();
    }
}

/// Hands `batch` to a consumer at work, or types it here (see `backlog.rs`); returns an empty
/// batch to fill next, and whether the lines were handed over.
async fn deliver<R: Role>(
    shared: &Shared<R>,
    mut batch: Batch,
    stall: &mut Stall,
) -> (Batch, bool) {
    loop {
        let room = shared.room.notified();
        ::tokio::pin!(room);
        room.as_mut().enable();
        {
            let mut state = shared.lock();
            let full = match state.reader_waits {
                true => !state.backlog.has_room(),
                false => state.backlog.is_full(),
            };
            state.reader_waits = full && state.sinks.open;
            if !state.reader_waits {
                break;
            }
            stall.mark = shared.claim.taken();
        }
        if ::tokio::time::timeout(STALL, room).await.is_err() {
            stall.check(shared);
        }
    }
    let mut state = shared.lock();
    if !state.sinks.open {
        // Closed: nothing more is delivered.
        return (Batch::default(), false);
    }
    if state.waiting || !state.backlog.is_idle() {
        let next = state.backlog.push(batch);
        if let Some(consumer) = state.sinks.consumer.take() {
            consumer.wake();
        }
        return (next, true);
    }
    // Idle: no line waits before these.
    batch.type_all(&mut state.typist().1);
    (batch, false)
}

/// Writes what no request writes itself (see `wire.rs`) until the close, then closes the
/// stream.
async fn write_loop<R: Role>(shared: Arc<Shared<R>>, closer: Closer) {
    loop {
        match std::future::poll_fn(|cx| shared.poll_write_queued(cx)).await {
            Ok(false) => shared.bell.notified().await,
            Ok(true) => break,
            Err(e) => {
                tracing::debug!(error = %e, "write failed");
                let reason = closer.reason(CloseReason::io(&e)).await;
                shared.shut(reason);
                return;
            }
        }
    }
    let _ = std::future::poll_fn(|cx| shared.wire().poll_close(cx)).await;
}

async fn handle_loop<R: Role>(
    mut requests: mpsc::UnboundedReceiver<(Id, R::PeerRequest)>,
    mut handler: Handler<R>,
    shared: Arc<Shared<R>>,
) {
    while let Some((id, request)) = requests.recv().await {
        let method = R::method(&request).to_owned();
        let reply = catch_unwind(AssertUnwindSafe(|| handler(&id, request)))
            .unwrap_or_else(|_| Reply::internal(format!("the handler for {method} failed")));
        let mut state = shared.lock();
        if let Err(e) = state.endpoint.respond(&id, reply) {
            tracing::debug!(error = %e, "reply not sent");
        }
        state.pump();
    }
    shared.handled_all.send_replace(true);
}
