//! Approvals by id: pending ones with their request and current stage, resolved ones with the
//! resolution that won.

use crate::fold::Arrival;
use msp_types::{
    ApprovalChoice, ApprovalRequestParams, ApprovalRequirementRef, ApprovalResolvedParams,
    ApprovalSubject, ApprovalUpdatedParams,
};

/// An approval waiting for a decision.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingApproval {
    pub(crate) approval_id: String,
    /// The request (the server request or its view event), when it came.
    pub(crate) request: Option<Box<ApprovalRequestParams>>,
    /// The latest stage the host moved to after the request.
    pub(crate) latest_update: Option<Box<ApprovalUpdatedParams>>,
    /// When the stage shown (the latest update's, else the request's) counts as arrived
    /// (see [`Arrival`]).
    pub(crate) stage_at: u64,
    /// Whether the request came as the server request (then a receipt was owed).
    pub(crate) asked: bool,
}

impl PendingApproval {
    /// The approval's id.
    pub fn id(&self) -> &str {
        &self.approval_id
    }

    /// The request: the tool, its arguments, the item and turn it belongs to. `None` when the
    /// approval is known only from a resume's pending pointer.
    pub fn request(&self) -> Option<&ApprovalRequestParams> {
        self.request.as_deref()
    }

    /// The latest `approval/updated`, when the host moved to another stage.
    pub fn latest_update(&self) -> Option<&ApprovalUpdatedParams> {
        self.latest_update.as_deref()
    }

    /// The stage to decide now: its requirement, offered choices and subject, from the latest
    /// update, else from the request. `None` while only a pointer is known.
    pub fn stage(&self) -> Option<Stage<'_>> {
        if let Some(update) = &self.latest_update {
            return Some(Stage {
                requirement: &update.current_requirement_id,
                choices: &update.available_choices,
                subject: &update.subject,
            });
        }
        self.request.as_deref().map(|request| Stage {
            requirement: &request.current_requirement_id,
            choices: &request.available_choices,
            subject: &request.subject,
        })
    }
}

/// One stage of an approval: what is to be decided and the choices offered for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stage<'a> {
    /// The requirement a decision names (`approval/decide`'s `requirementId`).
    pub requirement: &'a ApprovalRequirementRef,
    /// The choices offered: decide one of these, never another.
    pub choices: &'a [ApprovalChoice],
    /// What is being approved.
    pub subject: &'a ApprovalSubject,
}

/// What an approval event did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalChange {
    /// It waits for a decision; `stage` is whether its stage changed (a new request, a new
    /// requirement).
    Pending {
        /// Whether the stage to decide changed.
        stage: bool,
    },
    /// It was resolved; `first` is whether this resolution is the one that counts.
    Resolved {
        /// Whether this is the first resolution (later ones are echoes).
        first: bool,
    },
    /// The reviewer is looking at it: a notice.
    Reviewing,
    /// Not applied: it was resolved already, an update came for an approval not pending or
    /// of an earlier requirement than the stage shown, or a refill's page served an update
    /// of the requirement shown when a live word on it came since the page's hole began.
    Stale,
}

/// The approvals of a session.
#[derive(Clone, Debug, Default)]
pub(crate) struct Approvals {
    pending: Vec<PendingApproval>,
    resolved: Vec<ApprovalResolvedParams>,
}

impl Approvals {
    pub(crate) fn pending(&self) -> &[PendingApproval] {
        &self.pending
    }

    pub(crate) fn resolved(&self) -> &[ApprovalResolvedParams] {
        &self.resolved
    }

    fn is_resolved(&self, id: &str) -> bool {
        self.resolved.iter().any(|r| r.approval_id == id)
    }

    fn pending_mut(&mut self, id: &str) -> Option<&mut PendingApproval> {
        self.pending.iter_mut().find(|p| p.approval_id == id)
    }

