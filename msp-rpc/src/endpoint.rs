//! The sans-I/O endpoint: lines in, typed events out; calls in, lines out.
//!
//! No threads, no clock, no sockets. The caller feeds each line read
//! ([`Endpoint::handle_line`]), writes each line the endpoint has for the peer
//! ([`Endpoint::poll_transmit`]), acts on each event ([`Endpoint::poll_event`]) and brings
//! the time for deadlines ([`Endpoint::handle_timeout`]). The drivers in this crate do exactly
//! that; a test can do it by hand, deterministically.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use msp_rpc::endpoint::{Client, Endpoint, Event};
//! use msp_types::protocol::methods;
//! use msp_types::{ModelListParams, ModelListResult};
//!
//! let mut client = Endpoint::<Client>::new();
//! let start = Instant::now();
//! let call = client
//!     .request::<methods::ModelList>(&ModelListParams::new(), Some(start + Duration::from_secs(30)))
//!     .unwrap();
//! assert_eq!(
//!     client.poll_transmit().unwrap(),
//!     r#"{"jsonrpc":"2.0","id":1,"method":"model/list","params":{}}"#
//! );
//! client.handle_line(r#"{"jsonrpc":"2.0","method":"future/notice","params":{}}"#);
//! client.handle_line(r#"{"jsonrpc":"2.0","id":1,"result":{"models":[],"providerId":"fake","source":"fakeCatalog"}}"#);
//! // In wire order: the notification first, then the response.
//! assert!(matches!(client.poll_event(), Some(Event::Notification { .. })));
//! let Some(Event::Response(response)) = client.poll_event() else { panic!() };
//! let models: ModelListResult = call.decode(response).unwrap();
//! assert!(models.models.is_empty());
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::marker::PhantomData;
use std::task::{Poll, Waker};
use std::time::Instant;

use msp_types::rpc::{ClientMethod, DecodeError, Id, Notification, RawJson, Request, ServerMethod};
use msp_types::{
    ClientRequest, ErrorObject, Frame, Message, ProtocolNotification, Sender, ServerRequest,
};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{CloseReason, RemoteError, RpcError};
use crate::framing::LineError;
use crate::wire;

/// JSON-RPC's error codes the endpoint answers with by itself.
pub mod codes {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Nothing handles the method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params do not decode as the method's params.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The handler failed.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// Which side of the protocol an endpoint speaks for.
pub trait Role: private::Sealed + Sized + Send + 'static {
    /// The side that writes what this endpoint reads.
    const PEER: Sender;
    /// The requests the peer sends, typed by the peer's table.
    type PeerRequest: Clone + fmt::Debug + Send + 'static;
    #[doc(hidden)]
    // The message moves back out as it came; boxing it would cost every frame an allocation.
    #[allow(clippy::result_large_err)]
    fn peer_request(message: Message) -> Result<(Id, Self::PeerRequest), Message>;
    #[doc(hidden)]
    fn method(request: &Self::PeerRequest) -> &str;
}

/// The client side: sends the `methods` table's requests, answers the `requests` table's.
#[derive(Debug)]
pub enum Client {}

/// The host side: sends the `requests` table's requests, answers the `methods` table's.
#[derive(Debug)]
pub enum Host {}

impl Role for Client {
    const PEER: Sender = Sender::Server;
    type PeerRequest = ServerRequest;

    #[allow(clippy::result_large_err)]
    fn peer_request(message: Message) -> Result<(Id, ServerRequest), Message> {
        match message {
            Message::ServerRequest { id, request } => Ok((id, request)),
            other => Err(other),
        }
    }

    fn method(request: &ServerRequest) -> &str {
        request.method()
    }
}

impl Role for Host {
    const PEER: Sender = Sender::Client;
    type PeerRequest = ClientRequest;

    #[allow(clippy::result_large_err)]
    fn peer_request(message: Message) -> Result<(Id, ClientRequest), Message> {
        match message {
            Message::ClientRequest { id, request } => Ok((id, request)),
            other => Err(other),
        }
    }

    fn method(request: &ClientRequest) -> &str {
        request.method()
    }
}

/// Request methods a role may send: a client the `methods` table, a host the `requests` table.
/// `Endpoint::<Client>::request::<requests::UserInputRequest>` does not compile.
pub trait Sends<M: Request>: Role {}

impl<M: ClientMethod> Sends<M> for Client {}
impl<M: ServerMethod> Sends<M> for Host {}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Client {}
    impl Sealed for super::Host {}
}

