//! The blocking driver: std threads and channels, no async runtime.
//!
//! A reader thread cuts what the peer writes into lines and hands them on (to a consumer of
//! notifications at work, which types them on its own thread, or types them itself); a
//! request's caller writes its line itself while that cannot block, and a writer thread writes
//! the rest (so a peer that stops reading blocks neither the reader nor a caller past its
//! deadline; see `outbox.rs`); a handler thread answers the peer's requests in order, and a
//! fourth types the lines a consumer left halfway. Requests block the calling thread until
//! their typed result, their error, their timeout or the connection's close.
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

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, BufWriter, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{ChildStdin, ChildStdout};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, TryLockError};
use std::time::{Duration, Instant};

use msp_types::protocol::{methods, notifications};
use msp_types::rpc::{Id, Notification, Request};
use msp_types::InitializeParams;

use crate::backlog::{Backlog, Batch, Claim, Typing, Typist, STALL};
use crate::command::Command;
use crate::driver::{pump, trace, Handler, Inbound, Settings, Sinks, Traced, Tracer};
use crate::endpoint::{Client, Endpoint, Handled, Pending, Response, Role, Sends};
use crate::error::{CloseReason, RpcError};
use crate::framing::{LineDecoder, READ_BYTES};
use crate::handshake::{Handshake, HandshakeError};
use crate::outbox::Outbox;
use crate::process::{HostCommand, HostExit, HostProcess, SpawnError};

pub use crate::driver::Options;

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
    shared: Arc<Shared<R>>,
    process: Option<Arc<HostProcess>>,
    settings: Settings,
    handshake: OnceLock<Handshake>,
}

/// Where lines are written: whoever holds it writes (see `outbox.rs`); `None` once closed.
type Out = Option<BufWriter<Box<dyn Write + Send>>>;

struct Shared<R: Role> {
    state: Mutex<State<R>>,
    /// The peer's input, locked by the thread writing to it (never with the state's lock).
    out: Mutex<Out>,
    closer: Closer,
    /// The batch the consumer of notifications types from (see `backlog.rs`); locked first.
    claim: Claim,
    tracer: Option<Tracer>,
    /// Notified, when consumers sleep on it, as inbound frames are queued, lines are handed
    /// over, or the connection closes. (Every wake-up of a thread that did not need it costs
    /// the consumer dearly: it then meets that thread at the lock.)
    changed: Condvar,
    /// Notified when a reader waits for room in the backlog and there is.
    room: Condvar,
    /// Notified when lines are handed over to an idle backlog or the connection closes (for
    /// the stall thread).
    handed: Condvar,
    /// Consumers that hold no lines and look for more; counted before they take the lock, so
    /// the reader holding it sees them coming.
    waiting: AtomicUsize,
    /// Set when the reader reached the end of the peer's output.
    read_all: Flag,
    /// Set when the handler answered every request handed to it.
    handled_all: Flag,
}

/// A condition that turns true once, to wait for with a timeout.
#[derive(Default)]
struct Flag {
    set: Mutex<bool>,
    changed: Condvar,
}

impl Flag {
    fn set(&self) {
        *self.set.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.changed.notify_all();
    }

    fn wait(&self, timeout: Duration) {
        let set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.changed.wait_timeout_while(set, timeout, |set| !*set);
    }
}

struct State<R: Role> {
    endpoint: Endpoint<R>,
    sinks: Channels<R>,
    initialized: bool,
    /// Lines handed to the consumer, for it to type as it takes them.
    backlog: Backlog,
    /// Consumers asleep on `changed`.
    sleepers: usize,
    /// Whether the reader waits for room in the backlog.
    reader_waits: bool,
    tracer: Option<Tracer>,
}

/// A caller waiting for its response.
struct Waiter {
    response: SyncSender<Response>,
    /// Where its request's line ends in what was sent.
    sent: u64,
}

struct Channels<R: Role> {
    waiters: BTreeMap<Id, Waiter>,
    out: Outbox,
    inbound: VecDeque<Inbound>,
    /// Whether more inbound frames may come.
    open: bool,
    requests: Option<Sender<(Id, R::PeerRequest)>>,
}

impl<R: Role> Sinks<R> for Channels<R> {
    fn transmit(&mut self, line: String) {
        self.out.push(line);
    }

