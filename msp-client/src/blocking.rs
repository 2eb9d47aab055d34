//! The client on std threads, no async runtime: [`Client`], [`Session`], [`Turn`].
//!
//! Threads: msp-rpc's reader, writer and request handler (which replies the receipt of the
//! host's requests), one pump, and one for each gap's refill while it pages (a gap among what
//! came before a session was opened is paged by its opener, on the caller's thread). Every other
//! call runs on the caller's thread and waits parked. A handle that waits routes the frames
//! (notifications, and requests where they came among them) to their session's fold itself,
//! one holder at a time; the pump does it while no handle has for a moment (the crate's
//! `pump.rs` says who, and why).

use std::collections::HashSet;
use std::io::{Read, Write};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::task::Poll;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use msp_rpc::blocking::Connection;
use msp_rpc::{CloseReason, Command, Handshake, HostCommand, HostExit, RpcError};
use msp_session::{Fold, ItemEntry, PendingApproval, PendingPrompt, Stage};
use msp_types::protocol::methods;
use msp_types::rpc::{ClientMethod, Request};
use msp_types::{
    ApprovalDecideResult, ApprovalResolvedParams, ClientResult, SessionResumeParams,
    SessionResumeResult, SessionStartParams, SessionStartResult, TurnInputPart,
    TurnInterruptResult, TurnStartParams, TurnStartResult, UserInputAnswerResult,
    UserInputCancelResult,
};

use crate::asks::{Answer, Decision};
use crate::commands;
use crate::core::{Core, Event, Opened, Paging, Place, Refills, Slot, CLIENT};
use crate::listing::{self, Listing, Step};
use crate::options::{Options, Retry};
use crate::outcome::{Error, Settlement, TurnOutcome};
use crate::pending::{self, PendingCommand, Resent, Unacknowledged};
use crate::pump::{self, Pumped};
use crate::shared::{self, Asked, Deciding, OfferAgain, Offered};
use crate::stop::HandlerStop;
use crate::wait::{on_this_thread, wait};

mod handler;

pub use handler::ApprovalHandler;

/// A client of one host: the connection, its pump, the sessions opened.
///
/// Dropping it closes the connection (waiting for the host's exit, within the grace).
pub struct Client {
    link: Arc<Link>,
    pump: Option<JoinHandle<()>>,
}

/// What every handle of a client shares.
struct Link {
    connection: Connection,
    core: Arc<Core>,
    retry: Retry,
}

impl Client {
    /// Spawns the host (`muse serve`, or any command speaking MSP on stdio) and shakes hands.
    pub fn spawn(command: &HostCommand, options: Options) -> Result<Client, Error> {
        let (core, rpc, rest) = shared::split(options);
        let connection = Connection::spawn(command, rpc)?;
        Client::start(connection, core, rest)
    }

    /// Speaks to a host over `reader` and `writer` (pipes, a socket, an in-memory pipe) and
    /// shakes hands.
    pub fn over(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        options: Options,
    ) -> Result<Client, Error> {
        let (core, rpc, rest) = shared::split(options);
        let connection = Connection::new(reader, writer, rpc);
        Client::start(connection, core, rest)
    }

    fn start(connection: Connection, core: Arc<Core>, rest: shared::Rest) -> Result<Client, Error> {
        let pump = {
            let (connection, core) = (connection.clone(), core.clone());
            thread::Builder::new()
                .name("msp-client pump".into())
                .spawn(move || pump(connection, core))
                .expect("a thread can be started")
        };
        let client = Client {
            link: Arc::new(Link {
                connection,
                core,
                retry: rest.retry,
            }),
            pump: Some(pump),
        };
        client.link.connection.initialize(&rest.initialize)?;
        Ok(client)
    }

    /// The handshake's result, with its warnings.
    pub fn handshake(&self) -> &Handshake {
        self.link
            .connection
            .handshake()
            .expect("the client shook hands")
    }

    /// Whether the host's sessions outlive it (the handshake's `sessionDurability`; absent or
    /// unknown: durable). Either way a turn waited on when the connection ends ends
    /// [`TurnOutcome::HostExited`]; an ephemeral host's items in progress end unknown then
    /// and its sessions are gone, where a durable host's session can be resumed over a new
    /// connection, its commands whose outcome was not seen sent again
    /// ([`Session::pending`]).
    pub fn durable(&self) -> bool {
        shared::durable(self.link.connection.handshake())
    }

    /// The connection, for what the session API does not cover. Its requests are the
    /// client's own; a frame taken from it (`notifications`, `next_timeout`) is taken from
    /// the sessions, which then never see it (the host's requests among them).
    pub fn connection(&self) -> &Connection {
        &self.link.connection
    }

    /// Sends any request of the schema's tables and waits for its typed result.
    pub fn request<M: Request>(&self, params: &M::Params) -> Result<M::Result, Error>
    where
        msp_rpc::Client: msp_rpc::endpoint::Sends<M>,
    {
        Ok(self.link.connection.request::<M>(params)?)
    }

    /// Sends a command, its `commandId` minted for it, sent again with the same id on a
    /// timeout or a retryable error (see [`Retry`]). Params that name an id of their own
    /// (`build` ignoring the one given, to send a command again after a restart, say) make
    /// it that id's, here and wherever a `build` is taken.
    pub fn command<M: Request>(
        &self,
        build: impl FnOnce(String) -> M::Params,
    ) -> Result<M::Result, Error>
    where
        msp_rpc::Client: msp_rpc::endpoint::Sends<M>,
    {
        self.link.send(&shared::command::<M>(build))
    }

    /// Starts a session (`session/start`, the params built around the minted `commandId`):
    /// its fold is seeded from the result.
    pub fn start_session(
        &self,
        build: impl FnOnce(String) -> SessionStartParams,
    ) -> Result<(Session, SessionStartResult), Error> {
        let result = self
            .link
            .send(&shared::command::<methods::SessionStart>(build))?;
        let id = result.session.session_id.clone();
        let opened = self.link.core.open(&id, |fold| fold.seed_started(&result));
        Ok((handle(&self.link, id, opened), result))
    }

    /// Resumes session `session_id` with the host's defaults.
    pub fn resume_session(
        &self,
        session_id: &str,
    ) -> Result<(Session, SessionResumeResult), Error> {
        self.resume_session_with(|command_id| {
            SessionResumeParams::builder()
                .command_id(command_id)
                .session_id(session_id)
                .build()
        })
    }

