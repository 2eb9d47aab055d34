//! `autoResolutionMs` as a deadline: past it the host settles the prompt itself
//! (`timedOut`), so an answer sent later can only lose.

use std::time::{Duration, Instant};

/// When the host gives up waiting on a prompt; `None` waits indefinitely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// The deadline of a prompt received at `received` with `autoResolutionMs`.
    pub fn after(received: Instant, auto_resolution_ms: Option<i64>) -> Self {
        Deadline(
            auto_resolution_ms
                .map(|ms| received + Duration::from_millis(u64::try_from(ms).unwrap_or(0))),
        )
    }

    /// Whether the window has closed at `now`.
    pub fn passed(&self, now: Instant) -> bool {
        self.0.is_some_and(|at| now >= at)
    }

    /// `userInput/engaged` stops the host's countdown, and with it this deadline.
    pub fn stop(&mut self) {
        self.0 = None;
    }
}
