//! A real child process over real pipes: the connection against `msp-canned-host` playing the
//! project's fixture of the seed, with scripted faults.
#![cfg(feature = "canned-host")]

use std::path::PathBuf;
use std::time::Duration;

use msp_rpc::blocking::Connection;
use msp_rpc::{
    CloseReason, ExitKind, HostCommand, Inbound, Options, Problem, Reply, Retry, RpcError,
    SpawnError, Warning,
};
use msp_types::protocol::methods;
use msp_types::{
    ClientInfo, InitializeParams, ProtocolNotification, RequestReceipt, ServerRequest,
    SessionResumeParams, UserInputOutcome,
};

const HOST: &str = env!("CARGO_BIN_EXE_msp-canned-host");
const SESSION: &str = "0198f0aa-1111-7000-8000-0000000000bb";
/// The fixture serves this fingerprint (recorded under an older schema).
const FIXTURE_FINGERPRINT: &str =
    "sha256:e2202b2bf9704c381600cd483b7533c8349d0b08920dc5e8840647809ae618b8";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/seed-answer-user-input")
}

fn host(faults: &[&str]) -> HostCommand {
    let mut command = HostCommand::new(HOST);
    for fault in faults {
        command = command.arg("--fault").arg(fault);
    }
    command.arg(fixture())
}

fn options() -> Options<msp_rpc::Client> {
    Options::new()
        .close_grace(Duration::from_secs(5))
        .on_request(|_, request| match request {
            ServerRequest::UserInputRequest(_) => Reply::ok(&RequestReceipt::new()),
            other => Reply::method_not_found(other.method()),
        })
}

fn hello() -> InitializeParams {
    InitializeParams::builder()
        .client_info(
            ClientInfo::builder()
                .name("process_test")
                .version("0.1.0")
                .build(),
        )
        .build()
}

fn resume() -> SessionResumeParams {
    let mut params = SessionResumeParams::builder()
        .command_id(msp_rpc::new_command_id())
        .session_id(SESSION)
        .build();
    params.exclude_items = Some(true);
    params
}

fn assert_left_early(exit: &msp_rpc::HostExit) {
    assert_eq!(exit.kind, ExitKind::OtherCode, "{exit}");
    assert!(matches!(exit.code, Some(65 | 66)), "{exit}");
    assert!(exit.stderr_tail.contains("msp-canned-host: "), "{exit}");
    assert!(exit.to_string().contains("(msp-canned-host: "), "{exit}");
}

#[test]
fn a_spawned_host_handshakes_with_an_unknown_fingerprint_warning_and_closes_cleanly() {
    let conn = Connection::spawn(&host(&[]), options()).unwrap();
    let handshake = conn.initialize(&hello()).unwrap();
    assert_eq!(
        handshake.warnings,
        vec![Warning::UnknownFingerprint {
            served: FIXTURE_FINGERPRINT.into(),
        }]
    );
    let resumed = conn.request::<methods::SessionResume>(&resume()).unwrap();
    assert_eq!(resumed.session.session_id, SESSION);
    // Closing before the transcript's end: the canned host says so on stderr and exits 66
    // (or 65, when the question it re-issued meanwhile went unanswered): a crash to the
    // classification, with the tail attached.
    let exit = conn.close().unwrap();
    assert_left_early(&exit);
}

#[test]
fn the_host_exiting_mid_request_fails_it_with_the_exit_class_and_stderr_tail() {
    let faults = [
        "after 4: stderr session lease held by pid 4242",
        "after 4: exit 4",
    ];
    let conn = Connection::spawn(&host(&faults), options()).unwrap();
    conn.initialize(&hello()).unwrap();
    let error = conn
        .request::<methods::SessionResume>(&resume())
        .unwrap_err();
    let exit = error.host_exit().unwrap_or_else(|| panic!("{error}"));
    assert_eq!(
        (exit.kind, exit.code, exit.retry()),
        (
            ExitKind::LeaseUnavailable,
            Some(4),
            Retry::AfterLeaseRelease
        )
    );
    assert!(exit.stderr_tail.contains("lease held by pid 4242"));
    assert!(
        error.to_string().contains("lease held by pid 4242"),
        "{error}"
    );
    // Exactly once: the same classification afterwards.
    assert_eq!(conn.close().as_ref(), Some(exit));
    assert!(conn.notifications().next().is_none());
}

