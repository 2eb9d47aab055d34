//! The view cursors applied lately, to refuse an event delivered twice.
//!
//! Cursors are opaque: compared for equality, never ordered (as strings `v:s:10` sorts before
//! `v:s:9`). The window is bounded: the last `cap` cursors are always remembered, older ones
//! are forgotten in batches once `2 * cap` are held, so that each cursor costs one key.

use std::collections::HashMap;

#[derive(Clone, Debug, Default)]
pub(crate) struct Cursors {
    /// Each remembered cursor: its place in the order cursors came, and when it arrived (the
    /// fold's count of inputs).
    seen: HashMap<String, Seen>,
    /// Cursors remembered so far.
    count: u64,
    cap: usize,
}

#[derive(Clone, Copy, Debug)]
struct Seen {
    order: u64,
    arrival: u64,
}

impl Cursors {
    pub(crate) fn new(cap: usize) -> Self {
        Cursors {
            seen: HashMap::new(),
            count: 0,
            cap,
        }
    }

    /// Remembers `cursor`, arrived as input `arrival`; `false` when it was seen already (a
    /// repeat). Remembers nothing when the window is empty.
    pub(crate) fn first(&mut self, cursor: &str, arrival: u64) -> bool {
        if self.cap == 0 {
            return true;
        }
        if self.seen.contains_key(cursor) {
            return false;
        }
        if self.seen.len() >= 2 * self.cap {
            let oldest_kept = self.count - self.cap as u64;
            self.seen.retain(|_, seen| seen.order >= oldest_kept);
        }
        let order = self.count;
        self.count += 1;
        self.seen.insert(cursor.to_owned(), Seen { order, arrival });
        true
    }

    /// When `cursor` arrived, if it is remembered.
    pub(crate) fn arrival(&self, cursor: &str) -> Option<u64> {
        self.seen.get(cursor).map(|seen| seen.arrival)
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