/// Which of the peer's requests the program answers itself. The others get `-32601` (method
/// not found) from the endpoint, so that no request is ever left without a reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Handled {
    /// None: every request is answered `-32601` (the default).
    #[default]
    Nothing,
    /// Every request becomes an [`Event::Request`] to answer with [`Endpoint::respond`].
    All,
    /// These methods become events; the others are answered `-32601`.
    Methods(Vec<String>),
}

impl Handled {
    fn covers(&self, method: &str) -> bool {
        match self {
            Handled::Nothing => false,
            Handled::All => true,
            Handled::Methods(methods) => methods.iter().any(|m| m == method),
        }
    }
}

/// Something that happened on the connection, in wire order.
// Notifications are most events; boxing them would cost each an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Event<R: Role> {
    /// A notification; a method in no table arrives as its `Unknown` arm.
    Notification {
        /// The notification, typed.
        notification: ProtocolNotification,
        /// Members outside JSON-RPC (`emittedAtMs`, ...), as sent.
        extra: Map<String, Value>,
    },
    /// A request of the peer, to answer exactly once with [`Endpoint::respond`].
    Request {
        /// Its id.
        id: Id,
        /// The request, typed by the peer's table.
        request: R::PeerRequest,
    },
    /// A request of the peer whose params do not decode, when the program answers those
    /// itself ([`Endpoint::handle_bad_requests`]): to answer exactly once with
    /// [`Endpoint::respond`]. The frame says its method, id, line (the raw params) and where
    /// decoding failed.
    BadRequest {
        /// Its id.
        id: Id,
        /// What was read, and why it does not decode.
        frame: Box<BadFrame>,
    },
    /// The response to one of this endpoint's requests (or its timeout, or the close).
    Response(Response),
    /// A line that did not decode, or a response nobody asked for. Nothing is lost: the line is
    /// kept, and a request among them was answered (see [`BadFrame::replied`]). Boxed as in
    /// [`crate::Inbound`], which the drivers make of it without a copy.
    Undecodable(Box<BadFrame>),
}

/// The response to a request this endpoint sent, still to be typed by its method.
#[derive(Debug)]
pub struct Response {
    /// The request's id.
    pub id: Id,
    /// The request's method.
    pub method: &'static str,
    /// The result as wire text, or why there is none.
    pub outcome: Result<RawJson, RpcError>,
}

impl Response {
    /// The result typed as method `M`'s (the method of the request it answers).
    pub fn decode<M: Request>(self) -> Result<M::Result, RpcError> {
        if self.method != M::METHOD {
            return Err(RpcError::WrongMethod {
                answered: self.method,
                asked: M::METHOD,
            });
        }
        self.outcome?.decode_result::<M>().map_err(RpcError::Decode)
    }
}

/// A request sent and not answered yet; it types the response that answers it.
#[derive(Debug)]
pub struct Pending<M> {
    id: Id,
    method: PhantomData<fn() -> M>,
}

impl<M: Request> Pending<M> {
    /// The request's id.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// The response's result, typed as `M::Result`.
    pub fn decode(&self, response: Response) -> Result<M::Result, RpcError> {
        response.decode::<M>()
    }
}

/// A line that could not be taken as a frame, with what is known about it.
#[derive(Clone, Debug)]
pub struct BadFrame {
    /// The line as read (lossily, if it was not UTF-8; its head, if it was too long).
    pub line: String,
    /// What is wrong with it.
    pub problem: Problem,
    /// The JSON-RPC error code the endpoint answered it with, when it was a request.
    pub replied: Option<i64>,
}

impl BadFrame {
    /// The frame's method, when it could be read.
    pub fn method(&self) -> Option<&str> {
        match &self.problem {
            Problem::Decode(error) => error.method.as_deref(),
            _ => None,
        }
    }

    /// The frame's id, when it could be read.
    pub fn id(&self) -> Option<&Id> {
        match &self.problem {
            Problem::Decode(error) => error.id.as_ref(),
            Problem::UnknownResponse { id } | Problem::DuplicateRequest { id } => Some(id),
            _ => None,
        }
    }

    /// The frame's params as sent, when its envelope could be read.
    pub fn params(&self) -> Option<&Value> {
        match &self.problem {
            Problem::Decode(error) => error.frame.as_ref()?.params.as_ref(),
            _ => None,
        }
    }