/// A host that exits while a process it started keeps its output open (the pipe never
/// ends): the connection closes with the host's exit, classified, rather than waiting on
/// the pipe for as long as that process lives.
#[test]
#[cfg(unix)]
fn a_host_exiting_while_its_child_keeps_the_output_open_closes_with_its_exit() {
    // `sleep` inherits the pipes and outlives `sh`, which exits 3.
    let command = HostCommand::new("sh").arg("-c").arg("sleep 30 & exit 3");
    let conn = Connection::spawn(&command, options()).unwrap();
    // Bounded so that a connection left open fails here.
    assert!(conn.next_timeout(Duration::from_secs(15)).is_none());
    let reason = conn.close_reason().expect("closed by the exit");
    let exit = reason.host_exit().unwrap_or_else(|| panic!("{reason}"));
    assert_eq!(exit.code, Some(3), "{exit}");
}

#[test]
fn every_documented_exit_code_is_classified_with_its_advice() {
    let cases = [
        (0, ExitKind::CleanShutdown, Retry::NotNeeded),
        (1, ExitKind::UnhandledError, Retry::WithBackoff),
        (2, ExitKind::UsageError, Retry::Never),
        (3, ExitKind::ConfigError, Retry::AfterConfigFix),
        (4, ExitKind::LeaseUnavailable, Retry::AfterLeaseRelease),
        (5, ExitKind::SdkSurfaceUnavailable, Retry::Never),
        (9, ExitKind::OtherCode, Retry::WithBackoff),
    ];
    for (code, kind, retry) in cases {
        let stderr = format!("start: stderr exiting with {code}");
        let exit = format!("start: exit {code}");
        let conn = Connection::spawn(&host(&[&stderr, &exit]), options()).unwrap();
        let error = conn.initialize(&hello()).unwrap_err();
        let got = error
            .host_exit()
            .unwrap_or_else(|| panic!("{code}: {error}"));
        assert_eq!((got.kind, got.code, got.retry()), (kind, Some(code), retry));
        // Every exit carries the tail, a clean one too.
        assert!(
            got.stderr_tail.contains(&format!("exiting with {code}")),
            "{code}: {got}"
        );
    }
}

#[test]
fn a_host_this_side_kills_is_killed_not_crashed() {
    let conn = Connection::spawn(&host(&["start: stall"]), options()).unwrap();
    let exit = conn.process().unwrap().kill();
    assert_eq!(
        (exit.kind, exit.retry()),
        (ExitKind::Killed, Retry::NotNeeded)
    );
    #[cfg(unix)]
    assert_eq!((exit.code, exit.signal), (None, Some(9)));
    let error = conn.request_with_timeout::<methods::Initialize>(&hello(), Duration::from_secs(20));
    assert!(
        matches!(error, Err(RpcError::Closed(CloseReason::HostExited(_)))),
        "{error:?}"
    );
}

/// `abort` from a clone ends the connection every clone shares: a request in flight fails
/// with `Local`, and the host is killed with no grace.
#[test]
fn an_aborted_connection_fails_its_requests_and_kills_the_host() {
    let conn = Connection::spawn(&host(&["start: stall"]), options()).unwrap();
    // In flight before the abort: sent, its response awaited.
    let call = conn
        .start::<methods::Initialize>(&hello(), Duration::from_secs(20))
        .expect("sent");
    let aborting = conn.clone();
    aborting.abort();
    let error = call.wait();
    assert!(
        matches!(error, Err(RpcError::Closed(CloseReason::Local))),
        "{error:?}"
    );
    assert_eq!(conn.close_reason(), Some(CloseReason::Local));
    let exit = conn.process().unwrap().wait_exit(Duration::from_secs(20));
    let exit = exit.expect("the host ended");
    assert_eq!(exit.kind, ExitKind::Killed, "{exit}");
}

#[test]
fn a_stalled_host_is_caught_by_the_request_timeout() {
    let options = options().timeout_for::<methods::SessionResume>(Duration::from_millis(300));
    let conn = Connection::spawn(&host(&["after 4: stall"]), options).unwrap();
    conn.initialize(&hello()).unwrap();
    let error = conn
        .request::<methods::SessionResume>(&resume())
        .unwrap_err();
    assert!(
        matches!(
            error,
            RpcError::TimedOut {
                method: "session/resume",
                ..
            }
        ),
        "{error}"
    );
    // A stalled canned host exits once its stdin closes.
    assert_eq!(conn.close().unwrap().kind, ExitKind::CleanShutdown);
}

