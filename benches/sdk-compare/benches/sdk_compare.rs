//! msp-rpc's tokio connection and msp-session's fold against the official Rust SDK,
//! `muse-code-sdk` 1.4.14, on the two workloads of msp-bench's `rpc` bench and the frames of
//! its `session` bench, against the same baselines, in one run:
//!
//! - a request round trip, `userInput/answer` from typed params to a typed result, over an
//!   in-memory pipe whose host task answers each request line, against `rpc.rs`'s
//!   hand-written tokio line loop; on a current-thread runtime, as there;
//! - a notification flood: the golden corpus' server notifications, `MSP_BENCH_FLOOD_REPEAT`
//!   times a pass (default 200, as `rpc.rs`), written by a host task into an in-memory pipe
//!   of 64 KiB and taken by one consumer, against `Frame::parse` of the same lines; on a
//!   current-thread runtime and on one with two workers;
//! - a fold of one session: the session bench's streamed turn, each line decoded and folded
//!   by each side with no connection or client around it, against `Frame::parse` ([`fold`]).
//!
//! Every ratio is the median, over pairs of adjacent passes, of the case's pass to its
//! baseline's pass (msp-bench's `Group::run_paired`, as in `rpc.rs`); SDK/ours divides the
//! SDK's ratio by ours, so both sides are measured against the same baseline.
//!
//! The SDK is driven through its lowest public layer, `connection::Connection` over a
//! `DuplexTransport` (the `SdkPipe` below: the SDK keeps its pipe transport private, and its
//! public `StdioTransport` takes a child's pipes only): `Connection::request` with the SDK's
//! own params and result types through `serde_json`, as its `Session::answer_user_input`
//! does inside, and one `subscribe_notifications` receiver, the only public way to see every
//! notification. That receiver is a broadcast channel of 64: a consumer that falls behind
//! loses the oldest (`Lagged`), so the flood prints how many frames it delivered. On a
//! current-thread runtime the SDK's driver reads on without letting the consumer run and
//! nearly all are lost; a diagnostic case has the transport yield before each read, so that
//! the same consumer receives every frame.
//!
//! Run in this folder: `MSP_SHARED_DIR=../../../shared cargo bench --ignore-rust-version`.

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use msp_bench::corpus::{self, Corpus, Dir};
use msp_bench::measure::{median, rounds, Group, Paired, Report};
use msp_bench::streamed;
use msp_rpc::{Inbound, Options};
use msp_types::protocol::methods;
use msp_types::rpc::Id;
use msp_types::{
    Frame, Message, Sender, UserInputAnswer, UserInputAnswerParams, UserInputAnswerResult,
};
use muse_code_sdk::connection::Connection as SdkConnection;
use muse_code_sdk::fold::SessionFold;
use muse_code_sdk::msp as sdk;
use muse_code_sdk::DuplexTransport;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::runtime::Runtime;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

/// Round trips per pass, and pairs of passes (`MSP_BENCH_ROUNDS` sets the pairs too).
const CALLS: usize = 200;
const ROUND_TRIP_PAIRS: u32 = 101;
/// Pairs of flood passes, as `rpc.rs`.
const FLOOD_PAIRS: u32 = 15;
/// The in-memory pipes' capacity, as an OS pipe's.
const PIPE_BYTES: usize = 64 * 1024;

/// `MSP_BENCH_FLOOD_REPEAT`, default 200, as `rpc.rs`.
fn flood_repeat() -> usize {
    env_usize("MSP_BENCH_FLOOD_REPEAT", 200).max(1)
}

