//! How a connection is set up ([`Options`]), and what it delivers besides responses.

use std::collections::BTreeMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use msp_types::protocol::methods;
use msp_types::rpc::{Id, Request};
use msp_types::ProtocolNotification;
use serde_json::{Map, Value};

use crate::endpoint::{BadFrame, Client, Reply, Role};
use crate::framing::DEFAULT_MAX_FRAME_BYTES;
use crate::handshake::FingerprintPolicy;

/// What a connection delivers besides responses, in wire order.
pub enum Inbound<R: Role = Client> {
    /// A notification; a method in no table arrives as its `Unknown` arm.
    Notification {
        /// The notification, typed.
        notification: ProtocolNotification,
        /// Members outside JSON-RPC (`emittedAtMs`, ...), as sent.
        extra: Map<String, Value>,
    },
    /// A line that did not decode, or a response nobody asked for; the connection goes on.
    /// With [`Options::inbound_requests`], also a copy of a request of the peer whose params
    /// do not decode, given to the bad-request handler (its `replied` is `None`: the
    /// handler's reply is its own). Boxed: rare, and larger than a notification, it would make every frame larger
    /// to move.
    Undecodable(Box<BadFrame>),
    /// A request of the peer, where it came among the notifications (with
    /// [`Options::inbound_requests`]): a copy of what the handler is given to answer. One
    /// read as the connection closes is still delivered, though its handler may not have
    /// answered it (nothing can be written then).
    Request {
        /// Its id, as the handler's reply names it.
        id: Id,
        /// The request, typed. Boxed, as [`Inbound::Undecodable`] is.
        request: Box<R::PeerRequest>,
    },
}

impl<R: Role> fmt::Debug for Inbound<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Inbound::Notification {
                notification,
                extra,
            } => f
                .debug_struct("Notification")
                .field("notification", notification)
                .field("extra", extra)
                .finish(),
            Inbound::Undecodable(bad) => f.debug_tuple("Undecodable").field(bad).finish(),
            Inbound::Request { id, request } => f
                .debug_struct("Request")
                .field("id", id)
                .field("request", request)
                .finish(),
        }
    }
}

/// The one handler for the peer's requests: it answers each with a [`Reply`]. It runs on its
/// own thread (blocking driver) or task (tokio driver), one request at a time in wire order,
/// so it may send requests of its own; it should hand long work elsewhere and reply at once.
/// A handler that panics still replies (`-32603`).
pub type Handler<R> = Box<dyn FnMut(&Id, <R as Role>::PeerRequest) -> Reply + Send>;

/// The handler for the peer's requests whose params do not decode (see
/// [`Options::on_bad_request`]): it sees the frame's method, id, raw params and the decoder's
/// error, and answers like [`Handler`], in the same order and on the same thread or task.
pub type BadRequestHandler = Box<dyn FnMut(&Id, &BadFrame) -> Reply + Send>;

/// A request of the peer for the handlers, typed or not.
#[derive(Debug)]
pub(crate) enum Asked<R: Role> {
    Request(R::PeerRequest),
    Bad(Box<BadFrame>),
}

/// The handlers a connection runs.
pub(crate) struct Handlers<R: Role> {
    pub(crate) typed: Option<Handler<R>>,
    pub(crate) bad: Option<BadRequestHandler>,
}

impl<R: Role> Handlers<R> {
    /// Runs the handler that takes `asked`; a handler that panics still replies (`-32603`),
    /// and a bad request without its handler gets `-32602`.
    pub(crate) fn answer(&mut self, id: &Id, asked: Asked<R>) -> Reply {
        let (method, outcome) = match asked {
            Asked::Request(request) => {
                let method = R::method(&request).to_owned();
                let outcome = match &mut self.typed {
                    Some(handler) => catch_unwind(AssertUnwindSafe(|| handler(id, request))),
                    None => Ok(Reply::method_not_found(&method)),
                };
                (method, outcome)
            }
            Asked::Bad(frame) => {
                let method = frame.method().unwrap_or_default().to_owned();
                let outcome = match &mut self.bad {
                    Some(handler) => catch_unwind(AssertUnwindSafe(|| handler(id, &frame))),
                    None => Ok(frame.decode_error().map_or_else(
                        || Reply::invalid_params(&frame.problem),
                        Reply::invalid_params_at,
                    )),
                };
                (method, outcome)
            }
        };
        outcome.unwrap_or_else(|_| Reply::internal(format!("the handler for {method} failed")))
    }
}

/// Which way a traced frame went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Traced {
    /// Written to the peer.
    Sent,
    /// Read from the peer.
    Received,
}

/// Sees every line as it is written or read (see [`Options::trace`]).
pub type Tracer = Arc<dyn Fn(Traced, &str) + Send + Sync>;

/// Shows `line` to the tracer, if any; a tracer that panics does not take the I/O down.
#[inline]
pub(crate) fn trace(tracer: Option<&Tracer>, way: Traced, line: &str) {
    if let Some(tracer) = tracer {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tracer(way, line)));
    }
}

/// How a connection behaves.
pub struct Options<R: Role> {
    pub(crate) handler: Option<Handler<R>>,
    pub(crate) bad_handler: Option<BadRequestHandler>,
    pub(crate) tracer: Option<Tracer>,
    pub(crate) timeout: Duration,
    pub(crate) timeouts: BTreeMap<&'static str, Duration>,
    pub(crate) max_frame_bytes: usize,
    pub(crate) close_grace: Duration,
    pub(crate) fingerprint: FingerprintPolicy,
    pub(crate) inbound_requests: bool,
}