    fn response(&mut self, response: Response) {
        if let Some(waiter) = self.waiters.remove(&response.id) {
            // An answer (not a timeout or the close): the peer read the request.
            if matches!(response.outcome, Ok(_) | Err(RpcError::Remote(_))) {
                self.out.peer_read(waiter.sent);
            }
            let _ = waiter.response.try_send(response);
        }
    }

    fn inbound(&mut self, inbound: Inbound) {
        if self.open {
            self.inbound.push_back(inbound);
        }
    }

    // The inbound queue is the consumer's directly; lines to send may be the writer thread's.
    fn flush(&mut self) {
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

    /// Closes for `reason` (see [`State::shut`]), and wakes every thread that waits on it.
    fn shut(&self, reason: CloseReason) {
        let mut held = self.claim.lock();
        let mut state = self.lock();
        state.shut(&mut held, reason);
        drop(state);
        drop(held);
        self.changed.notify_all();
        self.room.notify_all();
        self.handed.notify_all();
    }

    /// Wakes the consumers asleep, if any (call without the lock held).
    fn wake_consumers(&self, sleepers: usize) {
        if sleepers > 0 {
            self.changed.notify_all();
        }
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

    /// Gives back the consumer's used-up batch and hands it the next; true when a reader
    /// waiting for room may go on.
    fn refill(&mut self, held: &mut Option<Batch>) -> bool {
        self.backlog.refill(held);
        self.reader_waits && self.backlog.has_room()
    }

    /// Closes for `reason`: lines handed over (`held` the consumer's) are typed, pending
    /// requests fail, the iterator and the handler end, and the writer finishes what is
    /// queued and closes its side.
    fn shut(&mut self, held: &mut Option<Batch>, reason: CloseReason) {
        self.type_waiting(held);
        self.endpoint.close(reason);
        self.pump();
        self.sinks.open = false;
        self.sinks.requests = None;
        self.sinks.out.close();
    }

    /// Pumps lines a caller sends and writes itself (see [`Shared::write_here`]).
    fn pump_for_caller(&mut self) {
        self.sinks.out.set_caller_writes(true);
        self.pump();
        self.sinks.out.set_caller_writes(false);
    }
}

/// Why reading or writing stopped, told as precisely as the process allows.
struct Closer {
    process: Option<Arc<HostProcess>>,
    grace: Duration,
}

impl Closer {
    fn reason(&self, fallback: CloseReason) -> CloseReason {
        match &self.process {
            Some(process) => process
                .wait_exit(self.grace)
                .map_or(fallback, CloseReason::HostExited),
            None => fallback,
        }
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
        let (handler, settings, max_frame_bytes, handled) = options.split();
        let mut endpoint = Endpoint::new();
        endpoint.handle_requests(handled);
        let bell = Arc::new(Condvar::new());
        let (requests_tx, requests_rx) = mpsc::channel();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                endpoint,
                sinks: Channels {
                    waiters: BTreeMap::new(),
                    out: Outbox::new(bell.clone()),
                    inbound: VecDeque::new(),
                    open: true,
                    requests: handler.is_some().then_some(requests_tx),
                },
                initialized: false,
                backlog: Backlog::default(),
                sleepers: 0,
                reader_waits: false,
                tracer: settings.tracer.clone(),
            }),
            out: Mutex::new(Some(BufWriter::new(Box::new(writer)))),
            closer: Closer {
                process: process.clone(),
                grace: settings.close_grace,
            },
            claim: Claim::default(),
            tracer: settings.tracer.clone(),
            changed: Condvar::new(),
            room: Condvar::new(),
            handed: Condvar::new(),
            waiting: AtomicUsize::new(0),
            read_all: Flag::default(),
            handled_all: Flag::default(),
        });
        spawn("msp-writer", {
            let shared = shared.clone();
            move || write_loop(&shared, &bell)
        });
        spawn("msp-reader", {
            let shared = shared.clone();
            move || read_loop(reader, max_frame_bytes, &shared)
        });
        spawn("msp-stall", {
            let shared = shared.clone();
            move || stall_loop(&shared)
        });
        match handler {
            Some(handler) => {
                let shared = shared.clone();
                spawn("msp-handler", move || {
                    handle_loop(requests_rx, handler, &shared)
                });
            }
            None => shared.handled_all.set(),
        }
        Connection {
            inner: Arc::new(Inner {
                shared,
                process,
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
        let deadline = Instant::now() + timeout;
        let (tx, rx) = mpsc::sync_channel(1);
        let mut state = self.inner.shared.lock();
        let pending = state.endpoint.request::<M>(params, Some(deadline))?;
        state.pump_for_caller();
        let sent = state.sinks.out.queued();
        let waiter = Waiter { response: tx, sent };
        state.sinks.waiters.insert(pending.id().clone(), waiter);
        drop(state);
        self.inner.shared.write_here();
        Ok(Call {
            shared: self.inner.shared.clone(),
            pending: Some(pending),
            rx,
            deadline,
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
        let mut state = self.inner.shared.lock();
        state.endpoint.notify::<N>(params)?;
        state.pump_for_caller();
        drop(state);
        self.inner.shared.write_here();
        Ok(())
    }

    /// The notifications and undecodable frames, in wire order, blocking for each; the
    /// iterator ends when the connection closes. Everything read before a response is queued
    /// before that response is delivered.
    pub fn notifications(&self) -> Notifications<'_, R> {
        Notifications(&self.inner.shared)
    }

    /// The next notification or undecodable frame, waiting up to `timeout`; `None` when
    /// nothing came in time or the connection closed.
    pub fn next_timeout(&self, timeout: Duration) -> Option<Inbound> {
        let consumer = self.notifications();
        consumer.0.next_inbound(Some(Instant::now() + timeout))
    }

    /// Why the connection closed, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.inner.shared.lock().endpoint.close_reason().cloned()
    }

    /// Closes the connection in order: requests of the peer already received are answered
    /// (within the grace period; later ones get `-32601`), the writer finishes what is queued
    /// and closes its side (a host's stdin, so it drains), a spawned host gets the grace period to exit before it
    /// is killed, what it wrote until then is still delivered to [`Connection::notifications`],
    /// and pending requests fail. Returns the host's exit, classified (`None` for a connection
    /// over plain pipes). Closing again returns the same.
    pub fn close(&self) -> Option<HostExit> {
        let grace = self.inner.settings.close_grace;
        {
            // Requests already taken get their replies; later ones get `-32601`.
            let mut state = self.inner.shared.lock();
            state.endpoint.handle_requests(Handled::Nothing);
            state.sinks.requests = None;
        }
        self.inner.shared.handled_all.wait(grace);
        self.inner.shared.lock().sinks.out.close();
        let exit = self.inner.process.as_ref().map(|process| {
            let exit = process.wait_exit(grace).unwrap_or_else(|| process.kill());
            // What the host wrote before it exited is still delivered.
            self.inner.shared.read_all.wait(grace);
            exit
        });
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

    /// Opens the session: `initialize`, the checks of [`Handshake::check`], then `initialized`.
    /// A host that fails the checks is refused with [`RpcError::Handshake`].
    pub fn initialize(&self, params: &InitializeParams) -> Result<&Handshake, RpcError> {
        {
            let mut state = self.inner.shared.lock();
            if state.initialized {
                return Err(HandshakeError::AlreadyInitialized.into());
            }
            state.initialized = true;
        }
        let result = self.request::<methods::Initialize>(params)?;
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
            process.kill();
        }
    }
}

/// A request in flight.
pub struct Call<R: Role, M: Request> {
    shared: Arc<Shared<R>>,
    pending: Option<Pending<M>>,
    rx: Receiver<Response>,
    deadline: Instant,
}

impl<R: Role, M: Request> Call<R, M> {
    /// The request's id.
    pub fn id(&self) -> Option<&Id> {
        self.pending.as_ref().map(Pending::id)
    }

    /// Waits for the typed result, the error, the timeout or the close.
    pub fn wait(mut self) -> Result<M::Result, RpcError> {
        let response = loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(response) => break response,
                // The endpoint decides what timed out; its event reaches this channel.
                Err(RecvTimeoutError::Timeout) => {
                    let mut state = self.shared.lock();
                    state.endpoint.handle_timeout(Instant::now());
                    state.pump();
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let reason = self.shared.lock().endpoint.close_reason().cloned();
                    self.pending = None;
                    return Err(RpcError::Closed(reason.unwrap_or(CloseReason::Local)));
                }
            }
        };
        let pending = self.pending.take();
        match pending {
            Some(pending) => pending.decode(response),
            None => response.decode::<M>(),
        }
    }
}