/// What `SdkPipe` reads at most at a time: `MSP_SDK_READ_BYTES`, default 8 KiB, what the SDK's
/// own `StdioTransport` reads (a tokio `BufReader` of the default size).
fn sdk_read_bytes() -> usize {
    env_usize("MSP_SDK_READ_BYTES", 8 * 1024).max(16)
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The SDK's transport trait over a tokio reader and writer: chunks of whole UTF-8 characters,
/// an incomplete one kept for the next read. Cancel-safe, as the SDK's driver needs (it drops
/// a read when a request comes first): a dropped `read_buf` has taken no bytes.
struct SdkPipe<R, W> {
    reader: R,
    writer: W,
    held: Vec<u8>,
    read_bytes: usize,
    /// Whether each read first yields to the runtime's other tasks (see `flood`).
    yields: bool,
}

impl<R, W> SdkPipe<R, W> {
    fn new(reader: R, writer: W, yields: bool) -> Self {
        SdkPipe {
            reader,
            writer,
            held: Vec::new(),
            read_bytes: sdk_read_bytes(),
            yields,
        }
    }
}

impl<R, W> DuplexTransport for SdkPipe<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    fn read_chunk(
        &mut self,
    ) -> Pin<Box<dyn Future<Output = io::Result<Option<String>>> + Send + '_>> {
        Box::pin(async move {
            if self.yields {
                // Before anything is read, so a read dropped here loses nothing.
                tokio::task::yield_now().await;
            }
            loop {
                self.held.reserve_exact(self.read_bytes);
                let mut read = (&mut self.reader).take(self.read_bytes as u64);
                if read.read_buf(&mut self.held).await? == 0 {
                    return match self.held.is_empty() {
                        true => Ok(None),
                        false => Err(io::ErrorKind::UnexpectedEof.into()),
                    };
                }
                // Validated once; only a chunk that ends inside a character is split.
                match String::from_utf8(std::mem::take(&mut self.held)) {
                    Ok(chunk) => return Ok(Some(chunk)),
                    Err(e) if e.utf8_error().error_len().is_some() => {
                        return Err(io::Error::new(io::ErrorKind::InvalidData, e))
                    }
                    Err(e) => {
                        let whole = e.utf8_error().valid_up_to();
                        let mut bytes = e.into_bytes();
                        self.held = bytes.split_off(whole);
                        if whole > 0 {
                            return Ok(Some(String::from_utf8(bytes).expect("whole characters")));
                        }
                    }
                }
            }
        })
    }

    fn write(&mut self, frame: &str) -> Pin<Box<dyn Future<Output = io::Result<()>> + Send + '_>> {
        // The future may not borrow `frame`; the SDK's own transport copies it too.
        let frame = frame.as_bytes().to_vec();
        Box::pin(async move {
            self.writer.write_all(&frame).await?;
            self.writer.flush().await
        })
    }
}

fn sdk_connection(
    reader: impl AsyncRead + Unpin + Send + 'static,
    writer: impl AsyncWrite + Unpin + Send + 'static,
    yields: bool,
) -> SdkConnection {
    let (connection, driver) = SdkConnection::new(SdkPipe::new(reader, writer, yields));
    tokio::spawn(driver.run());
    connection
}

