//! The connection's state, written once for both drivers: what their threads (blocking) or
//! tasks (tokio) share, and every step they take on it.
//!
//! The [`Endpoint`] decides everything about the protocol (ids, correlation, timeouts,
//! replies owed, close), and every frame goes through it. Around it, [`State`] keeps what
//! the endpoint hands out until someone takes it, the lines not decoded yet, and who to wake.
//! Each step below is a short, non-blocking function of the state under its one lock; the
//! drivers only move bytes and wait.
//!
//! # Who does what
//!
//! | who | waits for | takes the lock to |
//! | --- | --- | --- |
//! | the reader (a thread or task) | bytes from the peer (a blocking read) | hand in the lines of a read ([`Shared::receive`]) |
//! | the writer (a thread or task) | lines to write, or a stall to check ([`Shared::poll_output`]) | take the lines ([`Shared::take_lines`]), written with the lock released; check the stall ([`Shared::check_stall`]); say it closed the stream ([`Shared::writer_stopped`]) |
//! | the handler (a thread or task, with a handler) | a request of the peer ([`Shared::poll_request`]) | queue the handler's reply |
//! | a caller of a request | its response ([`Shared::poll_response`]), or its deadline | queue its request, write it itself when it may (see below), let the endpoint decide what timed out |
//! | a consumer of notifications | a frame ([`Shared::poll_inbound`]) | take the oldest frame, or the oldest line to decode |
//! | `close` | the handler's last reply, the writer's end (over plain streams), the reader's end of input ([`Shared::poll_closing`]) | stop the handler, close the output, close the endpoint |
//!
//! # Who decodes
//!
//! Decoding a frame is most of what reading costs, and it is cheapest on the thread that uses
//! the values, one frame at a time: values made on one thread and freed on another, or many
//! alive at once, make allocators slow (measured by the rpc bench: decoding on the reader's
//! thread and dropping on the consumer's made a flood twice as slow). So:
//!
//! - While a consumer of notifications waits, or lines already wait for one, the reader
//!   hands the lines of a read over undecoded, and the consumer decodes each as it takes it.
//! - Otherwise the reader decodes the lines itself, so that responses and the peer's requests
//!   never wait for a consumer.
//! - A consumer that stops halfway must not hold up the responses and requests among the
//!   lines it left: while lines wait, the writer looks every [`STALL`]; if none was decoded
//!   since its last look, it decodes them all ([`Shared::check_stall`]).
//!
//! Lines are decoded in the order they were read, one at a time (by whoever holds
//! `decoding`), outside the lock, and handed to the endpoint in that order under it.
//!
//! # Lock and wake-ups
//!
//! One `Mutex<State>` holds the endpoint, the queues and the wakers. It is held for short
//! steps only: never while decoding, writing, calling the program (handler, tracer) or
//! waiting. Everyone waits the same way: it polls a step with its waker; a step that cannot
//! finish keeps the waker in the state ([`Waiting`]), and whoever changes what it waits for
//! wakes it. Wakers are woken once the lock is released ([`Locked`]'s drop), so that the woken
//! do not meet the lock still held. The blocking driver's waker unparks its thread; tokio's is
//! the task's own.
//!
//! The drivers keep one more lock, their stream's: a caller that queued a line writes what is
//! queued itself when the stream is free (one wake-up fewer a round trip), else the writer
//! does. Order: the stream's lock, then the state's; never the other way, and the state's is
//! never held while writing.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use msp_types::rpc::{Id, Notification, Request};
use msp_types::{InitializeParams, Validate};

use crate::endpoint::{Endpoint, Event, Handled, Parsed, Reply, Response, Responses, Role, Sends};
use crate::error::{CloseReason, RpcError};
use crate::framing::{LineDecoder, LineError};
use crate::handshake::HandshakeError;
use crate::options::{trace, Asked, Inbound, Traced, Tracer};
use crate::sync::{Mutex, MutexGuard};