impl<R: Role, M: Request> Drop for Call<R, M> {
    fn drop(&mut self) {
        if let Some(pending) = self.pending.take() {
            let mut state = self.shared.lock();
            state.sinks.waiters.remove(pending.id());
            state.endpoint.cancel(pending.id());
        }
    }
}

/// The notifications of a connection, in wire order (see [`Connection::notifications`]).
pub struct Notifications<'a, R: Role = Client>(&'a Shared<R>);

impl<R: Role> Iterator for Notifications<'_, R> {
    type Item = Inbound;

    fn next(&mut self) -> Option<Inbound> {
        self.0.next_inbound(None)
    }
}

impl<R: Role> Shared<R> {
    /// The next inbound frame, typing lines the reader handed over on this thread.
    fn next_inbound(&self, deadline: Option<Instant>) -> Option<Inbound> {
        loop {
            let mut held = self.claim.lock();
            let tracer = self.tracer.as_ref();
            if let Some(inbound) = self.claim.next(&mut held, tracer, || self.lock()) {
                if held.as_ref().is_some_and(Batch::is_empty) {
                    // The next batch now, or none held: a consumer that goes away then leaves
                    // no lines waiting for it.
                    let mut state = self.lock();
                    let room = state.sinks.inbound.is_empty() && state.refill(&mut held);
                    drop(state);
                    self.room_if(room);
                }
                return Some(inbound);
            }
            self.waiting.fetch_add(1, Ordering::SeqCst);
            let next = self.next_waiting(held, deadline);
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            if let Some(next) = next {
                return next;
            }
        }
    }

