//! Lines read and not typed yet, and who types them.
//!
//! Typing a frame (parsing it into its Rust types) is most of what reading costs, and it is
//! cheapest where the values are used: on the consumer's thread, one frame at a time, each
//! dropped before the next is made. Values made on one thread and freed on another, or many
//! of them alive at once, make allocators slow (typing 100 frames before dropping them costs
//! about 30 % more than one at a time). So the drivers' readers only cut bytes into lines, and:
//!
//! - while the consumer of notifications waits for them, or still works through lines it was
//!   given, the reader appends what it reads to the backlog and goes on reading, and the
//!   consumer types the lines as it takes them;
//! - at any other time the reader types the lines itself, at once, so that responses and the
//!   peer's requests never wait on a consumer busy elsewhere;
//! - a consumer that stops halfway has the rest typed for it once it took nothing for
//!   [`STALL`].
//!
//! Lines are typed in the order they were read: the consumer claims the oldest batch, parses
//! its lines without holding the connection's lock (so that the reader and callers never queue
//! behind a parse) and applies each under it; nobody else types while a batch is claimed.

use std::collections::VecDeque;
use std::ops::{DerefMut, Range};
use std::time::Duration;

use crate::driver::{pump, trace, Inbound, Sinks, Traced, Tracer};
use crate::endpoint::{Endpoint, Parsed, Role};
use crate::framing::{LineDecoder, LineError};

/// How long lines handed to a consumer may wait untouched before someone else types them.
pub(crate) const STALL: Duration = Duration::from_millis(2);

/// How many bytes of lines the backlog holds before the reader waits for the consumer (as a
/// full pipe holds a writer), so that a slow consumer does not grow memory without bound. The
/// reader then waits until half of it was taken: one wake-up per half, not per batch.
pub(crate) const MAX_BYTES: usize = 1024 * 1024;

/// A line of a batch: its place in the text, or why framing refused it.
enum Entry {
    Text(Range<usize>),
    Bad(LineError),
}

/// Lines from one read, in order.
#[derive(Default)]
pub(crate) struct Batch {
    text: String,
    entries: Vec<Entry>,
    /// How many entries were taken.
    taken: usize,
}

impl Batch {
    /// Moves the complete lines of `decoder` in.
    pub(crate) fn fill(&mut self, decoder: &mut LineDecoder) {
        while let Some(line) = decoder.next_line() {
            let entry = match line {
                Ok(line) => {
                    let start = self.text.len();
                    self.text.push_str(line);
                    Entry::Text(start..self.text.len())
                }
                Err(error) => Entry::Bad(error),
            };
            self.entries.push(entry);
        }
    }

    /// Whether every line was taken (or there were none).
    pub(crate) fn is_empty(&self) -> bool {
        self.taken == self.entries.len()
    }

    /// The next line not taken.
    pub(crate) fn take(&mut self) -> Option<Result<&str, LineError>> {
        let entry = self.entries.get_mut(self.taken)?;
        self.taken += 1;
        Some(match entry {
            Entry::Text(range) => Ok(&self.text[range.clone()]),
            Entry::Bad(error) => Err(std::mem::replace(
                error,
                LineError::NotUtf8 {
                    lossy: String::new(),
                },
            )),
        })
    }

    fn clear(&mut self) {
        self.text.clear();
        self.entries.clear();
        self.taken = 0;
    }

    /// Types every line not taken yet.
    pub(crate) fn type_all<R: Role>(&mut self, typist: &mut Typist<'_, R, impl Sinks<R>>) {
        while let Some(line) = self.take() {
            typist.line(line);
        }
        self.clear();
    }
}

/// The lines handed to the consumer and not taken yet.
#[derive(Default)]
pub(crate) struct Backlog {
    batches: VecDeque<Batch>,
    /// Batches all taken, kept for the reader to fill again.
    spare: Vec<Batch>,
    /// Bytes of the batches held, claimed included.
    bytes: usize,
    /// Whether a consumer holds the oldest batch.
    claimed: bool,
    /// Whether someone waits for the claim to end (to close).
    wanted: bool,
    /// Claims so far: the consumer's progress, for the stall check.
    claims: u64,
}

impl Backlog {
    /// Whether no line is waiting or being typed.
    pub(crate) fn is_idle(&self) -> bool {
        !self.claimed && !self.has_lines()
    }

    /// Whether lines wait and nobody types them: what the stall check looks for.
    pub(crate) fn is_left(&self) -> bool {
        !self.claimed && self.has_lines()
    }

    fn has_lines(&self) -> bool {
        !self.batches.iter().all(Batch::is_empty)
    }

    /// Whether the reader should wait before adding more.
    pub(crate) fn is_full(&self) -> bool {
        self.bytes >= MAX_BYTES
    }