impl<R: Role> Default for Options<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Role> fmt::Debug for Options<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("handler", &self.handler.is_some())
            .field("bad_handler", &self.bad_handler.is_some())
            .field("tracer", &self.tracer.is_some())
            .field("timeout", &self.timeout)
            .field("timeouts", &self.timeouts)
            .field("max_frame_bytes", &self.max_frame_bytes)
            .field("close_grace", &self.close_grace)
            .field("fingerprint", &self.fingerprint)
            .field("inbound_requests", &self.inbound_requests)
            .finish()
    }
}

impl<R: Role> Options<R> {
    /// The defaults: no handler (every peer request is answered `-32601`), requests time out
    /// after 60 s (`initialize` 30 s; `session/start`, `session/resume` and `view/page`
    /// 180 s), frames up to 16 MiB, 5 s for a host to exit after its stdin closes, and a
    /// fingerprint mismatch is a warning.
    pub fn new() -> Self {
        let slow = Duration::from_secs(180);
        let timeouts = BTreeMap::from([
            (methods::Initialize::METHOD, Duration::from_secs(30)),
            (methods::SessionStart::METHOD, slow),
            (methods::SessionResume::METHOD, slow),
            (methods::ViewPage::METHOD, slow),
        ]);
        Options {
            handler: None,
            bad_handler: None,
            tracer: None,
            timeout: Duration::from_secs(60),
            timeouts,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            close_grace: Duration::from_secs(30),
            fingerprint: FingerprintPolicy::Warn,
            inbound_requests: false,
        }
    }

    /// The handler for the peer's requests. Without one, each is answered `-32601`.
    pub fn on_request(
        mut self,
        handler: impl FnMut(&Id, R::PeerRequest) -> Reply + Send + 'static,
    ) -> Self {
        self.handler = Some(Box::new(handler));
        self
    }

    /// The handler for the peer's requests whose params do not decode (an `approval/request`
    /// missing a member): it gets the frame (method, id, raw params, where decoding failed)
    /// and its reply is sent, so the program knows it was asked. Without one, such a request
    /// is answered `-32602` and reported among the notifications as `Inbound::Undecodable`.
    pub fn on_bad_request(
        mut self,
        handler: impl FnMut(&Id, &BadFrame) -> Reply + Send + 'static,
    ) -> Self {
        self.bad_handler = Some(Box::new(handler));
        self
    }

    /// Whether each request of the peer that the handlers take is also delivered among the
    /// notifications, where it came ([`Inbound::Request`], or [`Inbound::Undecodable`] when
    /// its params do not decode): for a program that follows what the peer said in wire
    /// order (a fold), while the handler answers at once whether or not anyone takes the
    /// notifications. Off unless set.
    pub fn inbound_requests(mut self, on: bool) -> Self {
        self.inbound_requests = on;
        self
    }

    /// Shows every frame, whole, as it is written (`Sent`) or read (`Received`), for
    /// debugging: payloads are never logged otherwise. Called on the I/O threads (tasks):
    /// keep it quick.
    pub fn trace(mut self, tracer: impl Fn(Traced, &str) + Send + Sync + 'static) -> Self {
        self.tracer = Some(Arc::new(tracer));
        self
    }

    /// The timeout of requests without one of their own (the per-method ones stay).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The timeout of method `M`'s requests.
    pub fn timeout_for<M: Request>(mut self, timeout: Duration) -> Self {
        self.timeouts.insert(M::METHOD, timeout);
        self
    }

    /// The largest frame accepted; a longer line is dropped and reported.
    pub fn max_frame_bytes(mut self, max: usize) -> Self {
        self.max_frame_bytes = max;
        self
    }

    /// How long [`close`](crate::blocking::Connection::close) waits for a host to exit after
    /// its stdin closed, before stopping it (`SIGTERM`, then a kill: see
    /// [`HostProcess::stop`](crate::process::HostProcess::stop)). 30 s unless set:
    /// `muse serve`'s own drain time, so that a healthy host ends its turns and writes its
    /// durable sessions' end before it is signalled.
    pub fn close_grace(mut self, grace: Duration) -> Self {
        self.close_grace = grace;
        self
    }

    /// How a schema fingerprint mismatch in `initialize` is taken.
    pub fn fingerprint_policy(mut self, policy: FingerprintPolicy) -> Self {
        self.fingerprint = policy;
        self
    }
}

/// The settings a running connection keeps from its [`Options`] (the handler moves out).
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) tracer: Option<Tracer>,
    pub(crate) timeout: Duration,
    pub(crate) timeouts: BTreeMap<&'static str, Duration>,
    pub(crate) close_grace: Duration,
    pub(crate) fingerprint: FingerprintPolicy,
    pub(crate) inbound_requests: bool,
}

impl Settings {
    pub(crate) fn timeout_of(&self, method: &str) -> Duration {
        self.timeouts.get(method).copied().unwrap_or(self.timeout)
    }
}

impl<R: Role> Options<R> {
    /// The handlers (`None` without any), the settings kept, and the frame size cap.
    pub(crate) fn split(self) -> (Option<Handlers<R>>, Settings, usize) {
        let settings = Settings {
            tracer: self.tracer,
            timeout: self.timeout,
            timeouts: self.timeouts,
            close_grace: self.close_grace,
            fingerprint: self.fingerprint,
            inbound_requests: self.inbound_requests,
        };
        let handlers = match (self.handler, self.bad_handler) {
            (None, None) => None,
            (typed, bad) => Some(Handlers { typed, bad }),
        };
        (handlers, settings, self.max_frame_bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    use super::*;

    #[test]
    fn an_inbound_frame_is_no_larger_than_a_notification() {
        // Every frame is moved a few times on its way to the consumer, most of them
        // notifications: a larger rare arm would make each move longer.
        let notification = size_of::<ProtocolNotification>() + size_of::<Map<String, Value>>();
        assert_eq!(size_of::<Inbound>(), notification);
    }
}