fn current_thread() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn two_workers() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// One line of the table.
struct Row {
    case: &'static str,
    /// Nanoseconds a call or a frame, and which.
    time: (f64, &'static str),
    /// The median ratio to the baseline and its middle half.
    ratio: Option<(f64, f64, f64)>,
    sdk_over_ours: Option<f64>,
    note: String,
}

fn main() {
    let mut report = Report::new("sdk_compare");
    let mut rows = Vec::new();
    round_trip(&mut report, &mut rows);
    match corpus::load() {
        Ok(corpus) => {
            flood(&mut report, &mut rows, &flood_lines(&corpus));
            fold(&mut report, &mut rows, &corpus);
        }
        Err(reason) => println!("notification flood and fold skipped: {reason}"),
    }
    println!(
        "\n{:<36} {:>15}  {:>24}  {:>8}",
        "case", "time", "ratio to baseline", "SDK/ours"
    );
    for row in &rows {
        let (ns, unit) = row.time;
        let time = match unit {
            "call" => format!("{:.1} us/{unit}", ns / 1e3),
            _ => format!("{ns:.0} ns/{unit}"),
        };
        let ratio = row.ratio.map_or("baseline".to_owned(), |(r, low, high)| {
            format!("{r:.3} ({low:.3}-{high:.3})")
        });
        let sdk = row
            .sdk_over_ours
            .map_or(String::new(), |x| format!("{x:.2}"));
        println!(
            "{:<36} {time:>15}  {ratio:>24}  {sdk:>8}  {}",
            row.case, row.note
        );
    }
    report.save();
}

/// A case's median time a unit, and its ratio to the baseline, as `rpc.rs` prints them; `None`
/// when `MSP_BENCH_ONLY` left it out.
fn row(
    paired: &Paired,
    report: &mut Report,
    key: &str,
    case: &'static str,
    units: usize,
    unit: &'static str,
) -> Option<Row> {
    let times = &paired.times.iter().find(|(name, _)| name == key)?.1;
    let ns = median(&mut times.clone()).as_secs_f64() * 1e9 / units as f64;
    report.put(key, format!("{ns:.0}"));
    let ratio = paired.ratio(key).map(|r| {
        report.put(format!("ratio.{key}"), format!("{r:.3}"));
        let (low, high) = paired.middle_half(key).unwrap_or((r, r));
        (r, low, high)
    });
    Some(Row {
        case,
        time: (ns, unit),
        ratio,
        sdk_over_ours: None,
        note: String::new(),
    })
}

/// The SDK's row's ratio over ours.
fn sdk_over_ours(report: &mut Report, ours: &Option<Row>, sdk: &mut Option<Row>, key: &str) {
    let (Some(ours), Some(sdk)) = (ours, sdk) else {
        return;
    };
    if let (Some((ours, ..)), Some((theirs, ..))) = (ours.ratio, sdk.ratio) {
        sdk.sdk_over_ours = Some(theirs / ours);
        report.put(key, format!("{:.3}", theirs / ours));
    }
}

// The round trip: `rpc.rs`'s params, answer and hand-written loop (private to that bench).

fn params() -> UserInputAnswerParams {
    let mut answer = UserInputAnswer::builder().question_id("db_choice").build();
    answer.selected_label = Some("Postgres".into());
    UserInputAnswerParams::builder()
        .answers(vec![answer])
        .command_id("018f6a2b-3333-7abc-8def-00000000d002")
        .session_id("0198f0aa-1111-7000-8000-0000000000bb")
        .user_input_id("0198f0ae-1111-7000-8000-0000000000f1")
        .build()
}

/// The same params in the SDK's types.
fn sdk_params() -> sdk::UserInputAnswerParams {
    sdk::UserInputAnswerParams {
        session_id: "0198f0aa-1111-7000-8000-0000000000bb".into(),
        command_id: "018f6a2b-3333-7abc-8def-00000000d002".into(),
        user_input_id: "0198f0ae-1111-7000-8000-0000000000f1".into(),
        answers: vec![sdk::UserInputAnswer {
            question_id: "db_choice".into(),
            selected_label: Some("Postgres".into()),
            selected_labels: Vec::new(),
            free_text: None,
            note: None,
        }],
    }
}

const RESULT: &str = r#"{"commandId":"018f6a2b-3333-7abc-8def-00000000d002","status":"accepted","userInputId":"0198f0ae-1111-7000-8000-0000000000f1"}"#;

/// The answer to a request line: the same for every side, found without a JSON parser.
fn answer(request: &str) -> String {
    let id = request
        .split_once(r#""id":"#)
        .and_then(|(_, rest)| rest.split([',', '}']).next())
        .unwrap_or("0");
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{RESULT}}}\n")
}

/// A host task answering every request line of `stream` until it ends.
async fn echo_host(stream: tokio::io::DuplexStream) {
    let (reads, mut writes) = tokio::io::split(stream);
    let mut lines = tokio::io::BufReader::new(reads).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if writes.write_all(answer(&line).as_bytes()).await.is_err() {
            return;
        }
    }
}

#[derive(Serialize)]
struct Call<'a, P> {
    jsonrpc: &'static str,
    id: i64,
    method: &'static str,
    params: &'a P,
}

