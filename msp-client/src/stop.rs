//! Stopping a session's approval handler from another thread or task ([`HandlerStop`]).
//!
//! A stop is a flag under a lock of its own, with the sessions whose handlers watch it. A
//! handler's wait reads the flag in its check, under the core's lock; [`HandlerStop::stop`]
//! sets it, then wakes each session's waiters under the core's lock. So a wait either
//! checked before that wake (its waker kept, then woken) or after it (the flag seen): no
//! stop is missed (checked under loom, `core/loom_tests.rs`).

use std::sync::{Arc, Weak};

#[cfg(loom)]
use loom::sync::Mutex;
#[cfg(not(loom))]
use std::sync::Mutex;

use crate::core::Core;

/// Stops the session approval handlers given it (`decide_approvals_until` on both drivers,
/// `decide_approvals_async_until` on tokio): each returns `Ok(None)` once stopped, after
/// the decision it was sending if any (`Ok(Some)`, why, when the connection closed
/// meanwhile); one given a stop already stopped returns at once. A stop is final, and its
/// clones stop the same handlers, of any session and client. A handler stopped leaves the
/// stages it was offered pending: a handler started after it is offered them again (this
/// is how a session's handler is replaced).
///
/// Stop it from anywhere but a wait's own check (`Session::wait_for`'s), which runs under
/// the client's lock.
#[derive(Clone, Debug)]
pub struct HandlerStop(Arc<Mutex<Stopping>>);

#[derive(Debug)]
struct Stopping {
    stopped: bool,
    /// The sessions whose handlers watch this stop: the stop wakes their waits.
    sessions: Vec<(Weak<Core>, String)>,
}

impl HandlerStop {
    /// A stop not stopped yet.
    pub fn new() -> Self {
        HandlerStop(Arc::new(Mutex::new(Stopping {
            stopped: false,
            sessions: Vec::new(),
        })))
    }

    /// Stops every handler given this stop, those running and those to come.
    pub fn stop(&self) {
        let sessions = {
            let mut stopping = self.lock();
            stopping.stopped = true;
            std::mem::take(&mut stopping.sessions)
        };
        for (core, session_id) in sessions {
            if let Some(core) = core.upgrade() {
                core.wake(&session_id);
            }
        }
    }

    /// Whether [`HandlerStop::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.lock().stopped
    }

    /// A handler of session `session_id` watches this stop: the stop wakes its waits.
    /// Sessions of clients gone are forgotten meanwhile.
    pub(crate) fn watch(&self, core: &Arc<Core>, session_id: &str) {
        let mut stopping = self.lock();
        stopping
            .sessions
            .retain(|(core, _)| core.strong_count() > 0);
        let watched = stopping
            .sessions
            .iter()
            .any(|(c, id)| id == session_id && std::ptr::eq(c.as_ptr(), Arc::as_ptr(core)));
        if !stopping.stopped && !watched {
            stopping
                .sessions
                .push((Arc::downgrade(core), session_id.to_owned()));
        }
    }

    fn lock(&self) -> impl std::ops::DerefMut<Target = Stopping> + '_ {
        // A panic under this lock leaves a flag and a list whole.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for HandlerStop {
    fn default() -> Self {
        HandlerStop::new()
    }
}