    /// With no lines held: the oldest inbound frame queued, or `None` after claiming the next
    /// batch or waiting for news (to look again); `Some(None)` once closed or past `deadline`.
    #[allow(clippy::option_option)]
    fn next_waiting(
        &self,
        mut held: MutexGuard<'_, Option<Batch>>,
        deadline: Option<Instant>,
    ) -> Option<Option<Inbound>> {
        let mut state = self.lock();
        if let Some(inbound) = state.sinks.inbound.pop_front() {
            return Some(Some(inbound));
        }
        let room = state.refill(&mut held);
        if held.is_some() {
            drop(state);
            self.room_if(room);
            return None;
        }
        if !state.sinks.open {
            return Some(None);
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|left| left.is_zero()) {
            return Some(None);
        }
        // Nobody may wait on the claim's lock while this thread sleeps.
        drop(held);
        state.sleepers += 1;
        state = match left {
            None => self.changed.wait(state).unwrap_or_else(|e| e.into_inner()),
            Some(left) => {
                let waited = self.changed.wait_timeout(state, left);
                waited.unwrap_or_else(|e| e.into_inner()).0
            }
        };
        state.sleepers -= 1;
        None
    }

    fn room_if(&self, room: bool) {
        if room {
            self.room.notify_all();
        }
    }
}

fn spawn(name: &str, work: impl FnOnce() + Send + 'static) {
    // Without its threads the connection cannot work at all: that is a panic, like `spawn`'s.
    std::thread::Builder::new()
        .name(name.into())
        .spawn(work)
        .unwrap_or_else(|e| panic!("cannot start the {name} thread: {e}"));
}

