//! The `answer_question` example on tokio: the same calls, awaited.
//!
//! ```text
//! cargo run -p msp-client --features tokio --example answer_question_async -- [HOST [ARGS...]]
//! ```

use msp_client::tokio::Client;
use msp_client::{render, Answer, Options};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), msp_client::Error> {
    let session_id = common::session("0198f0aa-1111-7000-8000-0000000000bb");
    let client = Client::spawn(&common::host(), Options::new("answer_question", "0.1.0")).await?;
    let (session, _) = client.resume_session(&session_id).await?;
    let prompt = session.next_prompt(None).await?;
    let mut answers = Vec::new();
    for question in &prompt.request().expect("its questions").questions {
        println!("asked: {}", render::QuestionLine(question));
        let first = question.options.iter().map(|o| &o.label).take(1);
        answers.push(Answer::select(question, first));
    }
    session.answer(prompt.id(), answers).await?;
    let settled = session.settled(prompt.id(), None).await?;
    println!("settled: {} by {}", settled.params.outcome, settled.by);
    drop(session);
    client.close().await;
    Ok(())
}

mod common;