    /// The decoder's error (with the JSON pointer where it failed), when that is the problem.
    pub fn decode_error(&self) -> Option<&DecodeError> {
        match &self.problem {
            Problem::Decode(error) => Some(error),
            _ => None,
        }
    }
}

impl fmt::Display for BadFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.problem)?;
        if let Some(code) = self.replied {
            write!(f, " (answered {code})")?;
        }
        Ok(())
    }
}

/// What is wrong with a [`BadFrame`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Problem {
    /// It did not decode: where and why.
    Decode(DecodeError),
    /// It is not a line a frame can be (too long, not UTF-8).
    Line(LineError),
    /// A response to no request this endpoint is waiting for.
    UnknownResponse {
        /// The id it answers.
        id: Id,
    },
    /// An error response with a `null` id: the peer could not read one of this endpoint's
    /// frames, and cannot say which.
    UnattributedError(ErrorObject),
    /// A request reusing the id of one still awaiting this endpoint's reply.
    DuplicateRequest {
        /// The reused id.
        id: Id,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Decode(error) => write!(f, "{error}"),
            Problem::Line(error) => write!(f, "{error}"),
            Problem::UnknownResponse { id } => {
                write!(f, "a response to id {id}, which was never sent")
            }
            Problem::UnattributedError(error) => {
                write!(f, "the peer could not read a frame: {error}")
            }
            Problem::DuplicateRequest { id } => {
                write!(f, "a request reuses id {id}, which still awaits its reply")
            }
        }
    }
}

/// The answer to a peer's request: a result or a JSON-RPC error.
#[derive(Clone, Debug)]
pub struct Reply(Body);

#[derive(Clone, Debug)]
enum Body {
    Result(Box<RawValue>),
    Error(ErrorObject),
}

impl Reply {
    /// A successful reply with `result` (a result that does not encode becomes a `-32603`).
    pub fn ok<T: Serialize + ?Sized>(result: &T) -> Self {
        match serde_json::value::to_raw_value(result) {
            Ok(raw) => Reply(Body::Result(raw)),
            Err(e) => Reply::internal(format!("the result did not encode: {e}")),
        }
    }

    /// A JSON-RPC error reply.
    pub fn error(error: ErrorObject) -> Self {
        Reply(Body::Error(error))
    }

    /// An error reply with `code` and `message`.
    pub fn with_code(code: i64, message: impl Into<String>) -> Self {
        Reply::error(ErrorObject::builder().code(code).message(message).build())
    }

    /// `-32601`: this program does not handle `method`.
    pub fn method_not_found(method: &str) -> Self {
        Reply::with_code(
            codes::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    }

    /// `-32602`: the params are not acceptable.
    pub fn invalid_params(message: impl fmt::Display) -> Self {
        Reply::with_code(codes::INVALID_PARAMS, format!("invalid params: {message}"))
    }

    /// `-32602` for params that did not decode: the decoder's reason and where.
    pub fn invalid_params_at(error: &DecodeError) -> Self {
        Reply::invalid_params(format!("{} at {}", error.reason, error.pointer))
    }

    /// `-32603`: handling the request failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Reply::with_code(codes::INTERNAL_ERROR, message)
    }

    /// The error code, for an error reply.
    pub fn code(&self) -> Option<i64> {
        match &self.0 {
            Body::Error(error) => Some(error.code),
            Body::Result(_) => None,
        }
    }

    fn line(&self, id: &Id) -> String {
        match &self.0 {
            Body::Result(raw) => wire::result(id, raw.get()),
            Body::Error(error) => wire::error(Some(id), error),
        }
    }
}

/// Why [`Endpoint::respond`] refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RespondError {
    /// No request of the peer with this id awaits a reply: it was answered already, never
    /// arrived, or the connection closed.
    #[error("no request {0} awaits a reply (answered already, or never received)")]
    NotOwed(Id),
}

/// A request sent and not answered yet.
#[derive(Debug)]
struct Outstanding {
    method: &'static str,
    deadline: Option<Instant>,
    /// Where its line ends in what the endpoint queued (see [`Endpoint::unread_bytes`]).
    sent: u64,
    /// Whoever polled its response last ([`Responses::Kept`]).
    waker: Option<Waker>,
}

/// Where the responses to an endpoint's requests go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Responses {
    /// Each becomes an [`Event::Response`], in wire order among the other events: for a
    /// program that drives the endpoint by hand.
    #[default]
    Events,
    /// Each is kept with its request until taken with [`Endpoint::poll_response`], whose
    /// caller is then told whom to wake ([`Endpoint::take_wakers`]): for drivers, where each
    /// request has a caller waiting for it.
    Kept,
}