/// How long lines handed to a consumer may wait undecoded before the writer decodes them.
pub(crate) const STALL: Duration = Duration::from_millis(2);

/// The instant `timeout` from now. One past what an `Instant` holds (`Duration::MAX`, the
/// natural "no timeout") is a century away rather than a panic.
pub(crate) fn deadline_in(timeout: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);
    let now = Instant::now();
    now.checked_add(timeout).unwrap_or(now + CENTURY)
}

/// How many bytes of lines may wait for a consumer before the reader waits for it (as a full
/// pipe holds a writer), so that a fast peer does not fill memory with lines the consumer
/// reaches only when they left the caches; the reader goes on once half of them were taken.
pub(crate) const MAX_HANDED_BYTES: usize = 1024 * 1024;

/// The state both drivers share, behind its one lock.
pub(crate) struct Shared<R: Role> {
    state: Mutex<State<R>>,
    tracer: Option<Tracer>,
}

/// The complete lines of one read, handed to consumers undecoded: the text once, and each
/// line's place in it (or why framing refused it).
pub(crate) struct Handed {
    text: Arc<String>,
    lines: VecDeque<Result<Range<usize>, LineError>>,
}

impl Handed {
    /// Takes every complete line of `decoder`, showing each to the tracer.
    fn new(decoder: &mut LineDecoder, tracer: Option<&Tracer>) -> Self {
        let mut text = String::new();
        let mut lines = VecDeque::new();
        decoder.drain_lines(|line| {
            lines.push_back(line.map(|line| {
                trace(tracer, Traced::Received, line);
                let start = text.len();
                text.push_str(line);
                start..text.len()
            }))
        });
        Handed {
            text: Arc::new(text),
            lines,
        }
    }
}

/// A line taken from a [`Handed`] read, to decode where no lock is held.
enum Undecoded {
    Line(Arc<String>, Range<usize>),
    Bad(LineError),
}

/// What the endpoint handed out and nobody took yet, and who waits for what.
pub(crate) struct State<R: Role> {
    endpoint: Endpoint<R>,
    /// Notifications and undecodable frames (and, with `inbound_requests`, copies of the
    /// peer's requests), in wire order (before `lines`).
    inbound: VecDeque<Inbound<R>>,
    /// Reads handed to consumers undecoded, in wire order (see "Who decodes").
    lines: VecDeque<Handed>,
    /// Bytes of `lines`.
    lines_bytes: usize,
    /// Whether lines are being decoded outside the lock: one decoder at a time.
    decoding: bool,
    /// Lines decoded from `lines` so far: the consumers' progress, for the stall check.
    decoded: u64,
    /// Whether the writer watches `lines` for a stall.
    watching: bool,
    /// The peer's requests for the handler, in wire order.
    requests: VecDeque<(Id, Asked<R>)>,
    /// Whether the handler takes requests (false without one, and once closing).
    handling: bool,
    /// Whether each request for the handler is also delivered among `inbound`
    /// ([`Options::inbound_requests`](crate::Options::inbound_requests)).
    inbound_requests: bool,
    /// Whether the handler answered everything it took and stopped.
    handled_all: bool,
    /// Whether the reader still reads.
    reading: bool,
    /// Whether lines may still be written; once not, the writer writes what is left and
    /// closes the stream.
    output_open: bool,
    /// Whether the writer wrote what was left and closed the stream (a write that failed
    /// closes the connection instead).
    written_all: bool,
    /// Whether `initialize` was sent.
    initialized: bool,
    /// A close asked for while lines were being decoded: it is finished by their decoder
    /// (lines read before a close are still delivered, in order).
    closing: Option<CloseReason>,
    waiting: Waiting,
    /// Wakers to wake once the lock is released.
    woken: Vec<Waker>,
}

