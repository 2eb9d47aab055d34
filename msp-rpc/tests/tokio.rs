//! The tokio driver over in-memory duplex streams, against a host double the test plays.
#![cfg(feature = "tokio")]

mod runtimes;
mod support;

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use msp_rpc::tokio::Connection;
use msp_rpc::{Inbound, Options, Reply, RpcError, Warning};
use msp_types::protocol::methods;
use msp_types::{
    ClientInfo, InitializeParams, ModelListParams, ModelListResult, ProtocolNotification,
    RequestReceipt, ServerRequest, UserInputAnswerParams,
};
use runtimes::on_own_runtime;
use serde_json::{json, Value};
use support::{
    initialize_result, notice_number, numbered_notices, result_line, MODELS, SEED_REQUEST,
    SEED_SETTLED,
};
use tokio::io::{
    AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;

const LONG: Duration = Duration::from_secs(20);

/// Sends `model/list` from a task of its own (on a clone of `conn`), so that the test can play
/// the host meanwhile.
fn spawn_model_list(conn: &Connection) -> JoinHandle<Result<ModelListResult, RpcError>> {
    let conn = conn.clone();
    tokio::spawn(async move {
        conn.request::<methods::ModelList>(&ModelListParams::new())
            .await
    })
}

struct Host {
    reads: BufReader<ReadHalf<DuplexStream>>,
    writes: Option<WriteHalf<DuplexStream>>,
}

impl Host {
    async fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.reads.read_line(&mut line).await {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(serde_json::from_str(line.trim_end()).unwrap()),
        }
    }

    async fn send(&mut self, line: &str) {
        let writes = self.writes.as_mut().unwrap();
        writes
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    async fn answer(&mut self, request: &Value, result: &str) {
        self.send(&result_line(request, result)).await;
    }
}

fn connect(options: Options<msp_rpc::Client>) -> (Connection, Host) {
    connect_writing_through(options, 64 * 1024, |writes| writes)
}

/// The same over a duplex stream holding `capacity` bytes, the client writing through `wrap`
/// of its half.
fn connect_writing_through<W: AsyncWrite + Unpin + Send + 'static>(
    options: Options<msp_rpc::Client>,
    capacity: usize,
    wrap: impl FnOnce(WriteHalf<DuplexStream>) -> W,
) -> (Connection, Host) {
    let (client, host) = tokio::io::duplex(capacity);
    let (client_reads, client_writes) = tokio::io::split(client);
    let (host_reads, host_writes) = tokio::io::split(host);
    let conn = Connection::new(client_reads, wrap(client_writes), options);
    let host = Host {
        reads: BufReader::new(host_reads),
        writes: Some(host_writes),
    };
    (conn, host)
}

fn answer_params(n: usize) -> UserInputAnswerParams {
    UserInputAnswerParams::builder()
        .answers(vec![])
        .command_id(format!("cmd-{n}"))
        .session_id("sess")
        .user_input_id(format!("q-{n}"))
        .build()
}

#[tokio::test]
async fn concurrent_requests_answered_out_of_order_get_their_own_typed_results() {
    let (conn, mut host) = connect(Options::new());
    let calls: Vec<_> = (0..8)
        .map(|n| {
            let conn = conn.clone();
            tokio::spawn(async move {
                conn.request::<methods::UserInputAnswerMethod>(&answer_params(n))
                    .await
            })
        })
        .collect();
    let mut frames = Vec::new();
    for _ in 0..8 {
        frames.push(host.recv().await.unwrap());
    }
    for frame in frames.iter().rev() {
        let echoed = &frame["params"]["userInputId"];
        host.answer(
            frame,
            &format!(r#"{{"commandId":"c","status":"accepted","userInputId":{echoed}}}"#),
        )
        .await;
    }
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap().user_input_id, format!("q-{n}"));
    }
}

#[tokio::test]
async fn a_request_times_out_on_tokios_clock() {
    let (conn, mut host) = connect(Options::new().timeout(Duration::from_millis(50)));
    let asked = spawn_model_list(&conn);
    assert_eq!(host.recv().await.unwrap()["method"], "model/list");
    let error = asked.await.unwrap().unwrap_err();
    assert!(
        matches!(
            error,
            RpcError::TimedOut {
                method: "model/list",
                ..
            }
        ),
        "{error}"
    );
}

