//! How a client is set up.

use std::time::Duration;

use msp_rpc::{RemoteError, RpcError};
use msp_session::FoldRules;
use msp_types::{ClientInfo, InitializeParams};

/// How a client connects, folds and retries.
pub struct Options {
    pub(crate) connection: msp_rpc::Options<msp_rpc::Client>,
    pub(crate) initialize: InitializeParams,
    pub(crate) rules: FoldRules,
    pub(crate) events: usize,
    pub(crate) retry: Retry,
}

/// Events kept for each session until taken, by default (past it the oldest are dropped and
/// reported as [`Event::Lagged`](crate::Event::Lagged); the fold keeps everything).
pub const EVENTS: usize = 65_536;

impl Options {
    /// A client named `name` at `version` in `initialize`'s `clientInfo`, with the
    /// connection's defaults, the default fold rules, [`EVENTS`] events kept a session and
    /// [`Retry::default`]. The schema makes a name of lowercase ASCII letters, digits and
    /// underscores only (`my_client`): another is refused at the handshake, nothing sent
    /// ([`HandshakeError::InvalidParams`](msp_rpc::HandshakeError::InvalidParams)).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let client_info = ClientInfo::builder().name(name).version(version).build();
        Options {
            connection: msp_rpc::Options::new(),
            initialize: InitializeParams::builder().client_info(client_info).build(),
            rules: FoldRules::default(),
            events: EVENTS,
            retry: Retry::default(),
        }
    }

    /// The connection's options (timeouts, tracer, frame limit, fingerprint policy). Their
    /// request handlers, if any, are replaced, and `inbound_requests` is set: the client
    /// answers the host's requests, and routes their copies with the notifications.
    pub fn connection(mut self, options: msp_rpc::Options<msp_rpc::Client>) -> Self {
        self.connection = options;
        self
    }

    /// The whole `initialize` params (capabilities, ...).
    pub fn initialize(mut self, params: InitializeParams) -> Self {
        self.initialize = params;
        self
    }

    /// The rules every session's fold follows.
    pub fn rules(mut self, rules: FoldRules) -> Self {
        self.rules = rules;
        self
    }

    /// Events kept a session until taken (and of the client's own, at most 1,024); 0 keeps
    /// none (the fold alone, for a client that only reads state and waits on turns).
    pub fn events(mut self, events: usize) -> Self {
        self.events = events;
        self
    }

    /// How commands are retried.
    pub fn retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }
}

/// How a command is sent again: after a timeout (its outcome unknown) or an error the host
/// calls retryable (its `data.retryable`, else the registry's default for its code), with
/// the same `commandId`, so the host applies it once. Other errors are never retried, nor
/// `daemonDraining` (retryable on another host: this one refuses it again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Sends in all, the first included (1: never again).
    pub attempts: u32,
    /// The most the first wait before sending again after a retryable error may be; each
    /// next one's doubles, up to [`Retry::MAX_BACKOFF`] (or this, when larger). Each wait is
    /// drawn at random up to
    /// that (full jitter), so that clients refused together do not come back together; a
    /// wait is never shorter than the host asked for (`data.retryAfterMs`), and a host that
    /// asks for longer than the most a wait may be gets its error back at once instead. None
    /// after a timeout: the timeout waited already.
    pub backoff: Duration,
}

impl Default for Retry {
    /// Three sends, the waits after a retryable error up to 200 ms, then 400 ms.
    fn default() -> Self {
        Retry {
            attempts: 3,
            backoff: Duration::from_millis(200),
        }
    }
}

impl Retry {
    /// The most any wait before sending again may be, unless [`Retry::backoff`] is more: a
    /// host asking for a longer wait (`data.retryAfterMs`) is not retried.
    pub const MAX_BACKOFF: Duration = Duration::from_secs(2);

    /// Never sent again.
    pub fn never() -> Self {
        Retry {
            attempts: 1,
            backoff: Duration::ZERO,
        }
    }

    /// What to do after attempt `attempt` (from 1) failed with `error`: `Some(wait)` to send
    /// again after `wait`.
    pub(crate) fn again(&self, attempt: u32, error: &RpcError) -> Option<Duration> {
        if attempt >= self.attempts {
            return None;
        }
        match error {
            RpcError::TimedOut { .. } => Some(Duration::ZERO),
            RpcError::Remote(remote) if remote.retryable() == Some(true) && !draining(remote) => {
                // The host's own word on how long to wait, when it gave one, is the least;
                // past the most this waits, the caller decides (the error is theirs).
                let asked = remote.retry_after().unwrap_or_default();
                (asked <= self.most()).then(|| self.backoff_of(attempt).max(asked))
            }
            _ => None,
        }
    }

    /// The most any wait before sending again is: [`Retry::MAX_BACKOFF`], or the backoff
    /// when larger.
    fn most(&self) -> Duration {
        Self::MAX_BACKOFF.max(self.backoff)
    }

