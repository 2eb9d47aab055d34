//! The `approve` example on tokio: the same calls, awaited.
//!
//! ```text
//! cargo run -p msp-client --features tokio --example approve_async -- [HOST [ARGS...]]
//! ```

use msp_client::tokio::Client;
use msp_client::{render, Options};
use msp_types::SessionStartParams;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), msp_client::Error> {
    let choice = std::env::var("MSP_CHOICE").unwrap_or_default();
    let client = Client::spawn(&common::host(), Options::new("approve", "0.1.0")).await?;
    let start = |id| SessionStartParams::builder().command_id(id).build();
    let (session, _) = client.start_session(start).await?;
    let input = render::text("Update Cargo.toml to bump the version");
    let turn = session.send_user_turn([input]).await?;
    while let Some(approval) = turn.next_approval().await? {
        let stage = approval.stage().expect("a stage to decide");
        println!("approve? {}", render::SubjectLine(stage.subject));
        let offered = stage.choices.iter().find(|c| c.choice_id == choice);
        let pick = offered.or(stage.choices.first()).expect("a choice offered");
        let ack = session.decide(&approval, &pick.choice_id, None).await?;
        println!("decided: {} (terminal: {})", pick.label, ack.terminal);
        if ack.terminal {
            let resolved = session.resolved(approval.id(), None).await?;
            println!("resolved: {}", resolved.decision);
        }
    }
    println!("turn: {}", turn.completed().await);
    client.close().await;
    Ok(())
}

mod common;
