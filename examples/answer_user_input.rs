//! Answer the agent's question, typed end to end.
//!
//! A client joins a session it did not create while the agent waits on a
//! `request_user_input` question: it resumes with `excludeItems: true`, matches the
//! `pendingRequests` entry with the re-issued `userInput/request`, replies with the `{}`
//! receipt, shows the question, sends `userInput/answer` (or `cancel`, or `interrupt`)
//! with an offered label only, and reports how `userInput/settled` says it ended.
//!
//! The host is canned, inside this process: it plays a recorded transcript.
//!
//! ```text
//! cargo run --example answer_user_input -- [--answer LABEL | --cancel REASON | --interrupt LABEL] [--trace] [TRANSCRIPT_DIR]
//! ```

#[path = "answer_user_input/app.rs"]
mod app;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = app::main(
        &args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(code)
}
