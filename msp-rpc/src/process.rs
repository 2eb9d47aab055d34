//! The `muse serve` process: how to launch it, its stderr, and what its exit means.
//!
//! stdin and stdout carry the protocol; stderr is captured into a bounded tail (never
//! inherited, never parsed) that is attached to every exit, a clean one too. The exit is
//! classified exactly once, by the codes `muse serve` documents; a code outside that table is
//! only a code, and a host this side killed is told apart from one that crashed.
//!
//! A host may exit while a process it started keeps its stdout open: the pipe then never
//! ends, and nothing else would tell the connection. So a thread per spawned host
//! (`watch_host`) looks for its exit; the connection's reader marks each read it waits in
//! (two atomics, `HostProcess::read_begun`), so that the watcher closes only once the pipe
//! held nothing more of the host's.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use crate::endpoint::Role;
use crate::error::CloseReason;
use crate::shared::Shared;

/// How much stderr is kept: the last 8 KiB, at most 100 lines.
pub const STDERR_TAIL_BYTES: usize = 8 * 1024;
/// How many stderr lines are kept.
pub const STDERR_TAIL_LINES: usize = 100;
/// How long an exit waits for the last of stderr.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// What a `muse serve` exit means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExitKind {
    /// Exit code 0: the host shut down in order.
    CleanShutdown,
    /// Exit code 1: an unhandled error; only stderr explains it.
    UnhandledError,
    /// Exit code 2: the command line was wrong.
    UsageError,
    /// Exit code 3: the configuration is invalid.
    ConfigError,
    /// Exit code 4: another live client holds the session's lease.
    LeaseUnavailable,
    /// Exit code 5: this host does not offer the SDK surface.
    SdkSurfaceUnavailable,
    /// A code outside `muse serve`'s table (the program is another host, or a wrapper): it
    /// exited by itself, and only the program's own documentation says what the code means
    /// (`msp-canned-host`'s 65 and 66 are named in the exit's `Display`).
    OtherCode,
    /// A signal of this side's ended it: it did not exit within the close grace (`SIGTERM`,
    /// then `SIGKILL`), or the connection was dropped while it ran (`SIGKILL`).
    Killed,
    /// Ended by a signal this side did not send.
    Crash,
}

/// What to do about an exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Retry {
    /// Nothing went wrong.
    NotNeeded,
    /// Retrying cannot help.
    Never,
    /// Retry once the user has fixed the configuration.
    AfterConfigFix,
    /// Retry once the other client releases the session.
    AfterLeaseRelease,
    /// A retry may work; back off, and give up after a few.
    WithBackoff,
}

impl ExitKind {
    /// The kind of an exit with `code` (`None`: ended by a signal this side did not send).
    pub fn from_code(code: Option<i32>) -> Self {
        match code {
            Some(0) => ExitKind::CleanShutdown,
            Some(1) => ExitKind::UnhandledError,
            Some(2) => ExitKind::UsageError,
            Some(3) => ExitKind::ConfigError,
            Some(4) => ExitKind::LeaseUnavailable,
            Some(5) => ExitKind::SdkSurfaceUnavailable,
            Some(_) => ExitKind::OtherCode,
            None => ExitKind::Crash,
        }
    }

    /// The retry advice that goes with this kind. A code outside the table may mean anything,
    /// so it gets the cautious advice of a crash; a host this side killed needs nothing.
    pub fn retry(self) -> Retry {
        match self {
            ExitKind::CleanShutdown | ExitKind::Killed => Retry::NotNeeded,
            ExitKind::UsageError | ExitKind::SdkSurfaceUnavailable => Retry::Never,
            ExitKind::ConfigError => Retry::AfterConfigFix,
            ExitKind::LeaseUnavailable => Retry::AfterLeaseRelease,
            ExitKind::UnhandledError | ExitKind::OtherCode | ExitKind::Crash => Retry::WithBackoff,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            ExitKind::CleanShutdown => "shut down cleanly",
            ExitKind::UnhandledError => "stopped on an unhandled error",
            ExitKind::UsageError => "refused its command line (usage error)",
            ExitKind::ConfigError => "refused its configuration",
            ExitKind::LeaseUnavailable => {
                "could not take the session lease (another client holds it)"
            }
            ExitKind::SdkSurfaceUnavailable => "does not offer the SDK surface",
            ExitKind::OtherCode => "exited",
            ExitKind::Killed => "did not exit within the grace; killed",
            ExitKind::Crash => "crashed",
        }
    }
}

