//! Starts a session, sends one turn and prints its items as they change, then its end.
//!
//! ```text
//! cargo run -p msp-client --example stream_turn -- [HOST [ARGS...]]
//! ```
//!
//! `target/debug/msp-canned-host $MSP_SHARED_DIR/msp-upstream/transcripts/text-run-single-turn`
//! plays a recording.

use msp_client::blocking::Client;
use msp_client::{render, Options};
use msp_types::SessionStartParams;

fn main() -> Result<(), msp_client::Error> {
    let client = Client::spawn(&common::host(), Options::new("stream_turn", "0.1.0"))?;
    let start = |id| SessionStartParams::builder().command_id(id).build();
    let (session, _) = client.start_session(start)?;
    let turn = session.send_user_turn([render::text("Run the tests and summarize failures")])?;
    for item in turn.items() {
        println!("{}", render::ItemLine(&item));
    }
    println!("turn: {}", turn.completed());
    client.close();
    Ok(())
}

mod common;