#[derive(Deserialize)]
struct Answer<T> {
    #[allow(dead_code)]
    id: Id,
    result: T,
}

/// The SDK's `userInput/answer`: what `Session::answer_user_input` does around
/// `Connection::request`, without the session (its checks of the echoed ids aside).
async fn sdk_answer(
    connection: &SdkConnection,
    params: &sdk::UserInputAnswerParams,
) -> sdk::UserInputAnswerResult {
    let serde_json::Value::Object(params) = serde_json::to_value(params).unwrap() else {
        unreachable!("params are an object")
    };
    let result = connection
        .request("userInput/answer", Some(params))
        .await
        .unwrap();
    serde_json::from_value(serde_json::Value::Object(result)).unwrap()
}

fn round_trip(report: &mut Report, rows: &mut Vec<Row>) {
    println!("request round trip, tokio current-thread runtime ({CALLS} calls a pass)");
    let (params, sdk_params) = (params(), sdk_params());
    let runtime = current_thread();
    let (hand_client, hand_host) = tokio::io::duplex(PIPE_BYTES);
    let (ours_client, ours_host) = tokio::io::duplex(PIPE_BYTES);
    let (sdk_client, sdk_host) = tokio::io::duplex(PIPE_BYTES);
    let (hand_reads, mut hand_writes) = tokio::io::split(hand_client);
    let mut hand_reads = tokio::io::BufReader::new(hand_reads);
    let (ours, theirs) = runtime.block_on(async {
        for host in [hand_host, ours_host, sdk_host] {
            tokio::spawn(echo_host(host));
        }
        let (reads, writes) = tokio::io::split(ours_client);
        let ours = msp_rpc::tokio::Connection::new(reads, writes, Options::new());
        let (reads, writes) = tokio::io::split(sdk_client);
        (ours, sdk_connection(reads, writes, false))
    });
    let mut next_id = 1i64;
    let mut group = Group::default();
    group.add("roundtrip.hand_loop", || {
        runtime.block_on(async {
            let mut line = String::new();
            for _ in 0..CALLS {
                let call = Call {
                    jsonrpc: "2.0",
                    id: next_id,
                    method: "userInput/answer",
                    params: &params,
                };
                next_id += 1;
                let mut out = serde_json::to_string(&call).unwrap();
                out.push('\n');
                hand_writes.write_all(out.as_bytes()).await.unwrap();
                line.clear();
                hand_reads.read_line(&mut line).await.unwrap();
                let answer: Answer<UserInputAnswerResult> = serde_json::from_str(&line).unwrap();
                std::hint::black_box(answer.result);
            }
        })
    });
    group.add("roundtrip.msp_rpc", || {
        runtime.block_on(async {
            for _ in 0..CALLS {
                let result = ours
                    .request::<methods::UserInputAnswerMethod>(&params)
                    .await;
                std::hint::black_box(result.unwrap());
            }
        })
    });
    group.add("roundtrip.sdk", || {
        runtime.block_on(async {
            for _ in 0..CALLS {
                std::hint::black_box(sdk_answer(&theirs, &sdk_params).await);
            }
        })
    });
    let paired = group.run_paired("roundtrip.hand_loop", rounds(ROUND_TRIP_PAIRS));
    let mut call = |key, case| row(&paired, report, key, case, CALLS, "call");
    let hand = call("roundtrip.hand_loop", "round trip: hand-written loop");
    let ours = call("roundtrip.msp_rpc", "round trip: msp-rpc");
    let mut theirs = call("roundtrip.sdk", "round trip: muse-code-sdk");
    sdk_over_ours(report, &ours, &mut theirs, "roundtrip.sdk/msp_rpc");
    rows.extend([hand, ours, theirs].into_iter().flatten());
}

// The flood.

