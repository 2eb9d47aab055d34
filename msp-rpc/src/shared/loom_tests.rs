//! The connection state's synchronization, checked under every interleaving of small
//! scenarios (loom). Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p msp-rpc --lib --release loom`.
//!
//! Each thread plays one of the parts in `shared.rs` (reader, writer, handler, callers,
//! consumer, close) through the same steps the drivers take, waiting as the blocking driver
//! does (`sync::wait`, which loom runs as its own `block_on`). A lost wake-up shows as a
//! deadlock, a lost or doubled frame as a failed assertion.

use std::sync::Arc;
use std::time::{Duration, Instant};

use loom::thread;
use msp_types::protocol::methods;
use msp_types::{ModelListParams, ProtocolNotification};

use super::{Closing, Output, Shared};
use crate::endpoint::{Client, Reply};
use crate::error::{CloseReason, RpcError};
use crate::framing::LineDecoder;
use crate::options::Inbound;
use crate::sync::wait;

const MODELS: &str = r#"{"models":[],"providerId":"fake","source":"fakeCatalog"}"#;

fn notice(n: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"future/notice","params":{{"n":{n}}}}}"#)
}

fn answer(id: i64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{MODELS}}}"#)
}

/// The reader's step: hands in `lines` as one read.
fn read(shared: &Shared<Client>, lines: &[String]) {
    let mut decoder = LineDecoder::new(1 << 20);
    for line in lines {
        decoder.push(line.as_bytes());
        decoder.push(b"\n");
    }
    shared.receive(&mut decoder, &mut Vec::new());
}

fn number(inbound: Inbound) -> u64 {
    match inbound {
        Inbound::Notification {
            notification: ProtocolNotification::Unknown { params, .. },
            ..
        } => params.unwrap()["n"].as_u64().unwrap(),
        other => panic!("not a notice: {other:?}"),
    }
}

/// Every interleaving with up to `LOOM_MAX_PREEMPTIONS` (default 3) preemptions: the bound
/// under which loom's authors find nearly every bug, at a cost that stays in seconds.
fn model(scenario: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(scenario);
}

fn later() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

/// Sends `model/list`, as a caller does; its id.
fn start(shared: &Shared<Client>) -> msp_types::rpc::Id {
    shared
        .request::<methods::ModelList>(&ModelListParams::new(), later())
        .unwrap()
}

/// Waits for the response to `id`, as a caller does.
fn finish(shared: &Shared<Client>, id: &msp_types::rpc::Id) -> Result<(), RpcError> {
    let response = wait(None, |cx| shared.poll_response(id, cx)).unwrap();
    response
        .expect("the response is taken once")
        .decode::<methods::ModelList>()
        .map(drop)
}

#[test]
fn loom_a_consumer_waiting_gets_every_notification_in_order() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(false, false, false, None));
        let reader = thread::spawn({
            let shared = shared.clone();
            move || {
                read(&shared, &[notice(0)]);
                read(&shared, &[notice(1), notice(2)]);
            }
        });
        for n in 0..3 {
            let got = wait(None, |cx| shared.poll_inbound(cx)).unwrap();
            assert_eq!(number(got.expect("not closed")), n);
        }
        reader.join().unwrap();
    });
}

#[test]
fn loom_two_callers_get_their_own_responses_answered_in_either_order() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(false, false, false, None));
        let first = start(&shared);
        let second = start(&shared);
        let callers: Vec<_> = [first, second]
            .into_iter()
            .map(|id| {
                let shared = shared.clone();
                thread::spawn(move || finish(&shared, &id))
            })
            .collect();
        // The peer answers the second request first, in two reads.
        read(&shared, &[answer(2)]);
        read(&shared, &[answer(1)]);
        for caller in callers {
            assert!(caller.join().unwrap().is_ok());
        }
        assert_eq!(shared.lock().endpoint.pending_requests(), 0);
    });
}

#[test]
fn loom_a_response_and_notifications_read_together_each_reach_their_taker() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(false, false, false, None));
        let id = start(&shared);
        let caller = thread::spawn({
            let shared = shared.clone();
            move || finish(&shared, &id)
        });
        let reader = thread::spawn({
            let shared = shared.clone();
            move || read(&shared, &[notice(0), answer(1), notice(1)])
        });
        for n in 0..2 {
            let got = wait(None, |cx| shared.poll_inbound(cx)).unwrap();
            assert_eq!(number(got.unwrap()), n);
        }
        assert!(caller.join().unwrap().is_ok());
        reader.join().unwrap();
    });
}