/// Who waits on the state, each for its own step.
#[derive(Default)]
struct Waiting {
    /// Consumers in [`Shared::poll_inbound`] (the blocking driver allows several at once).
    consumers: Vec<Waker>,
    /// The writer, in [`Shared::poll_output`].
    writer: Option<Waker>,
    /// The handler, in [`Shared::poll_request`].
    handler: Option<Waker>,
    /// The reader, in [`Shared::poll_room`].
    reader: Option<Waker>,
    /// `close`, in [`Shared::poll_closing`].
    closers: Vec<Waker>,
}

/// Keeps `waker` in `list` unless a waker there would wake the same.
fn keep(list: &mut Vec<Waker>, waker: &Waker) {
    if !list.iter().any(|held| held.will_wake(waker)) {
        list.push(waker.clone());
    }
}

/// What the writer is to do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Output {
    /// Lines are queued: write them.
    Lines,
    /// Lines wait for a consumer: look again in [`STALL`] ([`Shared::check_stall`]).
    Watch,
    /// Nothing more will be written: close the stream.
    Closed,
}

/// What `close` waits for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Closing {
    /// The handler's replies to the requests it took.
    Handled,
    /// The reader's end of input.
    ReadAll,
    /// The writer's end: what was queued written and the stream closed.
    Written,
}

/// The state, locked; the wakers it gathered are woken when it is dropped, after the lock is
/// released.
pub(crate) struct Locked<'a, R: Role> {
    guard: Option<MutexGuard<'a, State<R>>>,
}

impl<R: Role> std::ops::Deref for Locked<'_, R> {
    type Target = State<R>;

    fn deref(&self) -> &State<R> {
        self.guard.as_ref().expect("held until dropped")
    }
}

impl<R: Role> std::ops::DerefMut for Locked<'_, R> {
    fn deref_mut(&mut self) -> &mut State<R> {
        self.guard.as_mut().expect("held until dropped")
    }
}

impl<R: Role> Drop for Locked<'_, R> {
    fn drop(&mut self) {
        let Some(mut guard) = self.guard.take() else {
            return;
        };
        let mut woken = std::mem::take(&mut guard.woken);
        guard.endpoint.take_wakers(&mut woken);
        drop(guard);
        for waker in woken {
            waker.wake();
        }
    }
}

/// A line decoded, or refused by framing, for the endpoint.
pub(crate) enum Decoded<R: Role> {
    Parsed(Parsed<R>),
    Bad(LineError),
}

impl<R: Role> Decoded<R> {
    fn new(line: Result<&str, LineError>) -> Self {
        match line {
            Ok(line) => Decoded::Parsed(Endpoint::parse(line)),
            Err(error) => Decoded::Bad(error),
        }
    }

    fn from_undecoded(line: Undecoded) -> Self {
        match line {
            Undecoded::Line(text, range) => Decoded::Parsed(Endpoint::parse(&text[range])),
            Undecoded::Bad(error) => Decoded::Bad(error),
        }
    }
}

impl<R: Role> State<R> {
    /// Hands a decoded line to the endpoint.
    fn apply(&mut self, decoded: Decoded<R>) {
        match decoded {
            Decoded::Parsed(parsed) => self.endpoint.handle_parsed(parsed),
            Decoded::Bad(error) => self.endpoint.handle_bad_line(error),
        }
    }

