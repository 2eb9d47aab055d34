//! Items by id, in the order first opened: each with its latest revision and the text its
//! deltas built since.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::index::Index;

use msp_types::{Item, ItemStatus, ProtocolNotification};

use crate::fold::Input;
use crate::kept::Kept;
use crate::rules::FoldRules;

/// An item as the fold holds it. A clone shares the text its deltas built (a turn's
/// follower takes a clone at every delta: copying the text each time made a long stream
/// quadratic); the fold copies it on the next delta only while such a clone is alive.
#[derive(Clone, Debug)]
pub struct ItemEntry {
    // An `Item` is over 2 KB: moved in from the notification's box as a pointer, or kept in
    // the input it came in when that is shared.
    item: Kept<Item>,
    /// `None` until a delta builds text (an item without deltas allocates nothing for it).
    text: Option<Arc<Texts>>,
    terminal_unknown: bool,
}

/// Each field's text built by deltas.
type Texts = BTreeMap<String, String>;

/// The text of an item no delta built any for.
static NO_TEXT: Texts = BTreeMap::new();

impl PartialEq for ItemEntry {
    fn eq(&self, other: &Self) -> bool {
        self.item == other.item
            && self.texts() == other.texts()
            && self.terminal_unknown == other.terminal_unknown
    }
}

/// The item's id, moved out when the fold owns the item.
/// The item an item event carries, taken out of it (see [`Kept::unshare`]).
fn take_item(input: Input) -> Result<Box<Item>, Input> {
    use ProtocolNotification as N;
    match input {
        Input::Notification(N::ItemStarted(p)) => Ok(p.item),
        Input::Notification(N::ItemUpdated(p)) => Ok(p.item),
        Input::Notification(N::ItemCompleted(p)) => Ok(p.item),
        other => Err(other),
    }
}

fn into_id(item: Kept<Item>) -> String {
    match item.into_owned() {
        Ok(item) => item.item_id,
        Err(shared) => shared.get().item_id.clone(),
    }
}

/// The item an item event (`item/started`, `updated`, `completed`) carries.
pub(crate) fn item_of(input: &Input) -> Option<&Item> {
    use ProtocolNotification as N;
    match input {
        Input::Notification(N::ItemStarted(p)) => Some(&p.item),
        Input::Notification(N::ItemUpdated(p)) => Some(&p.item),
        Input::Notification(N::ItemCompleted(p)) => Some(&p.item),
        _ => None,
    }
}

impl ItemEntry {
    /// The latest revision, exactly as the host sent it.
    pub fn item(&self) -> &Item {
        self.item.get()
    }

    /// The item's id.
    pub fn id(&self) -> &str {
        &self.item().item_id
    }

    /// The text the deltas of `field` built since the held revision (`text`, `output`,
    /// `summary.0`, ...).
    pub fn text(&self, field: &str) -> Option<&str> {
        self.texts().get(field).map(String::as_str)
    }

    /// Every field's text built by deltas since the held revision.
    pub fn texts(&self) -> &BTreeMap<String, String> {
        self.text.as_deref().unwrap_or(&NO_TEXT)
    }

    /// Whether the item is final: any status but `inProgress` (an unknown one counts as
    /// final, as the schema says).
    pub fn is_final(&self) -> bool {
        is_final(self.item())
    }

    /// Whether the item was in progress when an ephemeral host died: its end is unknown.
    pub fn terminal_unknown(&self) -> bool {
        self.terminal_unknown
    }

    /// The item with the deltas' text applied where the schema puts it: `text` to `text`,
    /// `output` to `visibleOutput`, `summary.N` to the `N`th summary part. Text of a field
    /// the schema does not map, or of a summary part past the 4,096th, stays only in
    /// [`ItemEntry::texts`].
    pub fn rendered(&self) -> Item {
        let mut item = Item::clone(self.item());
        for (field, text) in self.texts() {
            let append =
                |held: &mut Option<String>| held.get_or_insert_with(String::new).push_str(text);
            match field.as_str() {
                "text" => append(&mut item.text),
                "output" => append(&mut item.visible_output),
                other => {
                    let Some(index) = other
                        .strip_prefix("summary.")
                        .and_then(|n| n.parse::<usize>().ok())
                        // The host's index: past so many parts it is left to `texts`
                        // rather than grow the summary to it.
                        .filter(|&index| index < SUMMARY_PARTS)
                    else {
                        continue;
                    };
                    let summary = item.summary.get_or_insert_with(Vec::new);
                    if summary.len() <= index {
                        summary.resize(index + 1, String::new());
                    }
                    summary[index].push_str(text);
                }
            }
        }
        item
    }
}

/// Whether `item` is final (not `inProgress`).
pub(crate) fn is_final(item: &Item) -> bool {
    !matches!(item.status, ItemStatus::InProgress)
}