    /// Whether a reader that waited may go on.
    pub(crate) fn has_room(&self) -> bool {
        self.bytes <= MAX_BYTES / 2
    }

    /// Whether a consumer holds the oldest batch; `want` asks it to say when it is back.
    pub(crate) fn is_claimed(&mut self, want: bool) -> bool {
        self.wanted |= want && self.claimed;
        self.claimed
    }

    /// Claims so far.
    pub(crate) fn claims(&self) -> u64 {
        self.claims
    }

    /// Hands `batch` over; returns an empty batch for the reader to fill next.
    pub(crate) fn push(&mut self, batch: Batch) -> Batch {
        self.bytes += batch.text.len();
        self.batches.push_back(batch);
        self.spare.pop().unwrap_or_default()
    }

    /// The oldest batch with lines left, for the consumer to type; it comes back through
    /// [`Backlog::unclaim`]. `None` when there is none or another consumer holds it.
    pub(crate) fn claim(&mut self) -> Option<Batch> {
        if self.claimed {
            return None;
        }
        self.recycle();
        let batch = self.batches.pop_front()?;
        self.claimed = true;
        self.claims += 1;
        Some(batch)
    }

    /// Takes back a claimed batch, its lines left first in line; true when someone waits for
    /// the claim to end.
    pub(crate) fn unclaim(&mut self, batch: Batch) -> bool {
        self.claimed = false;
        self.batches.push_front(batch);
        self.recycle();
        std::mem::take(&mut self.wanted)
    }

    /// Keeps used-up batches at the front for reuse.
    fn recycle(&mut self) {
        while self.batches.front().is_some_and(Batch::is_empty) {
            if let Some(mut done) = self.batches.pop_front() {
                self.bytes -= done.text.len();
                // Kept for the reader (at most a backlog's worth): freed here, they would be
                // freed on another thread than the one that made them, which allocators do
                // slowly.
                done.clear();
                self.spare.push(done);
            }
        }
    }

    /// Types every line waiting (nobody may hold a claim).
    pub(crate) fn type_all<R: Role>(&mut self, typist: &mut Typist<'_, R, impl Sinks<R>>) {
        debug_assert!(!self.claimed, "lines typed past a claimed batch");
        for batch in &mut self.batches {
            while let Some(line) = batch.take() {
                typist.line(line);
            }
        }
        self.recycle();
    }
}

/// The endpoint and where its output goes, borrowed for typing lines.
pub(crate) struct Typist<'a, R: Role, S: Sinks<R>> {
    pub(crate) endpoint: &'a mut Endpoint<R>,
    pub(crate) sinks: &'a mut S,
    pub(crate) tracer: Option<&'a Tracer>,
}

impl<R: Role, S: Sinks<R>> Typist<'_, R, S> {
    /// Types one line and hands on what it produced.
    fn line(&mut self, line: Result<&str, LineError>) {
        match line {
            Ok(line) => self.parsed(line, Endpoint::parse(line)),
            Err(error) => self.bad(error),
        }
    }

    /// Applies a line parsed elsewhere and hands on what it produced.
    fn parsed(&mut self, line: &str, parsed: Parsed<R>) {
        trace(self.tracer, Traced::Received, line);
        self.endpoint.handle_parsed(line, parsed);
        pump(self.endpoint, self.sinks);
    }

    /// Applies a line framing refused.
    fn bad(&mut self, error: LineError) {
        self.endpoint.handle_bad_line(error);
        pump(self.endpoint, self.sinks);
    }
}

/// A driver's state, as the consumer's typing needs it.
pub(crate) trait Typing<R: Role> {
    type Sinks: Sinks<R>;

    /// The backlog and what types its lines.
    fn typist(&mut self) -> (&mut Backlog, Typist<'_, R, Self::Sinks>);

    /// The oldest inbound frame queued.
    fn pop_inbound(&mut self) -> Option<Inbound>;
}

/// Types the lines of a claimed batch, each parsed without the lock (`lock` takes it) and
/// applied with it, until one gives an inbound frame. Returns the lock held, that frame, and
/// the batch for the caller to unclaim.
pub(crate) fn type_claimed<R: Role, S: Typing<R>, G: DerefMut<Target = S>>(
    mut batch: Batch,
    lock: impl Fn() -> G,
) -> (G, Option<Inbound>, Batch) {
    loop {
        let line = batch.take();
        let parsed = match &line {
            Some(Ok(line)) => Some(Endpoint::<R>::parse(line)),
            _ => None,
        };
        let mut state = lock();
        let (_, mut typist) = state.typist();
        match (line, parsed) {
            (Some(Ok(line)), Some(parsed)) => {
                typist.parsed(line, parsed);
                if let Some(inbound) = state.pop_inbound() {
                    return (state, Some(inbound), batch);
                }
            }
            (Some(Err(error)), _) => typist.bad(error),
            _ => return (state, None, batch),
        }
    }
}
