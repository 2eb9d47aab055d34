//! Starts a session and a turn, and decides every stage of each approval the turn asks for
//! with a choice the stage offers (`MSP_CHOICE`, else the first offered), until the turn ends.
//!
//! ```text
//! cargo run -p msp-client --example approve -- [HOST [ARGS...]]
//! ```
//!
//! `target/debug/msp-canned-host $MSP_SHARED_DIR/msp-upstream/transcripts/approval-round-trip`
//! plays a recording (`MSP_CHOICE=allow_session` decides as the recorded client did).

use msp_client::blocking::Client;
use msp_client::{render, Options};
use msp_types::SessionStartParams;

fn main() -> Result<(), msp_client::Error> {
    let choice = std::env::var("MSP_CHOICE").unwrap_or_default();
    let client = Client::spawn(&common::host(), Options::new("approve", "0.1.0"))?;
    let start = |id| SessionStartParams::builder().command_id(id).build();
    let (session, _) = client.start_session(start)?;
    let turn = session.send_user_turn([render::text("Update Cargo.toml to bump the version")])?;
    while let Some(approval) = turn.next_approval()? {
        let stage = approval.stage().expect("a stage to decide");
        println!("approve? {}", render::SubjectLine(stage.subject));
        let offered = stage.choices.iter().find(|c| c.choice_id == choice);
        let pick = offered.or(stage.choices.first()).expect("a choice offered");
        let ack = session.decide(&approval, &pick.choice_id, None)?;
        println!("decided: {} (terminal: {})", pick.label, ack.terminal);
        if ack.terminal {
            let resolved = session.resolved(approval.id(), None)?;
            println!("resolved: {}", resolved.decision);
        }
    }
    println!("turn: {}", turn.completed());
    client.close();
    Ok(())
}

mod common;