    /// Resumes a session (`session/resume`, the params built around the minted `commandId`):
    /// its fold is seeded from the result, so pending questions and approvals are there at
    /// once, and what the host said of the session before the result is folded after it.
    /// A session this client has open already is shared as it is (see
    /// [`Client::open_session`]): its fold is not seeded again, so a program that resumes to
    /// start over (a refill that failed for good, [`Fold::is_current`] false) drops every
    /// handle of the session first, its approval handlers stopped (`ApprovalHandler::stop`).
    pub fn resume_session_with(
        &self,
        build: impl FnOnce(String) -> SessionResumeParams,
    ) -> Result<(Session, SessionResumeResult), Error> {
        let result = self
            .link
            .send(&shared::command::<methods::SessionResume>(build))?;
        Ok((seeded(&self.link, &result), result))
    }

    /// Forks a session into a new one (`session/fork`, the params built around the minted
    /// `commandId`: the session to copy, up to which turn): the new session, loaded on the
    /// host and followed on this connection, its fold seeded from the result as a resume's
    /// (a session this client has open already is shared as it is).
    pub fn fork_session(
        &self,
        build: impl FnOnce(String) -> msp_types::SessionForkParams,
    ) -> Result<(Session, msp_types::SessionForkResult), Error> {
        let result = self
            .link
            .send(&shared::command::<methods::SessionFork>(build))?;
        let seed = shared::as_resume_result(
            &result.history,
            &result.pending_requests,
            &result.session,
            &result.view_cursor,
        );
        Ok((seeded(&self.link, &seed), result))
    }

    /// Reads stored session `session_id` from outside (`session/read`): a point-in-time
    /// answer, the session neither loaded, leased nor followed. With `items`, its folded
    /// items too (the host's default leaves them out).
    pub fn read_session(
        &self,
        session_id: &str,
        items: bool,
    ) -> Result<msp_types::SessionReadResult, Error> {
        self.request::<methods::SessionRead>(&listing::read(session_id, items))
    }

    /// Lists the stored sessions (`session/list`, newest first) page by page, from the page
    /// `params` ask for (the first, unless they carry a cursor), each next page asked with the
    /// same conditions and the cursor the one before gave, until a page says it is the last
    /// (or a page fails). A page naming as the next a cursor a page was asked with already is
    /// given, and [`Error::PageRepeated`] comes after it: a host looping ends the listing; so
    /// do 16 empty pages in a row naming a next one ([`Error::PageEmpty`]).
    pub fn list_sessions(&self, params: msp_types::SessionListParams) -> SessionPages<'_> {
        SessionPages {
            client: self,
            listing: Listing::new(params),
        }
    }

    /// Opens session `session_id` without a command: an empty fold that takes what the host
    /// says of the session from now on (after a `view/subscribe`, or on a connection that
    /// already receives it). A session this client has open already is shared: the handles
    /// of both openings see one fold and take from one stream of events, and the session
    /// stays open until all of them are gone. A gap among what the host said of it before it
    /// was opened is paged on the caller's thread: its refill has ended when this returns
    /// (filled or not: [`Fold::is_current`], [`Event::Refilled`]).
    pub fn open_session(&self, session_id: &str) -> Session {
        let opened = self.link.core.open(session_id, |_| ());
        handle(&self.link, session_id.to_owned(), opened)
    }

    /// The next of the client's own events: what the host said naming no session
    /// (`usage/changed`, the experimental account and log notifications, a request of no
    /// known method, which msp-rpc refused), each an [`Event::Folded`] in the order routed,
    /// its outcome `Ignored`, `Unrecognized` or `Malformed` (no session's fold takes it); the
    /// latest 1,024 at most are kept (as many as [`Options::events`] when fewer; with none,
    /// the waits end only at the close, with `None`); the last, once the connection closed,
    /// is [`Event::Closed`]; then `None`.
    pub fn next_event(&self) -> Option<Event> {
        self.link.next_event(CLIENT)
    }

    /// The next of the client's own events within `timeout`; `Err` when none came.
    pub fn next_event_timeout(&self, timeout: Duration) -> Result<Option<Event>, Error> {
        self.link.next_event_within(CLIENT, timeout)
    }

    /// The client's own events as an iterator, blocking for each, ending when the
    /// connection closes.
    pub fn events(&self) -> impl Iterator<Item = Event> + '_ {
        std::iter::from_fn(|| self.next_event())
    }

    /// Waits until the connection ends, and says why: a host that exited gives its exit,
    /// classified, with its retry advice ([`CloseReason::HostExited`]), to restart it by; a
    /// host that closed its output and lives on (past msp-rpc's `EXIT_LINGER`) gives
    /// [`CloseReason::PeerClosed`], and its exit comes from [`Client::close`]. Every
    /// session's waits end alike (a session's refill in flight first folds what it held). A
    /// connection closed by this side (`connection().close()`) ends it too, with the exit
    /// that close collected.
    pub fn closed(&self) -> CloseReason {
        let core = &self.link.core;
        let mut ended = core.end_wait();
        wait(None, |cx| ended.poll(cx)).expect("no deadline")
    }

    /// Closes the connection and waits for the host's exit (within the grace). A pump that
    /// panicked passes its panic on here.
    pub fn close(mut self) -> Option<HostExit> {
        let (exit, pumped) = self.shut();
        if let Err(panic) = pumped {
            std::panic::resume_unwind(panic);
        }
        exit
    }

    /// Closes the connection and joins the pump: the host's exit, and how the pump ended.
    fn shut(&mut self) -> (Option<HostExit>, thread::Result<()>) {
        let exit = self.link.connection.close();
        let pumped = self.pump.take().map_or(Ok(()), JoinHandle::join);
        (exit, pumped)
    }
}

/// The pages of a `session/list` listing ([`Client::list_sessions`]): each asked when
/// taken, the listing over after the last page or the first error (see
/// [`Client::list_sessions`]).
#[must_use = "a page is asked only when taken"]
pub struct SessionPages<'a> {
    client: &'a Client,
    listing: Listing,
}

impl SessionPages<'_> {
    /// The next page; `None` once the last came or a page failed.
    pub fn next_page(&mut self) -> Option<Result<msp_types::SessionListResult, Error>> {
        let page = match self.listing.step()? {
            Step::Ask(params) => self.client.request::<methods::SessionList>(params),
            Step::Fail(error) => return Some(Err(error)),
        };
        Some(self.listing.turn(page))
    }
}

