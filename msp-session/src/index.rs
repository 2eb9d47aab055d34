//! Entries found by id, the id read from the entry itself: an id is stored once, in its
//! entry, and indexing it allocates nothing of its own.
//!
//! A session holds a few entries of each kind (5.3 inputs a session on the golden corpus):
//! up to [`SCAN`] entries are found by comparing each id, and the hash table is built only
//! when the list grows past that, so that a short session allocates no table and hashes
//! nothing. The table keeps each id's hash with its place: growing it rehashes no id (a
//! long session's entries are cold by then: reading each id back cost a fifth of the
//! fold's time in the session bench), and a probe compares ids only when hashes match.

use foldhash::fast::RandomState;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Up to this many entries, a lookup compares ids one by one rather than hashing.
pub(crate) const SCAN: usize = 8;

/// The place of each entry of a list, by the entry's id.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    /// How many entries are indexed (places `0..len`).
    len: usize,
    /// Each entry's hash and place; empty while `len <= SCAN`.
    places: HashTable<(u64, usize)>,
    hasher: RandomState,
}

impl Index {
    /// The place of `id`; `id_of` reads the id of the entry at a place.
    pub(crate) fn get<'a>(&self, id: &str, id_of: impl Fn(usize) -> &'a str) -> Option<usize> {
        if self.len <= SCAN {
            return (0..self.len).find(|&at| id_of(at) == id);
        }
        let hash = self.hasher.hash_one(id);
        self.places
            .find(hash, |&(held, at)| held == hash && id_of(at) == id)
            .map(|&(_, at)| at)
    }

    /// Indexes the entry at `at` (the next place: `at` is the count indexed so far), whose
    /// id is `id` and not indexed yet.
    pub(crate) fn insert<'a>(&mut self, id: &str, at: usize, id_of: impl Fn(usize) -> &'a str) {
        debug_assert_eq!(at, self.len, "entries are indexed in order");
        self.len += 1;
        if self.len <= SCAN {
            return;
        }
        let hasher = &self.hasher;
        let hash_of = |&(hash, _): &(u64, usize)| hash;
        if self.places.is_empty() {
            // Past the scan: every entry so far goes into the table.
            self.places.reserve(2 * SCAN, hash_of);
            for earlier in 0..at {
                let hash = hasher.hash_one(id_of(earlier));
                self.places.insert_unique(hash, (hash, earlier), hash_of);
            }
        }
        let hash = hasher.hash_one(id);
        self.places.insert_unique(hash, (hash, at), hash_of);
    }
}

#[cfg(test)]
mod tests {
    use super::{Index, SCAN};

    #[test]
    fn finds_each_entry_by_the_id_it_holds_below_and_past_the_scan() {
        let ids: Vec<String> = (0..100).map(|n| format!("item-{n}")).collect();
        let mut index = Index::default();
        for (at, id) in ids.iter().enumerate() {
            index.insert(id, at, |at| &ids[at]);
            for (earlier, id) in ids[..=at].iter().enumerate() {
                assert_eq!(index.get(id, |at| &ids[at]), Some(earlier), "{at} indexed");
            }
            assert_eq!(index.get("item-100", |at| &ids[at]), None);
            assert_eq!(index.places.is_empty(), at < SCAN);
        }
    }
}
