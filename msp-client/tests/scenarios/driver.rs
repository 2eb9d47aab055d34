//! The session calls a scenario is played with, on either driver.

use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use msp_client::{blocking, Answer, Error, Event, Options, Settlement, TurnOutcome};
use msp_rpc::canned::{Allow, CannedHost, Outcome, Transcript};
use msp_rpc::endpoint::Sends;
use msp_rpc::pipe::pipe;
use msp_rpc::{Command, HostCommand, HostExit};
use msp_session::{PendingApproval, PendingPrompt};
use msp_types::rpc::Request;
use msp_types::{
    ApprovalResolvedParams, ModelSelection, SessionResumeParams, SessionStartParams,
    TurnStartParams,
};

use super::WAIT;

/// The session calls a scenario is played with: the blocking client's, or the tokio
/// client's awaited on the runtime it was made in. Each returns once the call is over.
pub trait Driver: Sized {
    type Session: Clone;

    /// A client of the canned host playing `scenario`, the values `allow` covers free.
    fn connect(scenario: &Path, allow: &[&str], options: Options) -> Result<Self, Error>;
    fn start_session(
        &self,
        build: impl FnOnce(String) -> SessionStartParams,
    ) -> Result<Self::Session, Error>;
    fn resume_session(
        &self,
        build: impl FnOnce(String) -> SessionResumeParams,
    ) -> Result<Self::Session, Error>;
    fn open_session(&self, id: &str) -> Self::Session;
    fn request<M: Request>(&self, params: &M::Params) -> Result<(), Error>
    where
        msp_rpc::Client: Sends<M>;
    /// Closes the client: `Err` unless the host played its recording to the end.
    fn close(self) -> Result<(), String>;

    fn id(session: &Self::Session) -> String;
    fn send<M: Request>(&self, session: &Self::Session, command: &Command<M>) -> Result<(), Error>
    where
        msp_rpc::Client: Sends<M>;
    fn start_turn(
        &self,
        session: &Self::Session,
        build: impl FnOnce(String) -> TurnStartParams,
    ) -> Result<(), Error>;
    fn next_approval(&self, session: &Self::Session) -> Result<PendingApproval, Error>;
    fn decide(
        &self,
        session: &Self::Session,
        approval: &PendingApproval,
        choice: &str,
        feedback: Option<&str>,
    ) -> Result<(), Error>;
    fn next_prompt(&self, session: &Self::Session) -> Result<PendingPrompt, Error>;
    /// Waits until prompt `id`'s questions arrived.
    fn asked(&self, session: &Self::Session, id: &str) -> Result<(), Error>;
    fn answer(&self, session: &Self::Session, id: &str, answers: Vec<Answer>) -> Result<(), Error>;
    fn cancel_prompt(
        &self,
        session: &Self::Session,
        id: &str,
        reason: Option<&str>,
    ) -> Result<(), Error>;
    fn interrupt_prompt(
        &self,
        session: &Self::Session,
        id: &str,
        answers: Vec<Answer>,
    ) -> Result<(), Error>;
    fn engaged(&self, session: &Self::Session, id: &str) -> Result<(), Error>;
    fn interrupt(
        &self,
        session: &Self::Session,
        turn: Option<&str>,
        retract: bool,
    ) -> Result<(), Error>;
    fn unqueue(&self, session: &Self::Session, turn: &str) -> Result<(), Error>;
    fn compact(&self, session: &Self::Session, turn: Option<&str>) -> Result<(), Error>;
    fn set_model(&self, session: &Self::Session, model: ModelSelection) -> Result<(), Error>;
    fn next_event(
        &self,
        session: &Self::Session,
        timeout: Duration,
    ) -> Result<Option<Event>, Error>;
    fn turn_outcome(&self, session: &Self::Session, turn: &str) -> Result<TurnOutcome, Error>;
    fn settled(&self, session: &Self::Session, id: &str) -> Result<Settlement, Error>;
    fn resolved(&self, session: &Self::Session, id: &str) -> Result<ApprovalResolvedParams, Error>;
}