/// What an item event did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ItemChange {
    /// A first sighting: the item was added at the end of the order.
    Inserted {
        /// Held deltas applied to it (they arrived before it), in bytes.
        held_applied: usize,
        /// Held deltas dropped because it arrived final, in bytes.
        held_dropped: usize,
    },
    /// A higher revision (or the final form at the same one) replaced the held one.
    Replaced {
        /// The revision held before.
        from: i64,
        /// The revision held now.
        to: i64,
    },
    /// A higher revision replaced a final item with an open one: the host reopened it.
    Reopened {
        /// The revision held before.
        from: i64,
        /// The revision held now.
        to: i64,
    },
    /// Not newer than the revision held: nothing changed.
    Stale {
        /// The revision held.
        held: i64,
        /// The revision offered.
        offered: i64,
    },
    /// The item's end is unknown and the session was discarded: nothing changed.
    Discarded,
}

/// What a delta did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeltaChange {
    /// Appended to the item's text of its field, now this many bytes long.
    Appended {
        /// The length of the field's text built so far, in bytes.
        length: usize,
    },
    /// Held until the item arrives.
    Held,
    /// Not applied: the item is final (its text is authoritative).
    ItemFinal,
    /// Held, but held deltas went over their bounds and the oldest items' were dropped
    /// (this one's too, when it alone is over).
    HeldOverflow {
        /// The oldest item whose held deltas were dropped.
        dropped: String,
    },
    /// Not applied: a refill's page served it after an event or delta of its item that came
    /// later was folded live (a refill of the hole had overflowed or failed), so it would
    /// append its text out of order; the item's next revision carries the text whole.
    Late,
}

/// How many summary parts deltas may make ([`ItemEntry::rendered`]).
const SUMMARY_PARTS: usize = 4_096;

/// How many absent items' deltas are held at most (past it, the oldest item's are dropped):
/// each delta for an absent item looks its held text up among them.
const HELD_ITEMS: usize = 1_024;

/// What held deltas count against [`FoldRules::held_delta_bytes`]: their text, and the id
/// and field names they are held under (a host naming new ones with no text still fills it).
fn held_size(id: &str, texts: &BTreeMap<String, String>) -> usize {
    id.len()
        + texts
            .iter()
            .map(|(field, text)| field.len() + text.len())
            .sum::<usize>()
}

/// The items of a session.
#[derive(Clone, Debug, Default)]
pub(crate) struct Items {
    entries: Vec<ItemEntry>,
    index: Index,
    /// Deltas of items not seen yet: item, field, text (oldest item first).
    held: VecDeque<(String, BTreeMap<String, String>)>,
    held_bytes: usize,
    /// The places of items kept in an input shared with the caller: each is taken out of
    /// its input once the caller dropped it, so that an item's notification does not outlive
    /// its event.
    sharing: VecDeque<usize>,
}

impl Items {
    pub(crate) fn entries(&self) -> &[ItemEntry] {
        &self.entries
    }

    pub(crate) fn get(&self, id: &str) -> Option<&ItemEntry> {
        self.place(id).map(|at| &self.entries[at])
    }

    fn place(&self, id: &str) -> Option<usize> {
        self.index.get(id, |at| self.entries[at].id())
    }

    /// Takes items out of their inputs once nobody else holds those, looking at two an
    /// input (one is added at most): an item whose input the caller still holds goes to the
    /// back, so that an event the program keeps holds back no later item.
    pub(crate) fn unshare(&mut self) {
        for _ in 0..2 {
            let Some(at) = self.sharing.pop_front() else {
                return;
            };
            if !self.entries[at].item.unshare(take_item) {
                self.sharing.push_back(at);
            }
        }
    }

    /// Deltas held for items never seen: item, field, text.
    pub(crate) fn held(&self) -> impl Iterator<Item = (&str, &BTreeMap<String, String>)> {
        self.held.iter().map(|(id, text)| (id.as_str(), text))
    }

    /// Takes an item event (`item/started`, `updated`, `completed` alike): what it did, and
    /// the item's id (moved out of the revision dropped, the refused one or the one
    /// replaced when the fold owns it, so that only a new item's id is copied).
    pub(crate) fn upsert(
        &mut self,
        item: Kept<Item>,
        completed: bool,
        rules: &FoldRules,
    ) -> (String, ItemChange) {
        let Some(at) = self.place(&item.get().item_id) else {
            let item_id = item.get().item_id.clone();
            return (item_id, self.insert(item, rules));
        };
        let entry = &mut self.entries[at];
        let (held, offered) = (entry.item().revision, item.get().revision);
        let final_form = rules.final_at_same_revision
            && completed
            && offered == held
            && !entry.is_final()
            && is_final(item.get());
        if offered <= held && !final_form {
            return (into_id(item), ItemChange::Stale { held, offered });
        }
        let reopened = entry.is_final() && !is_final(item.get());
        let shared = item.is_shared();
        let replaced = std::mem::replace(&mut entry.item, item);
        if rules.reset_deltas_on_replace {
            entry.text = None;
        }
        if shared {
            self.sharing.push_back(at);
        }
        let change = match reopened {
            true => ItemChange::Reopened {
                from: held,
                to: offered,
            },
            false => ItemChange::Replaced {
                from: held,
                to: offered,
            },
        };
        (into_id(replaced), change)
    }