fn read_loop<R: Role>(mut reader: impl Read, max: usize, shared: &Shared<R>) {
    let mut lines = LineDecoder::new(max);
    let mut batch = Batch::default();
    let stopped = loop {
        // Straight into the decoder: no copy on the way.
        match reader.read(lines.room(READ_BYTES)) {
            Ok(0) => break None,
            Ok(n) => {
                lines.filled(n);
                batch.fill(&mut lines);
                if !batch.is_empty() {
                    batch = deliver(shared, batch);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Some(CloseReason::io(&e)),
        }
    };
    lines.finish();
    batch.fill(&mut lines);
    deliver(shared, batch);
    let reason = shared
        .closer
        .reason(stopped.unwrap_or(CloseReason::PeerClosed));
    shared.shut(reason);
    shared.read_all.set();
}

/// Hands `batch` to a consumer at work, or types it here (see `backlog.rs`); returns an empty
/// batch to fill next.
fn deliver<R: Role>(shared: &Shared<R>, mut batch: Batch) -> Batch {
    let mut state = shared.lock();
    if state.backlog.is_full() {
        state.reader_waits = true;
        let waited = shared
            .room
            .wait_while(state, |state| !state.backlog.has_room() && state.sinks.open);
        state = waited.unwrap_or_else(|e| e.into_inner());
        state.reader_waits = false;
    }
    if !state.sinks.open {
        // Closed: nothing more is delivered.
        return Batch::default();
    }
    if shared.waiting.load(Ordering::SeqCst) > 0 || !state.backlog.is_idle() {
        let was_idle = state.backlog.is_idle();
        let next = state.backlog.push(batch);
        let sleepers = state.sleepers;
        drop(state);
        shared.wake_consumers(sleepers);
        if was_idle {
            shared.handed.notify_all();
        }
        return next;
    }
    // Idle: no line waits before these.
    batch.type_all(&mut state.typist().1);
    let sleepers = state.sleepers;
    drop(state);
    shared.wake_consumers(sleepers);
    batch
}

/// Types the lines a consumer left: those waiting while it took none for [`STALL`].
fn stall_loop<R: Role>(shared: &Shared<R>) {
    let mut state = shared.lock();
    loop {
        if state.backlog.is_idle() {
            if !state.sinks.open {
                return;
            }
            state = shared.handed.wait(state).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        let mark = shared.claim.taken();
        let waited = shared.handed.wait_timeout_while(state, STALL, |state| {
            !state.backlog.is_idle() && state.sinks.open
        });
        let (waited, timeout) = waited.unwrap_or_else(|e| e.into_inner());
        state = waited;
        if !timeout.timed_out() || shared.claim.taken() != mark {
            continue;
        }
        drop(state);
        let mut held = shared.claim.lock();
        state = shared.lock();
        if shared.claim.taken() == mark && !state.backlog.is_idle() {
            tracing::trace!("typing lines a consumer left");
            state.type_waiting(&mut held);
            let sleepers = state.sleepers;
            drop(held);
            drop(state);
            shared.wake_consumers(sleepers);
            shared.room.notify_all();
            state = shared.lock();
        }
    }
}

/// Writes what callers leave to it (see `outbox.rs`) until the close, then closes the
/// peer's input.
fn write_loop<R: Role>(shared: &Shared<R>, bell: &Condvar) {
    loop {
        let open = {
            let state = shared.lock();
            let mut state = bell
                .wait_while(state, |state| !state.sinks.out.wanted())
                .unwrap_or_else(|e| e.into_inner());
            state.sinks.out.answer();
            state.sinks.out.is_open()
        };
        let mut out = shared.out.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let lines = shared.lock().sinks.out.for_writer();
            if lines.is_empty() {
                break;
            }
            if let Err(e) = shared.write(&mut out, lines) {
                drop(out);
                shared.write_failed(&e);
                return;
            }
        }
        if !open {
            // Dropping the writer closes the peer's input (a host's stdin, so it drains).
            out.take();
            return;
        }
    }
}

impl<R: Role> Shared<R> {
    /// Writes what a caller just queued on its own thread, when that cannot block; otherwise
    /// (or when another thread writes now) the writer thread writes it.
    fn write_here(&self) {
        let mut out = match self.out.try_lock() {
            Ok(out) => out,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                // The thread writing may have taken its last lines already.
                self.lock().sinks.out.ring();
                return;
            }
        };
        loop {
            let Some(lines) = self.lock().sinks.out.for_caller() else {
                return;
            };
            if let Err(e) = self.write(&mut out, lines) {
                drop(out);
                self.write_failed(&e);
                return;
            }
        }
    }

    /// Writes `lines` and flushes them.
    fn write(&self, out: &mut Out, lines: VecDeque<String>) -> io::Result<()> {
        let Some(out) = out else {
            return Ok(());
        };
        for line in lines {
            trace(self.tracer.as_ref(), Traced::Sent, &line);
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    /// Closes after a failed write, for the reason the process gives, if it can.
    fn write_failed(&self, error: &io::Error) {
        tracing::debug!(%error, "write failed");
        self.shut(self.closer.reason(CloseReason::io(error)));
    }
}

fn handle_loop<R: Role>(
    requests: Receiver<(Id, R::PeerRequest)>,
    mut handler: Handler<R>,
    shared: &Shared<R>,
) {
    for (id, request) in requests {
        let method = R::method(&request).to_owned();
        let reply = catch_unwind(AssertUnwindSafe(|| handler(&id, request))).unwrap_or_else(|_| {
            crate::endpoint::Reply::internal(format!("the handler for {method} failed"))
        });
        let mut state = shared.lock();
        if let Err(e) = state.endpoint.respond(&id, reply) {
            tracing::debug!(error = %e, "reply not sent");
        }
        state.pump();
    }
    shared.handled_all.set();
}