/// A host that closes its stdout and lives on: pending requests fail and the notifications end
/// at once, not after the close grace (an hour here: waiting for it would hang the test); the
/// exit is collected at `close()`.
#[test]
fn a_host_that_closes_stdout_fails_pending_requests_at_once() {
    let options = options().close_grace(Duration::from_secs(3600));
    let conn = Connection::spawn(&host(&["after 4: close-stdout"]), options).unwrap();
    conn.initialize(&hello()).unwrap();
    let error = conn
        .request::<methods::SessionResume>(&resume())
        .unwrap_err();
    assert!(
        matches!(error, RpcError::Closed(CloseReason::PeerClosed)),
        "{error}"
    );
    assert!(conn.notifications().next().is_none());
    // The canned host exits once its stdin closes (the closed connection closes it).
    assert_eq!(conn.close().unwrap().kind, ExitKind::CleanShutdown);
}

/// A transcript file of `(dir, frame)` steps, in a folder that lives as long as the guard.
fn transcript(steps: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("transcript.ndjson");
    let lines: Vec<String> = steps
        .iter()
        .map(|(way, raw)| serde_json::json!({"dir": way, "raw": raw}).to_string())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    (dir, path)
}

/// An `approval/request` whose params do not decode reaches the program's handler (method, id,
/// raw params, where decoding failed), and its reply is the one sent: the host, expecting
/// the receipt, plays to the end.
#[test]
fn a_host_request_that_does_not_decode_reaches_the_bad_request_handler() {
    let bad = r#"{"jsonrpc":"2.0","id":7,"method":"approval/request","params":{"sessionId":"s"}}"#;
    let (_dir, path) = transcript(&[
        ("server", bad),
        ("client", r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
    ]);
    let (seen, asked) = std::sync::mpsc::channel();
    let options = Options::new().on_bad_request(move |id, frame| {
        let pointer = frame.decode_error().map(|e| e.pointer.clone());
        let params = frame.params().cloned();
        let _ = seen.send((
            id.clone(),
            frame.method().map(str::to_owned),
            params,
            pointer,
        ));
        Reply::ok(&RequestReceipt::new())
    });
    let conn = Connection::spawn(&HostCommand::new(HOST).arg(&path), options).unwrap();
    let (id, method, params, pointer) = asked.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(id, msp_types::rpc::Id::Number(7));
    assert_eq!(method.as_deref(), Some("approval/request"));
    assert_eq!(params, Some(serde_json::json!({"sessionId": "s"})));
    assert!(pointer.unwrap().starts_with("/params"));
    let exit = conn.close().unwrap();
    assert_eq!(exit.kind, ExitKind::CleanShutdown, "{exit}");
}

/// Without that handler, the same request is answered `-32602` and reported as undecodable.
#[test]
fn without_the_bad_request_handler_it_is_answered_invalid_params() {
    let bad = r#"{"jsonrpc":"2.0","id":7,"method":"approval/request","params":{"sessionId":"s"}}"#;
    let reply = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"x"}}"#;
    let (_dir, path) = transcript(&[("server", bad), ("client", reply)]);
    let conn = Connection::spawn(&HostCommand::new(HOST).arg(&path), options()).unwrap();
    let Some(Inbound::Undecodable(frame)) = conn.next_timeout(Duration::from_secs(60)) else {
        panic!("not reported")
    };
    assert_eq!(frame.replied, Some(-32602));
    let exit = conn.close().unwrap();
    assert_eq!(exit.kind, ExitKind::CleanShutdown, "{exit}");
}