    /// Moves what the endpoint produced to whoever takes it, and notes whom to wake.
    fn route(&mut self) {
        let (mut inbound, mut requests) = (false, false);
        while let Some(event) = self.endpoint.poll_event() {
            match event {
                Event::Notification {
                    notification,
                    extra,
                } => {
                    inbound = true;
                    self.inbound.push_back(Inbound::Notification {
                        notification,
                        extra,
                    });
                }
                Event::Undecodable(bad) => {
                    inbound = true;
                    self.inbound.push_back(Inbound::Undecodable(bad));
                }
                Event::Request { id, request } => {
                    requests = true;
                    if self.inbound_requests {
                        inbound = true;
                        self.inbound.push_back(Inbound::Request {
                            id: id.clone(),
                            request: Box::new(request.clone()),
                        });
                    }
                    self.requests.push_back((id, Asked::Request(request)));
                }
                Event::BadRequest { id, frame } => {
                    requests = true;
                    if self.inbound_requests {
                        inbound = true;
                        self.inbound.push_back(Inbound::Undecodable(frame.clone()));
                    }
                    self.requests.push_back((id, Asked::Bad(frame)));
                }
                // The endpoint keeps responses for their callers: never an event here.
                Event::Response(response) => {
                    tracing::debug!(id = %response.id, "a response as an event, dropped");
                }
            }
        }
        if inbound {
            self.woken.append(&mut self.waiting.consumers);
        }
        if requests {
            self.woken.extend(self.waiting.handler.take());
        }
        if self.endpoint.has_transmit() {
            // Lines a caller did not queue itself (a reply to the peer): the writer's.
            self.wake_writer();
        }
    }

    /// The oldest line waiting for a consumer, its bytes counted out; wakes the reader when it
    /// may go on.
    fn take_line(&mut self) -> Option<Undecoded> {
        let read = self.lines.front_mut()?;
        let line = match read.lines.pop_front() {
            Some(Ok(range)) => Some(Undecoded::Line(read.text.clone(), range)),
            Some(Err(error)) => Some(Undecoded::Bad(error)),
            None => None,
        };
        if read.lines.is_empty() {
            self.lines_bytes -= read.text.len();
            self.lines.pop_front();
            if self.lines_bytes <= MAX_HANDED_BYTES / 2 {
                self.woken.extend(self.waiting.reader.take());
            }
        }
        line
    }

    /// The end of a decoding: the next decoder, or a consumer waiting for its frame, may go,
    /// and a close asked for meanwhile is finished.
    fn decoded(&mut self) {
        self.decoding = false;
        self.woken.append(&mut self.waiting.consumers);
        if self.closing.is_some() {
            self.finish_close();
        }
    }

    /// Closes (nobody decoding): the lines read and not decoded yet are decoded here first,
    /// so that what was read before the close is still delivered; then pending requests
    /// fail, the notifications end once taken, the handler stops, and the writer writes what
    /// is queued and closes the stream.
    fn finish_close(&mut self) {
        let Some(reason) = self.closing.take() else {
            return;
        };
        while let Some(line) = self.take_line() {
            self.decoded += 1;
            self.apply(Decoded::from_undecoded(line));
        }
        self.endpoint.close(reason);
        self.route();
        self.requests.clear();
        self.handling = false;
        self.output_open = false;
        self.woken.append(&mut self.waiting.consumers);
        self.woken.extend(self.waiting.handler.take());
        self.woken.extend(self.waiting.reader.take());
        self.wake_writer();
        self.wake_closers();
    }

    /// Wakes the writer, if it waits.
    fn wake_writer(&mut self) {
        self.woken.extend(self.waiting.writer.take());
    }

    fn wake_closers(&mut self) {
        self.woken.append(&mut self.waiting.closers);
    }
}

impl<R: Role> Shared<R> {
    /// The state of a connection whose program answers the peer's requests (`handled`) or
    /// not, and those whose params do not decode (`bad_handled`) or not, and delivers a copy
    /// of each among the notifications (`inbound_requests`) or not.
    pub(crate) fn new(
        handled: bool,
        bad_handled: bool,
        inbound_requests: bool,
        tracer: Option<Tracer>,
    ) -> Self {
        let mut endpoint = Endpoint::new();
        endpoint.set_responses(Responses::Kept);
        endpoint.handle_requests(match handled {
            true => Handled::All,
            false => Handled::Nothing,
        });
        endpoint.handle_bad_requests(bad_handled);
        let handled = handled || bad_handled;
        let state = State {
            endpoint,
            inbound: VecDeque::new(),
            lines: VecDeque::new(),
            lines_bytes: 0,
            decoding: false,
            decoded: 0,
            watching: false,
            requests: VecDeque::new(),
            handling: handled,
            inbound_requests,
            handled_all: !handled,
            reading: true,
            output_open: true,
            written_all: false,
            initialized: false,
            closing: None,
            waiting: Waiting::default(),
            woken: Vec::new(),
        };
        Shared {
            state: Mutex::new(state),
            tracer,
        }
    }