    fn insert(&mut self, item: Kept<Item>, rules: &FoldRules) -> ItemChange {
        let held = self.take_held(&item.get().item_id);
        let bytes: usize = held.values().map(String::len).sum();
        let open = !is_final(item.get());
        // Held deltas go to an item that arrives open; a final item's text is authoritative.
        // Without holding (Python), they simply accumulated beside the item, and stay.
        let apply = open || !rules.hold_absent_deltas;
        if self.entries.capacity() == 0 {
            self.entries.reserve(crate::FIRST_ROOM);
        }
        if item.is_shared() {
            self.sharing.push_back(self.entries.len());
        }
        let entry = ItemEntry {
            item,
            text: (apply && !held.is_empty()).then(|| Arc::new(held)),
            terminal_unknown: false,
        };
        self.entries.push(entry);
        self.index_last();
        ItemChange::Inserted {
            held_applied: if apply { bytes } else { 0 },
            held_dropped: if apply { 0 } else { bytes },
        }
    }

    fn take_held(&mut self, id: &str) -> BTreeMap<String, String> {
        let Some(at) = self.held.iter().position(|(held, _)| held == id) else {
            return BTreeMap::new();
        };
        let (id, text) = self.held.remove(at).unwrap_or_default();
        self.held_bytes -= held_size(&id, &text);
        text
    }

    /// Takes a delta.
    pub(crate) fn delta(
        &mut self,
        id: &str,
        field: &str,
        delta: &str,
        rules: &FoldRules,
    ) -> DeltaChange {
        if let Some(at) = self.place(id) {
            let entry = &mut self.entries[at];
            if rules.deltas_only_while_open && entry.is_final() {
                return DeltaChange::ItemFinal;
            }
            // Copied only while a clone of the entry shares it.
            let texts = Arc::make_mut(entry.text.get_or_insert_with(Arc::default));
            // Looked up before `entry` so that a field's later deltas allocate no key.
            let text = match texts.get_mut(field) {
                Some(text) => text,
                None => texts.entry(field.to_owned()).or_default(),
            };
            text.push_str(delta);
            return DeltaChange::Appended { length: text.len() };
        }
        let at = match self.held.iter().position(|(held, _)| held == id) {
            Some(at) => at,
            None => {
                self.held.push_back((id.to_owned(), BTreeMap::new()));
                self.held_bytes += id.len();
                self.held.len() - 1
            }
        };
        let texts = &mut self.held[at].1;
        if !texts.contains_key(field) {
            self.held_bytes += field.len();
        }
        texts.entry(field.to_owned()).or_default().push_str(delta);
        self.held_bytes += delta.len();
        if !rules.hold_absent_deltas {
            return DeltaChange::Held;
        }
        // The oldest items' go until the rest is within both bounds.
        let mut dropped = None;
        while self.held_bytes > rules.held_delta_bytes || self.held.len() > HELD_ITEMS {
            let Some((id, text)) = self.held.pop_front() else {
                break;
            };
            self.held_bytes -= held_size(&id, &text);
            dropped.get_or_insert(id);
        }
        match dropped {
            Some(dropped) => DeltaChange::HeldOverflow { dropped },
            None => DeltaChange::Held,
        }
    }

    /// Seeds an item from a resume's history: it replaces whatever is held, its text built
    /// by deltas cleared, and the deltas held for it while it was absent dropped.
    pub(crate) fn seed(&mut self, item: Item) {
        self.take_held(&item.item_id);
        let place = self.place(&item.item_id);
        let entry = ItemEntry {
            item: Kept::owned(Box::new(item)),
            text: None,
            terminal_unknown: false,
        };
        match place {
            Some(at) => self.entries[at] = entry,
            None => {
                self.entries.push(entry);
                self.index_last();
            }
        }
    }

    /// Indexes the entry pushed last.
    fn index_last(&mut self) {
        let at = self.entries.len() - 1;
        let entries = &self.entries;
        self.index
            .insert(entries[at].id(), at, |at| entries[at].id());
    }