/// How many forgotten (cancelled, timed-out) ids are remembered, so that their late responses
/// are dropped quietly; past it the oldest memory is cleared and such a response is reported.
const FORGOTTEN_LIMIT: usize = 4096;

/// A line decoded by [`Endpoint::parse`], for [`Endpoint::handle_parsed`] of the same role.
///
/// It keeps a copy of the line unless it holds a notification (most of what arrives), whose
/// line is never needed again: a response, a request or a bad frame may have to be reported
/// with its line.
pub struct Parsed<R: Role> {
    frame: Result<Frame, DecodeError>,
    line: Option<Box<str>>,
    role: PhantomData<fn() -> R>,
}

impl<R: Role> Parsed<R> {
    fn new(line: &str) -> Self {
        let frame = Frame::parse(R::PEER, line);
        let notification = matches!(
            frame,
            Ok(Frame {
                message: Message::Notification(_),
                ..
            })
        );
        Parsed {
            frame,
            line: (!notification).then(|| line.into()),
            role: PhantomData,
        }
    }
}

impl<R: Role> fmt::Debug for Parsed<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Parsed").field(&self.frame).finish()
    }
}

/// One side of an MSP connection, without I/O.
///
/// A request is in exactly one place until its response is handed over: `pending` until it
/// is answered (or times out, or the endpoint closes), then `answered` until taken
/// ([`Responses::Kept`]) or an [`Event::Response`] ([`Responses::Events`]).
#[derive(Debug)]
pub struct Endpoint<R: Role> {
    next_id: i64,
    // Ordered maps: no hashing on a request's way, no hash for a peer to make its ids collide
    // in (`owed` holds the ids it picks), and a close fails requests in the order they were
    // made.
    pending: BTreeMap<Id, Outstanding>,
    answered: BTreeMap<Id, Response>,
    deadlines: BTreeSet<(Instant, Id)>,
    forgotten: BTreeSet<Id>,
    owed: BTreeMap<Id, String>,
    handled: Handled,
    bad_requests: bool,
    responses: Responses,
    transmit: VecDeque<String>,
    /// Bytes queued for the peer so far, each line with its `\n`.
    queued_bytes: u64,
    /// Bytes the peer surely read: up to the end of the latest request it answered.
    read_bytes: u64,
    events: VecDeque<Event<R>>,
    /// Wakers of callers whose responses are ready ([`Endpoint::take_wakers`]).
    woken: Vec<Waker>,
    closed: Option<CloseReason>,
}

impl<R: Role> Default for Endpoint<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Role> Endpoint<R> {
    /// A fresh endpoint; it answers every request of the peer with `-32601` until told which
    /// it handles ([`Endpoint::handle_requests`]), and hands responses over as events.
    pub fn new() -> Self {
        Endpoint {
            next_id: 1,
            pending: BTreeMap::new(),
            answered: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            forgotten: BTreeSet::new(),
            owed: BTreeMap::new(),
            handled: Handled::Nothing,
            bad_requests: false,
            responses: Responses::Events,
            transmit: VecDeque::new(),
            queued_bytes: 0,
            read_bytes: 0,
            events: VecDeque::new(),
            woken: Vec::new(),
            closed: None,
        }
    }

    /// Says which of the peer's requests the program answers.
    pub fn handle_requests(&mut self, handled: Handled) {
        self.handled = handled;
    }

    /// Says whether the program answers the peer's requests whose params do not decode, each
    /// an [`Event::BadRequest`]; otherwise (the default) the endpoint answers them `-32602`
    /// (`-32601` for a method it does not handle) and reports them as [`Event::Undecodable`].
    pub fn handle_bad_requests(&mut self, handled: bool) {
        self.bad_requests = handled;
    }

    /// Says where responses go (set it before the first request).
    pub fn set_responses(&mut self, responses: Responses) {
        self.responses = responses;
    }

