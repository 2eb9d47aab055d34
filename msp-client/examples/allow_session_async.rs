//! On tokio: resumes a session, and allows every approval it asks for, pending at the resume
//! or asked later by any turn, for the session (the first offered choice that does) on a
//! task of its own, while the program waits for the running turn to end.
//!
//! ```text
//! MSP_SESSION=<id> cargo run -p msp-client --features tokio --example allow_session_async -- [HOST [ARGS...]]
//! ```
//!
//! `target/debug/msp-canned-host --allow 'session/resume#/history' $MSP_SHARED_DIR/msp-upstream/transcripts/snapshot-suffix-pending-approval`
//! plays a recording of it.

use msp_client::tokio::Client;
use msp_client::{render, Decision, Options};
use msp_types::ApprovalDecision;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), msp_client::Error> {
    let session_id = common::session("0198f0aa-1111-7000-8000-0000000000aa");
    let client = Client::spawn(&common::host(), Options::new("allow", "0.1.0")).await?;
    let (session, resumed) = client.resume_session(&session_id).await?;
    let allow = [ApprovalDecision::ApprovedForSession];
    let handler = session.handle_approvals(move |_, stage| {
        let decision = Decision::first_offered(stage, &allow)?;
        println!("allowed: {}", render::SubjectLine(stage.subject));
        Some(decision)
    });
    if let Some(running) = resumed.session.active_turn_id {
        println!("turn: {}", session.turn(&running).completed().await);
    }
    drop(session);
    client.close().await;
    if handler.stop().await?.is_some() {
        println!("handler: ended with the connection");
    }
    Ok(())
}

mod common;
