//! The stream the tokio driver writes, and the bytes taken for it that it has not taken yet.
//!
//! A request's future writes its own line in the poll that sends it, when nothing is in
//! flight and the stream takes it at once: a round trip is then one task turn shorter (the
//! writer task's). Nothing is awaited between queueing the line and writing it, so a future
//! dropped later cannot leave half a line on the wire: what the stream did not take stays in
//! flight, and the writer task writes it before anything else.
//!
//! The stream is polled by a request only while nothing is in flight: a stream keeps the waker
//! of its last poll only, and the writer task must own it while it waits for room.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use ::tokio::io::AsyncWrite;

/// The stream, and what was taken for it and not written yet.
pub(super) struct Stream {
    /// `None` once closed: dropped, as some streams close only then (a child's stdin).
    writer: Option<Pin<Box<dyn AsyncWrite + Send>>>,
    flight: Vec<u8>,
    /// How much of `flight` the stream took.
    written: usize,
    /// Whether bytes were written since the last flush.
    unflushed: bool,
}

impl Stream {
    pub(super) fn new(writer: impl AsyncWrite + Send + 'static) -> Self {
        Stream {
            writer: Some(Box::pin(writer)),
            flight: Vec::new(),
            written: 0,
            unflushed: false,
        }
    }

    /// Whether nothing is in flight (the stream may be polled by a request).
    pub(super) fn is_idle(&self) -> bool {
        self.flight.is_empty()
    }

    /// Puts `lines` in flight (nothing is), each with its `\n`.
    pub(super) fn load(&mut self, lines: &mut Vec<String>) {
        for line in lines.drain(..) {
            self.flight.extend_from_slice(line.as_bytes());
            self.flight.push(b'\n');
        }
    }

    /// Writes what is in flight and flushes; `Ready(Ok)` once all of it is written.
    pub(super) fn poll_flight(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(writer) = self.writer.as_mut() else {
            // Closed: what is left has nowhere to go.
            self.flight.clear();
            return Poll::Ready(Ok(()));
        };
        while self.written < self.flight.len() {
            match ready!(writer.as_mut().poll_write(cx, &self.flight[self.written..])) {
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
            ready!(writer.as_mut().poll_flush(cx))?;
            self.unflushed = false;
        }
        Poll::Ready(Ok(()))
    }

    /// Shuts the stream down and drops it (a host's stdin: the host drains and exits).
    pub(super) fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(writer) = self.writer.as_mut() {
            ready!(writer.as_mut().poll_shutdown(cx))?;
        }
        self.writer = None;
        Poll::Ready(Ok(()))
    }
}
