//! Stored sessions seen from outside, written once for both drivers: paging through
//! `session/list` (which params the next page is asked with, and when the listing is over),
//! and `session/read`'s params.

use std::collections::HashSet;

use msp_types::{SessionListParams, SessionListResult, SessionReadParams, Tristate};

use crate::outcome::Error;

/// How many empty pages in a row naming a next one end a listing: a host that skips what it
/// cannot read after paging may send a few, one naming new cursors for ever would page for
/// ever.
pub(crate) const EMPTY_PAGES: usize = 16;

/// Where a listing of stored sessions is.
#[derive(Debug)]
pub(crate) struct Listing {
    next: Next,
    /// Every cursor a page was asked with: a page naming one of them again would start a
    /// loop.
    asked: HashSet<String>,
    /// Empty pages in a row that named a next one.
    empty: usize,
}

#[derive(Debug)]
enum Next {
    /// Ask the next page with these params.
    Ask(SessionListParams),
    /// Give this error, then end: the page before it was given.
    Fail(Error),
    /// The last page came, or a page failed.
    Over,
}

/// What the listing does next.
pub(crate) enum Step<'a> {
    /// Asks the next page with these params, and gives what came to [`Listing::turn`].
    Ask(&'a SessionListParams),
    /// Gives this error; the listing is over.
    Fail(Error),
}

impl Listing {
    /// A listing from the page `params` name (the first, unless they carry a cursor).
    pub(crate) fn new(params: SessionListParams) -> Self {
        let asked = match &params.cursor {
            Tristate::Value(cursor) => HashSet::from([cursor.clone()]),
            _ => HashSet::new(),
        };
        Listing {
            next: Next::Ask(params),
            asked,
            empty: 0,
        }
    }

    /// What to do next; `None` once the listing is over.
    pub(crate) fn step(&mut self) -> Option<Step<'_>> {
        match std::mem::replace(&mut self.next, Next::Over) {
            Next::Fail(error) => Some(Step::Fail(error)),
            other => {
                // Kept until the page comes: a page asked and never given is asked again.
                self.next = other;
                match &self.next {
                    Next::Ask(params) => Some(Step::Ask(params)),
                    _ => None,
                }
            }
        }
    }

    /// Takes what asking the next page gave: the page, or the error that ends the listing.
    /// A page naming as the next page's a cursor some page was asked with already would
    /// start a loop, and so could empty pages naming new ones: the page is given, and then
    /// [`Error::PageRepeated`] (or, at the [`EMPTY_PAGES`]th empty page in a row,
    /// [`Error::PageEmpty`]) ends the listing.
    pub(crate) fn turn(
        &mut self,
        page: Result<SessionListResult, Error>,
    ) -> Result<SessionListResult, Error> {
        let Next::Ask(mut asked) = std::mem::replace(&mut self.next, Next::Over) else {
            unreachable!("a page was asked");
        };
        let page = page?;
        if let Some(next) = &page.next_cursor {
            let cursor = next.clone();
            self.empty = if page.sessions.is_empty() {
                self.empty + 1
            } else {
                0
            };
            self.next = if self.empty >= EMPTY_PAGES {
                Next::Fail(Error::PageEmpty { cursor })
            } else if !self.asked.insert(next.clone()) {
                Next::Fail(Error::PageRepeated { cursor })
            } else {
                asked.cursor = Tristate::Value(cursor);
                Next::Ask(asked)
            };
        }
        Ok(page)
    }
}

/// `session/read` of `session_id`, its items too when `items` (the host leaves them out
/// unless told).
pub(crate) fn read(session_id: &str, items: bool) -> SessionReadParams {
    let mut params = SessionReadParams::builder().session_id(session_id).build();
    params.exclude_items = items.then_some(false);
    params
}

#[cfg(test)]
mod tests {
    use super::{read, Listing, Step};
    use crate::outcome::Error;
    use msp_types::{SessionListParams, SessionListResult, Tristate};

    /// A page of one session, naming `next`.
    fn page(next: Option<&str>) -> SessionListResult {
        let session = serde_json::json!({"sessionId": "s", "status": "idle",
            "activeTurnId": null, "turnCount": 1, "path": "/s/session.jsonl",
            "createdAt": "2026-08-07T18:02:11.412Z", "updatedAt": "2026-08-07T18:40:03.007Z",
            "workspaceRoot": "/w", "providerId": "muse", "modelId": "m", "forkedFrom": null});
        let page = serde_json::json!({"nextCursor": next, "sessions": [session]});
        serde_json::from_value(page).unwrap()
    }