/// The corpus' server notifications, as lines (as `rpc.rs` takes them).
fn flood_lines(corpus: &Corpus) -> Vec<String> {
    corpus
        .lines
        .iter()
        .filter(|l| l.dir == Some(Dir::Server) && l.kind == corpus::Kind::Notification)
        .map(|l| l.raw.trim_end_matches('\r').to_owned())
        .collect()
}

/// A host task on `runtime` writing `bytes` into a pipe each time it is told to; the pipe's
/// other end.
fn flood_host(
    runtime: &Runtime,
    bytes: &Arc<[u8]>,
) -> (mpsc::UnboundedSender<()>, tokio::io::DuplexStream) {
    let (client, mut host) = tokio::io::duplex(PIPE_BYTES);
    let (go, mut bursts) = mpsc::unbounded_channel::<()>();
    let bytes = bytes.clone();
    runtime.spawn(async move {
        while bursts.recv().await.is_some() {
            if host.write_all(&bytes).await.is_err() {
                return;
            }
        }
    });
    (go, client)
}

/// How many of `bytes`' lines the SDK's connection broadcasts as notifications: it reports
/// any other as a protocol error and drops it, so a flood pass waits for these only.
fn sdk_accepts(bytes: &[u8]) -> usize {
    let runtime = current_thread();
    runtime.block_on(async {
        let (client, mut host) = tokio::io::duplex(PIPE_BYTES);
        let (connection, driver) =
            SdkConnection::new(SdkPipe::new(client, tokio::io::sink(), false));
        let mut notifications = connection.subscribe_notifications();
        let driver = tokio::spawn(driver.run());
        let bytes = bytes.to_vec();
        tokio::spawn(async move { host.write_all(&bytes).await });
        driver.await.unwrap();
        drop(connection);
        let mut accepted = 0;
        loop {
            match notifications.recv().await {
                Ok(_) => accepted += 1,
                Err(RecvError::Lagged(lost)) => accepted += lost as usize,
                Err(RecvError::Closed) => return accepted,
            }
        }
    })
}