/// What `msp-canned-host`'s own exit codes mean (see `msp_rpc::canned`), for an exit's
/// `Display`: a test spawning it sees why it stopped.
fn canned_host_code(code: i32) -> Option<&'static str> {
    match code {
        65 => Some("msp-canned-host: a client frame did not match the recording"),
        66 => Some("msp-canned-host: the client's input ended before the recording did"),
        _ => None,
    }
}

/// A host's exit, classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostExit {
    /// What the exit means.
    pub kind: ExitKind,
    /// The exit code, when the process exited by itself.
    pub code: Option<i32>,
    /// The signal that ended it, on Unix.
    pub signal: Option<i32>,
    /// The last of what it wrote to stderr (bounded, see [`STDERR_TAIL_BYTES`]), on every
    /// exit: a clean one too, since a host may note things it went on after.
    pub stderr_tail: String,
}

impl HostExit {
    /// Classifies `status` with the stderr seen (`killed`: this side killed it).
    pub fn classify(status: ExitStatus, stderr: &StderrTail, killed: bool) -> Self {
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal = None;
        let mut exit = Self::from_parts(status.code(), signal, stderr.text());
        // Ended by our signal, or by a handler of our SIGTERM exiting as a shell says it
        // (128 + 15); any other code is the host's own word.
        if killed && matches!(exit.code, None | Some(143)) {
            exit.kind = ExitKind::Killed;
        }
        exit
    }

    /// An exit from its code (or signal) and the stderr text seen.
    pub fn from_parts(code: Option<i32>, signal: Option<i32>, stderr: String) -> Self {
        HostExit {
            kind: ExitKind::from_code(code),
            code,
            signal,
            stderr_tail: stderr,
        }
    }

    /// The retry advice.
    pub fn retry(&self) -> Retry {
        self.kind.retry()
    }
}

impl fmt::Display for HostExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the host {}", self.kind.describe())?;
        match (self.code, self.signal) {
            (Some(code), _) if self.kind == ExitKind::OtherCode => {
                write!(f, " with code {code}")?;
                if let Some(meaning) = canned_host_code(code) {
                    write!(f, " ({meaning})")?;
                }
            }
            (Some(code), _) => write!(f, " (exit code {code})")?,
            (None, Some(signal)) => write!(f, " (signal {signal})")?,
            (None, None) => {}
        }
        match self.stderr_tail.trim_end() {
            "" => Ok(()),
            tail => write!(f, "; stderr ends:\n{tail}"),
        }
    }
}

/// The last bytes and lines a process wrote to stderr, bounded.
#[derive(Clone, Debug, Default)]
pub struct StderrTail(Arc<TailInner>);

#[derive(Debug, Default)]
struct TailInner {
    bytes: Mutex<VecDeque<u8>>,
    ended: Mutex<bool>,
    ended_changed: Condvar,
}

impl StderrTail {
    /// Appends what was read, forgetting the oldest bytes past the bound.
    pub fn push(&self, bytes: &[u8]) {
        let mut tail = self.0.bytes.lock().unwrap_or_else(|e| e.into_inner());
        tail.extend(bytes.iter().rev().take(STDERR_TAIL_BYTES).rev());
        let over = tail.len().saturating_sub(STDERR_TAIL_BYTES);
        tail.drain(..over);
    }

    /// The tail as text: the last [`STDERR_TAIL_LINES`] lines, lossily decoded.
    pub fn text(&self) -> String {
        let bytes: Vec<u8> = {
            let tail = self.0.bytes.lock().unwrap_or_else(|e| e.into_inner());
            tail.iter().copied().collect()
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..].join("\n")
    }

