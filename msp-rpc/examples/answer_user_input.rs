//! Answer the agent's question, typed end to end, over a real host process.
//!
//! A client joins a session it did not create while the agent waits on a
//! `request_user_input` question: it resumes with `excludeItems: true`, matches the
//! `pendingRequests` entry with the re-issued `userInput/request`, replies with the `{}`
//! receipt, shows the question, sends `userInput/answer` (or `cancel`, or `interrupt`) with an
//! offered label only, and reports how `userInput/settled` says it ended.
//!
//! The host is `msp-canned-host` playing a recorded transcript, spawned as a child process;
//! `--muse` spawns `muse serve` instead.
//!
//! ```text
//! cargo build -p msp-rpc --features canned-host --bin msp-canned-host
//! cargo run -p msp-rpc --example answer_user_input -- [--answer LABEL | --cancel REASON | --interrupt LABEL] [--trace] [TRANSCRIPT_DIR]
//! ```

#[path = "answer_user_input/cli.rs"]
mod cli;
#[path = "answer_user_input/deadline.rs"]
mod deadline;
#[path = "answer_user_input/labels.rs"]
mod labels;
#[path = "answer_user_input/recipe.rs"]
mod recipe;
#[path = "answer_user_input/render.rs"]
mod render;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match cli::parse(&args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("usage: {message}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    match recipe::run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("{failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}
