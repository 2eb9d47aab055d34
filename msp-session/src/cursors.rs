//! The view cursors applied lately, to refuse an event delivered twice.
//!
//! Cursors are opaque: compared for equality, never ordered (as strings `v:s:10` sorts before
//! `v:s:9`). The window is bounded: the last `cap` cursors are always remembered, older ones
//! are forgotten in batches once `2 * cap` are held.
//! Each cursor's hash is kept with it: up to `SCAN` cursors are found by comparing hashes
//! one by one (no table), more through a table built from the kept hashes.

use std::collections::VecDeque;
use std::hash::BuildHasher;

use foldhash::fast::RandomState;
use hashbrown::HashTable;

use crate::index::SCAN;

// The cursors' text is kept back to back in one string, not a string each: remembering a
// cursor allocates nothing but amortized growth (a string each was one of the 3.9
// allocations the fold made an input on the golden corpus).
#[derive(Clone, Debug, Default)]
pub(crate) struct Cursors {
    /// The remembered cursors' text, oldest first.
    text: String,
    /// Each remembered cursor, oldest first.
    seen: VecDeque<Seen>,
    /// The order of each remembered cursor (see [`Seen`]), by its text's hash; empty while
    /// no more than `SCAN` were ever remembered at once.
    orders: HashTable<u64>,
    hasher: RandomState,
    /// The order of `seen`'s first cursor: how many were forgotten.
    forgotten: u64,
    cap: usize,
}

/// A remembered cursor: where its text is, its hash, and when it counts as arrived (the
/// fold's count of inputs; a refill's page's event, when its hole began). Its order is its
/// place among every cursor remembered, forgotten ones included.
#[derive(Clone, Copy, Debug)]
struct Seen {
    start: usize,
    end: usize,
    hash: u64,
    arrival: u64,
}

impl Cursors {
    pub(crate) fn new(cap: usize) -> Self {
        Cursors {
            cap,
            ..Cursors::default()
        }
    }

    /// Remembers `cursor`, counted as arrived at `arrival` (not always increasing: see
    /// [`Seen`]); `false` when it was seen already (a repeat). Remembers nothing when the
    /// window is empty.
    pub(crate) fn first(&mut self, cursor: &str, arrival: u64) -> bool {
        if self.cap == 0 {
            return true;
        }
        let hash = self.hasher.hash_one(cursor);
        if self.find(hash, cursor).is_some() {
            return false;
        }
        if self.seen.len() >= 2 * self.cap {
            self.forget_oldest();
        }
        if self.seen.capacity() == 0 {
            // Cursors are about 40 bytes.
            self.text.reserve(crate::FIRST_ROOM * 40);
            self.seen.reserve(crate::FIRST_ROOM);
        }
        let start = self.text.len();
        self.text.push_str(cursor);
        self.seen.push_back(Seen {
            start,
            end: self.text.len(),
            hash,
            arrival,
        });
        self.index_last();
        true
    }

    /// When `cursor` arrived, if it is remembered.
    pub(crate) fn arrival(&self, cursor: &str) -> Option<u64> {
        self.find(self.hasher.hash_one(cursor), cursor)
            .map(|seen| seen.arrival)
    }

    fn text_of(&self, seen: &Seen) -> &str {
        &self.text[seen.start..seen.end]
    }

    fn find(&self, hash: u64, cursor: &str) -> Option<&Seen> {
        // A session's cursors share a long prefix (`v:<session id>:`): hashes tell them
        // apart before any text is compared. A few are scanned, more go through the table
        // (built the first time they pass `SCAN`).
        let same = |at: &Seen| at.hash == hash && self.text_of(at) == cursor;
        if self.orders.is_empty() {
            return self.seen.iter().find(|at| same(at));
        }
        let seen_of = |order: u64| &self.seen[(order - self.forgotten) as usize];
        let order = self.orders.find(hash, |&order| same(seen_of(order)))?;
        Some(seen_of(*order))
    }

    /// Indexes the cursor pushed last (and, the first time there are more than `SCAN`,
    /// every one before it).
    fn index_last(&mut self) {
        if self.orders.is_empty() && self.seen.len() <= SCAN {
            return;
        }
        let Cursors {
            seen,
            orders,
            forgotten,
            ..
        } = self;
        let hash_of = |order: u64| seen[(order - *forgotten) as usize].hash;
        let last = *forgotten + seen.len() as u64 - 1;
        let first = match orders.is_empty() {
            true => *forgotten,
            false => last,
        };
        orders.reserve((last - first + 1) as usize, |&order| hash_of(order));
        for order in first..=last {
            orders.insert_unique(hash_of(order), order, |&order| hash_of(order));
        }
    }

    /// Forgets all but the last `cap` cursors, in one batch so that it costs O(1) a cursor.
    fn forget_oldest(&mut self) {
        let drop = self.seen.len() - self.cap;
        let cut = self.seen[drop].start;
        self.seen.drain(..drop);
        self.text.drain(..cut);
        for seen in &mut self.seen {
            seen.start -= cut;
            seen.end -= cut;
        }
        self.forgotten += drop as u64;
        let oldest_kept = self.forgotten;
        self.orders.retain(|order| *order >= oldest_kept);
    }
}

#[cfg(test)]
mod tests {
    use super::Cursors;

    #[test]
    fn the_last_cap_cursors_are_always_remembered_and_at_most_twice_that() {
        // A window below the scan (never a table), one past it (a table built, then
        // forgotten from), and one the table serves from the start of its forgetting.
        for cap in [3usize, 5, 20] {
            let mut cursors = Cursors::new(cap);
            for n in 0..100u64 {
                assert!(cursors.first(&format!("v:{n}"), n), "cap {cap}: v:{n}");
                assert!(cursors.seen.len() <= 2 * cap);
                for back in 0..(cap as u64).min(n + 1) {
                    let again = format!("v:{}", n - back);
                    assert!(!cursors.first(&again, 999), "cap {cap}: {again}");
                }
            }
            assert_eq!(cursors.arrival("v:99"), Some(99), "cap {cap}");
            assert_eq!(cursors.arrival("v:0"), None, "cap {cap}");
            assert_eq!(
                cursors.orders.is_empty(),
                2 * cap <= super::SCAN,
                "cap {cap}"
            );
        }
    }

    #[test]
    fn an_empty_window_remembers_nothing() {
        let mut cursors = Cursors::new(0);
        assert!(cursors.first("v:1", 1));
        assert!(cursors.first("v:1", 2));
        assert_eq!(cursors.arrival("v:1"), None);
    }
}