    /// Copies `stderr` into the tail until it ends.
    pub fn collect(&self, mut stderr: impl Read) {
        let mut buf = [0u8; 4096];
        loop {
            match stderr.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.mark_ended();
    }

    /// Records that stderr ended.
    pub fn mark_ended(&self) {
        *self.0.ended.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0.ended_changed.notify_all();
    }

    /// Waits up to `timeout` for stderr to end, so that an exit's tail is complete (a child
    /// the host left behind may keep the pipe open: then the tail is what arrived by then).
    pub fn wait_ended(&self, timeout: Duration) {
        let ended = self.0.ended.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self
            .0
            .ended_changed
            .wait_timeout_while(ended, timeout, |ended| !*ended);
    }
}

/// How to launch a host: the program, its arguments and environment.
#[derive(Clone, Debug)]
pub struct HostCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    dir: Option<PathBuf>,
}

impl HostCommand {
    /// `muse serve`: the binary named by `MUSE_CLI` when set, else `muse` on `PATH`.
    pub fn muse() -> Self {
        let program = std::env::var_os("MUSE_CLI")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "muse".into());
        HostCommand::new(program).arg("serve")
    }

    /// Any program that speaks MSP on stdio (a canned host, a wrapper), with no arguments.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        HostCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            dir: None,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets a variable of the child's environment.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        let value = Some(value.as_ref().to_owned());
        self.env.push((key.as_ref().to_owned(), value));
        self
    }

    /// Removes a variable from the child's environment (credentials it should not see).
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// The child's working directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// The program to run.
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// The `std` command, with all three streams piped.
    pub fn to_std(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    pub(crate) fn spawn_error(&self, error: io::Error) -> SpawnError {
        let program = PathBuf::from(&self.program);
        match error.kind() {
            io::ErrorKind::NotFound => SpawnError::NotFound { program },
            io::ErrorKind::PermissionDenied => SpawnError::NotExecutable { program },
            _ => SpawnError::Io {
                program,
                message: error.to_string(),
            },
        }
    }
}

/// The host never launched: nothing ran, so there is no exit to classify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// No such program (check `MUSE_CLI` or `PATH`).
    #[error("cannot launch the host: {} not found (set MUSE_CLI or put muse on PATH)", program.display())]
    NotFound {
        /// The program that was asked for.
        program: PathBuf,
    },
    /// The program exists but may not be run.
    #[error("cannot launch the host: {} is not executable", program.display())]
    NotExecutable {
        /// The program that was asked for.
        program: PathBuf,
    },
    /// Launching failed otherwise.
    #[error("cannot launch the host {}: {message}", program.display())]
    Io {
        /// The program that was asked for.
        program: PathBuf,
        /// Why.
        message: String,
    },
}

/// A running host: its child process, stderr tail and exit, for either driver.
///
/// Dropping it kills the process if it still runs.
#[derive(Debug)]
pub struct HostProcess {
    child: Mutex<Child>,
    stderr: StderrTail,
    exit: OnceLock<HostExit>,
    /// A kill asked for while another thread waited for the exit: that thread kills.
    kill_wanted: AtomicBool,
    /// This side sent the kill (the exit is then [`ExitKind::Killed`], not a crash).
    killed: AtomicBool,
    pid: u32,
    /// The connection's reads of its output, for [`watch_host`].
    reads: Reads,
}

/// A connection's reads of its host's output: how many returned, and whether one waits on
/// the pipe now (the reader is not paused for room).
#[derive(Debug, Default)]
struct Reads {
    returned: AtomicU64,
    waiting: AtomicBool,
}

impl HostProcess {
    /// Launches `command`; returns the process and its stdin and stdout. A thread copies
    /// stderr into the bounded tail.
    pub fn spawn(command: &HostCommand) -> Result<(Self, ChildStdin, ChildStdout), SpawnError> {
        let mut child = command
            .to_std()
            .spawn()
            .map_err(|e| command.spawn_error(e))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(command.spawn_error(io::Error::other("the child's pipes were not set up")));
        };
        let tail = StderrTail::default();
        let collector = tail.clone();
        std::thread::Builder::new()
            .name("msp-host-stderr".into())
            .spawn(move || collector.collect(stderr))
            .map_err(|e| command.spawn_error(e))?;
        let pid = child.id();
        tracing::debug!(pid, program = ?command.program(), "host launched");
        let process = HostProcess {
            child: Mutex::new(child),
            stderr: tail,
            exit: OnceLock::new(),
            kill_wanted: AtomicBool::new(false),
            killed: AtomicBool::new(false),
            pid,
            reads: Reads::default(),
        };
        Ok((process, stdin, stdout))
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// The connection's reader waits on the host's output (then [`HostProcess::read_ended`]).
    pub(crate) fn read_begun(&self) {
        self.reads.waiting.store(true, Ordering::Release);
    }