impl Iterator for SessionPages<'_> {
    type Item = Result<msp_types::SessionListResult, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_page()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if self.pump.is_some() {
            // A pump's panic is not passed on from a drop (it may run while unwinding).
            let _ = self.shut();
        }
    }
}

impl Link {
    /// The next event of the slot at `place` (a session's, or the client's own).
    fn next_event(&self, place: Place) -> Option<Event> {
        self.wait(place, None, Slot::next_event).flatten()
    }

    /// [`Link::next_event`] within `timeout`; `Err` when none came.
    fn next_event_within(&self, place: Place, timeout: Duration) -> Result<Option<Event>, Error> {
        let deadline = Instant::now().checked_add(timeout);
        self.wait(place, deadline, Slot::next_event)
            .ok_or(Error::TimedOut {
                what: "an event",
                timeout,
            })
    }

    /// Waits until `check` finds what it looks for in the slot of the session at `place`,
    /// taking and routing frames meanwhile when nobody else does (see `pump.rs`); `None` at
    /// `deadline`.
    fn wait<T>(
        &self,
        place: Place,
        deadline: Option<Instant>,
        mut check: impl FnMut(&mut Slot, Option<&CloseReason>) -> Option<T>,
    ) -> Option<T> {
        let mut handle = self.core.handle_wait(place);
        wait(deadline, |cx| {
            pump::poll_handle(
                &mut handle,
                &self.connection,
                deadline,
                cx,
                &mut check,
                |refills| refill_apart(&self.connection, &self.core, refills),
            )
        })
    }

    fn send<M: Request>(&self, command: &Command<M>) -> Result<M::Result, Error>
    where
        msp_rpc::Client: msp_rpc::endpoint::Sends<M>,
    {
        self.attempts(command).map_err(|failed| failed.error)
    }

    /// Sends `command` until an attempt is acknowledged or [`Retry`] sends it no more.
    fn attempts<M: Request>(&self, command: &Command<M>) -> Result<M::Result, Unacknowledged>
    where
        msp_rpc::Client: msp_rpc::endpoint::Sends<M>,
    {
        let (mut attempt, mut timed_out) = (1, false);
        loop {
            match self.connection.command(command) {
                Ok(result) => {
                    return shared::echoed(command, &result)
                        .map(|()| result)
                        .map_err(|error| Unacknowledged { error, timed_out });
                }
                Err(error) => {
                    timed_out |= matches!(error, RpcError::TimedOut { .. });
                    match self.retry.again(attempt, &error) {
                        Some(wait) => {
                            tracing::debug!(%error, method = M::METHOD, attempt, "sent again");
                            thread::sleep(wait);
                            attempt += 1;
                        }
                        None => {
                            let error = error.into();
                            return Err(Unacknowledged { error, timed_out });
                        }
                    }
                }
            }
        }
    }
}

/// The session `result` opens (a resume's, or a fork's or side chat's as one), its fold
/// seeded from it and its refill started; a session this client has open already is shared
/// as it is.
fn seeded(link: &Arc<Link>, result: &SessionResumeResult) -> Session {
    let id = result.session.session_id.clone();
    let opened = link.core.open(&id, |fold| fold.seed_resumed(result));
    link.core.resumed(&id, result);
    handle(link, id, opened)
}

/// The handle of session `id`, just `opened`; then the gap among what came before it opened
/// paged on the caller's thread (the handle first: should paging panic, the opening goes
/// with it).
fn handle(link: &Arc<Link>, id: String, opened: Opened) -> Session {
    let session = Session(Arc::new(SessionLink {
        id,
        place: opened.place,
        link: link.clone(),
    }));
    page(
        &link.connection,
        Paging::new(link.core.clone(), opened.refills),
    );
    session
}

/// Pages each of `refills` on a thread of its own, so that whoever routed the gap (the pump,
/// or a waiting handle holding its role) goes on routing, and a wait ends at its deadline,
/// while the session's inputs are held for the refill; nor does one session's refill wait
/// for another's. Gaps are rare: a thread each is cheap.
fn refill_apart(connection: &Connection, core: &Arc<Core>, refills: Refills) {
    for refilling in refills {
        let paging = Paging::new(core.clone(), vec![refilling]);
        let connection = connection.clone();
        let spawned = thread::Builder::new()
            .name("msp-refill".into())
            .spawn(move || page(&connection, paging));
        if let Err(error) = spawned {
            // Dropped unpaged, the refill is finished as failed.
            tracing::warn!(%error, "no thread to page a refill");
        }
    }
}

/// Pages each refill, and those the inputs held meanwhile call for.
fn page(connection: &Connection, mut paging: Paging) {
    while let Some((refill, wanted)) = paging.next() {
        // Asked and taken only while wanted: past that its pages would be dropped, and the
        // walk ends overflowed (or unheeded).
        while let Some(page) = refill.next_request().filter(|_| wanted.get()) {
            let result = connection.request::<methods::ViewPage>(&page);
            if !wanted.get() {
                break;
            }
            match result {
                Ok(result) => refill.page(result),
                Err(error) => refill.failed(shared::code(&error), error.to_string()),
            }
        }
        paging.finish();
    }
}

/// Routes the frames no waiting handle takes (see `pump.rs`) until the connection closes; a
/// gap's refill pages on a thread of its own.
fn pump(connection: Connection, core: Arc<Core>) {
    // However the pump stops (a panic of a routing), every wait ends with it: else those on
    // sessions no handle routes for would wait for ever.
    let _ending = shared::Ending {
        connection: &connection,
        core: &core,
    };
    let (mut seen, mut again) = (0, None);
    on_this_thread(|cx| loop {
        match pump::poll_pump(&core, &connection, &mut seen, &mut again, cx) {
            Poll::Ready(Pumped::Routed(role, refills)) => {
                drop(role);
                refill_apart(&connection, &core, refills);
            }
            Poll::Ready(Pumped::Ended) => break,
            // An unpark since the look makes the park return at once: no wake-up is lost.
            Poll::Pending => match again {
                Some(look) => thread::park_timeout(look),
                None => thread::park(),
            },
        }
    });
}

/// A session: its fold, its events, its commands. Cheap to clone; the session is forgotten
/// when the last clone of every opening of it is dropped.
#[derive(Clone)]
pub struct Session(Arc<SessionLink>);