/// Over plain streams, what was queued before `close` is written, and the stream closed,
/// before it returns: dropping the connection then (which stops its tasks) loses nothing.
#[tokio::test]
async fn close_writes_what_is_queued_before_it_returns() {
    let (conn, mut host) = connect(Options::new());
    conn.notify::<msp_types::protocol::notifications::Initialized>(&None)
        .unwrap();
    assert!(conn.close().await.is_none());
    drop(conn);
    let line = host.recv().await.expect("the notification, written");
    assert_eq!(line["method"], "initialized");
    assert_eq!(host.recv().await, None, "then the end of the stream");
}

/// `Duration::MAX`, the natural "no timeout", is no deadline rather than a panic.
#[tokio::test]
async fn a_request_with_no_timeout_at_all_is_answered() {
    let (conn, mut host) = connect(Options::new().timeout(Duration::MAX));
    let asked = spawn_model_list(&conn);
    let frame = host.recv().await.unwrap();
    host.answer(&frame, MODELS).await;
    assert_eq!(asked.await.unwrap().unwrap().provider_id, "muse");
}

#[tokio::test]
async fn dropping_the_request_future_forgets_the_request() {
    let (conn, mut host) = connect(Options::new());
    let params = ModelListParams::new();
    tokio::select! {
        _ = conn.request::<methods::ModelList>(&params) => panic!("no answer was sent"),
        frame = host.recv() => {
            // The request went out; the future is dropped here, before its response.
            let frame = frame.unwrap();
            host.answer(&frame, MODELS).await;
        }
    }
    host.send(SEED_SETTLED).await;
    let next = conn.recv().await.unwrap();
    assert!(
        matches!(next, Inbound::Notification { .. }),
        "the late response made no noise: {next:?}"
    );
}

#[tokio::test]
async fn the_peer_closing_fails_pending_requests_and_ends_the_stream() {
    let (conn, mut host) = connect(Options::new());
    let asked = spawn_model_list(&conn);
    host.recv().await.unwrap();
    // Both halves: a duplex stream closes when the whole of it is gone.
    drop(host);
    let error = asked.await.unwrap().unwrap_err();
    assert!(
        matches!(error, RpcError::Closed(msp_rpc::CloseReason::PeerClosed)),
        "{error}"
    );
    assert!(conn.recv().await.is_none());
}

#[tokio::test]
async fn server_requests_get_the_handlers_reply_or_method_not_found() {
    let (_plain, mut host) = connect(Options::new());
    host.send(SEED_REQUEST).await;
    assert_eq!(host.recv().await.unwrap()["error"]["code"], -32601);

    let options = Options::new().on_request(|_, request| match request {
        ServerRequest::UserInputRequest(_) => Reply::ok(&RequestReceipt::new()),
        other => Reply::method_not_found(other.method()),
    });
    let (_handled, mut host) = connect(options);
    host.send(SEED_REQUEST).await;
    assert_eq!(
        host.recv().await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 18, "result": {}})
    );
}