fn flood(report: &mut Report, rows: &mut Vec<Row>, lines: &[String]) {
    let repeat = flood_repeat();
    let frames = lines.len() * repeat;
    let bytes: Vec<u8> = (0..repeat)
        .flat_map(|_| lines.iter().flat_map(|l| l.as_bytes().iter().chain(b"\n")))
        .copied()
        .collect();
    println!(
        "\nnotification flood ({frames} frames, {} bytes a pass, the SDK reading {} bytes at a time)",
        bytes.len(),
        sdk_read_bytes()
    );
    let bytes: Arc<[u8]> = bytes.into();
    let accepted = sdk_accepts(&bytes);
    let (runtime, workers) = (current_thread(), two_workers());

    // msp-rpc: one notification stream through every pass, as `rpc.rs`.
    let ours_on = |runtime: &Runtime| {
        let (go, pipe) = flood_host(runtime, &bytes);
        let connection = runtime.block_on(async {
            msp_rpc::tokio::Connection::new(pipe, tokio::io::sink(), Options::new())
        });
        (go, connection)
    };
    let (ours_go, ours) = ours_on(&runtime);
    let (ours_workers_go, ours_workers) = ours_on(&workers);
    let mut ours_stream = runtime.block_on(ours.notifications());
    let mut ours_workers_stream = workers.block_on(ours_workers.notifications());
    let ours_pass = |runtime: &Runtime,
                     go: &mpsc::UnboundedSender<()>,
                     stream: &mut msp_rpc::tokio::Notifications<'_>| {
        go.send(()).unwrap();
        runtime.block_on(async {
            for _ in 0..frames {
                let inbound = stream.next().await.expect("the flood continues");
                assert!(
                    matches!(inbound, Inbound::Notification { .. }),
                    "{inbound:?}"
                );
            }
        })
    };

    // The SDK: one broadcast receiver through every pass.
    let (sdk, sdk_yielding, sdk_workers) = (
        SdkFlood::new(&runtime, &bytes, false),
        SdkFlood::new(&runtime, &bytes, true),
        SdkFlood::new(&workers, &bytes, false),
    );

    let replay: Vec<&str> = std::str::from_utf8(&bytes)
        .expect("the corpus is UTF-8")
        .lines()
        .collect();
    assert_eq!(replay.len(), frames);
    let mut group = Group::default();
    group.add("flood.frame_parse", || {
        for line in &replay {
            std::hint::black_box(Frame::parse(Sender::Server, line).unwrap());
        }
    });
    group.add("flood.msp_rpc", || {
        ours_pass(&runtime, &ours_go, &mut ours_stream)
    });
    group.add("flood.sdk", || sdk.pass(&runtime, accepted));
    // Diagnostic: the SDK's driver yields before each read, so that the consumer, on the same
    // thread, can take what the last read broadcast before the channel overwrites it.
    group.add("flood.sdk_yielding", || {
        sdk_yielding.pass(&runtime, accepted)
    });
    group.add("flood.msp_rpc_workers", || {
        ours_pass(&workers, &ours_workers_go, &mut ours_workers_stream)
    });
    group.add("flood.sdk_workers", || sdk_workers.pass(&workers, accepted));
    let paired = group.run_paired("flood.frame_parse", rounds(FLOOD_PAIRS));
    let mut frame = |key, case| row(&paired, report, key, case, frames, "frame");
    let base = frame("flood.frame_parse", "flood: Frame::parse");
    let ours = frame("flood.msp_rpc", "flood: msp-rpc, current thread");
    let mut theirs = frame("flood.sdk", "flood: muse-code-sdk, current thread");
    let mut yielding = frame("flood.sdk_yielding", "  the same, transport yields");
    let ours_workers = frame("flood.msp_rpc_workers", "flood: msp-rpc, 2 workers");
    let mut theirs_workers = frame("flood.sdk_workers", "flood: muse-code-sdk, 2 workers");
    sdk_over_ours(report, &ours, &mut theirs, "flood.sdk/msp_rpc");
    sdk_over_ours(report, &ours, &mut yielding, "flood.sdk_yielding/msp_rpc");
    sdk_over_ours(
        report,
        &ours_workers,
        &mut theirs_workers,
        "flood.sdk_workers/msp_rpc_workers",
    );
    for (row, flood, key) in [
        (&mut theirs, sdk, "flood.sdk.received"),
        (&mut yielding, sdk_yielding, "flood.sdk_yielding.received"),
        (
            &mut theirs_workers,
            sdk_workers,
            "flood.sdk_workers.received",
        ),
    ] {
        let mut received = flood.received.into_inner();
        let Some(row) = row.as_mut().filter(|_| !received.is_empty()) else {
            continue;
        };
        received.sort_unstable();
        let middle = received[received.len() / 2];
        report.put(key, middle);
        row.note = format!(
            "received {middle} of {frames} a pass (median; {}-{})",
            received[0],
            received[received.len() - 1]
        );
        if accepted < frames {
            row.note += &format!(", {} rejected", frames - accepted);
        }
    }
    rows.extend(
        [base, ours, theirs, yielding, ours_workers, theirs_workers]
            .into_iter()
            .flatten(),
    );
}

/// The SDK's side of the flood: a host, a connection, its one notification receiver, and how
/// many frames it received each pass.
struct SdkFlood {
    go: mpsc::UnboundedSender<()>,
    _connection: SdkConnection,
    notifications: RefCell<tokio::sync::broadcast::Receiver<sdk::Notification>>,
    received: RefCell<Vec<usize>>,
}

impl SdkFlood {
    fn new(runtime: &Runtime, bytes: &Arc<[u8]>, yields: bool) -> Self {
        let (go, pipe) = flood_host(runtime, bytes);
        let connection =
            runtime.block_on(async { sdk_connection(pipe, tokio::io::sink(), yields) });
        SdkFlood {
            go,
            notifications: RefCell::new(connection.subscribe_notifications()),
            _connection: connection,
            received: RefCell::new(Vec::new()),
        }
    }