    /// The cursor the next page is asked with; panics unless one is asked.
    fn next_cursor(listing: &mut Listing) -> Tristate<String> {
        match listing.step() {
            Some(Step::Ask(params)) => params.cursor.clone(),
            Some(Step::Fail(error)) => panic!("{error}"),
            None => panic!("over"),
        }
    }

    #[test]
    fn each_page_is_asked_with_the_cursor_the_one_before_gave_and_the_same_conditions() {
        let mut listing = Listing::new(
            SessionListParams::builder()
                .limit(2)
                .workspace_root("/w")
                .build(),
        );
        assert_eq!(next_cursor(&mut listing), Tristate::Absent);
        listing.turn(Ok(page(Some("c1")))).unwrap();
        let Some(Step::Ask(next)) = listing.step() else {
            panic!("a page to ask")
        };
        assert_eq!(next.cursor, Tristate::Value("c1".to_owned()));
        assert_eq!(
            (next.limit, next.workspace_root.as_deref()),
            (Some(2), Some("/w"))
        );
        listing.turn(Ok(page(Some("c2")))).unwrap();
        assert_eq!(next_cursor(&mut listing), Tristate::Value("c2".to_owned()));
        listing.turn(Ok(page(None))).unwrap();
        assert!(listing.step().is_none(), "the last page says null");
    }

    #[test]
    fn a_page_naming_a_cursor_asked_already_is_given_and_then_the_listing_fails() {
        // Straight away, from the first cursor given, and after a longer cycle.
        for (first, nexts) in [
            (Some("c1"), vec!["c1"]),
            (None, vec!["a", "a"]),
            (None, vec!["a", "b", "a"]),
        ] {
            let mut params = SessionListParams::new();
            if let Some(first) = first {
                params.cursor = Tristate::Value(first.to_owned());
            }
            let mut listing = Listing::new(params);
            let repeated = nexts.last().unwrap().to_string();
            for next in nexts {
                next_cursor(&mut listing);
                assert!(listing.turn(Ok(page(Some(next)))).is_ok(), "given");
            }
            let failed = listing.step();
            assert!(
                matches!(&failed, Some(Step::Fail(Error::PageRepeated { cursor })) if *cursor == repeated),
                "{first:?} then {repeated}"
            );
            assert!(listing.step().is_none(), "over");
        }
    }

    /// Empty pages naming a next one are asked on, a page with sessions counting again
    /// from none, up to [`EMPTY_PAGES`] in a row: that one is given, and then the listing
    /// fails (asked on, such a host could page for ever). An empty last page ends it.
    #[test]
    fn so_many_empty_pages_in_a_row_naming_a_next_one_end_the_listing() {
        let empty = |next: &str| {
            let mut page = page(Some(next));
            page.sessions.clear();
            page
        };
        let mut listing = Listing::new(SessionListParams::new());
        next_cursor(&mut listing);
        listing.turn(Ok(empty("e"))).unwrap();
        next_cursor(&mut listing);
        listing.turn(Ok(page(Some("full")))).unwrap();
        for n in 1..super::EMPTY_PAGES {
            let asked = next_cursor(&mut listing);
            assert!(matches!(asked, Tristate::Value(_)), "asked on after {n}");
            listing.turn(Ok(empty(&format!("e{n}")))).unwrap();
        }
        next_cursor(&mut listing);
        assert!(listing.turn(Ok(empty("last"))).is_ok(), "given");
        let failed = listing.step();
        assert!(
            matches!(&failed, Some(Step::Fail(Error::PageEmpty { cursor })) if cursor == "last"),
            "the listing fails"
        );
        assert!(listing.step().is_none(), "over");
        let mut listing = Listing::new(SessionListParams::new());
        next_cursor(&mut listing);
        let mut last = page(None);
        last.sessions.clear();
        listing.turn(Ok(last)).unwrap();
        assert!(listing.step().is_none(), "an empty last page ends it");
    }

    #[test]
    fn a_page_failing_ends_the_listing() {
        let mut listing = Listing::new(SessionListParams::new());
        next_cursor(&mut listing);
        let failed = listing.turn(Err(Error::TimedOut {
            what: "a page",
            timeout: std::time::Duration::from_secs(1),
        }));
        assert!(failed.is_err());
        assert!(listing.step().is_none());
    }

    #[test]
    fn a_read_asks_for_the_items_only_when_told() {
        assert_eq!(read("s", false).exclude_items, None, "the host's default");
        assert_eq!(read("s", true).exclude_items, Some(false));
        assert_eq!(read("s", true).session_id, "s");
    }
}