    /// A request, from the view event or the server request (`asked`), arrived as `arrival`
    /// says: it opens the entry or replaces its request (a refill's page's, older than a
    /// stage shown since its hole began, only fills a request not known). The stage is then
    /// the request's again, unless an update already shows the same or a later requirement
    /// of the same approval: a request routed after that update (a client routes the server
    /// request apart from the notifications) is older than it, and a requirement's index only
    /// grows; at the same requirement the update's choices and subject are the later word.
    pub(crate) fn requested(
        &mut self,
        request: ApprovalRequestParams,
        asked: bool,
        arrival: Arrival,
    ) -> ApprovalChange {
        if self.is_resolved(&request.approval_id) {
            return ApprovalChange::Stale;
        }
        let id = request.approval_id.clone();
        match self.pending_mut(&id) {
            // A page's request, older than the stage shown since its hole began (a request
            // asked again live, an update): the stage stands.
            Some(entry) if arrival.yields_to(entry.stage_at) => {
                if entry.request.is_none() {
                    entry.request = Some(Box::new(request));
                }
                ApprovalChange::Pending { stage: false }
            }
            Some(entry) => {
                let asking = &request.current_requirement_id;
                // The update's stage stands when the request is of that stage or an earlier one.
                let later = entry.latest_update.as_ref().is_some_and(|update| {
                    let shown = &update.current_requirement_id;
                    shown.approval_id == asking.approval_id
                        && shown.source_index >= asking.source_index
                });
                let stage = !later
                    && (entry.latest_update.is_some()
                        || entry.request.as_ref().map(|r| &r.current_requirement_id)
                            != Some(asking));
                entry.request = Some(Box::new(request));
                if !later {
                    entry.latest_update = None;
                    entry.stage_at = arrival.at;
                }
                entry.asked |= asked;
                ApprovalChange::Pending { stage }
            }
            None => {
                self.pending.push(PendingApproval {
                    approval_id: id,
                    request: Some(Box::new(request)),
                    latest_update: None,
                    stage_at: arrival.at,
                    asked,
                });
                ApprovalChange::Pending { stage: true }
            }
        }
    }

    /// A pointer from a resume: pending, its request still to come.
    pub(crate) fn pointer(&mut self, id: &str) {
        if !self.is_resolved(id) && self.pending_mut(id).is_none() {
            self.pending.push(PendingApproval {
                approval_id: id.to_owned(),
                request: None,
                latest_update: None,
                stage_at: 0,
                asked: false,
            });
        }
    }

    /// An update, arrived as `arrival` says: the stage it shows, unless one known already is
    /// of a later requirement of the same approval (a requirement's index only grows: an
    /// update of an earlier one, such as a refill's page serves after the live one, is
    /// older), or it is a refill's page's of the requirement shown, which arrived live since
    /// the hole began (the later word on that requirement: its choices, its subject).
    pub(crate) fn updated(
        &mut self,
        update: ApprovalUpdatedParams,
        arrival: Arrival,
    ) -> ApprovalChange {
        let Some(entry) = self.pending_mut(&update.approval_id) else {
            return ApprovalChange::Stale;
        };
        let showing = &update.current_requirement_id;
        let shown = entry.stage().map(|stage| stage.requirement);
        if shown.is_some_and(|shown| {
            shown.approval_id == showing.approval_id && shown.source_index > showing.source_index
        }) {
            return ApprovalChange::Stale;
        }
        if shown == Some(showing) && arrival.yields_to(entry.stage_at) {
            return ApprovalChange::Stale;
        }
        // A new stage when the one shown (by an update, else by the request) is another.
        let stage = shown != Some(showing);
        entry.latest_update = Some(Box::new(update));
        entry.stage_at = arrival.at;
        ApprovalChange::Pending { stage }
    }

    pub(crate) fn resolved_by(&mut self, resolution: ApprovalResolvedParams) -> ApprovalChange {
        self.pending
            .retain(|p| p.approval_id != resolution.approval_id);
        if self.is_resolved(&resolution.approval_id) {
            return ApprovalChange::Resolved { first: false };
        }
        self.resolved.push(resolution);
        ApprovalChange::Resolved { first: true }
    }
}
