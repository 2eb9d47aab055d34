//! Sessions, turns, approvals and questions of the Muse Session Protocol (MSP): the client a
//! program writes against, on [`msp_rpc`]'s connection and [`msp_session`]'s fold, blocking
//! ([`blocking`]) and tokio (`tokio`, feature `tokio`), with the same words on both. Feature
//! `experimental` routes the experimental view events (admission prompts, permission
//! profiles) to their sessions too.
//!
//! A [`blocking::Client`] spawns or attaches to a host and shakes hands; `start_session` and
//! `resume_session` give a [`blocking::Session`]: its fold (read-only), its events in the
//! order routed, the gap refill driven for it, and its commands as methods, each `commandId`
//! minted once and kept across a retry. `send_user_turn` gives a [`blocking::Turn`]: its
//! items as they change, and how it ended (waited for alone, or with an approval handler
//! deciding each stage: [`blocking::Turn::completed_deciding`], or for every turn of the
//! session, on a thread of its own: [`blocking::Session::handle_approvals`]). The host's
//! `approval/request` and `userInput/request` are answered with the receipt for you and land
//! in the fold; answers and decisions are checked against what was offered before they are
//! sent.
//!
//! The seed's recipe, run against the canned host playing the project's recording of it, in
//! this process over in-memory pipes (with `muse serve`: `Client::spawn(&HostCommand::muse(),
//! options)`, the rest the same):
//!
//! ```
//! use msp_client::blocking::Client;
//! use msp_client::{Answer, Options, SettledBy};
//! use msp_rpc::canned::{Allow, CannedHost, Transcript};
//! use msp_rpc::pipe::pipe;
//! use msp_types::UserInputOutcome;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let recording = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
//!     .join("../tests/fixtures/seed-answer-user-input");
//! // The recording's client paged its history in; this one resumes with it (its own choice).
//! let host = CannedHost::new(Transcript::load(&recording)?)
//!     .allow(Allow::parse("session/resume#/excludeItems")?);
//! let (client_reads, host_writes) = pipe();
//! let (host_reads, client_writes) = pipe();
//! std::thread::spawn(move || host.serve(host_reads, host_writes, std::io::sink()).outcome);
//!
//! let client = Client::over(client_reads, client_writes, Options::new("demo", "0.1.0"))?;
//! let (session, _) = client.resume_session("0198f0aa-1111-7000-8000-0000000000bb")?;
//! let prompt = session.next_prompt(None)?;
//! let question = &prompt.request().expect("its questions").questions[0];
//! // A label the agent did not offer is refused before anything is sent.
//! assert!(session.answer(prompt.id(), [Answer::label(&question.id, "Oracle")]).is_err());
//! let ack = session.answer(prompt.id(), [Answer::label(&question.id, "Postgres")])?;
//! let settled = session.settled(prompt.id(), None)?;
//! assert_eq!(settled.params.outcome, UserInputOutcome::Answered);
//! assert_eq!(settled.by, SettledBy::ThisClient(ack.command_id));
//! # Ok(()) }
//! ```
//!
//! # Threads, locks, wake-ups
//!
//! One lock holds every session's state (the core, `core.rs`, whose table says who takes it
//! for what); msp-rpc's threads or tasks move the bytes and reply the receipt of each host
//! request, and one pump routes what the connection delivers (on the blocking driver, a
//! handle that waits routes it itself, so that the program frees its events on the thread
//! that made them: `pump.rs`). Handles wait by polling a step of the core with a waker that
//! the next input routed to their session wakes.
//!
//! # Order
//!
//! A session's events come in wire order, the host's requests among its notifications.
//! msp-rpc's request handler replies a request's receipt as soon as it is read, whether or
//! not the program takes anything, and delivers a copy of it among the notifications where
//! it came ([`msp_rpc::Options::inbound_requests`]); the pump routes that copy as it routes
//! the notifications around it. While a session's gap is refilled, its requests and
//! notifications are held for the refill, and folded after the pages (or, should an
//! ephemeral host end meanwhile, at its end). A refill holds at most the fold's
//! `refill_held_frames`: past them, what it held and what comes are folded as they come,
//! the refill fails (`RefillFailure::Overflow`, its pages dropped and the hole left open),
//! and once it is finished another begins for the hole (a gap shown meanwhile merged in),
//! unless the connection ended, up to three overflowed refills in a row.

mod acks;
mod asks;
pub mod blocking;
mod commands;
mod core;
mod listing;
mod options;
mod outcome;
mod pending;
mod pump;
pub mod render;
mod shared;
mod stop;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod tokio;
mod wait;

// The README's recipes compile as doc tests (they spawn `muse serve`, so they do not run;
// the examples that hold the same lines run against the canned host in tests/examples.rs).
#[cfg(all(doctest, feature = "tokio"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeRecipes;

pub use crate::asks::{Answer, AskError, Decision, FREE_TEXT_CHARS};
pub use crate::core::Event;
pub use crate::options::{Options, Retry, EVENTS};
pub use crate::outcome::{Error, SettledBy, Settlement, TurnOutcome};
pub use crate::pending::{PendingCommand, Resent};
pub use crate::stop::HandlerStop;
