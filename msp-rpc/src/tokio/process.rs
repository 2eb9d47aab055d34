//! A running host for the tokio driver: one task waits for its exit (and kills it on request),
//! another copies stderr into the bounded tail.

use std::time::Duration;

use ::tokio::io::AsyncReadExt;
use ::tokio::process::{ChildStdin, ChildStdout};
use ::tokio::sync::{watch, Notify};
use std::sync::Arc;

use crate::process::{HostCommand, HostExit, SpawnError, StderrTail};

/// How long an exit waits for the last of stderr.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// A running host: its stderr tail and its exit, classified once. Dropping it kills the
/// process if it still runs.
#[derive(Debug)]
pub struct HostProcess {
    pid: Option<u32>,
    stderr: StderrTail,
    exit: watch::Receiver<Option<HostExit>>,
    kill: Arc<Notify>,
}

impl HostProcess {
    /// Launches `command` (within a tokio runtime); returns the process, its stdin and stdout.
    pub fn spawn(command: &HostCommand) -> Result<(Self, ChildStdin, ChildStdout), SpawnError> {
        let mut child = ::tokio::process::Command::from(command.to_std())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| command.spawn_error(e))?;
        let (Some(stdin), Some(stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(
                command.spawn_error(std::io::Error::other("the child's pipes were not set up"))
            );
        };
        let pid = child.id();
        let tail = StderrTail::default();
        let collector = tail.clone();
        ::tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buf).await {
                collector.push(&buf[..n]);
            }
            collector.mark_ended();
        });
        let (settled, exit) = watch::channel(None);
        let kill = Arc::new(Notify::new());
        let killer = kill.clone();
        let waited = tail.clone();
        ::tokio::spawn(async move {
            let status = loop {
                ::tokio::select! {
                    status = child.wait() => break status,
                    () = killer.notified() => {
                        tracing::debug!(?pid, "killing the host");
                        let _ = child.start_kill();
                    }
                }
            };
            let exit = match status {
                Ok(status) => {
                    let ended = waited.clone();
                    let _ =
                        ::tokio::task::spawn_blocking(move || ended.wait_ended(STDERR_DRAIN)).await;
                    HostExit::classify(status, &waited)
                }
                Err(e) => HostExit::from_parts(None, None, e.to_string()),
            };
            tracing::debug!(?pid, kind = ?exit.kind, code = ?exit.code, "host exited");
            let _ = settled.send(Some(exit));
        });
        tracing::debug!(?pid, program = ?command.program(), "host launched");
        let process = HostProcess {
            pid,
            stderr: tail,
            exit,
            kill,
        };
        Ok((process, stdin, stdout))
    }

    /// The process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.pid
    }

    /// What the host wrote to stderr so far (the bounded tail).
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// The exit, if the host has exited.
    pub fn try_exit(&self) -> Option<HostExit> {
        self.exit.borrow().clone()
    }

    /// Waits up to `grace` for the host to exit.
    pub async fn wait_exit(&self, grace: Duration) -> Option<HostExit> {
        let mut exit = self.exit.clone();
        let settled = ::tokio::time::timeout(grace, exit.wait_for(Option::is_some)).await;
        let settled = settled.ok().and_then(Result::ok).and_then(|e| e.clone());
        settled.or_else(|| self.try_exit())
    }

    /// Kills the host (if it still runs) and returns its exit.
    pub async fn kill(&self) -> HostExit {
        self.start_kill();
        let mut exit = self.exit.clone();
        let settled = exit
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|e| e.clone());
        settled.unwrap_or_else(|| HostExit::from_parts(None, None, self.stderr.text()))
    }

    /// Asks for the host to be killed, without waiting.
    pub fn start_kill(&self) {
        if self.try_exit().is_none() {
            self.kill.notify_one();
        }
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        self.start_kill();
    }
}
