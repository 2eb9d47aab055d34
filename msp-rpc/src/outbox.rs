//! Lines the blocking driver's endpoint sent and nobody wrote yet, and who writes them.
//!
//! A request's caller writes its own line, on its own thread, when it can do so without
//! blocking: a round trip is then one thread wake-up shorter (the writer thread's). A write
//! blocks only when the peer left what it was sent unread, so the outbox counts what the peer
//! surely read: a peer reads its input in order, so its answer to a request says it read every
//! byte up to the end of that request. While at most [`CALLER_WRITE_BYTES`] may be unread, a
//! pipe or socket has room, and a caller writes; past that, or when the line came from another
//! thread (the reader's, the handler's, a consumer's), the writer thread does, so that a peer
//! that stops reading blocks no caller past its deadline and never the reader.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar};

/// How many bytes the peer may have left unread for a caller to write on its own thread: the
/// least a pipe holds (a page; a socket holds more).
pub(crate) const CALLER_WRITE_BYTES: u64 = 4096;

/// Lines queued in order, and the peer's progress through them.
pub(crate) struct Outbox {
    lines: VecDeque<String>,
    /// Bytes queued so far, each line with its `\n`.
    queued: u64,
    /// Bytes the peer surely read: up to the end of the latest request it answered.
    read: u64,
    /// Whether the writer thread was rung for what is queued.
    wanted: bool,
    /// Whether the lines queued now are a caller's, which it writes itself.
    caller_writes: bool,
    /// False once the connection closed: the writer thread writes what is left and closes.
    open: bool,
    /// Wakes the writer thread (waits with the driver's state lock).
    bell: Arc<Condvar>,
}

impl Outbox {
    pub(crate) fn new(bell: Arc<Condvar>) -> Self {
        Outbox {
            lines: VecDeque::new(),
            queued: 0,
            read: 0,
            wanted: false,
            caller_writes: false,
            open: true,
            bell,
        }
    }

    /// Queues a line (dropped once closed).
    pub(crate) fn push(&mut self, line: String) {
        if self.open {
            self.queued += line.len() as u64 + 1;
            self.lines.push_back(line);
        }
    }

    /// Bytes queued so far: where the line queued last ends.
    pub(crate) fn queued(&self) -> u64 {
        self.queued
    }

    /// The peer answered a request whose line ended at `through`: it read all before.
    pub(crate) fn peer_read(&mut self, through: u64) {
        self.read = self.read.max(through);
    }

    /// Marks what is queued from now on as a caller's own (see [`Outbox::flush`]).
    pub(crate) fn set_caller_writes(&mut self, caller_writes: bool) {
        self.caller_writes = caller_writes;
    }

    /// Everything queued, for a caller to write on its own thread, when none of it can block;
    /// otherwise the writer thread is rung for it and nothing is returned.
    pub(crate) fn for_caller(&mut self) -> Option<VecDeque<String>> {
        if self.lines.is_empty() {
            return None;
        }
        if self.queued - self.read > CALLER_WRITE_BYTES || !self.open {
            self.ring();
            return None;
        }
        Some(std::mem::take(&mut self.lines))
    }

    /// Everything queued, for the writer thread.
    pub(crate) fn for_writer(&mut self) -> VecDeque<String> {
        std::mem::take(&mut self.lines)
    }

    /// Whether the writer thread has work: lines it was rung for, or the close.
    pub(crate) fn wanted(&self) -> bool {
        self.wanted || !self.open
    }

    /// Whether lines may still be queued.
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// Takes the writer thread's call.
    pub(crate) fn answer(&mut self) {
        self.wanted = false;
    }

    /// Rings the writer thread for what is queued.
    pub(crate) fn ring(&mut self) {
        if !self.lines.is_empty() && !self.wanted {
            self.wanted = true;
            self.bell.notify_one();
        }
    }

    /// After the endpoint sent: the writer thread writes what no caller writes itself.
    pub(crate) fn flush(&mut self) {
        if !self.caller_writes {
            self.ring();
        }
    }

    /// Closes: the writer thread writes what is queued and closes its side.
    pub(crate) fn close(&mut self) {
        self.open = false;
        self.bell.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outbox() -> Outbox {
        Outbox::new(Arc::new(Condvar::new()))
    }

    #[test]
    fn a_caller_writes_while_the_peer_read_all_but_a_page_and_the_writer_thread_after() {
        let mut out = outbox();
        out.set_caller_writes(true);
        out.push("x".repeat(99));
        out.flush();
        assert!(
            !out.wanted(),
            "a caller's own line does not ring the writer thread"
        );
        assert_eq!(out.for_caller().map(|lines| lines.len()), Some(1));
        let first = out.queued();
        assert_eq!(first, 100);
        // More than a page sent and not answered: the next line goes to the writer thread.
        out.push("y".repeat(CALLER_WRITE_BYTES as usize));
        assert_eq!(out.for_caller(), None);
        assert!(out.wanted());
        assert_eq!(out.for_writer().len(), 1);
        out.answer();
        // The peer answered the second request: it read everything up to its end.
        out.peer_read(out.queued());
        out.peer_read(first);
        out.push("z".into());
        assert_eq!(out.for_caller().map(|lines| lines.len()), Some(1));
    }

    #[test]
    fn lines_from_other_threads_ring_the_writer_thread_once_and_a_close_drops_later_ones() {
        let mut out = outbox();
        out.push("a".into());
        out.flush();
        out.push("b".into());
        out.flush();
        assert!(out.wanted());
        assert_eq!(out.for_writer(), ["a", "b"]);
        out.answer();
        assert!(!out.wanted());
        out.close();
        assert!(out.wanted() && !out.is_open());
        out.push("late".into());
        assert!(out.for_writer().is_empty());
        assert_eq!(out.for_caller(), None);
    }
}
