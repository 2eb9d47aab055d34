//! How the drivers' threads wait, and the locks they share: from std, or from loom when the
//! synchronization is model-checked (`RUSTFLAGS="--cfg loom"`, see `shared/loom_tests.rs`).

use std::task::{Context, Poll};
#[cfg(not(loom))]
use std::task::{Wake, Waker};
use std::time::Instant;

#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

/// Wakes a thread parked in [`wait`].
#[cfg(not(loom))]
struct Unpark(std::thread::Thread);

#[cfg(not(loom))]
impl Wake for Unpark {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

#[cfg(not(loom))]
thread_local! {
    /// This thread's waker, made once: a step that keeps it can tell it holds it already.
    static THREAD_WAKER: Waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
}

/// Polls `poll` on this thread until it is ready, parking the thread in between (the waker it
/// gives unparks it); `None` once `deadline` passed.
#[cfg(not(loom))]
pub(crate) fn wait<T>(
    deadline: Option<Instant>,
    mut poll: impl FnMut(&mut Context<'_>) -> Poll<T>,
) -> Option<T> {
    THREAD_WAKER.with(|waker| {
        let mut cx = Context::from_waker(waker);
        loop {
            if let Poll::Ready(value) = poll(&mut cx) {
                return Some(value);
            }
            // An unpark since the poll makes the park return at once: no wake-up is lost.
            match deadline {
                None => std::thread::park(),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    std::thread::park_timeout(left);
                }
            }
        }
    })
}

/// Under loom there is no time: waits until ready.
#[cfg(loom)]
pub(crate) fn wait<T>(
    _deadline: Option<Instant>,
    poll: impl FnMut(&mut Context<'_>) -> Poll<T>,
) -> Option<T> {
    Some(loom::future::block_on(std::future::poll_fn(poll)))
}
