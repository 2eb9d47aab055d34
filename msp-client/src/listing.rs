//! Stored sessions seen from outside, written once for both drivers: paging through
//! `session/list` (which params the next page is asked with, and when the listing is over),
//! and `session/read`'s params.

use msp_types::{SessionListParams, SessionListResult, SessionReadParams, Tristate};

use crate::outcome::Error;

/// Where a listing of stored sessions is: the params of the next page, or over.
#[derive(Debug)]
pub(crate) struct Listing {
    /// The next page's params; `None` once the last page came, or a page failed.
    next: Option<SessionListParams>,
}

impl Listing {
    /// A listing from the page `params` name (the first, unless they carry a cursor).
    pub(crate) fn new(params: SessionListParams) -> Self {
        Listing { next: Some(params) }
    }

    /// The params to ask the next page with; `None` when the listing is over.
    pub(crate) fn next(&self) -> Option<&SessionListParams> {
        self.next.as_ref()
    }

    /// Takes what asking the next page gave: the page, or the error that ends the listing.
    /// A page whose `nextCursor` is the cursor it was asked with would be asked again
    /// forever: it ends the listing with [`Error::PageRepeated`] (the page itself is lost
    /// with it, since it was given already).
    pub(crate) fn turn(
        &mut self,
        page: Result<SessionListResult, Error>,
    ) -> Result<SessionListResult, Error> {
        let mut asked = self.next.take().expect("a page was asked");
        let page = page?;
        match (&page.next_cursor, &asked.cursor) {
            (None, _) => {}
            (Some(next), Tristate::Value(sent)) if next == sent => {
                return Err(Error::PageRepeated {
                    cursor: next.clone(),
                })
            }
            (Some(next), _) => {
                asked.cursor = Tristate::Value(next.clone());
                self.next = Some(asked);
            }
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
    use super::Listing;
    use crate::outcome::Error;
    use msp_types::{SessionListParams, SessionListResult, Tristate};

    fn page(next: Option<&str>) -> SessionListResult {
        let mut page: SessionListResult =
            serde_json::from_value(serde_json::json!({"nextCursor": null, "sessions": []}))
                .unwrap();
        page.next_cursor = next.map(str::to_owned);
        page
    }

    #[test]
    fn each_page_is_asked_with_the_cursor_the_one_before_gave_and_the_same_conditions() {
        let mut listing = Listing::new(
            SessionListParams::builder()
                .limit(2)
                .workspace_root("/w")
                .build(),
        );
        assert_eq!(listing.next().unwrap().cursor, Tristate::Absent);
        listing.turn(Ok(page(Some("c1")))).unwrap();
        let next = listing.next().unwrap();
        assert_eq!(next.cursor, Tristate::Value("c1".to_owned()));
        assert_eq!(
            (next.limit, next.workspace_root.as_deref()),
            (Some(2), Some("/w"))
        );
        listing.turn(Ok(page(Some("c2")))).unwrap();
        assert_eq!(
            listing.next().unwrap().cursor,
            Tristate::Value("c2".to_owned())
        );
        listing.turn(Ok(page(None))).unwrap();
        assert!(listing.next().is_none(), "the last page says null");
    }

    #[test]
    fn a_page_giving_back_its_own_cursor_or_failing_ends_the_listing() {
        let mut listing = Listing::new(SessionListParams::builder().cursor("c1").build());
        let repeated = listing.turn(Ok(page(Some("c1"))));
        assert!(
            matches!(&repeated, Err(Error::PageRepeated { cursor }) if cursor == "c1"),
            "{repeated:?}"
        );
        assert!(listing.next().is_none());

        let mut listing = Listing::new(SessionListParams::new());
        let failed = listing.turn(Err(Error::TimedOut {
            what: "a page",
            timeout: std::time::Duration::from_secs(1),
        }));
        assert!(failed.is_err());
        assert!(listing.next().is_none(), "a failed page ends it");
    }
}