#[test]
fn a_line_that_is_not_json_an_unknown_method_and_an_unknown_value_arrive_as_events() {
    let settled_unknown = r#"{"jsonrpc":"2.0","method":"userInput/settled","params":{"sessionId":"s","viewCursor":"v","sourceRange":{"stream":{"kind":"run","id":"t"},"first":{"id":"r","sequence":1},"last":{"id":"r","sequence":1}},"userInputId":"u","outcome":"deferredByPolicy","answers":[],"clarification":null,"reason":null,"decidedAt":null,"decidedByCommandId":null}}"#;
    let faults = [
        "after 2: send this line is not JSON".to_owned(),
        r#"after 2: send {"jsonrpc":"2.0","method":"future/notice","params":{"x":1}}"#.to_owned(),
        format!("after 2: send {settled_unknown}"),
    ];
    let faults: Vec<&str> = faults.iter().map(String::as_str).collect();
    let conn = Connection::spawn(&host(&faults), options()).unwrap();
    conn.initialize(&hello()).unwrap();
    let next = || {
        conn.next_timeout(Duration::from_secs(20))
            .expect("an event")
    };
    let Inbound::Undecodable(bad) = next() else {
        panic!("not reported")
    };
    assert_eq!(bad.line, "this line is not JSON");
    assert!(matches!(bad.problem, Problem::Decode(_)));
    assert!(matches!(
        next(),
        Inbound::Notification { notification: ProtocolNotification::Unknown { method, .. }, .. } if method == "future/notice"
    ));
    let Inbound::Notification {
        notification: ProtocolNotification::UserInputSettled(settled),
        ..
    } = next()
    else {
        panic!("not typed")
    };
    assert_eq!(
        settled.outcome,
        UserInputOutcome::Unknown("deferredByPolicy".into())
    );
    // The session goes on.
    let resumed = conn.request::<methods::SessionResume>(&resume()).unwrap();
    assert_eq!(resumed.pending_requests.len(), 1);
}

/// `null` sent for an optional member the schema does not make nullable (`message`): the
/// member reads as absent, and the notification is written back as it was read.
#[test]
#[cfg(feature = "experimental")]
fn a_null_in_an_optional_member_is_kept_when_the_frame_is_written_back() {
    let line = r#"{"jsonrpc":"2.0","method":"account/loginCompleted","params":{"outcome":"granted","message":null}}"#;
    let fault = format!("after 2: send {line}");
    let conn = Connection::spawn(&host(&[&fault]), options()).unwrap();
    conn.initialize(&hello()).unwrap();
    let Some(Inbound::Notification { notification, .. }) =
        conn.next_timeout(Duration::from_secs(20))
    else {
        panic!("no notification")
    };
    let ProtocolNotification::AccountLoginCompleted(params) = &notification else {
        panic!("{notification:?}")
    };
    assert_eq!(params.message, None);
    let written = serde_json::to_value(params).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"outcome": "granted", "message": null})
    );
}

/// A host still running after the close grace is asked to stop (`SIGTERM`): one whose
/// handler flushes and exits ends as it says (here cleanly, its last words in the tail), one
/// with no handler ends by the signal, which is this side's stop, not a crash.
#[cfg(unix)]
#[test]
fn a_host_outliving_the_close_grace_is_asked_to_stop_before_it_is_killed() {
    let options = || Options::new().close_grace(Duration::from_millis(100));
    let flushing = HostCommand::new("sh").args([
        "-c",
        "trap 'echo flushed >&2; exit 0' TERM; while :; do sleep 0.05; done",
    ]);
    let exit = Connection::spawn(&flushing, options())
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(exit.kind, ExitKind::CleanShutdown, "{exit}");
    assert!(exit.stderr_tail.contains("flushed"), "{exit:?}");

    let plain = HostCommand::new("sh").args(["-c", "exec sleep 600"]);
    let exit = Connection::spawn(&plain, options())
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(
        (exit.kind, exit.retry(), exit.signal),
        (ExitKind::Killed, Retry::NotNeeded, Some(15)),
        "{exit}"
    );
}

/// A connection dropped while a close waits out its grace (a close cancelled on tokio, say)
/// asks for the kill, and the close's wait takes it at once rather than at the grace's end.
#[cfg(unix)]
#[test]
fn a_kill_asked_for_during_a_close_is_not_held_by_the_grace() {
    let stubborn = HostCommand::new("sh").args(["-c", "trap '' TERM; exec sleep 600"]);
    let options = Options::new().close_grace(Duration::from_secs(25));
    let conn = Connection::spawn(&stubborn, options).unwrap();
    let (done, closed) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| done.send(conn.close()));
        // Whether the close waits already or not, the kill is taken at once.
        conn.process().unwrap().start_kill();
        // Bounded below the grace, so that a wait holding the kill to its end fails here.
        let exit = closed
            .recv_timeout(Duration::from_secs(20))
            .expect("closed");
        assert_eq!(exit.map(|e| e.kind), Some(ExitKind::Killed));
    });
}

/// A close grace too long for a deadline (`Duration::MAX`) waits without one: the close
/// returns with the host's exit (it panicked computing the deadline).
#[cfg(unix)]
#[test]
fn a_close_grace_too_long_for_a_deadline_waits_without_one() {
    let options = Options::new().close_grace(Duration::MAX);
    let conn = Connection::spawn(&HostCommand::new("cat"), options).unwrap();
    assert_eq!(conn.close().map(|e| e.kind), Some(ExitKind::CleanShutdown));
}

