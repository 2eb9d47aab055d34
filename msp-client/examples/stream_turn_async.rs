//! The `stream_turn` example on tokio: the same calls, awaited.
//!
//! ```text
//! cargo run -p msp-client --features tokio --example stream_turn_async -- [HOST [ARGS...]]
//! ```

use msp_client::tokio::Client;
use msp_client::{render, Options};
use msp_types::SessionStartParams;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), msp_client::Error> {
    let client = Client::spawn(&common::host(), Options::new("stream_turn", "0.1.0")).await?;
    let start = |id| SessionStartParams::builder().command_id(id).build();
    let (session, _) = client.start_session(start).await?;
    let input = render::text("Run the tests and summarize failures");
    let turn = session.send_user_turn([input]).await?;
    while let Some(item) = turn.next_item().await {
        println!("{}", render::ItemLine(&item));
    }
    println!("turn: {}", turn.completed().await);
    drop((turn, session));
    client.close().await;
    Ok(())
}

mod common;