    /// The wait after attempt `attempt` failed with a retryable error: at random up to the
    /// backoff doubled `attempt - 1` times, at most [`Retry::most`].
    fn backoff_of(&self, attempt: u32) -> Duration {
        use std::hash::{BuildHasher, Hasher};
        let doubled = self.backoff.saturating_mul(1 << (attempt - 1).min(16));
        let most = doubled.min(self.most());
        // A fresh random key each time (std's hasher seeds): no generator to keep.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(attempt);
        let fraction = (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64;
        most.mul_f64(fraction)
    }
}

/// Whether `remote` says the host is draining: by its kind, or by its code whatever kind it
/// names.
pub(crate) fn draining(remote: &RemoteError) -> bool {
    const KIND: &str = "daemonDraining";
    let code = msp_types::registry::error_by_kind(KIND).map(|entry| entry.code);
    remote.kind() == Some(KIND) || code == Some(remote.code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::remote;

    #[test]
    fn a_retry_waits_at_random_up_to_a_doubling_bound_and_at_most_the_cap() {
        let retry = Retry {
            attempts: 10,
            backoff: Duration::from_millis(300),
        };
        let error = msp_types::ErrorObject::builder()
            .code(-32001)
            .message("overloaded")
            .build();
        let overloaded = remote("turn/interrupt", error);
        for attempt in 1..10 {
            let bound = Duration::from_millis(300 << (attempt - 1)).min(Retry::MAX_BACKOFF);
            let waits: Vec<_> = (0..32)
                .map(|_| retry.again(attempt, &overloaded).expect("sent again"))
                .collect();
            assert!(
                waits.iter().all(|wait| *wait <= bound),
                "{attempt}: {waits:?}"
            );
            assert!(
                waits.iter().any(|wait| *wait != waits[0]),
                "drawn: {waits:?}"
            );
        }
        assert_eq!(retry.again(10, &overloaded), None, "the last attempt");
    }

    #[test]
    fn only_errors_this_host_may_take_later_are_retried() {
        let retry = Retry::default();
        let remote = |code: i64| said(code, None);
        assert!(retry.again(1, &remote(-32001)).is_some(), "overloaded");
        assert!(retry.again(1, &remote(-32031)).is_some(), "backpressured");
        assert!(
            retry.again(1, &remote(-32039)).is_none(),
            "draining: another host's"
        );
        assert!(retry.again(1, &remote(-32030)).is_none(), "rejected");
        // The host's own word overrides its code's default; a draining host's code is
        // draining whatever kind it names.
        let overloaded = said(-32001, Some(("overloaded", Some(false))));
        assert!(retry.again(1, &overloaded).is_none(), "not retryable, said");
        let internal = said(-32603, Some(("internal", Some(true))));
        assert!(retry.again(1, &internal).is_some(), "retryable, said");
        for kind in ["shuttingDown", "overloaded"] {
            let draining = said(-32039, Some((kind, Some(true))));
            assert!(retry.again(1, &draining).is_none(), "draining by its code");
        }
    }

    /// A wait is never shorter than the host asked for, whether or not the build names the
    /// experimental member that asks, nor longer than the most a wait may be.
    #[test]
    fn a_retry_waits_at_least_as_long_as_the_host_asks() {
        let retry = Retry::default();
        let backpressured = |millis: u64| {
            let error: msp_types::ErrorObject = serde_json::from_value(serde_json::json!({
                "code": -32031, "message": "slow down",
                "data": {"kind": "backpressured", "retryable": true, "retryAfterMs": millis}
            }))
            .unwrap();
            remote("turn/steer", error)
        };
        for attempt in 1..3 {
            let wait = retry
                .again(attempt, &backpressured(1000))
                .expect("sent again");
            assert!(wait >= Duration::from_millis(1000), "{attempt}: {wait:?}");
        }
        // Longer than the most a wait may be: the caller gets the error at once.
        assert_eq!(retry.again(1, &backpressured(600_000)), None);
        let patient = Retry {
            backoff: Duration::from_secs(600),
            ..Retry::default()
        };
        assert!(patient.again(1, &backpressured(600_000)).is_some());
    }

    /// A remote error of `code`, with `data` of a kind and its own `retryable` if given.
    fn said(code: i64, data: Option<(&str, Option<bool>)>) -> RpcError {
        let mut error = msp_types::ErrorObject::builder()
            .code(code)
            .message("no")
            .build();
        if let Some((kind, retryable)) = data {
            let kind: msp_types::ErrorKind = kind.parse().expect("open: every kind reads");
            let mut data = msp_types::ErrorData::builder().kind(kind).build();
            data.retryable = retryable;
            error.data = Some(Box::new(data));
        }
        remote("turn/steer", error)
    }
}