    pub(crate) fn lock(&self) -> Locked<'_, R> {
        let guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Locked { guard: Some(guard) }
    }

    pub(crate) fn tracer(&self) -> Option<&Tracer> {
        self.tracer.as_ref()
    }

    // Callers.

    /// Queues a request; its caller then writes it ([`Shared::take_lines`]) or wakes the writer
    /// ([`Shared::wake_writer`]), and waits for its response.
    pub(crate) fn request<M: Request>(
        &self,
        params: &M::Params,
        deadline: Instant,
    ) -> Result<Id, RpcError>
    where
        R: Sends<M>,
    {
        let pending = self.lock().endpoint.request::<M>(params, Some(deadline))?;
        Ok(pending.id().clone())
    }

    /// Queues a notification, to write as a request's line is.
    pub(crate) fn notify<N: Notification>(&self, params: &N::Params) -> Result<(), RpcError> {
        self.lock().endpoint.notify::<N>(params)
    }

    /// The response to request `id` once it is known; `Ready(None)` once it was taken.
    pub(crate) fn poll_response(&self, id: &Id, cx: &mut Context<'_>) -> Poll<Option<Response>> {
        self.lock().endpoint.poll_response(id, cx.waker())
    }

    /// Lets the endpoint fail the requests whose deadline passed by `now`.
    pub(crate) fn handle_timeout(&self, now: Instant) {
        self.lock().endpoint.handle_timeout(now);
    }

    /// The response to request `id`, if it is known (the tokio driver's, when its call is
    /// dropped at its deadline).
    #[cfg(any(feature = "tokio", all(test, loom)))]
    pub(crate) fn take_response(&self, id: &Id) -> Option<Response> {
        self.lock().endpoint.take_response(id)
    }

    /// Forgets request `id` (its caller went away).
    pub(crate) fn cancel(&self, id: &Id) {
        self.lock().endpoint.cancel(id);
    }

    /// Notes that `initialize` is being sent: it may be, once, and with params the schema
    /// takes.
    pub(crate) fn begin_initialize(&self, params: &InitializeParams) -> Result<(), HandshakeError> {
        // A real host refuses params that break the schema; some fakes take them.
        if let Err(violations) = params.validate() {
            return Err(HandshakeError::InvalidParams { violations });
        }
        let mut state = self.lock();
        if std::mem::replace(&mut state.initialized, true) {
            return Err(HandshakeError::AlreadyInitialized);
        }
        Ok(())
    }

    /// Why the connection closed, once it has.
    pub(crate) fn close_reason(&self) -> Option<CloseReason> {
        self.lock().endpoint.close_reason().cloned()
    }

    // Consumers.

    /// The oldest notification, undecodable frame or request's copy, decoding its line here
    /// when it is one; `Ready(None)` once the connection closed and every frame was taken.
    pub(crate) fn poll_inbound(&self, cx: &mut Context<'_>) -> Poll<Option<Inbound<R>>> {
        let mut state = self.lock();
        loop {
            if let Some(inbound) = state.inbound.pop_front() {
                return Poll::Ready(Some(inbound));
            }
            if state.lines.is_empty() && state.endpoint.close_reason().is_some() {
                return Poll::Ready(None);
            }
            let line = match state.decoding {
                false => state.take_line(),
                // Another decodes the lines before: its frames come first.
                true => None,
            };
            let Some(line) = line else {
                keep(&mut state.waiting.consumers, cx.waker());
                return Poll::Pending;
            };
            state.decoding = true;
            drop(state);
            let decoded = Decoded::from_undecoded(line);
            state = self.lock();
            state.apply(decoded);
            state.decoded += 1;
            state.route();
            state.decoded();
        }
    }

    // The handler.

    /// The oldest request of the peer for the handler; `Ready(None)` once it should stop.
    pub(crate) fn poll_request(&self, cx: &mut Context<'_>) -> Poll<Option<(Id, Asked<R>)>> {
        let mut state = self.lock();
        if let Some(request) = state.requests.pop_front() {
            return Poll::Ready(Some(request));
        }
        if !state.handling {
            return Poll::Ready(None);
        }
        state.waiting.handler = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Queues the handler's reply to request `id`.
    pub(crate) fn respond(&self, id: &Id, reply: Reply) {
        if let Err(e) = self.lock().endpoint.respond(id, reply) {
            tracing::debug!(error = %e, "reply not sent");
        }
    }

    /// The handler stopped, every request it took answered.
    pub(crate) fn handler_stopped(&self) {
        let mut state = self.lock();
        state.handled_all = true;
        state.wake_closers();
    }

    // The reader.

    /// Hands in every complete line of `lines` (see "Who decodes"): undecoded to a consumer
    /// that waits for them, else decoded here, without the lock, and handed to the endpoint in
    /// order under it. `decoded` is the caller's, kept empty between calls to reuse its room.
    pub(crate) fn receive(&self, lines: &mut LineDecoder, decoded: &mut Vec<Decoded<R>>) {
        let tracer = self.tracer.as_ref();
        let mut state = self.lock();
        let closed = state.endpoint.close_reason().is_some() || state.closing.is_some();
        let for_consumer =
            !state.lines.is_empty() || state.decoding || !state.waiting.consumers.is_empty();
        if closed || for_consumer {
            drop(state);
            let read = Handed::new(lines, tracer);
            let mut state = self.lock();
            let closed = state.endpoint.close_reason().is_some() || state.closing.is_some();
            if read.lines.is_empty() || closed {
                // Nothing, or read after the close: nothing more is delivered.
                return;
            }
            state.lines_bytes += read.text.len();
            state.lines.push_back(read);
            let consumers = std::mem::take(&mut state.waiting.consumers);
            state.woken.extend(consumers);
            if !state.watching {
                state.wake_writer();
            }
            return;
        }
        // Nobody takes lines: decoded here, before anyone else decodes a line read later.
        state.decoding = true;
        drop(state);
        lines.drain_lines(|line| {
            if let Ok(line) = line {
                trace(tracer, Traced::Received, line);
            }
            decoded.push(Decoded::new(line));
        });
        let mut state = self.lock();
        for decoded in decoded.drain(..) {
            state.apply(decoded);
        }
        state.route();
        state.decoded();
    }

    /// Whether the reader may read on: not while more than [`MAX_HANDED_BYTES`] of lines wait
    /// for a consumer (the stall check takes them should it stop).
    pub(crate) fn poll_room(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.lock();
        if state.lines_bytes <= MAX_HANDED_BYTES || state.endpoint.close_reason().is_some() {
            return Poll::Ready(());
        }
        state.waiting.reader = Some(cx.waker().clone());
        Poll::Pending
    }

    /// The reader reached the end of the peer's output (or failed).
    pub(crate) fn reader_stopped(&self) {
        let mut state = self.lock();
        state.reading = false;
        state.wake_closers();
    }

    /// The writer wrote what was left once the output closed, and closed the stream: nothing
    /// queued is lost to a close that follows.
    pub(crate) fn writer_stopped(&self) {
        let mut state = self.lock();
        state.written_all = true;
        state.wake_closers();
    }

    // The writer.

    /// What the writer is to do; `watching` says whether it looks for a stall already.
    pub(crate) fn poll_output(&self, watching: bool, cx: &mut Context<'_>) -> Poll<Output> {
        let mut state = self.lock();
        if state.endpoint.has_transmit() {
            return Poll::Ready(Output::Lines);
        }
        if !state.output_open {
            return Poll::Ready(Output::Closed);
        }
        if !watching && !state.lines.is_empty() {
            state.watching = true;
            return Poll::Ready(Output::Watch);
        }
        state.waiting.writer = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Lines decoded so far, for [`Shared::check_stall`].
    pub(crate) fn decoded(&self) -> u64 {
        self.lock().decoded
    }

    /// The writer's look at lines waiting for a consumer, `since` the progress it saw
    /// [`STALL`] ago: when none was decoded since, they are decoded here, all of them. The
    /// progress to look for next time; `None` once no line waits (it stops watching).
    pub(crate) fn check_stall(&self, since: u64) -> Option<u64> {
        let mut state = self.lock();
        if state.lines.is_empty() {
            state.watching = false;
            return None;
        }
        if state.decoded != since || state.decoding {
            return Some(state.decoded);
        }
        tracing::trace!(lines = state.lines.len(), "decoding lines a consumer left");
        let lines: Vec<_> = std::iter::from_fn(|| state.take_line()).collect();
        state.decoding = true;
        state.watching = false;
        drop(state);
        let decoded: Vec<_> = lines.into_iter().map(Decoded::from_undecoded).collect();
        let mut state = self.lock();
        state.decoded += decoded.len() as u64;
        for decoded in decoded {
            state.apply(decoded);
        }
        state.route();
        state.decoded();
        None
    }

    /// Moves every queued line into `lines`, for whoever holds the stream to write, when at
    /// most `unread` bytes of what was queued may then be unread by the peer (`None`: no
    /// bound); otherwise leaves them to the writer, waking it. Whether any were taken.
    pub(crate) fn take_lines(&self, lines: &mut Vec<String>, unread: Option<u64>) -> bool {
        let mut state = self.lock();
        if !state.endpoint.has_transmit() {
            return false;
        }
        if unread.is_some_and(|unread| state.endpoint.unread_bytes() > unread) {
            state.wake_writer();
            return false;
        }
        lines.extend(std::iter::from_fn(|| state.endpoint.poll_transmit()));
        true
    }

    /// Wakes the writer for what its caller does not write itself.
    pub(crate) fn wake_writer(&self) {
        self.lock().wake_writer();
    }

    // Closing.

    /// Stops handing requests to the handler: those it took get its replies, later ones
    /// `-32601`.
    pub(crate) fn stop_handling(&self) {
        let mut state = self.lock();
        state.endpoint.handle_requests(Handled::Nothing);
        state.endpoint.handle_bad_requests(false);
        state.handling = false;
        let handler = state.waiting.handler.take();
        state.woken.extend(handler);
    }

    /// Whether what `close` waits for happened.
    pub(crate) fn poll_closing(&self, what: Closing, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.lock();
        let done = match what {
            Closing::Handled => state.handled_all,
            Closing::ReadAll => !state.reading,
            Closing::Written => state.written_all,
        };
        if done || state.endpoint.close_reason().is_some() {
            return Poll::Ready(());
        }
        keep(&mut state.waiting.closers, cx.waker());
        Poll::Pending
    }

    /// Closes the output: the writer writes what is queued and closes the stream (a host's
    /// stdin, so that it drains and exits).
    pub(crate) fn close_output(&self) {
        let mut state = self.lock();
        state.output_open = false;
        state.wake_writer();
    }

    /// Closes for `reason` (see [`State::finish_close`]); while a line is being decoded,
    /// its decoder finishes the close.
    pub(crate) fn close(&self, reason: CloseReason) {
        let mut state = self.lock();
        if state.endpoint.close_reason().is_some() {
            return;
        }
        state.closing.get_or_insert(reason);
        if !state.decoding {
            state.finish_close();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
