//! A session's approval handler on a task of its own ([`Session::handle_approvals`]).

use std::future::Future;

use msp_rpc::CloseReason;
use msp_session::{PendingApproval, Stage};
use tokio::task::JoinHandle;

use super::Session;
use crate::asks::Decision;
use crate::outcome::Error;
use crate::stop::HandlerStop;

/// A session's approval handler running on a task of its own, from
/// [`Session::handle_approvals`] or [`Session::handle_approvals_async`]. Dropping it stops
/// the handler without waiting: a decision being sent then still completes.
/// [`ApprovalHandler::stop`] also waits for the end, so a handler is replaced by stopping it
/// and then starting another: the stages it was offered and left undecided stay pending,
/// and the next is offered them.
#[must_use = "dropping the handler stops it"]
#[derive(Debug)]
pub struct ApprovalHandler {
    stop: HandlerStop,
    task: Option<JoinHandle<Result<Option<CloseReason>, Error>>>,
}

impl ApprovalHandler {
    /// Runs `task` on the runtime of `session`'s client.
    fn spawn(
        session: &Session,
        stop: HandlerStop,
        task: impl Future<Output = Result<Option<CloseReason>, Error>> + Send + 'static,
    ) -> Self {
        ApprovalHandler {
            stop,
            task: Some(session.0.link.runtime.spawn(task)),
        }
    }

    /// Stops the handler and waits for its task: `Ok(None)` once stopped (after the decision
    /// it was sending, if any; a `decide` still awaiting is dropped), `Ok(Some)` when the
    /// connection closed first (why), and the error that ended it otherwise. A panic of its
    /// `decide` is resumed here. A task the runtime cancelled (it was shutting down) counts
    /// as stopped.
    ///
    /// From within its own `decide`, it returns `Ok(None)` at once, and the handler ends
    /// once `decide` returns.
    pub async fn stop(mut self) -> Result<Option<CloseReason>, Error> {
        self.stop.stop();
        let task = self.task.take().expect("awaited only here");
        if tokio::task::try_id() == Some(task.id()) {
            return Ok(None);
        }
        match task.await {
            Ok(ended) => ended,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(_cancelled) => Ok(None),
        }
    }

    /// Whether the handler ended on its own: the connection closed, or an error ended it
    /// ([`ApprovalHandler::stop`] says which).
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().map_or(true, JoinHandle::is_finished)
    }
}

impl Drop for ApprovalHandler {
    fn drop(&mut self) {
        self.stop.stop();
    }
}

impl Session {
    /// Runs [`Session::decide_approvals_until`] on a task of its own (on the runtime the
    /// client was made in, a clone of the session moved there) until the handler returned
    /// is stopped or dropped, or the connection closes: the session's handler, deciding
    /// while the program starts turns and follows them. `decide` runs on a runtime's worker
    /// and must not block (a handler that waits for someone is
    /// [`Session::handle_approvals_async`]'s). It may be called outside that runtime.
    ///
    /// ```no_run
    /// # async fn demo(session: msp_client::tokio::Session) -> Result<(), msp_client::Error> {
    /// use msp_client::Decision;
    /// use msp_types::ApprovalDecision;
    ///
    /// let allow = [ApprovalDecision::ApprovedForSession];
    /// let handler = session.handle_approvals(move |_, stage| Decision::first_offered(stage, &allow));
    /// // ... turns run; then another policy takes over, from the stages left pending:
    /// handler.stop().await?;
    /// let handler = session.handle_approvals(|_, _| None);
    /// # drop(handler); Ok(()) }
    /// ```
    pub fn handle_approvals(
        &self,
        mut decide: impl FnMut(&PendingApproval, Stage<'_>) -> Option<Decision> + Send + 'static,
    ) -> ApprovalHandler {
        let stop = HandlerStop::new();
        let (session, watched) = (self.clone(), stop.clone());
        ApprovalHandler::spawn(self, stop, async move {
            session.decide_approvals_until(&watched, &mut decide).await
        })
    }

    /// [`Session::handle_approvals`] with a handler that awaits, as
    /// [`Session::decide_approvals_async_until`]: a `decide` still awaiting at the stop is
    /// dropped (the stage left pending).
    pub fn handle_approvals_async<F, Fut>(&self, decide: F) -> ApprovalHandler
    where
        F: FnMut(PendingApproval) -> Fut + Send + 'static,
        Fut: Future<Output = Option<Decision>> + Send + 'static,
    {
        let stop = HandlerStop::new();
        let (session, watched) = (self.clone(), stop.clone());
        ApprovalHandler::spawn(self, stop, async move {
            session.decide_approvals_async_until(&watched, decide).await
        })
    }
}
