//! The session's state families: the latest of each, last write wins.

use crate::fold::Arrival;
use msp_types::{
    SessionApprovalModeChangedParams, SessionBranchChangedParams, SessionContextUsageParams,
    SessionGoalChangedParams, SessionModelChangedParams, SessionNameChangedParams,
    SessionReasoningEffortChangedParams, SessionTodoListChangedParams, SessionTokenUsageParams,
    SnapshotState,
};

/// The nine families of session state, each a `session/*` notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Family {
    /// `session/approvalModeChanged`.
    ApprovalMode,
    /// `session/branchChanged`.
    Branch,
    /// `session/contextUsage` (never durable: no page restores it).
    ContextUsage,
    /// `session/goalChanged` (`goal: null` is no goal).
    Goal,
    /// `session/modelChanged`.
    Model,
    /// `session/nameChanged`.
    Name,
    /// `session/reasoningEffortChanged`.
    ReasoningEffort,
    /// `session/todoListChanged`.
    TodoList,
    /// `session/tokenUsage` (kept as sent, never summed).
    TokenUsage,
}

impl Family {
    /// Every family, in the order of their methods.
    pub const ALL: [Family; 9] = [
        Family::ApprovalMode,
        Family::Branch,
        Family::ContextUsage,
        Family::Goal,
        Family::Model,
        Family::Name,
        Family::ReasoningEffort,
        Family::TodoList,
        Family::TokenUsage,
    ];

    /// The notification's method.
    pub fn method(self) -> &'static str {
        match self {
            Family::ApprovalMode => "session/approvalModeChanged",
            Family::Branch => "session/branchChanged",
            Family::ContextUsage => "session/contextUsage",
            Family::Goal => "session/goalChanged",
            Family::Model => "session/modelChanged",
            Family::Name => "session/nameChanged",
            Family::ReasoningEffort => "session/reasoningEffortChanged",
            Family::TodoList => "session/todoListChanged",
            Family::TokenUsage => "session/tokenUsage",
        }
    }
}

/// The latest value of a family: the params of its latest notification.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum StateValue {
    ApprovalMode(Box<SessionApprovalModeChangedParams>),
    Branch(Box<SessionBranchChangedParams>),
    ContextUsage(Box<SessionContextUsageParams>),
    Goal(Box<SessionGoalChangedParams>),
    Model(Box<SessionModelChangedParams>),
    Name(Box<SessionNameChangedParams>),
    ReasoningEffort(Box<SessionReasoningEffortChangedParams>),
    TodoList(Box<SessionTodoListChangedParams>),
    TokenUsage(Box<SessionTokenUsageParams>),
}

impl StateValue {
    /// The view cursor of its notification.
    pub fn cursor(&self) -> &str {
        match self {
            StateValue::ApprovalMode(p) => &p.view_cursor,
            StateValue::Branch(p) => &p.view_cursor,
            StateValue::ContextUsage(p) => &p.view_cursor,
            StateValue::Goal(p) => &p.view_cursor,
            StateValue::Model(p) => &p.view_cursor,
            StateValue::Name(p) => &p.view_cursor,
            StateValue::ReasoningEffort(p) => &p.view_cursor,
            StateValue::TodoList(p) => &p.view_cursor,
            StateValue::TokenUsage(p) => &p.view_cursor,
        }
    }

    /// Its family.
    pub fn family(&self) -> Family {
        match self {
            StateValue::ApprovalMode(_) => Family::ApprovalMode,
            StateValue::Branch(_) => Family::Branch,
            StateValue::ContextUsage(_) => Family::ContextUsage,
            StateValue::Goal(_) => Family::Goal,
            StateValue::Model(_) => Family::Model,
            StateValue::Name(_) => Family::Name,
            StateValue::ReasoningEffort(_) => Family::ReasoningEffort,
            StateValue::TodoList(_) => Family::TodoList,
            StateValue::TokenUsage(_) => Family::TokenUsage,
        }
    }
}