    /// Sends a request with a fresh id; its response arrives as [`Event::Response`] (or is
    /// kept, see [`Responses`]), or as a timeout once `deadline` passed (see
    /// [`Endpoint::handle_timeout`]).
    pub fn request<M: Request>(
        &mut self,
        params: &M::Params,
        deadline: Option<Instant>,
    ) -> Result<Pending<M>, RpcError>
    where
        R: Sends<M>,
    {
        if let Some(reason) = &self.closed {
            return Err(RpcError::Closed(reason.clone()));
        }
        let id = Id::Number(self.next_id);
        let line =
            wire::call(Some(&id), M::METHOD, params).map_err(|e| encode_error(M::METHOD, e))?;
        self.next_id += 1;
        tracing::debug!(method = M::METHOD, %id, "request");
        self.queue(line);
        let outstanding = Outstanding {
            method: M::METHOD,
            deadline,
            sent: self.queued_bytes,
            waker: None,
        };
        self.pending.insert(id.clone(), outstanding);
        if let Some(deadline) = deadline {
            self.deadlines.insert((deadline, id.clone()));
        }
        Ok(Pending {
            id,
            method: PhantomData,
        })
    }

    /// Sends a notification.
    pub fn notify<N: Notification>(&mut self, params: &N::Params) -> Result<(), RpcError> {
        if let Some(reason) = &self.closed {
            return Err(RpcError::Closed(reason.clone()));
        }
        let line = wire::call(None, N::METHOD, params).map_err(|e| encode_error(N::METHOD, e))?;
        tracing::debug!(method = N::METHOD, "notify");
        self.queue(line);
        Ok(())
    }

    /// Answers the peer's request `id`, exactly once.
    pub fn respond(&mut self, id: &Id, reply: Reply) -> Result<(), RespondError> {
        let method = self
            .owed
            .remove(id)
            .ok_or_else(|| RespondError::NotOwed(id.clone()))?;
        tracing::debug!(%method, %id, code = ?reply.code(), "reply");
        self.queue(reply.line(id));
        Ok(())
    }

    /// Forgets request `id`, answered or not: no event will come for it, and a late response
    /// is dropped. `false` when it was neither pending nor answered.
    pub fn cancel(&mut self, id: &Id) -> bool {
        if let Some(outstanding) = self.pending.remove(id) {
            tracing::debug!(method = outstanding.method, %id, "cancelled");
            self.forget(id.clone(), outstanding.deadline);
            return true;
        }
        self.answered.remove(id).is_some()
    }

    /// The response to request `id` once it is known ([`Responses::Kept`]); until then `waker`
    /// is kept, to be handed out by [`Endpoint::take_wakers`] when it is. `Ready(None)` when
    /// there is no such request (taken already, cancelled, or never sent).
    pub fn poll_response(&mut self, id: &Id, waker: &Waker) -> Poll<Option<Response>> {
        if let Some(response) = self.answered.remove(id) {
            return Poll::Ready(Some(response));
        }
        match self.pending.get_mut(id) {
            Some(outstanding) => {
                match &mut outstanding.waker {
                    Some(held) if held.will_wake(waker) => {}
                    held => *held = Some(waker.clone()),
                }
                Poll::Pending
            }
            None => Poll::Ready(None),
        }
    }

    /// The response to request `id`, if it is known ([`Responses::Kept`]).
    pub fn take_response(&mut self, id: &Id) -> Option<Response> {
        self.answered.remove(id)
    }

    /// Moves the wakers of callers whose responses became ready into `out`: wake them once
    /// whatever guards the endpoint is released (a caller woken earlier would meet the guard).
    pub fn take_wakers(&mut self, out: &mut Vec<Waker>) {
        out.append(&mut self.woken);
    }