/// The blocking client, over a child process's pipes or, with `host`, in-memory pipes to
/// the canned host on a thread of this process.
pub struct Blocking {
    client: blocking::Client,
    host: Option<JoinHandle<(Outcome, String)>>,
}

impl Blocking {
    /// [`Driver::connect`] over in-memory pipes.
    pub fn in_memory(scenario: &Path, allow: &[&str], options: Options) -> Result<Self, Error> {
        let mut host = CannedHost::new(Transcript::load(scenario).expect("the transcript loads"));
        for pattern in allow {
            host = host.allow(Allow::parse(pattern).expect("a pattern"));
        }
        let (client_reader, host_writer) = pipe();
        let (host_reader, client_writer) = pipe();
        let host = std::thread::spawn(move || {
            let mut stderr = Vec::new();
            let outcome = host.serve(host_reader, host_writer, &mut stderr).outcome;
            (outcome, String::from_utf8_lossy(&stderr).into_owned())
        });
        let client = blocking::Client::over(client_reader, client_writer, options)?;
        Ok(Blocking {
            client,
            host: Some(host),
        })
    }
}

/// The canned host of this build, playing `scenario` as a child process.
fn host_command(scenario: &Path, allow: &[&str]) -> HostCommand {
    HostCommand::new(super::support::host_binary())
        .args(allow.iter().flat_map(|pattern| ["--allow", pattern]))
        .arg(scenario)
}

/// `Ok` when the host exited 0.
fn exited_0(exit: Option<HostExit>) -> Result<(), String> {
    match exit {
        Some(exit) if exit.code == Some(0) => Ok(()),
        Some(exit) => Err(format!("the host exited {exit}")),
        None => Err("no exit".to_owned()),
    }
}

impl Driver for Blocking {
    type Session = blocking::Session;

    fn connect(scenario: &Path, allow: &[&str], options: Options) -> Result<Self, Error> {
        let command = host_command(scenario, allow);
        let client = blocking::Client::spawn(&command, options)?;
        Ok(Blocking { client, host: None })
    }
    fn start_session(
        &self,
        build: impl FnOnce(String) -> SessionStartParams,
    ) -> Result<Self::Session, Error> {
        Ok(self.client.start_session(build)?.0)
    }
    fn resume_session(
        &self,
        build: impl FnOnce(String) -> SessionResumeParams,
    ) -> Result<Self::Session, Error> {
        Ok(self.client.resume_session_with(build)?.0)
    }
    fn open_session(&self, id: &str) -> Self::Session {
        self.client.open_session(id)
    }
    fn request<M: Request>(&self, params: &M::Params) -> Result<(), Error>
    where
        msp_rpc::Client: Sends<M>,
    {
        self.client.request::<M>(params).map(drop)
    }
    fn close(self) -> Result<(), String> {
        let Some(host) = self.host else {
            return exited_0(self.client.close());
        };
        drop(self.client);
        match host.join().expect("the host's thread") {
            (Outcome::Completed, _) => Ok(()),
            (played, stderr) => Err(format!("the host played {played:?}\n{stderr}")),
        }
    }

