//! What the tokio driver writes, and who writes it.
//!
//! A request's future writes its own line in the poll that sends it, when the stream takes it
//! at once: a round trip is then one task turn shorter (the writer task's). Nothing is
//! awaited between queueing the line and writing it, so a future dropped later cannot leave
//! half a line on the wire: what the stream did not take stays in flight, and the writer task
//! writes it before anything else. The writer task writes every other line (notifications,
//! the reader's and the handler's replies, what a stream left waiting) and closes the stream.
//!
//! The stream is polled only by whoever holds the [`Wire`], and by a request only while
//! nothing is in flight: a stream keeps the waker of its last poll only, and the writer task
//! must own it while it waits for room. Lock order: the wire, then the connection's state.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use ::tokio::io::AsyncWrite;
use ::tokio::sync::Notify;

/// Lines the endpoint sent and nobody took yet, each with its `\n` (in the driver's state).
pub(super) struct Queue {
    bytes: Vec<u8>,
    /// False once the connection closed: later lines are dropped.
    open: bool,
    /// Whether the lines queued now are a request's, which its future writes itself.
    caller_writes: bool,
    /// Rings the writer task.
    bell: Arc<Notify>,
}

impl Queue {
    pub(super) fn new(bell: Arc<Notify>) -> Self {
        Queue {
            bytes: Vec::new(),
            open: true,
            caller_writes: false,
            bell,
        }
    }

    /// Queues a line (dropped once closed).
    pub(super) fn push(&mut self, line: &str) {
        if self.open {
            self.bytes.extend_from_slice(line.as_bytes());
            self.bytes.push(b'\n');
        }
    }

    /// Marks what is queued from now on as a request's own (see [`Queue::flush`]).
    pub(super) fn set_caller_writes(&mut self, caller_writes: bool) {
        self.caller_writes = caller_writes;
    }

    /// After the endpoint sent: the writer task writes what no request writes itself.
    pub(super) fn flush(&self) {
        if !self.bytes.is_empty() && !self.caller_writes {
            self.bell.notify_one();
        }
    }

    /// Closes: the writer task writes what is queued, then closes the stream.
    pub(super) fn close(&mut self) {
        self.open = false;
        self.bell.notify_one();
    }

    /// Whether the connection closed.
    pub(super) fn is_closed(&self) -> bool {
        !self.open
    }

    /// Moves everything queued into `flight` (empty), keeping both buffers' room.
    fn take_into(&mut self, flight: &mut Vec<u8>) -> bool {
        std::mem::swap(&mut self.bytes, flight);
        !flight.is_empty()
    }
}

/// The stream, and the bytes taken from the queue that it has not taken yet.
pub(super) struct Wire {
    /// `None` once closed: dropped, as some streams close only then (a child's stdin).
    stream: Option<Pin<Box<dyn AsyncWrite + Send>>>,
    flight: Vec<u8>,
    /// How much of `flight` the stream took.
    written: usize,
    /// Whether bytes were written since the last flush.
    unflushed: bool,
}

impl Wire {
    pub(super) fn new(stream: impl AsyncWrite + Send + 'static) -> Self {
        Wire {
            stream: Some(Box::pin(stream)),
            flight: Vec::new(),
            written: 0,
            unflushed: false,
        }
    }

    /// Whether nothing is in flight (the stream may be polled by a request).
    pub(super) fn is_idle(&self) -> bool {
        self.flight.is_empty()
    }

    /// Takes what `queue` holds into flight, when nothing is; whether there is anything to
    /// write.
    pub(super) fn take(&mut self, queue: &mut Queue) -> bool {
        self.is_idle() && queue.take_into(&mut self.flight)
    }

    /// Each line in flight, for the tracer.
    pub(super) fn each_line(&self, mut each: impl FnMut(&str)) {
        for line in self.flight.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            each(&String::from_utf8_lossy(line));
        }
    }

    /// Writes what is in flight and flushes; `Ready(Ok)` once all of it is written.
    pub(super) fn poll_flight(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(stream) = self.stream.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        };
        while self.written < self.flight.len() {
            match ready!(stream.as_mut().poll_write(cx, &self.flight[self.written..])) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => {
                    self.written += n;
                    self.unflushed = true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        self.flight.clear();
        self.written = 0;
        if self.unflushed {
            ready!(stream.as_mut().poll_flush(cx))?;
            self.unflushed = false;
        }
        Poll::Ready(Ok(()))
    }

    /// Shuts the stream down and drops it (a host's stdin: the host drains and exits).
    pub(super) fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(stream) = self.stream.as_mut() {
            ready!(stream.as_mut().poll_shutdown(cx))?;
        }
        self.stream = None;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `bell` was rung since the last look.
    fn rung(bell: &Notify) -> bool {
        let notified = bell.notified();
        ::tokio::pin!(notified);
        // A permit stored by `notify_one` completes the first poll.
        notified.enable()
    }

    #[test]
    fn a_requests_own_line_rings_nobody_others_and_the_close_ring_the_writer_task() {
        let bell = Arc::new(Notify::new());
        let mut queue = Queue::new(bell.clone());
        queue.set_caller_writes(true);
        queue.push("{\"id\":1}");
        queue.flush();
        assert!(!rung(&bell), "a request writes its own line");
        queue.set_caller_writes(false);
        queue.flush();
        assert!(rung(&bell), "left for the writer task");
        queue.close();
        assert!(rung(&bell) && queue.is_closed());
        queue.push("late");
        let mut flight = Vec::new();
        assert!(queue.take_into(&mut flight));
        assert_eq!(flight, b"{\"id\":1}\n", "nothing is queued once closed");
    }
}
