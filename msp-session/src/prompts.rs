//! Questions the agent asks the user (`userInput`): pending ones with their questions,
//! settled ones with how they ended.

use msp_types::{UserInputRequestParams, UserInputSettledParams};

/// A question waiting for an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingPrompt {
    pub(crate) user_input_id: String,
    pub(crate) request: Option<Box<UserInputRequestParams>>,
    pub(crate) asked: bool,
}

impl PendingPrompt {
    /// The prompt's id.
    pub fn id(&self) -> &str {
        &self.user_input_id
    }

    /// Its questions, each with the options the agent offered, and its deadline
    /// (`autoResolutionMs`). `None` while only a resume's pointer named it: the host re-issues
    /// the request to a client that joins.
    pub fn request(&self) -> Option<&UserInputRequestParams> {
        self.request.as_deref()
    }

    /// How long the host waits for an answer before it settles the prompt itself
    /// (`timedOut`), in milliseconds; `None`: it waits indefinitely (or the request is not
    /// known yet).
    pub fn auto_resolution_ms(&self) -> Option<i64> {
        self.request.as_ref().and_then(|r| r.auto_resolution_ms)
    }
}

/// What a prompt event did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptChange {
    /// It is pending; `new` when this opened it.
    Pending {
        /// Whether this event opened the entry.
        new: bool,
    },
    /// It settled; `first` is whether this settlement counts (later ones are echoes).
    Settled {
        /// Whether this is the first settlement.
        first: bool,
    },
    /// Not applied: it settled already.
    Stale,
}

/// The prompts of a session.
#[derive(Clone, Debug, Default)]
pub(crate) struct Prompts {
    pending: Vec<PendingPrompt>,
    settled: Vec<UserInputSettledParams>,
}

impl Prompts {
    pub(crate) fn pending(&self) -> &[PendingPrompt] {
        &self.pending
    }

    pub(crate) fn settled(&self) -> &[UserInputSettledParams] {
        &self.settled
    }

    fn is_settled(&self, id: &str) -> bool {
        self.settled.iter().any(|s| s.user_input_id == id)
    }

    /// The request, from the view event or the server request (`asked`).
    pub(crate) fn requested(
        &mut self,
        request: UserInputRequestParams,
        asked: bool,
    ) -> PromptChange {
        if self.is_settled(&request.user_input_id) {
            return PromptChange::Stale;
        }
        let request = Box::new(request);
        match self
            .pending
            .iter_mut()
            .find(|p| p.user_input_id == request.user_input_id)
        {
            Some(entry) => {
                entry.request = Some(request);
                entry.asked |= asked;
                PromptChange::Pending { new: false }
            }
            None => {
                self.pending.push(PendingPrompt {
                    user_input_id: request.user_input_id.clone(),
                    request: Some(request),
                    asked,
                });
                PromptChange::Pending { new: true }
            }
        }
    }

    /// A pointer from a resume: pending, its request still to come.
    pub(crate) fn pointer(&mut self, id: &str) {
        let known = self.pending.iter().any(|p| p.user_input_id == id);
        if !known && !self.is_settled(id) {
            self.pending.push(PendingPrompt {
                user_input_id: id.to_owned(),
                request: None,
                asked: false,
            });
        }
    }

    pub(crate) fn settled_by(&mut self, settlement: UserInputSettledParams) -> PromptChange {
        self.pending
            .retain(|p| p.user_input_id != settlement.user_input_id);
        if self.is_settled(&settlement.user_input_id) {
            return PromptChange::Settled { first: false };
        }
        self.settled.push(settlement);
        PromptChange::Settled { first: true }
    }
}