    fn id(session: &Self::Session) -> String {
        session.id().to_owned()
    }
    fn send<M: Request>(&self, session: &Self::Session, command: &Command<M>) -> Result<(), Error>
    where
        msp_rpc::Client: Sends<M>,
    {
        session.send(command).map(drop)
    }
    fn start_turn(
        &self,
        session: &Self::Session,
        build: impl FnOnce(String) -> TurnStartParams,
    ) -> Result<(), Error> {
        session.start_turn(build).map(drop)
    }
    fn next_approval(&self, session: &Self::Session) -> Result<PendingApproval, Error> {
        session.next_approval(WAIT)
    }
    fn decide(
        &self,
        session: &Self::Session,
        approval: &PendingApproval,
        choice: &str,
        feedback: Option<&str>,
    ) -> Result<(), Error> {
        session.decide(approval, choice, feedback).map(drop)
    }
    fn next_prompt(&self, session: &Self::Session) -> Result<PendingPrompt, Error> {
        session.next_prompt(WAIT)
    }
    fn asked(&self, session: &Self::Session, id: &str) -> Result<(), Error> {
        session.wait_for(WAIT, |fold| fold.pending_prompt(id)?.request().map(drop))
    }
    fn answer(&self, session: &Self::Session, id: &str, answers: Vec<Answer>) -> Result<(), Error> {
        session.answer(id, answers).map(drop)
    }
    fn cancel_prompt(
        &self,
        session: &Self::Session,
        id: &str,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        session.cancel_prompt(id, reason).map(drop)
    }
    fn interrupt_prompt(
        &self,
        session: &Self::Session,
        id: &str,
        answers: Vec<Answer>,
    ) -> Result<(), Error> {
        session.interrupt_prompt(id, answers).map(drop)
    }
    fn engaged(&self, session: &Self::Session, id: &str) -> Result<(), Error> {
        session.engaged(id)
    }
    fn interrupt(
        &self,
        session: &Self::Session,
        turn: Option<&str>,
        retract: bool,
    ) -> Result<(), Error> {
        session.interrupt(turn, retract).map(drop)
    }
    fn unqueue(&self, session: &Self::Session, turn: &str) -> Result<(), Error> {
        session.unqueue(turn).map(drop)
    }
    fn compact(&self, session: &Self::Session, turn: Option<&str>) -> Result<(), Error> {
        session.compact(turn).map(drop)
    }
    fn set_model(&self, session: &Self::Session, model: ModelSelection) -> Result<(), Error> {
        session.set_model(model).map(drop)
    }
    fn next_event(
        &self,
        session: &Self::Session,
        timeout: Duration,
    ) -> Result<Option<Event>, Error> {
        session.next_event_timeout(timeout)
    }
    fn turn_outcome(&self, session: &Self::Session, turn: &str) -> Result<TurnOutcome, Error> {
        session.turn(turn).completed_within(WAIT)
    }
    fn settled(&self, session: &Self::Session, id: &str) -> Result<Settlement, Error> {
        session.settled(id, WAIT)
    }
    fn resolved(&self, session: &Self::Session, id: &str) -> Result<ApprovalResolvedParams, Error> {
        session.resolved(id, WAIT)
    }
}

/// The tokio client, on a current-thread runtime: its tasks (the pump, a refill) run while
/// a call is awaited, as in a program that awaits one thing at a time.
#[cfg(feature = "tokio")]
pub struct OnTokio {
    runtime: tokio::runtime::Runtime,
    client: msp_client::tokio::Client,
}

#[cfg(feature = "tokio")]
impl Driver for OnTokio {
    type Session = msp_client::tokio::Session;

    fn connect(scenario: &Path, allow: &[&str], options: Options) -> Result<Self, Error> {
        let command = host_command(scenario, allow);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let client = runtime.block_on(msp_client::tokio::Client::spawn(&command, options))?;
        Ok(OnTokio { runtime, client })
    }
    fn start_session(
        &self,
        build: impl FnOnce(String) -> SessionStartParams,
    ) -> Result<Self::Session, Error> {
        Ok(self.runtime.block_on(self.client.start_session(build))?.0)
    }
    fn resume_session(
        &self,
        build: impl FnOnce(String) -> SessionResumeParams,
    ) -> Result<Self::Session, Error> {
        Ok(self
            .runtime
            .block_on(self.client.resume_session_with(build))?
            .0)
    }
    fn open_session(&self, id: &str) -> Self::Session {
        self.client.open_session(id)
    }
    fn request<M: Request>(&self, params: &M::Params) -> Result<(), Error>
    where
        msp_rpc::Client: Sends<M>,
    {
        self.runtime
            .block_on(self.client.request::<M>(params))
            .map(drop)
    }
    fn close(self) -> Result<(), String> {
        exited_0(self.runtime.block_on(self.client.close()))
    }