struct SessionLink {
    id: String,
    /// Where the core keeps the session, while this opening lasts.
    place: Place,
    link: Arc<Link>,
}

impl Drop for SessionLink {
    fn drop(&mut self) {
        self.link.core.forget(&self.id);
    }
}

impl Session {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.0.id
    }

    fn core(&self) -> &Arc<Core> {
        &self.0.link.core
    }

    /// Reads the fold: items, turns, pending approvals and questions, state, gaps. `read`
    /// runs under the client's lock, which every call of the client takes: it must not call
    /// the client (nor drop its last handle of a session or turn, nor stop or drop an
    /// approval handler), or it waits for itself.
    pub fn read<T>(&self, read: impl FnOnce(&Fold) -> T) -> T {
        self.core().read(&self.0.id, read)
    }

    /// The next event, in the order routed; the last, once the connection closed, is
    /// [`Event::Closed`] (why, and the items it left ended unknown); then `None`.
    pub fn next_event(&self) -> Option<Event> {
        self.0.link.next_event(self.0.place)
    }

    /// The next event within `timeout`; `Err` when none came.
    pub fn next_event_timeout(&self, timeout: Duration) -> Result<Option<Event>, Error> {
        self.0.link.next_event_within(self.0.place, timeout)
    }

    /// The events as an iterator, blocking for each, ending when the connection closes.
    pub fn events(&self) -> impl Iterator<Item = Event> + '_ {
        std::iter::from_fn(|| self.next_event())
    }

    fn until<T>(
        &self,
        timeout: Option<Duration>,
        what: &'static str,
        mut check: impl FnMut(&Fold, &Asked) -> Option<T>,
    ) -> Result<T, Error> {
        // A timeout past what an `Instant` can hold is none.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        match self.0.link.wait(self.0.place, deadline, |slot, ended| {
            slot.check_fold(ended, &mut check)
        }) {
            Some(Ok(found)) => Ok(found),
            Some(Err(reason)) => Err(Error::Closed(reason)),
            None => Err(Error::TimedOut {
                what,
                timeout: timeout.unwrap_or_default(),
            }),
        }
    }

    /// Waits until `check` finds what it looks for in the fold (checked now, then each time
    /// inputs were routed to the session); `Err` at the timeout or once the connection
    /// closed. Inputs routed together are checked together: `check` sees the fold after the
    /// last of them, so a state one of them passed through (an item in progress that the
    /// next completed) may never be seen. Follow changes through the session's events.
    /// `check` runs under the client's lock: it must not call the client (a handle's method,
    /// [`HandlerStop::stop`]).
    pub fn wait_for<T>(
        &self,
        timeout: Option<Duration>,
        mut check: impl FnMut(&Fold) -> Option<T>,
    ) -> Result<T, Error> {
        self.until(timeout, "the condition", |fold, _| check(fold))
    }

    /// Waits for a question with its questions (pending now, or the next to come). The same
    /// question comes back until this client answers, cancels or clarifies it, or it
    /// settles: a loop that takes it and leaves it spins without waiting. One whose answer
    /// failed (refused, not sent, not acknowledged) comes back too. Once the connection
    /// closed, [`Error::Closed`]: nothing could be sent about one.
    pub fn next_prompt(&self, timeout: Option<Duration>) -> Result<PendingPrompt, Error> {
        let found = self.until(timeout, "a question", |fold, asked| asked.next_prompt(fold))?;
        shared::to_act_on(found, self.0.link.connection.close_reason())
    }

    /// Waits for an approval whose current stage this client has not decided yet. The same
    /// stage comes back until this client decides it or the host moves on: a loop that
    /// takes it and leaves it spins without waiting ([`Turn::completed_deciding`] can leave
    /// a stage and wait for the next). Once the connection closed, [`Error::Closed`].
    pub fn next_approval(&self, timeout: Option<Duration>) -> Result<PendingApproval, Error> {
        let found = self.until(timeout, "an approval", |fold, asked| {
            asked.next_approval(fold, &HashSet::new())
        })?;
        shared::to_act_on(found, self.0.link.connection.close_reason())
    }

    /// Starts a turn with `input` (`turn/start`).
    pub fn send_user_turn(
        &self,
        input: impl IntoIterator<Item = TurnInputPart>,
    ) -> Result<Turn, Error> {
        self.start_turn(commands::user_turn(self.id(), input.into_iter().collect()))
    }

    /// Starts a turn (`turn/start`, the params built around the minted `commandId`).
    pub fn start_turn(&self, build: impl FnOnce(String) -> TurnStartParams) -> Result<Turn, Error> {
        let command = shared::command::<methods::TurnStart>(build);
        self.start(command)
    }

    /// Sends pending `turn/start` `pending` again (its `commandId`, its params), in the
    /// session it was sent in, resumed on this connection: the host answers with its first
    /// decision if it still knows the command, and the turn it names is followed as
    /// [`Session::start_turn`]'s (a turn the resume said ended comes back ended:
    /// [`TurnOutcome::EndedBeforeResume`]). A resume says so of its `lastTurn`, and from a
    /// snapshot of each turn it shows neither running nor queued: after a resume without a
    /// snapshot, a turn that ended before it but not last is not known to have ended, and its
    /// [`Turn::completed`] waits until the connection ends. A replay acknowledged with another
    /// turn than the first acknowledgement named is [`Error::ReplayDiffers`].
    pub fn resend_turn(&self, pending: &PendingCommand) -> Result<Turn, Error> {
        let command = pending.turn_start(self.id())?;
        if pending.may_have_applied() {
            self.core().doubted(self.id(), command.command_id());
        }
        let turn = self.start(command)?;
        pending.replayed_as(turn.id())?;
        Ok(turn)
    }

    /// Sends pending command `pending` again (its `commandId`, its params), whatever its
    /// method, in the session it was sent in, resumed on this connection: a `turn/start` as
    /// [`Session::resend_turn`] sends it (its turn to follow), any other as
    /// [`Session::send`] of [`PendingCommand::command`] typed by its method, its
    /// acknowledgement given back typed ([`ClientResult`]). [`Session::pending`]'s
    /// commands, each given to this in order, are every command of the old connection whose
    /// outcome was not seen. Whether it may have been applied carries over: refused for now
    /// at every attempt here, such a command stays pending.
    pub fn resend(&self, pending: &PendingCommand) -> Result<Resent<Turn>, Error> {
        if pending.method() == methods::TurnStart::METHOD {
            return self.resend_turn(pending).map(Resent::Turn);
        }
        pending.sent_in(self.id())?;
        if pending.may_have_applied() {
            self.core().doubted(self.id(), pending.command_id());
        }
        struct Again<'a>(&'a Session, &'a PendingCommand);
        impl methods::WithMethod for Again<'_> {
            type Output = Result<ClientResult, Error>;
            fn call<M: ClientMethod>(self) -> Self::Output {
                let command = self.1.command::<M>()?;
                // A prompt's answer is not offered again while in flight, as the first time.
                let result = match self.1.prompt() {
                    Some(prompt) => self.0.settle(prompt, &command)?,
                    None => self.0.send(&command)?,
                };
                pending::acknowledged::<M>(&result)
            }
        }
        let sent = methods::with_method(pending.method(), Again(self, pending));
        let missing = || pending.misdirected("not a method of the schema's table".to_owned());
        Ok(Resent::Acknowledged(sent.ok_or_else(missing)??))
    }

    /// The commands sent in this session whose outcome this client has not seen, in the
    /// order sent (see [`PendingCommand`]): to send again after the host went away (none
    /// when it was ephemeral: nothing of the session outlived it).
    ///
    /// ```no_run
    /// use msp_client::blocking::Client;
    /// use msp_client::{render, Options, Resent};
    /// use msp_rpc::HostCommand;
    ///
    /// # fn main() -> Result<(), msp_client::Error> {
    /// # let session_id = "0198f0aa-1111-7000-8000-0000000000aa";
    /// let options = || Options::new("demo", "0.1.0");
    /// let client = Client::spawn(&HostCommand::muse(), options())?;
    /// let (session, _) = client.resume_session(session_id)?;
    /// let _turn = session.send_user_turn([render::text("Run the tests")]);
    /// // The host went away before the turn ended (or before it acknowledged it): a new
    /// // host, the session resumed, what had no seen outcome sent again with its commandId.
    /// let pending = session.pending();
    /// let client = Client::spawn(&HostCommand::muse(), options())?;
    /// let (session, _) = client.resume_session(session_id)?;
    /// for command in &pending {
    ///     match session.resend(command)? {
    ///         Resent::Turn(turn) => println!("turn: {}", turn.completed()),
    ///         Resent::Acknowledged(ack) => println!("{}: {ack:?}", command.method()),
    ///         _ => {}
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn pending(&self) -> Vec<PendingCommand> {
        let connection = &self.0.link.connection;
        if connection.close_reason().is_some() && !shared::durable(connection.handshake()) {
            // An ephemeral host's sessions did not outlive it.
            return Vec::new();
        }
        self.core().pending(&self.0.id)
    }

    fn start(&self, command: Command<methods::TurnStart>) -> Result<Turn, Error> {
        let following = self.core().follow_command(&self.0.id, command.command_id());
        let result = self.send(&command);
        let (result, follower) = following.started(result)?;
        Ok(Turn {
            session: self.clone(),
            id: result.turn_id.clone(),
            result: Some(result),
            follower,
        })
    }

    /// The turn `turn_id` (started elsewhere, or found in the fold), to follow and wait on:
    /// its items from those the fold holds already. Each handle follows them on its own
    /// (every change reaches every handle), until it is dropped.
    pub fn turn(&self, turn_id: &str) -> Turn {
        Turn {
            session: self.clone(),
            id: turn_id.to_owned(),
            result: None,
            follower: self.core().follow_turn(&self.0.id, turn_id),
        }
    }

    /// Interrupts the running turn (`turn/interrupt`); `retract` asks to take it back.
    pub fn interrupt(
        &self,
        turn_id: Option<&str>,
        retract: bool,
    ) -> Result<TurnInterruptResult, Error> {
        self.send(&commands::interrupt(self.id(), turn_id, retract))
    }

    /// Answers question `user_input_id` (`userInput/answer`), each of its questions once,
    /// with labels it offers (or free text); anything else, a question left out among it, is
    /// refused before sending ([`AskError`](crate::AskError)).
    pub fn answer(
        &self,
        user_input_id: &str,
        answers: impl IntoIterator<Item = Answer>,
    ) -> Result<UserInputAnswerResult, Error> {
        let answers = answers.into_iter().collect();
        let command = commands::answer(self.core(), self.id(), user_input_id, answers)?;
        self.settle(user_input_id, &command)
    }

    /// Cancels question `user_input_id` (`userInput/cancel`).
    pub fn cancel_prompt(
        &self,
        user_input_id: &str,
        reason: Option<&str>,
    ) -> Result<UserInputCancelResult, Error> {
        let command = commands::cancel(self.core(), self.id(), user_input_id, reason)?;
        self.settle(user_input_id, &command)
    }

    /// Adds input to the running turn `expected_turn_id` (`turn/steer`).
    pub fn steer(
        &self,
        expected_turn_id: &str,
        input: impl IntoIterator<Item = TurnInputPart>,
    ) -> Result<msp_types::TurnSteerResult, Error> {
        let command = commands::steer(self.id(), expected_turn_id, input.into_iter().collect());
        self.send(&command)
    }
    /// Takes queued turn `turn_id` out of the queue (`turn/unqueue`).
    pub fn unqueue(&self, turn_id: &str) -> Result<msp_types::TurnUnqueueResult, Error> {
        let command = commands::unqueue(self.id(), turn_id);
        self.send(&command)
    }
    /// Chooses the model of the session's next model calls (`session/setModel`; the
    /// choice is durable): a `modelId` `model/list` gives, with its provider or profile.
    pub fn set_model(
        &self,
        model: msp_types::ModelSelection,
    ) -> Result<msp_types::SessionSetModelResult, Error> {
        self.send(&commands::set_model(self.id(), model))
    }
    /// Switches the session to one of the host's approval modes (`session/setApprovalMode`).
    pub fn set_approval_mode(
        &self,
        mode: msp_types::ApprovalMode,
    ) -> Result<msp_types::SessionSetApprovalModeResult, Error> {
        self.send(&commands::set_approval_mode(self.id(), mode))
    }
    /// Sets the session's default reasoning effort (`session/setReasoningEffort`; a turn's
    /// own overrides it).
    pub fn set_reasoning_effort(
        &self,
        effort: msp_types::ReasoningEffort,
    ) -> Result<msp_types::SessionSetReasoningEffortResult, Error> {
        self.send(&commands::set_reasoning_effort(self.id(), effort))
    }
    /// Sets or changes the session's durable name (`session/rename`).
    pub fn rename(&self, name: &str) -> Result<msp_types::SessionRenameResult, Error> {
        self.send(&commands::rename(self.id(), name))
    }
    /// Compacts the context of turn `turn_id`, or of the one the host picks
    /// (`session/compact`): it runs in the background, `noop` when there is nothing to do.
    pub fn compact(&self, turn_id: Option<&str>) -> Result<msp_types::SessionCompactResult, Error> {
        self.send(&commands::compact(self.id(), turn_id))
    }
    /// Asks the host to release the session (`session/leave`), `stop` stopping its work in
    /// progress too; `session/leaveCompleted` says how it went.
    pub fn leave(&self, stop: bool) -> Result<msp_types::SessionLeaveResult, Error> {
        self.send(&commands::leave(self.id(), stop))
    }
    /// Opens an empty side-chat session from this one (`session/sideChat`): the new
    /// session, followed on this connection, its fold seeded from the result. The command
    /// is this session's: when its acknowledgement was lost, [`Session::resend`] gives it
    /// back after a reconnect, and [`Client::resume_session`] of the session it names
    /// follows that.
    pub fn side_chat(&self) -> Result<(Session, msp_types::SessionSideChatResult), Error> {
        let result = self.send(&commands::side_chat(self.id()))?;
        let seed = shared::as_resume_result(
            &result.history,
            &result.pending_requests,
            &result.session,
            &result.view_cursor,
        );
        Ok((seeded(&self.0.link, &seed), result))
    }
    /// Sets the session's goal (`goal/set`).
    pub fn goal_set(&self, objective: &str) -> Result<msp_types::GoalCommandResult, Error> {
        let command = commands::goal_set(self.id(), objective);
        self.send(&command)
    }
    /// Rewords the session's goal (`goal/edit`).
    pub fn goal_edit(&self, objective: &str) -> Result<msp_types::GoalCommandResult, Error> {
        let command = commands::goal_edit(self.id(), objective);
        self.send(&command)
    }
    /// Pauses the session's goal (`goal/pause`).
    pub fn goal_pause(&self) -> Result<msp_types::GoalCommandResult, Error> {
        let command = commands::goal_pause(self.id());
        self.send(&command)
    }
    /// Resumes the session's paused goal (`goal/resume`).
    pub fn goal_resume(&self) -> Result<msp_types::GoalCommandResult, Error> {
        let command = commands::goal_resume(self.id());
        self.send(&command)
    }
    /// Clears the session's goal (`goal/clear`).
    pub fn goal_clear(&self) -> Result<msp_types::GoalCommandResult, Error> {
        let command = commands::goal_clear(self.id());
        self.send(&command)
    }
    /// Stops the turn waiting on question `user_input_id` (`userInput/interrupt`), passing
    /// on `answers` (checked as [`Session::answer`] checks them, though questions may be left
    /// out), or none.
    pub fn interrupt_prompt(
        &self,
        user_input_id: &str,
        answers: impl IntoIterator<Item = Answer>,
    ) -> Result<msp_types::UserInputInterruptResult, Error> {
        let command = commands::interrupt_prompt(
            self.core(),
            self.id(),
            user_input_id,
            answers.into_iter().collect(),
        )?;
        self.settle(user_input_id, &command)
    }
    /// Replies to question `user_input_id` in the user's own words, in place of its options
    /// (`userInput/clarify`: the model reads the reply and decides again); a `content` over
    /// [`FREE_TEXT_CHARS`](crate::FREE_TEXT_CHARS) characters is refused, nothing sent.
    pub fn clarify(
        &self,
        user_input_id: &str,
        clarification: msp_types::UserInputClarification,
    ) -> Result<msp_types::UserInputClarifyResult, Error> {
        let command = commands::clarify(self.core(), self.id(), user_input_id, clarification)?;
        self.settle(user_input_id, &command)
    }
    /// Tells the host the user started on timed question `user_input_id`, so that its
    /// countdown stops (`userInput/engaged`, a notification).
    pub fn engaged(&self, user_input_id: &str) -> Result<(), Error> {
        let params = msp_types::UserInputEngagedParams::builder()
            .session_id(self.id())
            .user_input_id(user_input_id)
            .build();
        Ok(self
            .0
            .link
            .connection
            .notify::<msp_types::protocol::notifications::UserInputEngaged>(&params)?)
    }

    /// Follows the session's view on this connection (`view/subscribe`): the events after
    /// cursor `after` replayed up to the head, then live (for `None`, from now without
    /// replay). They reach the fold and the events, a gap among them refilled for you; the
    /// result names the head when the subscription was attached. What a program watching
    /// a session it did not start or resume calls.
    pub fn subscribe(&self, after: Option<&str>) -> Result<msp_types::ViewSubscribeResult, Error> {
        let mut params = msp_types::ViewSubscribeParams::builder()
            .session_id(self.id())
            .build();
        params.after = after.map(str::to_owned);
        let connection = &self.0.link.connection;
        Ok(connection.request::<methods::ViewSubscribe>(&params)?)
    }

    /// Stops following the session's view on this connection (`view/unsubscribe`; the host
    /// keeps the session loaded). The fold keeps what it folded, and nothing more of the
    /// session reaches it but what was sent before the host took the request: for every
    /// handle of the session, and a wait with no timeout (a turn's end, a settlement) then
    /// ends only with the connection, or once [`Session::subscribe`] follows it again.
    pub fn unsubscribe(&self) -> Result<msp_types::ViewUnsubscribeResult, Error> {
        let params = msp_types::ViewUnsubscribeParams::builder()
            .session_id(self.id())
            .build();
        let connection = &self.0.link.connection;
        Ok(connection.request::<methods::ViewUnsubscribe>(&params)?)
    }

    /// Waits for question `user_input_id` to settle: how, and who settled it.
    pub fn settled(
        &self,
        user_input_id: &str,
        timeout: Option<Duration>,
    ) -> Result<Settlement, Error> {
        self.until(timeout, "the settlement", |fold, asked| {
            asked.settlement(fold, user_input_id)
        })
    }

    /// Decides the stage `approval` shows (as [`Session::next_approval`] or
    /// [`Turn::next_approval`] gave it) with a choice that stage offers, and feedback only
    /// where that choice accepts it (`approval/decide`). The decision names that stage: when
    /// the host moved past it meanwhile, it refuses the decision as stale
    /// (`approvalRequirementStale`) rather than apply it to a stage the program never saw.
    /// An approval no longer pending in the session (resolved meanwhile, or another
    /// session's) is refused, nothing sent
    /// ([`AskError::UnknownApproval`](crate::AskError::UnknownApproval)).
    /// While the decision is in flight the stage is not offered (to a handler or a wait of
    /// this client), nor once it was accepted, nor when it failed because the stage is gone
    /// ([`Error::stage_gone`]: another decision won, the host moved past it; no failure of
    /// the program's); it is again when the decision failed otherwise.
    pub fn decide(
        &self,
        approval: &PendingApproval,
        choice_id: &str,
        feedback: Option<&str>,
    ) -> Result<ApprovalDecideResult, Error> {
        let (command, requirement) =
            commands::decide(self.core(), self.id(), approval, choice_id, feedback)?;
        // Offered again when the decision fails leaving the stage open (or the send unwinds).
        let stage = Offered::Stage(approval.id(), &requirement);
        let mut again = OfferAgain::hide(self.core(), self.id(), stage);
        let result = self.send(&command);
        again.armed = result.as_ref().is_err_and(|error| !error.stage_gone());
        result
    }

    /// Decides each stage of each approval of the session with `decide` until the connection
    /// closes, and then returns why it closed: the approvals pending now and those of every
    /// turn to come, each stage offered once (again only with the choices the host changed
    /// it to; `None` leaves it undecided, as
    /// [`Turn::completed_deciding`] does), nothing once the connection closed. A resumed
    /// session's approval known from the resume alone, before the host sends its request
    /// again, comes without its request ([`PendingApproval::request`]: no tool, item or
    /// turn). A decision names the stage it was offered at: one another decision won or the
    /// host moved past meanwhile is not an error, and the next stage is offered when it
    /// comes; a stage whose choices the host changed meanwhile (refused as
    /// `approvalChoiceInvalid`) is offered again with them once the change is folded,
    /// whether before or after the refusal was read (and not before: a host that refuses
    /// a choice it offers leaves that stage undecided, the others still handled). A decision
    /// the stage does not offer ends it with [`Error::Ask`], nothing sent, and any other
    /// failure of `approval/decide` with its error. The session's handler: on
    /// a thread of its own it decides while the program starts turns and follows them
    /// ([`Session::handle_approvals`] starts that thread); closing the client ends it
    /// ([`Session::decide_approvals_until`] ends at a [`HandlerStop`]).
    pub fn decide_approvals(
        &self,
        decide: impl FnMut(&PendingApproval, Stage<'_>) -> Option<Decision>,
    ) -> Result<CloseReason, Error> {
        match self.deciding(None, None, decide)? {
            Some(reason) => Ok(reason),
            None => unreachable!("a session's approvals end only with the connection"),
        }
    }

    /// [`Session::decide_approvals`] until `stop` is stopped (`Ok(None)`, after the decision
    /// being sent, if any) or the connection closes (`Ok(Some)`, why). The stages offered
    /// and left undecided stay pending: a handler started after this one is offered them
    /// again, so a session's handler is replaced by stopping it and starting another.
    pub fn decide_approvals_until(
        &self,
        stop: &HandlerStop,
        decide: impl FnMut(&PendingApproval, Stage<'_>) -> Option<Decision>,
    ) -> Result<Option<CloseReason>, Error> {
        self.deciding(None, Some(stop), decide)
    }

    /// An approval handler's loop: the stages of turn `turn_id`'s approvals, or for `None`
    /// of every approval of the session, offered to `decide` once each (again with changed
    /// choices); `Ok(None)` once the
    /// turn is over or `stop` stopped, `Ok(Some)` once the connection closed.
    fn deciding(
        &self,
        turn_id: Option<&str>,
        stop: Option<&HandlerStop>,
        mut decide: impl FnMut(&PendingApproval, Stage<'_>) -> Option<Decision>,
    ) -> Result<Option<CloseReason>, Error> {
        let mut deciding = Deciding::new(stop, self.core(), self.id());
        loop {
            let next = self.until(None, "an approval", |fold, asked| {
                deciding.next(fold, asked, turn_id)
            });
            let closed = self.0.link.connection.close_reason();
            let approval = match Deciding::offer(next, closed)? {
                ControlFlow::Continue(approval) => approval,
                ControlFlow::Break(end) => return Ok(end),
            };
            let stage = approval
                .stage()
                .expect("the wait takes approvals with a stage");
            let Some(decision) = decide(&approval, stage) else {
                deciding.pass(&approval);
                continue;
            };
            let decided = self.decide(&approval, decision.choice_id(), decision.feedback());
            if let Err(error) = decided {
                if let Some(reason) = deciding.failed(&approval, error)? {
                    return Ok(Some(reason));
                }
            }
        }
    }

    /// Waits for approval `approval_id` to be resolved.
    pub fn resolved(
        &self,
        approval_id: &str,
        timeout: Option<Duration>,
    ) -> Result<ApprovalResolvedParams, Error> {
        self.until(timeout, "the resolution", |fold, _| {
            fold.resolved_approvals()
                .iter()
                .find(|r| r.approval_id == approval_id)
                .cloned()
        })
    }

    /// Sends a command settling prompt `user_input_id`: while it is in flight, the prompt is
    /// no longer offered ([`Session::next_prompt`], [`Turn::next_prompt`]); when the host
    /// refuses it, or it was not sent or not acknowledged, the prompt is offered
    /// again.
    fn settle<M: Request>(
        &self,
        user_input_id: &str,
        command: &Command<M>,
    ) -> Result<M::Result, Error>
    where
        msp_rpc::Client: msp_rpc::endpoint::Sends<M>,
    {
        // Offered again when the host refuses it (or the send unwinds).
        let prompt = Offered::Prompt(user_input_id);
        let mut again = OfferAgain::hide(self.core(), self.id(), prompt);
        let result = self.send(command);
        again.armed = result.as_ref().is_err_and(shared::prompt_open_again);
        result
    }

    /// Sends a command of this session, sent again with the same `commandId` on a timeout or
    /// a retryable error; a command sent before whose acknowledgement differs now is
    /// [`Error::ReplayDiffers`]. Failed, it stays in [`Session::pending`] while it may have
    /// been applied (see [`PendingCommand`]).
    pub fn send<M: Request>(&self, command: &Command<M>) -> Result<M::Result, Error>
    where
        msp_rpc::Client: msp_rpc::endpoint::Sends<M>,
    {
        if let Some(reason) = self.0.link.connection.close_reason() {
            // Never sent, so not pending either.
            return Err(RpcError::Closed(reason).into());
        }
        self.core().sent(&self.0.id, command)?;
        let result = match self.0.link.attempts(command) {
            Ok(result) => result,
            Err(failed) => {
                self.core()
                    .failed(&self.0.id, command.command_id(), &failed);
                return Err(failed.error);
            }
        };
        self.core()
            .acknowledged::<M>(&self.0.id, command.command_id(), &result)?;
        Ok(result)
    }
}

/// A turn: its items as they change, its end.
pub struct Turn {
    session: Session,
    id: String,
    result: Option<TurnStartResult>,
    /// This handle's follower of the turn's items, in the session's slot.
    follower: usize,
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.session
            .core()
            .unfollow(&self.session.0.id, self.follower);
    }
}

impl Turn {
    /// The turn's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The `turn/start` acknowledgement (started, queued, ...), for a turn this handle
    /// started.
    pub fn started(&self) -> Option<&TurnStartResult> {
        self.result.as_ref()
    }

    /// The next change to one of the turn's items, as the item stands when taken (its text
    /// built by the deltas so far: changes not taken yet coalesce, the deltas themselves are
    /// in the session's events); `None` once the turn is over and every change was taken, or
    /// once the connection ended.
    /// Each handle of the turn takes every change on its own.
    pub fn next_item(&self) -> Option<ItemEntry> {
        let session = &self.session.0;
        session
            .link
            .wait(session.place, None, |slot, ended| {
                slot.next_turn_item(self.follower, &self.id, ended)
            })
            .flatten()
    }

    /// The changes to the turn's items, as an iterator (see [`Turn::next_item`]).
    pub fn items(&self) -> impl Iterator<Item = ItemEntry> + '_ {
        std::iter::from_fn(|| self.next_item())
    }

    /// Waits for the turn's end: ended (completed, failed, cancelled), unqueued, retracted,
    /// ended before the session was resumed ([`TurnOutcome::EndedBeforeResume`]), or unknown
    /// after the host went away.
    pub fn completed(&self) -> TurnOutcome {
        self.completed_within(None)
            .expect("no deadline, no timeout")
    }

    /// Waits for the turn's end within `timeout`.
    pub fn completed_within(&self, timeout: Option<Duration>) -> Result<TurnOutcome, Error> {
        match self
            .session
            .until(timeout, "the turn's end", |fold, asked| {
                TurnOutcome::of(fold, &self.id, asked.ended_before.get(&self.id))
            }) {
            Err(Error::Closed(reason)) => Ok(TurnOutcome::HostExited(reason)),
            other => other,
        }
    }

    /// The next approval of this turn whose current stage this client has not decided;
    /// `None` once the turn is over (one wait for both, so a turn settled without asking is
    /// seen at once). An approval known from a resume alone, before the host sends its
    /// request again, names no turn ([`PendingApproval::request`]): it comes too, though it
    /// may be another turn's. Once the connection closed, [`Error::Closed`] rather than an
    /// approval.
    pub fn next_approval(&self) -> Result<Option<PendingApproval>, Error> {
        let found = self
            .session
            .until(None, "an approval or the turn's end", |fold, asked| {
                asked.next_approval_of(fold, &self.id, false, &HashSet::new())
            })?;
        let closed = self.session.0.link.connection.close_reason();
        found
            .map(|found| shared::to_act_on(found, closed))
            .transpose()
    }

    /// Waits for the turn's end, deciding each stage of each approval it asks for with
    /// `decide`, called once a stage with the approval (its request came: the tool, the
    /// item, the turn) and the stage: a multi-stage approval comes back at its next stage
    /// until a decision is terminal, and the receipts were sent already. `None` leaves the
    /// stage undecided (pending and visible in the fold, for another client, the host's
    /// timeout or [`Session::decide`]; a later call of this offers it again). A stage that
    /// another decision won or the host moved past is not an error: the wait goes on (one
    /// whose choices the host changed, refused as `approvalChoiceInvalid`, is offered again
    /// with them once the fold shows them); the
    /// connection closing ends it with the turn's outcome as the fold holds it
    /// ([`TurnOutcome::HostExited`] unless the turn ended first). A decision the stage
    /// does not offer ends it with [`Error::Ask`], nothing sent, and any other failure of
    /// `approval/decide` (a timeout after every retry, `approvalReviewerUnavailable`) with
    /// its error. On a thread of its own (a handle from [`Session::turn`] moved
    /// there) it decides while the program does something else, such as following the
    /// items. A handler that must wait on something else decides through
    /// [`Turn::next_approval`] and [`Session::decide`].
    pub fn completed_deciding(
        &self,
        decide: impl FnMut(&PendingApproval, Stage<'_>) -> Option<Decision>,
    ) -> Result<TurnOutcome, Error> {
        // Over or closed, the outcome is the fold's: a turn that ended before the close
        // ended.
        self.session.deciding(Some(&self.id), None, decide)?;
        self.completed_within(None)
    }

    /// The next question of this turn this client has not answered; `None` once the turn is
    /// over. Once the connection closed, [`Error::Closed`] rather than a question.
    pub fn next_prompt(&self) -> Result<Option<PendingPrompt>, Error> {
        let found = self
            .session
            .until(None, "a question or the turn's end", |fold, asked| {
                asked.next_prompt_of(fold, &self.id)
            })?;
        let closed = self.session.0.link.connection.close_reason();
        found
            .map(|found| shared::to_act_on(found, closed))
            .transpose()
    }

    /// Cancels the turn through the command queue (`turn/cancel`, no retract); it has
    /// ended when its `turn/completed` comes ([`Turn::completed`]).
    pub fn cancel(&self) -> Result<msp_types::TurnCancelResult, Error> {
        let command = commands::cancel_turn(self.session.id(), &self.id);
        self.session.send(&command)
    }

    /// Interrupts the turn; `retract` asks to take it back.
    pub fn interrupt(&self, retract: bool) -> Result<TurnInterruptResult, Error> {
        self.session.interrupt(Some(&self.id), retract)
    }
}

shared::debug_handles!();