    /// The connection's reader's read returned.
    pub(crate) fn read_ended(&self) {
        self.reads.waiting.store(false, Ordering::Release);
        self.reads.returned.fetch_add(1, Ordering::AcqRel);
    }

    /// Where reading is: two equal marks that say it waits tell that the reader sat in one
    /// read between them, the pipe empty all along.
    fn read_mark(&self) -> (u64, bool) {
        let returned = self.reads.returned.load(Ordering::Acquire);
        (returned, self.reads.waiting.load(Ordering::Acquire))
    }

    /// What the host wrote to stderr so far (the bounded tail).
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// The exit, if the host has exited (classified once, the same every time).
    pub fn try_exit(&self) -> Option<HostExit> {
        if let Some(exit) = self.exit.get() {
            return Some(exit.clone());
        }
        // Another thread waiting for the exit holds the child: it is not known yet.
        let status = {
            let mut child = self.child.try_lock().ok()?;
            let status = child.try_wait().ok().flatten();
            if status.is_none() && self.kill_wanted.load(Ordering::Acquire) {
                // A kill asked for before this look (the exit watcher's).
                self.killed.store(true, Ordering::Release);
                let _ = child.kill();
            }
            status
        };
        if status.is_none()
            && self.kill_wanted.load(Ordering::Acquire)
            && !self.killed.load(Ordering::Acquire)
        {
            // Asked for while this held the child, the asker finding it held: done here.
            self.start_kill();
        }
        Some(self.settle(status?))
    }

    /// Waits up to `grace` for the host to exit (killing it, if that was asked for meanwhile).
    pub fn wait_exit(&self, grace: Duration) -> Option<HostExit> {
        if let Some(exit) = self.exit.get() {
            return Some(exit.clone());
        }
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        match self.wait_within(&mut child, grace) {
            Some(status) => Some(self.settle(status)),
            None if self.kill_wanted.load(Ordering::Acquire) => Some(self.kill_child(&mut child)),
            None => None,
        }
    }

    /// Stops the host the way a close does once its stdin closed: up to `grace` for it to
    /// exit by itself (draining in order), then, on Unix, a `SIGTERM` and up to
    /// [`TERM_GRACE`] for its signal handler's last flush, then a kill. Its exit, classified
    /// as this side's stop ([`ExitKind::Killed`]) when a signal of ours ended it.
    pub fn stop(&self, grace: Duration) -> HostExit {
        if let Some(exit) = self.wait_exit(grace) {
            return exit;
        }
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(Some(status)) = child.try_wait() {
            return self.settle(status);
        }
        #[cfg(unix)]
        {
            use rustix::process::{kill_process, Pid, Signal};
            tracing::debug!(pid = self.pid, "asking the host to stop (SIGTERM)");
            self.killed.store(true, Ordering::Release);
            // Not reaped yet (this side holds the child), so the pid is still the host's.
            let _ = kill_process(Pid::from_child(&child), Signal::TERM);
            if let Some(status) = self.wait_within(&mut child, TERM_GRACE) {
                return self.settle(status);
            }
        }
        self.kill_child(&mut child)
    }

    /// The child's exit status within `grace`; `None` past it, or as soon as a kill is asked
    /// for meanwhile ([`HostProcess::start_kill`], which cannot take the child this wait
    /// holds): it looks every [`KILL_LOOK`], so that a connection dropped during a close's
    /// long grace still kills its host at once.
    fn wait_within(&self, child: &mut Child, grace: Duration) -> Option<ExitStatus> {
        // A grace too long for a deadline (`Duration::MAX`) waits without one.
        let deadline = Instant::now().checked_add(grace);
        loop {
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            let status = match left.min(KILL_LOOK) {
                Duration::ZERO => child.try_wait(),
                slice => child.wait_timeout(slice),
            };
            match status {
                Ok(Some(status)) => return Some(status),
                Ok(None) if left > KILL_LOOK && !self.kill_wanted.load(Ordering::Acquire) => {}
                _ => return None,
            }
        }
    }