/// The session's state: the latest value of each family, over what a resume's snapshot gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionState {
    /// Each family's value (by `Family as usize`), and when it arrived (the fold's count of
    /// inputs). Its cursor is the family's last one, which Python's rules compare.
    values: [Option<(StateValue, u64)>; Family::ALL.len()],
    /// Families in the order first set.
    order: Vec<Family>,
    seed: Option<Box<SnapshotState>>,
}

/// What a state event did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateChange {
    /// The family's value is this one now.
    Set {
        /// The family.
        family: Family,
        /// Whether it held a value before.
        replaced: bool,
    },
    /// Not applied: the family's last event had this cursor.
    Repeated {
        /// The family.
        family: Family,
    },
    /// Not applied: a refill served it from the hole, and the family's value arrived live
    /// after the hole began, so it is newer.
    Older {
        /// The family.
        family: Family,
    },
}

impl SessionState {
    /// The latest value of `family`.
    pub fn get(&self, family: Family) -> Option<&StateValue> {
        self.values[family as usize]
            .as_ref()
            .map(|(value, _)| value)
    }

    /// The families set so far, in the order first set.
    pub fn families(&self) -> &[Family] {
        &self.order
    }

    /// The snapshot a resume seeded the fold with, when it did: the state before the events
    /// since (a family's event overrides the snapshot's value). Its items are left out: they
    /// are the fold's items ([`crate::Fold::items`]).
    pub fn snapshot(&self) -> Option<&SnapshotState> {
        self.seed.as_deref()
    }

    /// The latest `session/goalChanged`.
    pub fn goal(&self) -> Option<&SessionGoalChangedParams> {
        match self.get(Family::Goal) {
            Some(StateValue::Goal(params)) => Some(params),
            _ => None,
        }
    }

    /// The latest `session/modelChanged`.
    pub fn model(&self) -> Option<&SessionModelChangedParams> {
        match self.get(Family::Model) {
            Some(StateValue::Model(params)) => Some(params),
            _ => None,
        }
    }

    /// The latest `session/nameChanged`.
    pub fn name(&self) -> Option<&SessionNameChangedParams> {
        match self.get(Family::Name) {
            Some(StateValue::Name(params)) => Some(params),
            _ => None,
        }
    }

    /// The latest `session/todoListChanged`.
    pub fn todo_list(&self) -> Option<&SessionTodoListChangedParams> {
        match self.get(Family::TodoList) {
            Some(StateValue::TodoList(params)) => Some(params),
            _ => None,
        }
    }

    /// The latest `session/tokenUsage`.
    pub fn token_usage(&self) -> Option<&SessionTokenUsageParams> {
        match self.get(Family::TokenUsage) {
            Some(StateValue::TokenUsage(params)) => Some(params),
            _ => None,
        }
    }

    /// Sets a family's value (last write wins), arrived as `arrival` says (a refill's page's
    /// yields to a value that came live since its hole began). `refuse_repeat`: refuse a
    /// value whose cursor is the family's last one.
    pub(crate) fn set(
        &mut self,
        value: StateValue,
        arrival: Arrival,
        refuse_repeat: bool,
    ) -> StateChange {
        let family = value.family();
        let held = &mut self.values[family as usize];
        if let Some((last, set)) = held {
            if refuse_repeat && last.cursor() == value.cursor() {
                return StateChange::Repeated { family };
            }
            if arrival.yields_to(*set) {
                return StateChange::Older { family };
            }
        }
        let replaced = held.replace((value, arrival.at)).is_some();
        if !replaced {
            self.order.push(family);
        }
        StateChange::Set { family, replaced }
    }

    pub(crate) fn seed(&mut self, snapshot: SnapshotState) {
        self.seed = Some(Box::new(snapshot));
    }
}

#[cfg(test)]
mod tests {
    use super::Family;

    #[test]
    fn every_family_has_its_own_slot() {
        // `SessionState` keeps a family's value at `family as usize` of an array as long as
        // `Family::ALL`: a family added out of order, or left out of `ALL`, fails here.
        for (slot, family) in Family::ALL.iter().enumerate() {
            assert_eq!(*family as usize, slot, "{family:?}");
        }
    }
}
