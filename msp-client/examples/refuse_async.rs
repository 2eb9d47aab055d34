//! On tokio: starts a session and a turn, and refuses every stage of every approval the turn
//! asks for by a policy (the first offered choice that denies, else one that aborts, with a
//! reason where that choice takes one), until the turn ends.
//!
//! ```text
//! cargo run -p msp-client --features tokio --example refuse_async -- [HOST [ARGS...]]
//! ```
//!
//! `target/debug/msp-canned-host $MSP_SHARED_DIR/msp-upstream/transcripts/approval-deny-round-trip`
//! plays a recording of it.

use msp_client::tokio::Client;
use msp_client::{render, Decision, Options};
use msp_types::{ApprovalDecision, SessionStartParams};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), msp_client::Error> {
    let client = Client::spawn(&common::host(), Options::new("refuse", "0.1.0")).await?;
    let start = |id| SessionStartParams::builder().command_id(id).build();
    let (session, _) = client.start_session(start).await?;
    let input = render::text("Update Cargo.toml to bump the version");
    let turn = session.send_user_turn([input]).await?;
    let refuse = [ApprovalDecision::Denied, ApprovalDecision::Abort];
    let outcome = turn.completed_deciding(|_, stage| {
        let decision = Decision::first_offered(stage, &refuse)?;
        println!("refused: {}", render::SubjectLine(stage.subject));
        Some(decision.with_feedback_where_accepted(stage, "Do not modify the manifest"))
    });
    println!("turn: {}", outcome.await?);
    drop(session);
    client.close().await;
    Ok(())
}

mod common;