    /// Fails every request whose deadline is not after `now` with [`RpcError::TimedOut`].
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some((at, _)) = self.deadlines.first() {
            if *at > now {
                break;
            }
            let Some((_, id)) = self.deadlines.pop_first() else {
                break;
            };
            if let Some(outstanding) = self.pending.remove(&id) {
                let method = outstanding.method;
                tracing::debug!(method, %id, "timed out");
                self.forget(id.clone(), None);
                let outcome = Err(RpcError::TimedOut {
                    method,
                    id: id.clone(),
                });
                self.complete(id, outstanding, outcome);
            }
        }
    }

    /// The earliest deadline of a pending request.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadlines.first().map(|(at, _)| *at)
    }

    /// Closes the endpoint: every pending request fails with `reason`, replies still owed are
    /// void (the peer is gone), and later calls fail. Lines already queued stay queued.
    pub fn close(&mut self, reason: CloseReason) {
        if self.closed.is_some() {
            return;
        }
        tracing::debug!(%reason, pending = self.pending.len(), "closed");
        for (id, outstanding) in std::mem::take(&mut self.pending) {
            let outcome = Err(RpcError::Closed(reason.clone()));
            self.complete(id, outstanding, outcome);
        }
        self.deadlines.clear();
        self.forgotten.clear();
        self.owed.clear();
        self.closed = Some(reason);
    }

    /// Why the endpoint closed, once it has.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.closed.as_ref()
    }

    /// Requests sent and not answered yet.
    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }

    /// Requests of the peer still awaiting this program's reply.
    pub fn owed_replies(&self) -> usize {
        self.owed.len()
    }

    /// The next line to write to the peer (without its `\n`).
    pub fn poll_transmit(&mut self) -> Option<String> {
        self.transmit.pop_front()
    }

    /// Whether lines wait to be written ([`Endpoint::poll_transmit`]).
    pub fn has_transmit(&self) -> bool {
        !self.transmit.is_empty()
    }

    /// Bytes queued for the peer that it may not have read yet: a peer reads its input in
    /// order, so its answer to a request says it read every byte up to the end of that
    /// request; what was queued after the latest answered request counts as unread.
    pub fn unread_bytes(&self) -> u64 {
        self.queued_bytes - self.read_bytes
    }

    /// The next event, in wire order.
    pub fn poll_event(&mut self) -> Option<Event<R>> {
        self.events.pop_front()
    }

    /// Takes one line read from the peer (a trailing `\r` is fine): the same as
    /// [`Endpoint::parse`] followed by [`Endpoint::handle_parsed`].
    pub fn handle_line(&mut self, line: &str) {
        if self.closed.is_none() {
            self.handle_parsed(Self::parse(line));
        }
    }

    /// Decodes a line read from the peer, without touching any endpoint: decoding is most of
    /// what a line costs, so a driver can decode where no lock is held and then hand the
    /// result to [`Endpoint::handle_parsed`].
    #[inline]
    pub fn parse(line: &str) -> Parsed<R> {
        Parsed::new(line)
    }

    /// Takes a line decoded by [`Endpoint::parse`]; lines must come in the order they were
    /// read.
    pub fn handle_parsed(&mut self, parsed: Parsed<R>) {
        if self.closed.is_some() {
            return;
        }
        let line = parsed.line.as_deref().unwrap_or_default();
        match parsed.frame {
            Ok(frame) => self.on_frame(frame, line),
            Err(error) => self.on_undecodable(line, error),
        }
    }

    /// Takes a line that framing refused (too long, not UTF-8).
    pub fn handle_bad_line(&mut self, error: LineError) {
        if self.closed.is_some() {
            return;
        }
        let line = match &error {
            LineError::TooLong { head, .. } => head.clone(),
            LineError::NotUtf8 { lossy } => lossy.clone(),
        };
        tracing::debug!(%error, "bad line");
        // A request of the peer is answered all the same, when its id reads (of a line too
        // long, from its head).
        let reason = error.to_string();
        let replied = match &error {
            LineError::NotUtf8 { lossy } => self.refuse(request_id(lossy), &reason),
            LineError::TooLong { head, .. } => self.refuse(request_id_in_head(head), &reason),
        };
        self.events.push_back(Event::Undecodable(Box::new(BadFrame {
            line,
            problem: Problem::Line(error),
            replied,
        })));
    }

    /// Answers with `-32600` a request that does not read, whose `id` was read as sent
    /// (`request_id` of its line: an object naming a `method` and a non-null `id`, whatever
    /// else is wrong with it): the code, or `None` when it is no request (`id` is `None`).
    fn refuse(
        &mut self,
        id: Option<Box<serde_json::value::RawValue>>,
        reason: &str,
    ) -> Option<i64> {
        let id = id?;
        // An id the program owes a reply for gets that reply only (the peer reused it).
        let typed = serde_json::from_str::<Id>(id.get()).ok();
        if typed.is_some_and(|id| self.owed.contains_key(&id)) {
            return None;
        }
        let reply = ErrorObject::builder()
            .code(codes::INVALID_REQUEST)
            .message(format!("the request could not be read: {reason}"))
            .build();
        self.queue(wire::error_to_raw(&id, &reply));
        Some(codes::INVALID_REQUEST)
    }

    fn queue(&mut self, line: String) {
        self.queued_bytes += line.len() as u64 + 1;
        self.transmit.push_back(line);
    }

    /// Hands a request's outcome over, as the endpoint's [`Responses`] say.
    fn complete(&mut self, id: Id, outstanding: Outstanding, outcome: Result<RawJson, RpcError>) {
        let method = outstanding.method;
        let response = Response {
            id: id.clone(),
            method,
            outcome,
        };
        match self.responses {
            Responses::Events => self.events.push_back(Event::Response(response)),
            Responses::Kept => {
                self.answered.insert(id, response);
                self.woken.extend(outstanding.waker);
            }
        }
    }

    fn on_frame(&mut self, frame: Frame, line: &str) {
        let Frame { message, extra, .. } = frame;
        let message = match R::peer_request(message) {
            Ok((id, request)) => return self.on_request(id, request, line),
            Err(message) => message,
        };
        match message {
            Message::Notification(notification) => {
                tracing::trace!(method = notification.method(), "notification");
                self.events.push_back(Event::Notification {
                    notification,
                    extra,
                });
            }
            Message::Result { id, result } => self.on_response(id, Ok(result), line),
            Message::Error {
                id: Some(id),
                error,
            } => self.on_response(id, Err(error), line),
            Message::Error { id: None, error } => {
                self.bad(line, Problem::UnattributedError(error), None)
            }
            // Parsing by the peer's side never gives these; keep the line all the same.
            Message::ClientResult { id, .. }
            | Message::ServerResult { id, .. }
            | Message::ClientRequest { id, .. }
            | Message::ServerRequest { id, .. } => {
                self.bad(line, Problem::UnknownResponse { id }, None)
            }
        }
    }

    fn on_request(&mut self, id: Id, request: R::PeerRequest, line: &str) {
        let method = R::method(&request);
        if self.owed.contains_key(&id) {
            return self.bad(line, Problem::DuplicateRequest { id }, None);
        }
        if self.handled.covers(method) {
            tracing::debug!(method, %id, "peer request");
            self.owed.insert(id.clone(), method.to_owned());
            self.events.push_back(Event::Request { id, request });
        } else {
            tracing::debug!(method, %id, "peer request nothing handles: -32601");
            let reply = Reply::method_not_found(method);
            self.queue(reply.line(&id));
        }
    }

    fn on_response(&mut self, id: Id, outcome: Result<RawJson, ErrorObject>, line: &str) {
        let Some(outstanding) = self.pending.remove(&id) else {
            if self.forgotten.remove(&id) {
                tracing::debug!(%id, "late response to a forgotten request, dropped");
            } else {
                self.bad(line, Problem::UnknownResponse { id }, None);
            }
            return;
        };
        if let Some(deadline) = outstanding.deadline {
            self.deadlines.remove(&(deadline, id.clone()));
        }
        // An answer: the peer read the request, and everything before it.
        self.read_bytes = self.read_bytes.max(outstanding.sent);
        let method = outstanding.method;
        tracing::debug!(method, %id, ok = outcome.is_ok(), "response");
        let outcome = outcome.map_err(|error| RpcError::Remote(RemoteError::new(method, error)));
        self.complete(id, outstanding, outcome);
    }

    fn on_undecodable(&mut self, line: &str, error: DecodeError) {
        tracing::debug!(%error, "frame did not decode");
        // A request of the peer whose params do not decode, for the program to answer.
        let for_program = |id: &Id| self.bad_requests && !self.owed.contains_key(id);
        if let Some(id) = error
            .id
            .clone()
            .filter(|id| error.is_bad_request_params() && for_program(id))
        {
            let method = error.method.clone().unwrap_or_default();
            tracing::debug!(%method, %id, "peer request whose params do not decode");
            self.owed.insert(id.clone(), method);
            let frame = Box::new(BadFrame {
                line: line.to_owned(),
                problem: Problem::Decode(error),
                replied: None,
            });
            return self.events.push_back(Event::BadRequest { id, frame });
        }
        let frame_kind = error.frame.as_ref().and_then(|f| f.kind().ok());
        let replied = match (&error.id, frame_kind) {
            // A request of the peer whose params do not decode, reusing the id of a request
            // the program owes a reply for, gets that reply only, as a duplicate that decodes
            // does.
            (Some(id), _) if error.is_bad_request_params() && self.owed.contains_key(id) => {
                let id = id.clone();
                return self.bad(line, Problem::DuplicateRequest { id }, None);
            }
            // Any other is answered, never silence. A method nothing handles is not found,
            // whatever its params.
            (Some(id), _) if error.is_bad_request_params() => {
                let method = error.method.as_deref().unwrap_or_default();
                let reply = match self.handled.covers(method) {
                    true => Reply::invalid_params_at(&error),
                    false => Reply::method_not_found(method),
                };
                self.queue(reply.line(id));
                reply.code()
            }
            // A response whose error object does not decode still answers its request.
            (Some(id), Some(msp_types::rpc::FrameKind::Error)) if self.pending.contains_key(id) => {
                if let Some(outstanding) = self.pending.remove(id) {
                    if let Some(deadline) = outstanding.deadline {
                        self.deadlines.remove(&(deadline, id.clone()));
                    }
                    self.read_bytes = self.read_bytes.max(outstanding.sent);
                    let outcome = Err(RpcError::Decode(error.clone()));
                    self.complete(id.clone(), outstanding, outcome);
                }
                None
            }
            // A host answers what a client sent that is not a request at all, as JSON-RPC asks.
            (id, None) if R::PEER == Sender::Client => {
                let code = match error.pointer.as_str() {
                    "" if !looks_like_json(line) => codes::PARSE_ERROR,
                    _ => codes::INVALID_REQUEST,
                };
                let reply = ErrorObject::builder()
                    .code(code)
                    .message(error.to_string())
                    .build();
                self.queue(wire::error(id.as_ref(), &reply));
                Some(code)
            }
            // A client answers a host request whose envelope does not read (an id it cannot
            // type, a wrong `jsonrpc`): the host would otherwise wait on it for ever.
            (_, None) => {
                let reason = error.to_string();
                self.refuse(request_id(line), &reason)
            }
            _ => None,
        };
        self.bad(line, Problem::Decode(error), replied);
    }

    fn bad(&mut self, line: &str, problem: Problem, replied: Option<i64>) {
        self.events.push_back(Event::Undecodable(Box::new(BadFrame {
            line: line.to_owned(),
            problem,
            replied,
        })));
    }

    fn forget(&mut self, id: Id, deadline: Option<Instant>) {
        if let Some(deadline) = deadline {
            self.deadlines.remove(&(deadline, id.clone()));
        }
        if self.forgotten.len() >= FORGOTTEN_LIMIT {
            self.forgotten.clear();
        }
        self.forgotten.insert(id);
    }
}

