//! Who takes frames from the connection and routes them to their sessions, on the blocking
//! driver (tokio's pump task routes every frame: a task has no thread of its own to keep
//! values on).
//!
//! A session's events are made from the frames, and values made on one thread and freed on
//! another make the allocator slow (msp-rpc's "Who decodes"). So a handle that waits (for an
//! event, a condition of the fold, a turn's item) takes frames and routes them itself, on its
//! own thread, where the program then drops them. The pump thread routes only once no
//! handle was served (took the role, or found what it waits for) for [`STALL`]: a program
//! that waits on nothing still sees its folds move, and the connection's lines do not pile
//! up. A program that keeps finding what it waits for at once (a condition true already,
//! asked again and again within [`STALL`]) holds the pump off as long as it does so: frames for
//! its other sessions wait meanwhile.
//!
//! # The role
//!
//! One holder at a time takes frames and routes them, so that they reach their sessions in
//! wire order. The role is kept in the core's state, under its lock ([`HandleWait::check_or_role`],
//! [`Core::pump_turn`]); it is held only while taking and routing (a refill pages apart),
//! never while parked.
//!
//! | who | takes the role | else waits for |
//! | --- | --- | --- |
//! | a waiting handle | when nobody holds it | its condition (its session's slot), the role's release |
//! | the pump thread | when nobody holds it, no handle is parked waiting, and no handle was served since its last look | its next look: [`STALL`] later, [`BUSY_LOOK`] while a handle waits (or the end) |
//!
//! Holding the role, each polls the connection with its own waker: when nothing is ready,
//! it gives the role back and parks, and the connection wakes it when a frame may be (and
//! keeps the lines undecoded for it meanwhile). A handle routes one frame at a time and
//! checks its condition under the same lock (two locks a frame: check or take the role;
//! route, give the role back and check); the pump routes what is ready, up to [`BATCH`].
//!
//! The pump looks on a timer rather than being woken when the last handle stops waiting:
//! a program taking events one by one stops waiting between any two, and a wake-up each time
//! would cost more than the routing.

use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use msp_rpc::CloseReason;
use msp_session::Input;

use crate::core::{Checked, Core, HandleWait, PumpRole, PumpTurn, Refills, Slot};
use crate::shared::{self, BATCH};

/// How long no handle may have been served before the pump takes the frames.
pub(crate) const STALL: Duration = Duration::from_millis(2);

/// How often the pump looks while a handle's wait is parked or the role is held (a handle
/// routes then).
pub(crate) const BUSY_LOOK: Duration = Duration::from_millis(20);

/// Where frames come from: the connection (a trait so that the synchronization is checked
/// against a model of it).
pub(crate) trait Source {
    /// The next frame if one is ready, as the fold's input; `Ready(None)` once the
    /// connection ended. When none is, `cx` is woken once one may be.
    fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Input>>;

    /// Why the connection ended, and whether the host's sessions outlive it.
    fn ended(&self) -> (CloseReason, bool);
}

impl Source for msp_rpc::blocking::Connection {
    fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Option<Input>> {
        msp_rpc::blocking::Connection::poll_next(self, cx).map(|next| next.map(shared::input))
    }

    fn ended(&self) -> (CloseReason, bool) {
        let reason = self.close_reason().unwrap_or(CloseReason::PeerClosed);
        (reason, shared::durable(self.handshake()))
    }
}

/// What a holder of the role did.
pub(crate) enum Pumped<'a> {
    /// Routed frames, and the refills they ask for (to page once the role is given back).
    Routed(PumpRole<'a>, Refills),
    /// The connection ended: every session was told.
    Ended,
}

/// Takes up to [`BATCH`] ready frames and routes them, holding `role`; `Pending` (the role
/// given back) when none was ready.
fn poll_route<'a>(
    role: PumpRole<'a>,
    source: &impl Source,
    cx: &mut Context<'_>,
) -> Poll<Pumped<'a>> {
    let mut inputs: Vec<Input> = Vec::new();
    while inputs.len() < BATCH {
        match source.poll_next(cx) {
            Poll::Ready(Some(input)) => inputs.push(input),
            Poll::Ready(None) if inputs.is_empty() => {
                let (reason, durable) = source.ended();
                role.core().end(reason, durable);
                return Poll::Ready(Pumped::Ended);
            }
            Poll::Ready(None) | Poll::Pending => break,
        }
    }
    if inputs.is_empty() {
        return Poll::Pending;
    }
    let refills = role.core().route_all(inputs.into_iter());
    Poll::Ready(Pumped::Routed(role, refills))
}

/// A handle's wait (on its session): `check` (see [`Slot`]), and while it finds nothing and
/// nobody else routes, a frame taken and routed here (its refills handed to `refill` once
/// the role is given back) and `check` again, under the lock that routed it. Past
/// `deadline` it routes no more (frames for other sessions may come faster than it routes
/// them): the caller's wait then ends.
pub(crate) fn poll_handle<T>(
    wait: &mut HandleWait<'_>,
    source: &impl Source,
    deadline: Option<Instant>,
    cx: &mut Context<'_>,
    mut check: impl FnMut(&mut Slot, Option<&CloseReason>) -> Option<T>,
    mut refill: impl FnMut(Refills),
) -> Poll<T> {
    loop {
        let role = match wait.check_or_role(cx, &mut check) {
            Ok(found) => return Poll::Ready(found),
            Err(None) => return Poll::Pending,
            Err(Some(role)) => role,
        };
        let past = || deadline.is_some_and(|deadline| Instant::now() >= deadline);
        let (input, park) = match source.poll_next(cx) {
            Poll::Ready(Some(input)) => (Some(input), past()),
            // `check` sees the end; or, while a refill of the session folds what it held,
            // the wait parks until it did.
            Poll::Ready(None) => {
                let (reason, durable) = source.ended();
                role.core().end(reason, durable);
                (None, true)
            }
            // The connection wakes `cx` once a frame may be ready.
            Poll::Pending => (None, true),
        };
        match wait.route_and_check(role, input, park, cx, &mut check) {
            Checked::Found(found) => return Poll::Ready(found),
            Checked::NotYet if park => return Poll::Pending,
            Checked::NotYet => {}
            Checked::Refill(role, refills) => {
                drop(role);
                refill(refills);
                if past() {
                    return wait.check(cx, &mut check);
                }
            }
        }
    }
}

/// The pump thread's look: frames routed when its turn came and some were ready; else
/// `Pending`, with when to look again in `again` (`None`: when the connection wakes it).
pub(crate) fn poll_pump<'a>(
    core: &'a Core,
    source: &impl Source,
    seen: &mut u64,
    again: &mut Option<Duration>,
    cx: &mut Context<'_>,
) -> Poll<Pumped<'a>> {
    match core.pump_turn(seen, cx) {
        PumpTurn::Ended => Poll::Ready(Pumped::Ended),
        PumpTurn::Later(look) => {
            *again = Some(look);
            Poll::Pending
        }
        PumpTurn::Role(role) => {
            *again = None;
            poll_route(role, source, cx)
        }
    }
}
