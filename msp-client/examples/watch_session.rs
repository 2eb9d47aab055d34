//! Watches a session from a cursor: each item as the fold takes it, a gap among the events
//! refilled from `view/page` for you, until the event at the head the subscription named is
//! folded with no gap open (an error when the host is quiet for ten seconds before).
//!
//! ```text
//! MSP_SESSION=<id> MSP_AFTER=<cursor> cargo run -p msp-client --example watch_session -- [HOST [ARGS...]]
//! ```
//!
//! `target/debug/msp-canned-host --allow 'view/page#/futureOptionalField'
//! $MSP_SHARED_DIR/msp-upstream/transcripts/gap-recovery-splice-fill` plays a recording (its
//! session and cursor are the defaults; its client paged with a member of a later schema,
//! which this one does not send).

use std::time::Duration;

use msp_client::blocking::Client;
use msp_client::{render, Options};
use msp_session::Outcome;

fn main() -> Result<(), msp_client::Error> {
    let session_id = common::session("0198f0aa-fixture-session");
    let after = std::env::var("MSP_AFTER").unwrap_or_else(|_| format!("v:{session_id}:4"));
    let client = Client::spawn(&common::host(), Options::new("watch", "0.1.0"))?;
    let session = client.open_session(&session_id);
    let head = session.subscribe(Some(&after))?.view_cursor;
    while let Some(event) = session.next_event_timeout(Duration::from_secs(10))? {
        for outcome in event.outcomes() {
            if let Outcome::Item { item_id: id, .. } = outcome {
                let line = session.read(|f| Some(render::ItemLine(f.item(id)?).to_string()));
                println!("{}", line.unwrap_or_default());
            } else if let Outcome::Gap { after, .. } = outcome {
                println!("gap after {after}: refilling");
            }
        }
        let at_head = event.input().and_then(|input| input.view_cursor()) == Some(&*head);
        if at_head && session.read(|fold| fold.is_current()) {
            break;
        }
    }
    println!("items: {}", session.read(|fold| fold.items().len()));
    client.close();
    Ok(())
}

mod common;