    fn id(session: &Self::Session) -> String {
        session.id().to_owned()
    }
    fn send<M: Request>(&self, session: &Self::Session, command: &Command<M>) -> Result<(), Error>
    where
        msp_rpc::Client: Sends<M>,
    {
        self.runtime.block_on(session.send(command)).map(drop)
    }
    fn start_turn(
        &self,
        session: &Self::Session,
        build: impl FnOnce(String) -> TurnStartParams,
    ) -> Result<(), Error> {
        self.runtime.block_on(session.start_turn(build)).map(drop)
    }
    fn next_approval(&self, session: &Self::Session) -> Result<PendingApproval, Error> {
        self.runtime.block_on(session.next_approval(WAIT))
    }
    fn decide(
        &self,
        session: &Self::Session,
        approval: &PendingApproval,
        choice: &str,
        feedback: Option<&str>,
    ) -> Result<(), Error> {
        let decided = session.decide(approval, choice, feedback);
        self.runtime.block_on(decided).map(drop)
    }
    fn next_prompt(&self, session: &Self::Session) -> Result<PendingPrompt, Error> {
        self.runtime.block_on(session.next_prompt(WAIT))
    }
    fn asked(&self, session: &Self::Session, id: &str) -> Result<(), Error> {
        let asked = session.wait_for(WAIT, |fold| fold.pending_prompt(id)?.request().map(drop));
        self.runtime.block_on(asked)
    }
    fn answer(&self, session: &Self::Session, id: &str, answers: Vec<Answer>) -> Result<(), Error> {
        self.runtime.block_on(session.answer(id, answers)).map(drop)
    }
    fn cancel_prompt(
        &self,
        session: &Self::Session,
        id: &str,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        let cancelled = session.cancel_prompt(id, reason);
        self.runtime.block_on(cancelled).map(drop)
    }
    fn interrupt_prompt(
        &self,
        session: &Self::Session,
        id: &str,
        answers: Vec<Answer>,
    ) -> Result<(), Error> {
        let interrupted = session.interrupt_prompt(id, answers);
        self.runtime.block_on(interrupted).map(drop)
    }
    fn engaged(&self, session: &Self::Session, id: &str) -> Result<(), Error> {
        session.engaged(id)
    }
    fn interrupt(
        &self,
        session: &Self::Session,
        turn: Option<&str>,
        retract: bool,
    ) -> Result<(), Error> {
        self.runtime
            .block_on(session.interrupt(turn, retract))
            .map(drop)
    }
    fn unqueue(&self, session: &Self::Session, turn: &str) -> Result<(), Error> {
        self.runtime.block_on(session.unqueue(turn)).map(drop)
    }
    fn compact(&self, session: &Self::Session, turn: Option<&str>) -> Result<(), Error> {
        self.runtime.block_on(session.compact(turn)).map(drop)
    }
    fn set_model(&self, session: &Self::Session, model: ModelSelection) -> Result<(), Error> {
        self.runtime.block_on(session.set_model(model)).map(drop)
    }
    fn next_event(
        &self,
        session: &Self::Session,
        timeout: Duration,
    ) -> Result<Option<Event>, Error> {
        self.runtime.block_on(session.next_event_timeout(timeout))
    }
    fn turn_outcome(&self, session: &Self::Session, turn: &str) -> Result<TurnOutcome, Error> {
        let turn = session.turn(turn);
        self.runtime.block_on(turn.completed_within(WAIT))
    }
    fn settled(&self, session: &Self::Session, id: &str) -> Result<Settlement, Error> {
        self.runtime.block_on(session.settled(id, WAIT))
    }
    fn resolved(&self, session: &Self::Session, id: &str) -> Result<ApprovalResolvedParams, Error> {
        self.runtime.block_on(session.resolved(id, WAIT))
    }
}