/// A host that does not exit within the close grace nor at `SIGTERM` is killed, and that is
/// what its exit says: not a crash, no retry needed.
#[cfg(unix)]
#[test]
fn a_host_killed_after_the_close_grace_is_killed_not_crashed() {
    let stubborn = HostCommand::new("sh").args(["-c", "trap '' TERM; exec sleep 600"]);
    let options = Options::new().close_grace(Duration::from_millis(100));
    let conn = Connection::spawn(&stubborn, options).unwrap();
    let exit = conn.close().unwrap();
    assert_eq!(
        (exit.kind, exit.retry()),
        (ExitKind::Killed, Retry::NotNeeded),
        "{exit}"
    );
    assert_eq!(exit.signal, Some(9));
    assert!(
        exit.to_string()
            .starts_with("the host did not exit within the grace; killed"),
        "{exit}"
    );
}

#[test]
fn a_host_that_never_launched_is_a_spawn_error() {
    let missing = HostCommand::new("/nonexistent/muse");
    assert!(matches!(
        Connection::spawn(&missing, Options::new()),
        Err(SpawnError::NotFound { .. })
    ));
    let not_executable = HostCommand::new(fixture().join("README.md"));
    assert!(matches!(
        Connection::spawn(&not_executable, Options::new()),
        Err(SpawnError::NotExecutable { .. })
    ));
}

#[test]
fn muse_cli_names_the_binary() {
    // Read at call time; the command is not run.
    let command = HostCommand::muse();
    let expected = std::env::var_os("MUSE_CLI")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "muse".into());
    assert_eq!(command.program(), expected.as_os_str());
}

#[cfg(feature = "tokio")]
mod runtimes;

#[cfg(feature = "tokio")]
mod tokio_driver {
    use super::runtimes::on_own_runtime;
    use super::*;
    use msp_rpc::tokio::Connection;

    #[tokio::test]
    async fn the_async_driver_spawns_talks_and_classifies_the_exit() {
        let conn = Connection::spawn(&host(&[]), options()).unwrap();
        let handshake = conn.initialize(&hello()).await.unwrap();
        assert_eq!(
            handshake.warnings.len(),
            1,
            "recorded under an older fingerprint"
        );
        let resumed = conn
            .request::<methods::SessionResume>(&resume())
            .await
            .unwrap();
        assert_eq!(resumed.session.session_id, SESSION);
        let exit = conn.close().await.unwrap();
        assert_left_early(&exit);
    }

    /// As on the blocking driver: a host that exits while a process it started keeps its
    /// output open closes the connection with its exit.
    #[tokio::test]
    #[cfg(unix)]
    async fn a_host_exiting_while_its_child_keeps_the_output_open_closes_with_its_exit() {
        let command = HostCommand::new("sh").arg("-c").arg("sleep 30 & exit 3");
        let conn = Connection::spawn(&command, options()).unwrap();
        let mut notifications = conn.notifications().await;
        // Bounded so that a connection left open fails here.
        let next = ::tokio::time::timeout(Duration::from_secs(15), notifications.next()).await;
        assert!(matches!(next, Ok(None)), "ended, not timed out");
        let reason = conn.close_reason().expect("closed by the exit");
        let exit = reason.host_exit().unwrap_or_else(|| panic!("{reason}"));
        assert_eq!(exit.code, Some(3), "{exit}");
    }

    #[tokio::test]
    async fn the_async_driver_fails_a_request_when_the_host_exits() {
        let faults = ["after 4: stderr config file broken", "after 4: exit 3"];
        let conn = Connection::spawn(&host(&faults), options()).unwrap();
        conn.initialize(&hello()).await.unwrap();
        let error = conn
            .request::<methods::SessionResume>(&resume())
            .await
            .unwrap_err();
        let exit = error.host_exit().unwrap_or_else(|| panic!("{error}"));
        assert_eq!(
            (exit.kind, exit.retry()),
            (ExitKind::ConfigError, Retry::AfterConfigFix)
        );
        assert!(exit.stderr_tail.contains("config file broken"));
        assert!(conn.recv().await.is_none());
    }