    /// Kills the host (if it still runs) and returns its exit.
    pub fn kill(&self) -> HostExit {
        if let Some(exit) = self.exit.get() {
            return exit.clone();
        }
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        self.kill_child(&mut child)
    }

    /// Asks for the host to be killed without waiting: at once, or by the thread waiting for
    /// its exit when one is (within that wait's grace).
    pub fn start_kill(&self) {
        if self.exit.get().is_some() {
            return;
        }
        self.kill_wanted.store(true, Ordering::Release);
        if let Ok(mut child) = self.child.try_lock() {
            if let Ok(None) = child.try_wait() {
                tracing::debug!(pid = self.pid, "killing the host");
                self.killed.store(true, Ordering::Release);
                let _ = child.kill();
            }
        }
    }

    fn kill_child(&self, child: &mut Child) -> HostExit {
        if let Ok(Some(status)) = child.try_wait() {
            return self.settle(status);
        }
        tracing::debug!(pid = self.pid, "killing the host");
        self.killed.store(true, Ordering::Release);
        let _ = child.kill();
        match child.wait() {
            Ok(status) => self.settle(status),
            Err(e) => self
                .exit
                .get_or_init(|| HostExit {
                    kind: ExitKind::Killed,
                    ..HostExit::from_parts(None, None, e.to_string())
                })
                .clone(),
        }
    }

    fn settle(&self, status: ExitStatus) -> HostExit {
        self.exit
            .get_or_init(|| {
                // The stderr thread may still hold the last bytes; the pipe ends with the host.
                self.stderr.wait_ended(STDERR_DRAIN);
                let killed = self.killed.load(Ordering::Acquire);
                let exit = HostExit::classify(status, &self.stderr, killed);
                tracing::debug!(pid = self.pid, kind = ?exit.kind, code = ?exit.code, "host exited");
                exit
            })
            .clone()
    }
}

/// How long [`HostProcess::stop`] gives a host asked to stop (`SIGTERM`, after the close
/// grace) before killing it: only for a signal handler's last flush, the host having had the
/// whole grace to drain (as the official SDKs do).
pub const TERM_GRACE: Duration = Duration::from_secs(2);

/// How often a wait for the host's exit looks whether a kill was asked for meanwhile.
const KILL_LOOK: Duration = Duration::from_millis(50);

/// How long a connection whose host's stdout ended (or whose stdin broke) waits for the
/// host's exit before failing what is pending without it. A host that dies closes its stdout
/// as it exits, so its exit is there at once; one that closed its stdout and lives on must not
/// hold requests for the whole close grace. [`HostProcess::wait_exit`] at `close()` collects
/// its exit after, within the grace.
pub const EXIT_LINGER: Duration = Duration::from_millis(250);

/// How often a host's exit is looked for while its connection is open ([`watch_exit`]).
const EXIT_POLL: Duration = Duration::from_millis(100);

/// Watches a spawned host while its connection is open: `look` gives the host's exit so far
/// and where reading is ([`HostProcess::read_mark`]), or `None` once the connection closed
/// or is gone (the watch ends). Once the host exited and the connection is still open, its
/// output did not end with it (a process it started keeps the pipe open): when the reader
/// then sat in one read for [`EXIT_LINGER`] (nothing left in the pipe, so nothing the host
/// wrote is lost), `close` closes the connection with the exit, so that no wait outlives
/// the host. Run on a thread of its own, looking every [`EXIT_POLL`]: a wait on the child
/// would hold it from the close's kill.
fn watch_exit(
    look: impl Fn() -> Option<(Option<HostExit>, (u64, bool))>,
    close: impl FnOnce(HostExit),
) {
    let exit = loop {
        std::thread::sleep(EXIT_POLL);
        match look() {
            None => return,
            Some((None, _)) => {}
            Some((Some(exit), _)) => break exit,
        }
    };
    loop {
        let Some((_, before)) = look() else { return };
        std::thread::sleep(EXIT_LINGER);
        let Some((_, after)) = look() else { return };
        if before == after && after.1 {
            tracing::debug!(%exit, "the host exited, its output still open: closing");
            return close(exit);
        }
    }
}