#[test]
fn loom_a_consumer_that_stops_halfway_holds_up_no_response() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(false, false, false, None));
        let id = start(&shared);
        let caller = thread::spawn({
            let shared = shared.clone();
            move || finish(&shared, &id)
        });
        // The consumer waits, so the read is handed to it undecoded; it takes one notice and
        // stops.
        let consumer = thread::spawn({
            let shared = shared.clone();
            move || number(wait(None, |cx| shared.poll_inbound(cx)).unwrap().unwrap())
        });
        read(&shared, &[notice(0), answer(1), notice(1)]);
        // The writer's look for a stall, again after each `STALL` while lines wait.
        let mut since = Some(shared.decoded());
        while let Some(seen) = since {
            since = shared.check_stall(seen);
            thread::yield_now();
        }
        assert!(caller.join().unwrap().is_ok());
        assert_eq!(consumer.join().unwrap(), 0);
    });
}

#[test]
fn loom_lines_read_before_a_close_are_delivered_in_order() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(false, false, false, None));
        let consumer = thread::spawn({
            let shared = shared.clone();
            move || {
                let mut got = Vec::new();
                while let Some(Some(inbound)) = wait(None, |cx| shared.poll_inbound(cx)) {
                    got.push(number(inbound));
                }
                got
            }
        });
        read(&shared, &[notice(0), notice(1)]);
        shared.close(CloseReason::PeerClosed);
        assert_eq!(consumer.join().unwrap(), [0, 1]);
    });
}

#[test]
fn loom_a_close_ends_every_wait() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(true, false, false, None));
        let id = start(&shared);
        let caller = thread::spawn({
            let shared = shared.clone();
            move || finish(&shared, &id)
        });
        let consumer = thread::spawn({
            let shared = shared.clone();
            move || wait(None, |cx| shared.poll_inbound(cx)).unwrap()
        });
        let handler = thread::spawn({
            let shared = shared.clone();
            move || wait(None, |cx| shared.poll_request(cx)).unwrap().is_none()
        });
        shared.close(CloseReason::PeerClosed);
        let error = caller.join().unwrap().unwrap_err();
        assert!(matches!(error, RpcError::Closed(CloseReason::PeerClosed)));
        assert!(consumer.join().unwrap().is_none());
        assert!(handler.join().unwrap());
    });
}

#[test]
fn loom_a_timeout_decided_by_another_thread_wakes_the_caller() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(false, false, false, None));
        let deadline = Instant::now() + Duration::from_millis(10);
        let id = shared
            .request::<methods::ModelList>(&ModelListParams::new(), deadline)
            .unwrap();
        let caller = thread::spawn({
            let shared = shared.clone();
            move || finish(&shared, &id)
        });
        // Whoever's clock passed the deadline lets the endpoint decide; the late answer is
        // dropped quietly.
        shared.handle_timeout(deadline);
        read(&shared, &[answer(1)]);
        let error = caller.join().unwrap().unwrap_err();
        assert!(matches!(error, RpcError::TimedOut { .. }), "{error}");
        assert!(shared.lock().inbound.is_empty(), "no undecodable frame");
    });
}

#[test]
fn loom_a_call_dropped_while_its_response_arrives_leaves_nothing_behind() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(false, false, false, None));
        let id = start(&shared);
        let reader = thread::spawn({
            let shared = shared.clone();
            move || read(&shared, &[answer(1), notice(0)])
        });
        shared.cancel(&id);
        reader.join().unwrap();
        assert!(
            shared.take_response(&id).is_none(),
            "forgotten once answered too"
        );
        let state = shared.lock();
        assert_eq!(state.endpoint.pending_requests(), 0);
        // The notice after it arrived; the response was never an undecodable frame.
        assert_eq!(state.inbound.len(), 1);
    });
}

