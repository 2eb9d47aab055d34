//! A session's events, the client's own, and a turn's items as [`Stream`]s
//! ([`Session::events`], [`Client::events`], [`Turn::items`]): the tokio side of the
//! blocking driver's iterators.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use msp_session::ItemEntry;

use super::{Client, Session, Turn};
use crate::core::{Event, Slot, SlotWait, CLIENT};

/// The events of a session (or the client's own) in the order routed, from
/// [`Session::events`] ([`Client::events`]): what [`Session::next_event`]
/// ([`Client::next_event`]) gives, one after another; the stream ends after the
/// connection's end, [`Event::Closed`], was taken.
#[must_use = "streams do nothing unless polled"]
pub struct Events<'a> {
    wait: SlotWait<'a>,
}

impl Stream for Events<'_> {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.get_mut().wait.poll(cx, Slot::next_event)
    }
}

impl std::fmt::Debug for Events<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").finish_non_exhaustive()
    }
}

/// The changes to a turn's items, from [`Turn::items`]: what [`Turn::next_item`] gives, one
/// after another; the stream ends once the turn is over and every change was taken, or
/// once the connection ended.
#[must_use = "streams do nothing unless polled"]
pub struct Items<'a> {
    turn: &'a Turn,
    wait: SlotWait<'a>,
}

impl Stream for Items<'_> {
    type Item = ItemEntry;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ItemEntry>> {
        let Items { turn, wait } = self.get_mut();
        wait.poll(cx, |slot, ended| {
            slot.next_turn_item(turn.follower, &turn.id, ended)
        })
    }
}

impl std::fmt::Debug for Items<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Items")
            .field("turn", &self.turn.id)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The session's events as a [`Stream`], in the order routed ([`Session::next_event`]
    /// one after another).
    pub fn events(&self) -> Events<'_> {
        Events {
            wait: self.core().slot_wait(self.0.place),
        }
    }
}

impl Client {
    /// The client's own events as a [`Stream`] ([`Client::next_event`] one after another).
    pub fn events(&self) -> Events<'_> {
        Events {
            wait: self.link.core.slot_wait(CLIENT),
        }
    }
}

impl Turn {
    /// The changes to the turn's items as a [`Stream`] ([`Turn::next_item`] one after
    /// another).
    pub fn items(&self) -> Items<'_> {
        Items {
            turn: self,
            wait: self.session.core().slot_wait(self.session.0.place),
        }
    }
}