    /// One pass: it ends when each of the `accepted` frames was received or reported lost.
    fn pass(&self, runtime: &Runtime, accepted: usize) {
        self.go.send(()).unwrap();
        let notifications = &mut *self.notifications.borrow_mut();
        let got = runtime.block_on(async {
            let (mut got, mut lost) = (0, 0);
            while got + lost < accepted {
                match notifications.recv().await {
                    Ok(notification) => {
                        std::hint::black_box(notification);
                        got += 1;
                    }
                    Err(RecvError::Lagged(n)) => lost += n as usize,
                    Err(RecvError::Closed) => panic!("the SDK's connection closed"),
                }
            }
            got
        });
        self.received.borrow_mut().push(got);
    }
}

// The fold.

/// The session the fold's frames name.
const SESSION: &str = "bench-session";

/// Times the fold's pass streams the corpus (`MSP_BENCH_SESSION_REPEAT`), and its pairs of
/// passes, as msp-bench's `session` bench.
const FOLD_REPEAT: usize = 40;
const FOLD_PAIRS: u32 = 41;

/// Each side's fold of one session, decoding each line as its connection would and folding
/// what decoded, against `Frame::parse` of the same lines: msp-session's `Fold::apply` of our
/// typed notification, the SDK's `SessionFold::apply` of its notification (a method and a JSON
/// object). The lines are the session bench's streamed turn ([`streamed`]), with no
/// connection or client around either fold. A diagnostic row: the SDK's decode alone.
fn fold(report: &mut Report, rows: &mut Vec<Row>, corpus: &Corpus) {
    let repeat = env_usize("MSP_BENCH_SESSION_REPEAT", FOLD_REPEAT).max(1);
    let lines = streamed::lines(&streamed::frames(corpus), repeat, SESSION);
    let ours = || {
        let mut fold = msp_session::Fold::for_session(SESSION, Default::default());
        for line in &lines {
            if let Ok(Frame {
                message: Message::Notification(notification),
                ..
            }) = Frame::parse(Sender::Server, line)
            {
                std::hint::black_box(fold.apply(notification));
            }
        }
        fold
    };
    let theirs = || {
        let mut fold = SessionFold::new(SESSION);
        for line in &lines {
            if let Ok(notification) = serde_json::from_str::<sdk::Notification>(line) {
                std::hint::black_box(fold.apply(&notification));
            }
        }
        fold
    };
    // Before timing: ours folds every line (none is skipped as undecoded), and what each
    // fold ends with.
    let folded = ours();
    assert_eq!(folded.arrivals(), lines.len() as u64, "every line folded");
    let (our_items, their_items) = (folded.items().len(), theirs().items().len());
    println!(
        "\nfold of one session ({} frames a pass; items at the end: msp-session {our_items}, muse-code-sdk {their_items})",
        lines.len()
    );
    let mut group = Group::default();
    group.add("fold.frame_parse", || {
        for line in &lines {
            std::hint::black_box(Frame::parse(Sender::Server, line).unwrap());
        }
    });
    group.add("fold.msp_session", || {
        std::hint::black_box(ours().items().len());
    });
    group.add("fold.sdk", || {
        std::hint::black_box(theirs().items().len());
    });
    group.add("fold.sdk_decode", || {
        for line in &lines {
            std::hint::black_box(serde_json::from_str::<sdk::Notification>(line).unwrap());
        }
    });
    let paired = group.run_paired("fold.frame_parse", rounds(FOLD_PAIRS));
    let mut frame = |key, case| row(&paired, report, key, case, lines.len(), "frame");
    let base = frame("fold.frame_parse", "fold: Frame::parse");
    let ours = frame("fold.msp_session", "fold: msp-session");
    let mut theirs = frame("fold.sdk", "fold: muse-code-sdk");
    let decode = frame("fold.sdk_decode", "  its decode alone");
    sdk_over_ours(report, &ours, &mut theirs, "fold.sdk/msp_session");
    rows.extend([base, ours, theirs, decode].into_iter().flatten());
}