#[test]
fn loom_the_handler_gets_each_request_once_and_its_reply_is_queued() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(true, false, false, None));
        let request = |id: i64| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"future/ask","params":{{}}}}"#)
        };
        let reader = thread::spawn({
            let shared = shared.clone();
            move || read(&shared, &[request(7), request(8)])
        });
        let handler = thread::spawn({
            let shared = shared.clone();
            move || {
                let mut ids = Vec::new();
                while let Some(Some((id, _))) = wait(None, |cx| shared.poll_request(cx)) {
                    shared.respond(&id, Reply::ok(&serde_json::json!({})));
                    ids.push(id);
                }
                shared.handler_stopped();
                ids
            }
        });
        reader.join().unwrap();
        // Close waits for the handler to answer what it took, as `close` does.
        shared.stop_handling();
        wait(None, |cx| shared.poll_closing(Closing::Handled, cx));
        let ids = handler.join().unwrap();
        assert_eq!(ids.len(), 2, "{ids:?}");
        let mut lines = Vec::new();
        assert!(shared.take_lines(&mut lines, None));
        assert_eq!(lines.len(), 2);
        assert_eq!(shared.lock().endpoint.owed_replies(), 0);
    });
}

#[test]
fn loom_a_request_copied_among_the_notifications_comes_where_it_was_read_and_is_answered() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(true, false, true, None));
        let request = r#"{"jsonrpc":"2.0","id":7,"method":"future/ask","params":{}}"#;
        let reader = thread::spawn({
            let shared = shared.clone();
            move || {
                read(&shared, &[notice(0)]);
                read(&shared, &[request.into(), notice(1)]);
            }
        });
        let handler = thread::spawn({
            let shared = shared.clone();
            move || {
                let (id, _) = wait(None, |cx| shared.poll_request(cx)).unwrap().unwrap();
                shared.respond(&id, Reply::ok(&serde_json::json!({})));
                id
            }
        });
        // Whoever decodes the request's line (the reader, or this consumer), its copy sits
        // between the notifications read around it.
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(
                match wait(None, |cx| shared.poll_inbound(cx)).unwrap().unwrap() {
                    Inbound::Request { id, .. } => format!("request {id}"),
                    other => format!("notice {}", number(other)),
                },
            );
        }
        assert_eq!(got, ["notice 0", "request 7", "notice 1"]);
        reader.join().unwrap();
        assert_eq!(handler.join().unwrap().to_string(), "7");
        assert_eq!(shared.lock().endpoint.owed_replies(), 0);
    });
}

#[test]
fn loom_lines_queued_by_callers_and_the_reader_are_written_once_in_order() {
    model(|| {
        let shared = Arc::new(Shared::<Client>::new(false, false, false, None));
        let written = Arc::new(loom::sync::Mutex::new(Vec::<String>::new()));
        let writer = thread::spawn({
            let (shared, written) = (shared.clone(), written.clone());
            move || loop {
                let output = wait(None, |cx| shared.poll_output(true, cx)).unwrap();
                let mut stream = written.lock().unwrap();
                let mut lines = Vec::new();
                while shared.take_lines(&mut lines, None) {
                    stream.append(&mut lines);
                }
                if output == Output::Closed {
                    drop(stream);
                    return shared.writer_stopped();
                }
            }
        });
        // A caller writes its own line when the stream is free, else leaves it to the writer.
        let caller = thread::spawn({
            let (shared, written) = (shared.clone(), written.clone());
            move || {
                start(&shared);
                match written.try_lock() {
                    Ok(mut stream) => {
                        let mut lines = Vec::new();
                        while shared.take_lines(&mut lines, Some(4096)) {
                            stream.append(&mut lines);
                        }
                    }
                    Err(_) => shared.wake_writer(),
                }
            }
        });
        // The reader queues a reply (`-32601` for a request nothing handles).
        read(
            &shared,
            &[r#"{"jsonrpc":"2.0","id":9,"method":"future/ask","params":{}}"#.into()],
        );
        caller.join().unwrap();
        // Close waits for the writer's end, as `close` does over plain streams: every line
        // is written by then, the writer not joined.
        shared.close_output();
        wait(None, |cx| shared.poll_closing(Closing::Written, cx));
        {
            let written = written.lock().unwrap();
            assert_eq!(written.len(), 2, "{written:?}");
            assert!(written.iter().any(|l| l.contains("model/list")));
            assert!(written.iter().any(|l| l.contains("-32601")));
        }
        writer.join().unwrap();
    });
}