/// The id of the request `line` is, as sent: `None` unless it is a JSON object naming a
/// `method` and a non-null `id`, and no `result` or `error` (a response, a notification, a
/// batch or garbage gets no reply).
fn request_id(line: &str) -> Option<Box<serde_json::value::RawValue>> {
    #[derive(serde::Deserialize)]
    struct Envelope {
        id: Option<Box<serde_json::value::RawValue>>,
        method: Option<serde::de::IgnoredAny>,
        result: Option<serde::de::IgnoredAny>,
        error: Option<serde::de::IgnoredAny>,
    }
    if !line.trim_start().starts_with('{') {
        return None;
    }
    let envelope: Envelope = serde_json::from_str(line).ok()?;
    if envelope.method.is_none() || envelope.result.is_some() || envelope.error.is_some() {
        return None;
    }
    envelope.id.filter(|id| id.get() != "null")
}

/// The id of a request whose line was too long to read, from the members its head holds
/// whole (peers write `jsonrpc`, `id` and `method` first): `None` unless a non-null `id` and
/// a `method` were read, and no `result` or `error`, before the head ran out.
fn request_id_in_head(head: &str) -> Option<Box<serde_json::value::RawValue>> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};

    #[derive(Default)]
    struct Seen {
        id: Option<Box<serde_json::value::RawValue>>,
        method: bool,
        response: bool,
    }
    struct Members<'a>(&'a mut Seen);
    impl<'de> Visitor<'de> for Members<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a frame's members")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "id" => self.0.id = Some(map.next_value()?),
                    "method" => {
                        map.next_value::<IgnoredAny>()?;
                        self.0.method = true;
                    }
                    "result" | "error" => {
                        self.0.response = true;
                        map.next_value::<IgnoredAny>()?;
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        }
    }
    let mut seen = Seen::default();
    // The head ends inside the line: the error there is expected, what was read stands.
    let _ = serde_json::Deserializer::from_str(head).deserialize_map(Members(&mut seen));
    match seen {
        Seen {
            id: Some(id),
            method: true,
            response: false,
        } if id.get() != "null" => Some(id),
        _ => None,
    }
}

fn looks_like_json(line: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok()
}

fn encode_error(method: &str, error: serde_json::Error) -> RpcError {
    RpcError::Encode {
        method: method.to_owned(),
        message: error.to_string(),
    }
}
