//! Joins a session while the agent waits on a question, answers it with an offered label,
//! and says how it settled and who settled it.
//!
//! ```text
//! cargo run -p msp-client --example answer_question -- [HOST [ARGS...]]
//! ```
//!
//! The host is `muse serve` unless given: `target/debug/msp-canned-host --allow
//! 'session/resume#/excludeItems' $MSP_SHARED_DIR/msp-upstream/transcripts/userinput-answer-round-trip`
//! plays a recording (whose client resumed without the items; this one takes them); with
//! `--allow 'session/resume#/history'`, `snapshot-suffix-pending-userinput` plays one where
//! the question is pending when the session is resumed from a snapshot.
//! `MSP_SESSION` names the session (the recording's by default).

use msp_client::blocking::Client;
use msp_client::{render, Answer, Options};

fn main() -> Result<(), msp_client::Error> {
    let session_id = common::session("0198f0aa-1111-7000-8000-0000000000bb");
    let client = Client::spawn(&common::host(), Options::new("answer_question", "0.1.0"))?;
    let (session, _) = client.resume_session(&session_id)?;
    let prompt = session.next_prompt(None)?;
    let mut answers = Vec::new();
    for question in &prompt.request().expect("its questions").questions {
        println!("asked: {}", render::QuestionLine(question));
        let first = question.options.iter().map(|o| &o.label).take(1);
        answers.push(Answer::select(question, first));
    }
    session.answer(prompt.id(), answers)?;
    let settled = session.settled(prompt.id(), None)?;
    println!("settled: {} by {}", settled.params.outcome, settled.by);
    client.close();
    Ok(())
}

mod common;