/// Starts the thread that [`watch_exit`]es a connection's host: `parts` gives the
/// connection's shared state and its host, from `io`, held weakly (the watch ends with it).
pub(crate) fn watch_host<T, R>(io: &Arc<T>, parts: fn(&T) -> (&Shared<R>, Option<&HostProcess>))
where
    T: Send + Sync + 'static,
    R: Role,
{
    let watched = Arc::downgrade(io);
    let watch = move || {
        let look = || {
            let io = watched.upgrade()?;
            let (shared, process) = parts(&io);
            let process = process.filter(|_| shared.close_reason().is_none())?;
            Some((process.try_exit(), process.read_mark()))
        };
        let close = |exit| {
            if let Some(io) = watched.upgrade() {
                parts(&io).0.close(CloseReason::HostExited(exit));
            }
        };
        watch_exit(look, close);
    };
    std::thread::Builder::new()
        .name("msp-host-exit".into())
        .spawn(watch)
        .expect("cannot start the msp-host-exit thread");
}

/// Why reading or writing stopped, as precisely as the process tells within [`EXIT_LINGER`]:
/// its exit, or else `fallback`.
pub(crate) fn close_reason(process: Option<&HostProcess>, fallback: CloseReason) -> CloseReason {
    match process {
        Some(process) => process
            .wait_exit(EXIT_LINGER)
            .map_or(fallback, CloseReason::HostExited),
        None => fallback,
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        if self.exit.get().is_none() {
            self.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_code_has_its_kind_and_advice() {
        let cases = [
            (Some(0), ExitKind::CleanShutdown, Retry::NotNeeded),
            (Some(1), ExitKind::UnhandledError, Retry::WithBackoff),
            (Some(2), ExitKind::UsageError, Retry::Never),
            (Some(3), ExitKind::ConfigError, Retry::AfterConfigFix),
            (
                Some(4),
                ExitKind::LeaseUnavailable,
                Retry::AfterLeaseRelease,
            ),
            (Some(5), ExitKind::SdkSurfaceUnavailable, Retry::Never),
            (Some(6), ExitKind::OtherCode, Retry::WithBackoff),
            (Some(-1), ExitKind::OtherCode, Retry::WithBackoff),
            (None, ExitKind::Crash, Retry::WithBackoff),
        ];
        for (code, kind, retry) in cases {
            let exit = HostExit::from_parts(code, None, "boom".into());
            assert_eq!((exit.kind, exit.retry()), (kind, retry), "{code:?}");
            assert_eq!(
                exit.stderr_tail, "boom",
                "{code:?}: every exit keeps the tail"
            );
        }
    }

    #[test]
    fn an_exit_outside_the_table_says_its_code_and_the_canned_host_names_its_own() {
        let plain = HostExit::from_parts(Some(42), None, String::new());
        assert_eq!(plain.to_string(), "the host exited with code 42");
        let mismatch = HostExit::from_parts(Some(65), None, "mismatch at t:3".into());
        assert_eq!(
            mismatch.to_string(),
            "the host exited with code 65 (msp-canned-host: a client frame did not match the \
             recording); stderr ends:\nmismatch at t:3"
        );
        let incomplete = HostExit::from_parts(Some(66), None, String::new()).to_string();
        assert!(incomplete
            .ends_with("(msp-canned-host: the client's input ended before the recording did)"));
        let crash = HostExit::from_parts(None, Some(11), String::new());
        assert_eq!(crash.to_string(), "the host crashed (signal 11)");
    }

    #[test]
    fn the_stderr_tail_is_bounded_in_bytes_and_lines() {
        let tail = StderrTail::default();
        for i in 0..1000 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        let text = tail.text();
        assert_eq!(text.lines().count(), STDERR_TAIL_LINES);
        assert!(text.ends_with("line 999"));
        tail.push(&vec![b'x'; 3 * STDERR_TAIL_BYTES]);
        assert_eq!(tail.text().len(), STDERR_TAIL_BYTES);
    }
}