    #[tokio::test]
    async fn a_host_request_that_does_not_decode_reaches_the_bad_request_handler() {
        let bad =
            r#"{"jsonrpc":"2.0","id":7,"method":"userInput/request","params":{"sessionId":"s"}}"#;
        let (_dir, path) = transcript(&[
            ("server", bad),
            ("client", r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
        ]);
        let (seen, asked) = std::sync::mpsc::channel();
        let options = Options::new().on_bad_request(move |_, frame| {
            let _ = seen.send(frame.method().map(str::to_owned));
            Reply::ok(&RequestReceipt::new())
        });
        let conn = Connection::spawn(&HostCommand::new(HOST).arg(&path), options).unwrap();
        let method =
            ::tokio::task::spawn_blocking(move || asked.recv_timeout(Duration::from_secs(60)))
                .await
                .unwrap()
                .unwrap();
        assert_eq!(method.as_deref(), Some("userInput/request"));
        let exit = conn.close().await.unwrap();
        assert_eq!(exit.kind, ExitKind::CleanShutdown, "{exit}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_close_grace_too_long_for_a_deadline_waits_without_one() {
        let options = Options::new().close_grace(Duration::MAX);
        let conn = Connection::spawn(&HostCommand::new("cat"), options).unwrap();
        let exit = conn.close().await;
        assert_eq!(exit.map(|e| e.kind), Some(ExitKind::CleanShutdown));
    }

    #[tokio::test]
    async fn a_host_that_closes_stdout_fails_pending_requests_at_once() {
        let options = options().close_grace(Duration::from_secs(3600));
        let conn = Connection::spawn(&host(&["after 4: close-stdout"]), options).unwrap();
        conn.initialize(&hello()).await.unwrap();
        let error = conn
            .request::<methods::SessionResume>(&resume())
            .await
            .unwrap_err();
        assert!(
            matches!(error, RpcError::Closed(CloseReason::PeerClosed)),
            "{error}"
        );
        assert!(conn.recv().await.is_none());
        assert_eq!(conn.close().await.unwrap().kind, ExitKind::CleanShutdown);
    }

    #[tokio::test]
    async fn a_stalled_host_times_out_and_is_killed_after_the_grace() {
        let options = options()
            .timeout_for::<methods::Initialize>(Duration::from_millis(200))
            .close_grace(Duration::from_millis(100));
        let conn = Connection::spawn(&host(&["start: stall"]), options).unwrap();
        let error = conn.initialize(&hello()).await.unwrap_err();
        assert!(matches!(error, RpcError::TimedOut { .. }), "{error}");
        // The stalled host exits when stdin closes; either way close returns its exit.
        let exit = conn.close().await.unwrap();
        assert!(
            matches!(exit.kind, ExitKind::CleanShutdown | ExitKind::Killed),
            "{exit}"
        );
    }

    /// `cat` as the peer sends every line back: a request returns as the peer's request, which
    /// nothing handles, so the connection answers it `-32601` and `cat` returns that answer as the
    /// response to the request itself. Each request is larger than a pipe's buffer, so its
    /// caller's write stops part way and the rest is written later; a line cut or interleaved on
    /// the child's stdin would come back undecodable and leave its request unanswered.
    #[cfg(unix)]
    #[tokio::test]
    async fn requests_from_other_runtimes_write_whole_lines_to_a_childs_stdin() {
        let options = Options::new().timeout(Duration::from_secs(30));
        let conn = Connection::spawn(&HostCommand::new("cat"), options).unwrap();
        let results: Vec<_> = (0..4)
            .map(|_| {
                let conn = conn.clone();
                on_own_runtime(25, move |_| {
                    let conn = conn.clone();
                    async move {
                        conn.notify::<msp_types::protocol::notifications::Initialized>(&None)
                            .unwrap();
                        let mut params = resume();
                        let padding = "x".repeat(70 * 1024).into();
                        params.unknown.insert("padding".into(), padding);
                        let error = conn
                            .request::<methods::SessionResume>(&params)
                            .await
                            .unwrap_err();
                        error.remote().map(|remote| remote.code())
                    }
                })
            })
            .collect();
        for result in results {
            assert_eq!(result.await.unwrap(), vec![Some(-32601); 25]);
        }
        for _ in 0..100 {
            match conn.recv().await {
                Some(Inbound::Notification { notification, .. }) => {
                    assert_eq!(notification.method(), "initialized")
                }
                other => panic!("expected the echoed notification, got {other:?}"),
            }
        }
        let exit = conn.close().await.unwrap();
        assert_eq!(exit.kind, ExitKind::CleanShutdown, "{exit}");
    }
}