    /// An ephemeral host died: every item in progress ends unknown.
    pub(crate) fn mark_terminal_unknown(&mut self) -> Vec<String> {
        let mut marked = Vec::new();
        for entry in &mut self.entries {
            if !entry.is_final() {
                entry.terminal_unknown = true;
                marked.push(entry.id().to_owned());
            }
        }
        marked
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use msp_types::ProtocolNotification;
    use serde_json::{json, Value};

    use crate::{Fold, FoldRules, Input};

    fn input(method: &str, at: u32, mut params: Value) -> Arc<Input> {
        let range = json!({"stream": {"kind": "run", "id": "t1"}, "first": {"id": "r1", "sequence": 1}, "last": {"id": "r1", "sequence": 1}});
        let object = params.as_object_mut().expect("an object");
        object.insert("sessionId".into(), json!("s1"));
        object.insert("sourceRange".into(), range);
        object.insert("viewCursor".into(), json!(format!("v:s1:{at}")));
        let notification = ProtocolNotification::decode(method, Some(params))
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        Arc::new(Input::from(notification))
    }

    fn completed(revision: i64, at: u32) -> Arc<Input> {
        let item = json!({"itemId": "i1", "kind": "agentMessage", "revision": revision,
            "status": "completed", "turnId": "t1", "text": "done"});
        input("item/completed", at, json!({ "item": item }))
    }

    fn turn_started(turn: &str, at: u32) -> Arc<Input> {
        input(
            "turn/started",
            at,
            json!({"turnId": turn, "commandId": "c1"}),
        )
    }

    #[test]
    fn an_item_is_taken_out_of_its_event_once_the_caller_dropped_it() {
        let mut fold = Fold::for_session("s1", FoldRules::default());
        let first = completed(1, 1);
        fold.apply_shared(Arc::clone(&first));
        fold.apply_shared(turn_started("t1", 2));
        assert!(
            fold.items()[0].item.is_shared(),
            "the caller still holds it"
        );
        drop(first);
        fold.apply_shared(turn_started("t2", 3));
        assert!(!fold.items()[0].item.is_shared(), "taken out once dropped");
        assert_eq!(fold.items()[0].item().revision, 1);
        assert_eq!(fold.items()[0].id(), "i1");
        // A later revision replaces the owned one, and is taken out in turn.
        let second = completed(2, 4);
        fold.apply_shared(Arc::clone(&second));
        assert!(fold.items()[0].item.is_shared());
        drop(second);
        fold.apply_shared(turn_started("t3", 5));
        assert!(!fold.items()[0].item.is_shared());
        assert_eq!(fold.items()[0].item().revision, 2);
    }

    fn delta(text: &str, at: u32) -> Arc<Input> {
        input(
            "item/delta",
            at,
            json!({"itemId": "i1", "field": "text", "delta": text}),
        )
    }

    #[test]
    fn a_clone_of_an_entry_shares_its_text_and_keeps_what_it_saw() {
        let mut fold = Fold::for_session("s1", FoldRules::default());
        let item = json!({"itemId": "i1", "kind": "agentMessage", "revision": 1,
            "status": "inProgress", "turnId": "t1"});
        fold.apply_shared(input("item/started", 1, json!({ "item": item })));
        fold.apply_shared(delta("Hel", 2));
        let seen = fold.item("i1").cloned().expect("held");
        let held = |fold: &Fold| fold.item("i1").expect("held").texts() as *const _;
        assert!(
            std::ptr::eq(seen.texts(), held(&fold)),
            "shared, not copied"
        );
        fold.apply_shared(delta("lo", 3));
        assert_eq!(
            seen.text("text"),
            Some("Hel"),
            "the clone keeps what it saw"
        );
        assert_eq!(fold.item("i1").unwrap().text("text"), Some("Hello"));
        drop(seen);
        let before = held(&fold);
        fold.apply_shared(delta("!", 4));
        assert!(
            std::ptr::eq(before, held(&fold)),
            "no clone: appended in place"
        );
        assert_eq!(fold.item("i1").unwrap().text("text"), Some("Hello!"));
        assert_eq!(fold.item("i1").unwrap().texts().len(), 1);
    }

    #[test]
    fn an_event_the_caller_keeps_holds_back_no_later_item() {
        let mut fold = Fold::for_session("s1", FoldRules::default());
        let kept = completed(1, 6);
        let other = input(
            "item/started",
            7,
            json!({"item": {"itemId": "i2", "kind": "agentMessage", "revision": 1,
                "status": "inProgress", "turnId": "t1"}}),
        );
        fold.apply_shared(Arc::clone(&kept));
        fold.apply_shared(Arc::clone(&other));
        drop(other);
        fold.apply_shared(turn_started("t4", 8));
        assert!(fold.items()[0].item.is_shared(), "still held by the caller");
        assert!(!fold.items()[1].item.is_shared(), "dropped: taken out");
        drop(kept);
        fold.apply_shared(turn_started("t5", 9));
        assert!(!fold.items()[0].item.is_shared());
    }
}
