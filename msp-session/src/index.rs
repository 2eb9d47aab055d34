//! Entries found by id, the id read from the entry itself: an id is stored once, in its
//! entry, and indexing it allocates nothing of its own.

use foldhash::fast::RandomState;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// The place of each entry of a list, by the entry's id.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    places: HashTable<usize>,
    hasher: RandomState,
}

impl Index {
    /// The place of `id`; `id_of` reads the id of the entry at a place.
    pub(crate) fn get<'a>(&self, id: &str, id_of: impl Fn(usize) -> &'a str) -> Option<usize> {
        let hash = self.hasher.hash_one(id);
        self.places.find(hash, |&at| id_of(at) == id).copied()
    }

    /// Indexes the entry at `at`, whose id is `id` and not indexed yet.
    pub(crate) fn insert<'a>(&mut self, id: &str, at: usize, id_of: impl Fn(usize) -> &'a str) {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(id);
        if self.places.capacity() == 0 {
            self.places
                .reserve(crate::FIRST_ROOM, |&at| hasher.hash_one(id_of(at)));
        }
        self.places
            .insert_unique(hash, at, |&at| hasher.hash_one(id_of(at)));
    }
}

#[cfg(test)]
mod tests {
    use super::Index;

    #[test]
    fn finds_each_entry_by_the_id_it_holds() {
        let ids: Vec<String> = (0..100).map(|n| format!("item-{n}")).collect();
        let mut index = Index::default();
        for (at, id) in ids.iter().enumerate() {
            index.insert(id, at, |at| &ids[at]);
        }
        for (at, id) in ids.iter().enumerate() {
            assert_eq!(index.get(id, |at| &ids[at]), Some(at));
        }
        assert_eq!(index.get("item-100", |at| &ids[at]), None);
    }
}