#[tokio::test]
async fn notifications_stream_in_wire_order_with_undecodable_frames_among_them() {
    use futures_core::Stream;
    let (conn, mut host) = connect(Options::new());
    host.send(SEED_SETTLED).await;
    host.send("{oops").await;
    host.send(r#"{"jsonrpc":"2.0","method":"future/notice"}"#)
        .await;
    let mut notes = conn.notifications().await;
    let mut pinned = std::pin::Pin::new(&mut notes);
    // Read through the `Stream` impl, as a `StreamExt` user would.
    let first = std::future::poll_fn(|cx| pinned.as_mut().poll_next(cx)).await;
    assert!(matches!(
        first,
        Some(Inbound::Notification {
            notification: ProtocolNotification::UserInputSettled(_),
            ..
        })
    ));
    assert!(matches!(notes.next().await, Some(Inbound::Undecodable(_))));
    assert!(matches!(
        notes.next().await,
        Some(Inbound::Notification {
            notification: ProtocolNotification::Unknown { .. },
            ..
        })
    ));
}

#[tokio::test]
async fn the_handshake_warns_on_an_unknown_fingerprint() {
    let (conn, mut host) = connect(Options::new());
    let opened = tokio::spawn({
        let conn = conn.clone();
        async move {
            let params = InitializeParams::builder()
                .client_info(ClientInfo::builder().name("t").version("0").build())
                .build();
            conn.initialize(&params).await.map(|h| h.warnings.clone())
        }
    });
    let init = host.recv().await.unwrap();
    host.answer(&init, &initialize_result("sha256:abc", 1))
        .await;
    assert_eq!(host.recv().await.unwrap()["method"], "initialized");
    let warnings = opened.await.unwrap().unwrap();
    assert!(
        matches!(&warnings[..], [Warning::UnknownFingerprint { served }] if served == "sha256:abc")
    );
    let _ = LONG;
}

#[tokio::test]
async fn a_consumer_that_stops_halfway_holds_up_neither_responses_nor_the_peers_requests() {
    let (conn, mut host) = connect(Options::new());
    let request = spawn_model_list(&conn);
    let frame = host.recv().await.unwrap();
    // A consumer takes one notification, then stops (busy elsewhere) holding the stream.
    let (took_tx, took) = tokio::sync::oneshot::channel();
    let consumer = tokio::spawn({
        let conn = conn.clone();
        async move {
            let mut notifications = conn.notifications().await;
            let _ = took_tx.send(notifications.next().await);
            std::future::pending::<()>().await;
        }
    });
    tokio::task::yield_now().await;
    let mut burst = numbered_notices(500);
    burst.push_str(SEED_REQUEST);
    burst.push('\n');
    burst.push_str(&format!("{}\n", result_line(&frame, MODELS)));
    let writes = host.writes.as_mut().unwrap();
    let (sent, first) = tokio::join!(writes.write_all(burst.as_bytes()), took);
    sent.unwrap();
    assert_eq!(
        notice_number(&first.unwrap().expect("the consumer got one")),
        0
    );
    // The response after the 500 lines reaches its caller, and the host's request its reply.
    assert!(request.await.unwrap().is_ok());
    let reply = host.recv().await.unwrap();
    assert_eq!(reply["id"], 18);
    assert_eq!(reply["error"]["code"], -32601);
    // What the consumer left is queued, in order, for the next consumer.
    consumer.abort();
    let _ = consumer.await;
    let mut notifications = conn.notifications().await;
    for n in 1..500 {
        assert_eq!(notice_number(&notifications.next().await.unwrap()), n);
    }
}

#[tokio::test]
async fn a_flood_larger_than_the_backlog_arrives_whole_and_in_order() {
    let (conn, mut host) = connect(Options::new());
    // About 4 MiB: the reader waits for the consumer (the backlog holds 1 MiB) and goes on.
    let count = 16_000;
    let feeder = tokio::spawn(async move {
        let writes = host.writes.as_mut().unwrap();
        writes
            .write_all(numbered_notices(count).as_bytes())
            .await
            .unwrap();
        host
    });
    let mut notifications = conn.notifications().await;
    for n in 0..count as u64 {
        assert_eq!(notice_number(&notifications.next().await.unwrap()), n);
    }
    // The host goes away: its output ends.
    drop(feeder.await.unwrap());
    assert!(
        notifications.next().await.is_none(),
        "the flood is all there was"
    );
}

#[tokio::test]
async fn a_response_inside_a_flood_arrives_while_the_flood_is_consumed() {
    let (conn, mut host) = connect(Options::new());
    let request = spawn_model_list(&conn);
    let frame = host.recv().await.unwrap();
    let feeder = tokio::spawn(async move {
        let mut burst = numbered_notices(3_000);
        burst.push_str(&format!("{}\n", result_line(&frame, MODELS)));
        burst.push_str(&numbered_notices(3_000));
        let writes = host.writes.as_mut().unwrap();
        writes.write_all(burst.as_bytes()).await.unwrap();
        host
    });
    let mut notifications = conn.notifications().await;
    let mut expected = 0;
    for _ in 0..6_000 {
        assert_eq!(
            notice_number(&notifications.next().await.unwrap()),
            expected
        );
        expected = (expected + 1) % 3_000;
    }
    assert!(request.await.unwrap().is_ok());
    drop(feeder.await.unwrap());
}

/// A stream that notes which task each write came from.
struct NotingTasks<W> {
    inner: W,
    tasks: Arc<Mutex<Vec<Option<tokio::task::Id>>>>,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for NotingTasks<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.tasks.lock().unwrap().push(tokio::task::try_id());
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A stream that takes at most 7 bytes a write, and every other write not at once (it asks
/// to be polled again): lines go out in pieces, over several polls. Its first write is taken,
/// so a request's own poll writes part of its line and stops.
struct Trickle<W> {
    inner: W,
    turn: bool,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Trickle<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.turn = !self.turn;
        if self.turn {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let n = buf.len().min(7);
        Pin::new(&mut self.inner).poll_write(cx, &buf[..n])
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

fn trickle(inner: WriteHalf<DuplexStream>) -> Trickle<WriteHalf<DuplexStream>> {
    Trickle { inner, turn: true }
}

#[tokio::test]
async fn a_request_is_written_from_its_callers_task_when_the_stream_takes_it() {
    let tasks = Arc::new(Mutex::new(Vec::new()));
    let noted = tasks.clone();
    let (conn, mut host) =
        connect_writing_through(Options::new(), 64 * 1024, move |inner| NotingTasks {
            inner,
            tasks: noted,
        });
    let caller = {
        let conn = conn.clone();
        tokio::spawn(async move {
            let result = conn
                .request::<methods::ModelList>(&ModelListParams::new())
                .await;
            (tokio::task::id(), result)
        })
    };
    let frame = host.recv().await.unwrap();
    host.answer(&frame, MODELS).await;
    let (caller, result) = caller.await.unwrap();
    result.unwrap();
    // One write, the whole line, on the caller's task (not the writer task's).
    assert_eq!(*tasks.lock().unwrap(), [Some(caller)]);
}

#[tokio::test]
async fn a_request_dropped_after_part_of_its_line_was_written_leaves_whole_lines() {
    let (conn, mut host) = connect_writing_through(Options::new(), 64 * 1024, trickle);
    let params = ModelListParams::new();
    tokio::select! {
        biased;
        _ = conn.request::<methods::ModelList>(&params) => panic!("no answer was sent"),
        // The request's first poll queued its line and the stream took 7 bytes of it; the
        // future is dropped here.
        () = std::future::ready(()) => {}
    }
    let asked = spawn_model_list(&conn);
    let two = async { (host.recv().await, host.recv().await) };
    let (first, second) = tokio::time::timeout(LONG, two)
        .await
        .expect("two whole lines");
    let (first, second) = (first.unwrap(), second.unwrap());
    assert_eq!((&first["id"], &second["id"]), (&json!(1), &json!(2)));
    assert_eq!(first["method"], "model/list");
    // The dropped request's late answer makes no noise; the next one gets its own.
    host.answer(&first, MODELS).await;
    host.answer(&second, MODELS).await;
    assert_eq!(asked.await.unwrap().unwrap().models.len(), 1);
}

#[tokio::test]
async fn lines_from_many_threads_never_interleave_on_a_stream_that_takes_a_few_bytes_at_a_time() {
    let (conn, mut host) = connect_writing_through(Options::new(), 64 * 1024, trickle);
    // Four threads, each with a runtime of its own, send requests and notifications at once;
    // the connection's tasks run on this test's runtime.
    let results: Vec<_> = (0..4)
        .map(|thread| {
            let conn = conn.clone();
            on_own_runtime(10, move |k| {
                let conn = conn.clone();
                async move {
                    let n = thread * 10 + k;
                    if k % 2 == 0 {
                        let initialized = None;
                        conn.notify::<msp_types::protocol::notifications::Initialized>(
                            &initialized,
                        )
                        .unwrap();
                    }
                    let params = answer_params(n);
                    let result = conn.request::<methods::UserInputAnswerMethod>(&params);
                    (n, result.await.map(|r| r.user_input_id))
                }
            })
        })
        .collect();
    // Every line whole (the host double parses each): 40 requests, 20 notifications.
    let (mut requests, mut notifications) = (Vec::new(), 0);
    while requests.len() < 40 || notifications < 20 {
        let frame = host.recv().await.unwrap();
        match frame.get("id") {
            Some(_) => requests.push(frame),
            None => notifications += 1,
        }
    }
    for frame in &requests {
        let echoed = &frame["params"]["userInputId"];
        host.answer(
            frame,
            &format!(r#"{{"commandId":"c","status":"accepted","userInputId":{echoed}}}"#),
        )
        .await;
    }
    for result in results {
        for (n, answered) in result.await.unwrap() {
            assert_eq!(answered.unwrap(), format!("q-{n}"));
        }
    }
}

#[tokio::test]
async fn a_peer_that_stops_reading_times_requests_out_and_holds_up_no_caller() {
    // Room for 64 bytes, never read: the first line fills it.
    let (conn, _host) = connect_writing_through(
        Options::new().timeout(Duration::from_millis(100)),
        64,
        |writes| writes,
    );
    for n in 0..3 {
        let error = conn
            .request::<methods::UserInputAnswerMethod>(&answer_params(n))
            .await
            .unwrap_err();
        assert!(matches!(error, RpcError::TimedOut { .. }), "{error}");
    }
}

#[tokio::test]
async fn the_last_clone_dropped_ends_the_tasks_though_the_peer_neither_closes_nor_reads() {
    let (conn, mut host) = connect(Options::new());
    drop(conn);
    // The peer goes on writing and reads nothing: once the driver's tasks ended, its
    // stream is dropped and the peer's write fails.
    let mut writes = host.writes.take().unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n";
            if let Err(e) = writes.write_all(line).await {
                return e.kind();
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(ended.ok(), Some(io::ErrorKind::BrokenPipe));
}
