//! The acknowledgements of a session's commands, kept to tell a replay that differs from the
//! first ([`Error::ReplayDiffers`](crate::Error::ReplayDiffers)).

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

/// How many are kept, the oldest forgotten first: a command is sent again soon after it
/// was first (a retry, a resend after a reconnect), and a long session sends without end.
pub(crate) const KEPT: usize = 1_024;

/// The latest [`KEPT`] acknowledgements, by command id.
#[derive(Debug, Default)]
pub(crate) struct Acks {
    by_id: HashMap<String, Value>,
    /// The ids kept, oldest first.
    order: VecDeque<String>,
}

impl Acks {
    /// Notes `ack` as command `command_id`'s acknowledgement: `false` when one kept before
    /// differs.
    pub(crate) fn note(&mut self, command_id: &str, ack: Value) -> bool {
        if let Some(first) = self.by_id.get(command_id) {
            return *first == ack;
        }
        if self.order.len() == KEPT {
            if let Some(oldest) = self.order.pop_front() {
                self.by_id.remove(&oldest);
            }
        }
        self.order.push_back(command_id.to_owned());
        self.by_id.insert(command_id.to_owned(), ack);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::{Acks, KEPT};
    use serde_json::json;

    #[test]
    fn a_replay_differing_from_a_kept_ack_is_told_and_the_oldest_are_forgotten() {
        let mut acks = Acks::default();
        let ack = |n: usize| json!({"commandId": n.to_string(), "status": "accepted"});
        for n in 0..=KEPT {
            assert!(acks.note(&n.to_string(), ack(n)), "first of {n}");
        }
        assert!(acks.note(&KEPT.to_string(), ack(KEPT)), "the same again");
        assert!(!acks.note(&KEPT.to_string(), json!({})), "another");
        assert!(!acks.note("1", json!({})), "the oldest but one is kept");
        assert!(acks.note("0", json!({})), "the oldest is forgotten");
        assert_eq!(acks.by_id.len(), KEPT);
        assert_eq!(acks.order.len(), KEPT);
    }
}
