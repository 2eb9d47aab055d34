//! A session's approval handler on a thread of its own ([`Session::handle_approvals`]).

use std::thread::{self, JoinHandle};

use msp_rpc::CloseReason;
use msp_session::{PendingApproval, Stage};

use super::Session;
use crate::asks::Decision;
use crate::outcome::Error;
use crate::stop::HandlerStop;

/// A session's approval handler running on a thread of its own, from
/// [`Session::handle_approvals`]. Dropping it stops the handler without waiting: a `decide`
/// running then, and the decision it returns, still complete. [`ApprovalHandler::stop`] also
/// waits for the end, so a handler is replaced by stopping it and then starting another:
/// the stages it was offered and left undecided stay pending, and the next is offered them.
#[must_use = "dropping the handler stops it"]
#[derive(Debug)]
pub struct ApprovalHandler {
    stop: HandlerStop,
    thread: Option<JoinHandle<Result<Option<CloseReason>, Error>>>,
}

impl ApprovalHandler {
    /// Stops the handler and waits for its thread: `Ok(None)` once stopped (after the
    /// decision it was sending, if any), `Ok(Some)` when the connection closed first (why),
    /// and the error that ended it otherwise. A panic of its `decide` is resumed here.
    ///
    /// From within its own `decide`, it returns `Ok(None)` at once, and the handler ends
    /// once `decide` returns.
    pub fn stop(mut self) -> Result<Option<CloseReason>, Error> {
        self.stop.stop();
        let thread = self.thread.take().expect("joined only here");
        if thread.thread().id() == thread::current().id() {
            return Ok(None);
        }
        match thread.join() {
            Ok(ended) => ended,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Whether the handler ended on its own: the connection closed, or an error ended it
    /// ([`ApprovalHandler::stop`] says which).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().map_or(true, JoinHandle::is_finished)
    }
}

impl Drop for ApprovalHandler {
    fn drop(&mut self) {
        self.stop.stop();
    }
}

impl Session {
    /// Runs [`Session::decide_approvals_until`] on a thread of its own (a clone of the
    /// session moved there) until the handler returned is stopped or dropped, or the
    /// connection closes: the session's handler, deciding while the program starts turns
    /// and follows them.
    ///
    /// ```no_run
    /// # fn demo(session: msp_client::blocking::Session) -> Result<(), msp_client::Error> {
    /// use msp_client::Decision;
    /// use msp_types::ApprovalDecision;
    ///
    /// let allow = [ApprovalDecision::ApprovedForSession];
    /// let handler = session.handle_approvals(move |_, stage| Decision::first_offered(stage, &allow));
    /// // ... turns run; then another policy takes over, from the stages left pending:
    /// handler.stop()?;
    /// let handler = session.handle_approvals(|_, _| None);
    /// # drop(handler); Ok(()) }
    /// ```
    pub fn handle_approvals(
        &self,
        mut decide: impl FnMut(&PendingApproval, Stage<'_>) -> Option<Decision> + Send + 'static,
    ) -> ApprovalHandler {
        let stop = HandlerStop::new();
        let (session, watched) = (self.clone(), stop.clone());
        let thread = thread::Builder::new()
            .name(format!("msp-approvals {}", self.id()))
            .spawn(move || session.decide_approvals_until(&watched, &mut decide))
            .expect("failed to spawn thread");
        ApprovalHandler {
            stop,
            thread: Some(thread),
        }
    }
}
