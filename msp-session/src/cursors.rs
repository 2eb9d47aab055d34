//! The view cursors applied lately, to refuse an event delivered twice.
//!
//! Cursors are opaque: compared for equality, never ordered (as strings `v:s:10` sorts before
//! `v:s:9`). The window is bounded: the last `cap` cursors are always remembered, older ones
//! are forgotten in batches once `2 * cap` are held.

use std::collections::VecDeque;
use std::hash::BuildHasher;

use foldhash::fast::RandomState;
use hashbrown::HashTable;

// The cursors' text is kept back to back in one string, not a string each: remembering a
// cursor allocates nothing but amortized growth (a string each was one of the 3.9
// allocations the fold made an input on the golden corpus).
#[derive(Clone, Debug, Default)]
pub(crate) struct Cursors {
    /// The remembered cursors' text, oldest first.
    text: String,
    /// Each remembered cursor, oldest first.
    seen: VecDeque<Seen>,
    /// The order of each remembered cursor (see [`Seen`]), by its text's hash.
    orders: HashTable<u64>,
    hasher: RandomState,
    /// The order of `seen`'s first cursor: how many were forgotten.
    forgotten: u64,
    cap: usize,
}

/// A remembered cursor: where its text is, and when it arrived (the fold's count of inputs).
/// Its order is its place among every cursor remembered, forgotten ones included.
#[derive(Clone, Copy, Debug)]
struct Seen {
    start: usize,
    end: usize,
    arrival: u64,
}

impl Cursors {
    pub(crate) fn new(cap: usize) -> Self {
        Cursors {
            cap,
            ..Cursors::default()
        }
    }

    /// Remembers `cursor`, arrived as input `arrival`; `false` when it was seen already (a
    /// repeat). Remembers nothing when the window is empty.
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
            // Cursors are about 20 bytes.
            self.text.reserve(crate::FIRST_ROOM * 24);
            self.seen.reserve(crate::FIRST_ROOM);
        }
        let start = self.text.len();
        self.text.push_str(cursor);
        self.seen.push_back(Seen {
            start,
            end: self.text.len(),
            arrival,
        });
        let order = self.forgotten + self.seen.len() as u64 - 1;
        let Cursors {
            text,
            seen,
            orders,
            hasher,
            forgotten,
            ..
        } = self;
        let text_of = |order: u64| {
            let at = &seen[(order - *forgotten) as usize];
            &text[at.start..at.end]
        };
        if orders.capacity() == 0 {
            orders.reserve(crate::FIRST_ROOM, |&order| hasher.hash_one(text_of(order)));
        }
        orders.insert_unique(hash, order, |&order| hasher.hash_one(text_of(order)));
        true
    }

    /// When `cursor` arrived, if it is remembered.
    pub(crate) fn arrival(&self, cursor: &str) -> Option<u64> {
        self.find(self.hasher.hash_one(cursor), cursor)
            .map(|seen| seen.arrival)
    }

    fn find(&self, hash: u64, cursor: &str) -> Option<&Seen> {
        let seen_of = |order: u64| &self.seen[(order - self.forgotten) as usize];
        let order = self.orders.find(hash, |&order| {
            let at = seen_of(order);
            &self.text[at.start..at.end] == cursor
        })?;
        Some(seen_of(*order))
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
        let mut cursors = Cursors::new(3);
        for n in 0..20u64 {
            assert!(cursors.first(&format!("v:{n}"), n));
            assert!(cursors.seen.len() <= 6);
            for back in 0..3.min(n + 1) {
                assert!(
                    !cursors.first(&format!("v:{}", n - back), 99),
                    "v:{}",
                    n - back
                );
            }
        }
        assert_eq!(cursors.arrival("v:19"), Some(19));
        assert_eq!(cursors.arrival("v:0"), None);
    }

    #[test]
    fn an_empty_window_remembers_nothing() {
        let mut cursors = Cursors::new(0);
        assert!(cursors.first("v:1", 1));
        assert!(cursors.first("v:1", 2));
        assert_eq!(cursors.arrival("v:1"), None);
    }
}
