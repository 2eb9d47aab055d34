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
//! Lines are typed in the order they were read. The consumer holds the oldest batch in its
//! [`Claim`] and types its lines without the connection's lock: a notification (most of what
//! arrives) changes nothing in the endpoint, so it goes from its parse straight to the
//! consumer; any other frame is applied under the lock. Nobody else types while the consumer
//! holds a batch, and a close or the stall check first takes the claim's lock and the lines
//! left in it.

use std::collections::VecDeque;
use std::ops::{DerefMut, Range};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
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
        decoder.drain_lines(|line| {
            let entry = match line {
                Ok(line) => {
                    let start = self.text.len();
                    self.text.push_str(line);
                    Entry::Text(start..self.text.len())
                }
                Err(error) => Entry::Bad(error),
            };
            self.entries.push(entry);
        });
    }

    /// Whether every line was taken (or there were none).
    pub(crate) fn is_empty(&self) -> bool {
        self.taken == self.entries.len()
    }

    /// The next line not taken.
    #[inline]
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

/// The lines handed to the consumer and not taken yet, but for the batch it holds.
#[derive(Default)]
pub(crate) struct Backlog {
    batches: VecDeque<Batch>,
    /// Batches all taken, kept for the reader to fill again.
    spare: Vec<Batch>,
    /// Bytes of the batches held, the claimed one included.
    bytes: usize,
    /// Whether the consumer holds a batch (in its [`Claim`]).
    claimed: bool,
}

impl Backlog {
    /// Whether no line is waiting or held by the consumer.
    pub(crate) fn is_idle(&self) -> bool {
        !self.claimed && self.batches.iter().all(Batch::is_empty)
    }

    /// Whether the reader should wait before adding more.
    pub(crate) fn is_full(&self) -> bool {
        self.bytes >= MAX_BYTES
    }

    /// Whether a reader that waited may go on.
    pub(crate) fn has_room(&self) -> bool {
        self.bytes <= MAX_BYTES / 2
    }

    /// Hands `batch` over; returns an empty batch for the reader to fill next.
    pub(crate) fn push(&mut self, batch: Batch) -> Batch {
        self.bytes += batch.text.len();
        self.batches.push_back(batch);
        self.spare.pop().unwrap_or_default()
    }

    /// Takes back the consumer's batch, if it holds one, and hands it the oldest with lines
    /// left, if any. Call only when no inbound frame is queued: those were read first.
    pub(crate) fn refill(&mut self, held: &mut Option<Batch>) {
        if let Some(batch) = held.take() {
            self.batches.push_front(batch);
        }
        self.recycle();
        *held = self.batches.pop_front();
        self.claimed = held.is_some();
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

    /// Types every line waiting, those the consumer holds first: for a close, or for a
    /// consumer that stopped.
    pub(crate) fn type_all<R: Role>(
        &mut self,
        held: &mut Option<Batch>,
        typist: &mut Typist<'_, R, impl Sinks<R>>,
    ) {
        if let Some(batch) = held.take() {
            self.batches.push_front(batch);
        }
        self.claimed = false;
        for batch in &mut self.batches {
            while let Some(line) = batch.take() {
                typist.line(line);
            }
        }
        self.recycle();
    }
}

/// The batch the consumer of notifications takes its lines from, apart from the connection's
/// state: a notification is typed and delivered under this lock alone, which only consumers
/// take, but for a close and the stall check. Whoever takes both takes this one first.
#[derive(Default)]
pub(crate) struct Claim {
    held: Mutex<Option<Batch>>,
    /// Lines taken so far (counted once typed): the consumer's progress, for the stall check.
    taken: AtomicU64,
}

impl Claim {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Option<Batch>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lines taken so far.
    pub(crate) fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }

    /// The next inbound frame from the lines `held` (this claim's, locked): a notification
    /// straight from its parse, anything else applied under the state's lock (`lock` takes
    /// it). `None` once no line is left.
    #[inline]
    pub(crate) fn next<R: Role, S: Typing<R>, G: DerefMut<Target = S>>(
        &self,
        held: &mut Option<Batch>,
        tracer: Option<&Tracer>,
        lock: impl Fn() -> G,
    ) -> Option<Inbound> {
        let batch = held.as_mut()?;
        while let Some(line) = batch.take() {
            let inbound = match line {
                Ok(line) => match Endpoint::<R>::parse(line).into_notification() {
                    Ok((notification, extra)) => {
                        trace(tracer, Traced::Received, line);
                        Some(Inbound::Notification {
                            notification,
                            extra,
                        })
                    }
                    Err(parsed) => {
                        let mut state = lock();
                        state.typist().1.parsed(line, parsed);
                        state.pop_inbound()
                    }
                },
                Err(error) => {
                    let mut state = lock();
                    state.typist().1.bad(error);
                    state.pop_inbound()
                }
            };
            // A single writer (the lock's holder): no read-modify-write needed.
            self.taken.store(self.taken() + 1, Ordering::Relaxed);
            if inbound.is_some() {
                return inbound;
            }
        }
        None
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

    /// Types every line waiting, those of `held` (the consumer's claim, locked) first.
    fn type_waiting(&mut self, held: &mut Option<Batch>) {
        let (backlog, mut typist) = self.typist();
        backlog.type_all(held, &mut typist);
    }
}
