//! Watches a session from a cursor: each item as the fold takes it, a gap among the events
//! refilled from `view/page` for you, until the event at the head the subscription named is
//! folded with no gap open (or the host is quiet for ten seconds).
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
use msp_client::{render, Error, Event, Options};
use msp_session::Outcome;

fn main() -> Result<(), Error> {
    let session_id = common::session("0198f0aa-fixture-session");
    let after = std::env::var("MSP_AFTER").unwrap_or_else(|_| format!("v:{session_id}:4"));
    let client = Client::spawn(&common::host(), Options::new("watch", "0.1.0"))?;
    let session = client.open_session(&session_id);
    let head = session.subscribe(Some(&after))?.view_cursor;
    loop {
        let event = match session.next_event_timeout(Duration::from_secs(10)) {
            Ok(Some(event)) => event,
            Ok(None) | Err(Error::TimedOut { .. }) => break,
            Err(error) => return Err(error),
        };
        let mut at_head = false;
        let outcomes = match event {
            Event::Folded { input, outcome } => {
                at_head = input.view_cursor() == Some(head.as_str());
                vec![outcome]
            }
            Event::Refilled { outcomes } => {
                let failed = session.read(|fold| fold.gap().failure().map(|f| f.to_string()));
                println!("refilled: {}", failed.as_deref().unwrap_or("ok"));
                outcomes
            }
            _ => continue, // `Lagged`: events dropped, the fold saw them
        };
        for outcome in outcomes {
            match outcome {
                Outcome::Item { item_id, .. } => {
                    let line = session
                        .read(|fold| Some(render::ItemLine(fold.item(&item_id)?).to_string()));
                    println!("{}", line.unwrap_or_default());
                }
                Outcome::Gap { after, .. } => println!("gap after {after}: refilling"),
                _ => {}
            }
        }
        if at_head && session.read(|fold| fold.is_current()) {
            break;
        }
    }
    println!("items: {}", session.read(|fold| fold.items().len()));
    drop(session);
    client.close();
    Ok(())
}

mod common;
