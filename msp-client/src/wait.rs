//! Waiting on the core's steps from a plain thread: a waker that unparks it.

use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Instant;

struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

thread_local! {
    /// This thread's waker, made once: a step that keeps it can tell it holds it already.
    static THREAD_WAKER: Waker = Waker::from(Arc::new(Unpark(thread::current())));
}

/// Runs `work` with a context whose waker unparks this thread.
pub(crate) fn on_this_thread<T>(work: impl FnOnce(&mut Context<'_>) -> T) -> T {
    THREAD_WAKER.with(|waker| work(&mut Context::from_waker(waker)))
}

/// Polls `step` until it is ready, parked in between; `None` at `deadline`.
pub(crate) fn wait<T>(
    deadline: Option<Instant>,
    mut step: impl FnMut(&mut Context<'_>) -> Poll<T>,
) -> Option<T> {
    on_this_thread(|cx| loop {
        if let Poll::Ready(value) = step(cx) {
            return Some(value);
        }
        // An unpark since the step makes the park return at once: no wake-up is lost.
        match deadline {
            None => thread::park(),
            Some(deadline) => {
                let now = Instant::now();
                if now >= deadline {
                    return None;
                }
                thread::park_timeout(deadline - now);
            }
        }
    })
}
