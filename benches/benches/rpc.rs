//! The connection's cost: a request round trip over an in-memory pipe (blocking and async)
//! against a hand-written line loop doing the same work (encode the typed params, write a
//! line, read the answer line, decode the typed result), and a notification flood (the golden
//! corpus' server notifications) through the connection against `Frame::parse` alone: a
//! connection that lives through every pass (a flood meets a session under way), its host
//! sending one burst a pass from memory, so the ratio is the connection's own cost. Also, as
//! diagnostics, the same through an in-memory pipe a host thread writes, and with a new
//! connection every pass. Prints each time and the ratios the targets name; every ratio is
//! the median, over pairs of adjacent passes, of the case's pass to its baseline's pass (the
//! hand-written loop, `Frame::parse`).

use std::io::{BufRead, BufReader, Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use msp_bench::corpus::{self, Dir};
use msp_bench::measure::{self, median, rounds, Group, Report};
use msp_rpc::blocking::Connection;
use msp_rpc::pipe::{pipe, PipeReader, PipeWriter};
use msp_rpc::{Inbound, Options};
use msp_types::protocol::methods;
use msp_types::rpc::Id;
use msp_types::{Frame, Sender, UserInputAnswer, UserInputAnswerParams, UserInputAnswerResult};
use serde::{Deserialize, Serialize};

/// Round trips per pass.
const CALLS: usize = 200;
/// Pairs of round-trip passes (`MSP_BENCH_ROUNDS` sets it too).
const ROUND_TRIP_PAIRS: u32 = 101;
/// Times the corpus' notifications are replayed per flood pass: `MSP_BENCH_FLOOD_REPEAT`,
/// default 200 (about 38,000 frames, 24 MB). A pass is that long so that what happens once a
/// burst (the reader thread, blocked while the host was quiet, waking up) weighs on each frame
/// as it would in a sustained flood, not as it would in one of a few thousand frames.
const FLOOD_REPEAT: usize = 200;

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

const RESULT: &str = r#"{"commandId":"018f6a2b-3333-7abc-8def-00000000d002","status":"accepted","userInputId":"0198f0ae-1111-7000-8000-0000000000f1"}"#;

/// The answer to a request line: the same for both sides, found without a JSON parser.
fn answer(request: &str) -> String {
    let id = request
        .split_once(r#""id":"#)
        .and_then(|(_, rest)| rest.split([',', '}']).next())
        .unwrap_or("0");
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{RESULT}}}\n")
}

/// A host thread answering every request line until its input ends.
fn echo_host(requests: PipeReader, mut answers: PipeWriter) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(requests);
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
            if answers.write_all(answer(&line).as_bytes()).is_err() {
                return;
            }
            line.clear();
        }
    });
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
    id: Id,
    result: T,
}

/// The minimal hand-written client: one thread, its own line framing, no correlation table.
struct HandLoop {
    writer: PipeWriter,
    reader: BufReader<PipeReader>,
    next_id: i64,
    line: String,
}

impl HandLoop {
    fn new() -> Self {
        let (client_reads, host_writes) = pipe();
        let (host_reads, client_writes) = pipe();
        echo_host(host_reads, host_writes);
        HandLoop {
            writer: client_writes,
            reader: BufReader::new(client_reads),
            next_id: 1,
            line: String::new(),
        }
    }

    fn call(&mut self, params: &UserInputAnswerParams) -> UserInputAnswerResult {
        let id = self.next_id;
        self.next_id += 1;
        let call = Call {
            jsonrpc: "2.0",
            id,
            method: "userInput/answer",
            params,
        };
        let mut line = serde_json::to_string(&call).unwrap();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).unwrap();
        self.line.clear();
        self.reader.read_line(&mut self.line).unwrap();
        let answer: Answer<UserInputAnswerResult> = serde_json::from_str(&self.line).unwrap();
        assert_eq!(answer.id, Id::Number(id));
        answer.result
    }
}

fn connection() -> Connection {
    let (client_reads, host_writes) = pipe();
    let (host_reads, client_writes) = pipe();
    echo_host(host_reads, host_writes);
    Connection::new(client_reads, client_writes, Options::new())
}

/// The corpus' server notifications, as lines.
fn flood_lines() -> Result<Vec<String>, String> {
    let corpus = corpus::load()?;
    Ok(corpus
        .lines
        .iter()
        .filter(|l| l.dir == Some(Dir::Server) && l.kind == corpus::Kind::Notification)
        .map(|l| l.raw.trim_end_matches('\r').to_owned())
        .collect())
}

/// The threads of this process (Linux), to count what an idle connection keeps.
fn threads() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/task").ok()?.count())
}

fn main() {
    let mut report = Report::new("rpc");
    let params = params();

    // An idle blocking connection over pipes, without a handler and with one (a spawned host
    // adds one more, copying its stderr). A thread counts once `spawn` returned.
    if let Some(before) = threads() {
        let (plain_reads, _plain_host) = pipe();
        let plain = Connection::new(plain_reads, std::io::sink(), Options::new());
        let without = threads().unwrap_or(before) - before;
        let (handled_reads, _handled_host) = pipe();
        let options = Options::new().on_request(|_, _| msp_rpc::Reply::ok(&()));
        let handled = Connection::new(handled_reads, std::io::sink(), options);
        let with = threads().unwrap_or(before) - before - without;
        println!("threads of an idle blocking connection: {without} without a handler, {with} with one\n");
        report.put("threads.idle_blocking", without.to_string());
        report.put("threads.idle_blocking_handled", with.to_string());
        drop((plain, handled));
    }

    println!("request round trip, blocking ({CALLS} calls a pass):");
    let mut hand = HandLoop::new();
    let conn = connection();
    let mut group = Group::default();
    group.add("roundtrip.blocking.hand_loop", || {
        for _ in 0..CALLS {
            std::hint::black_box(hand.call(&params));
        }
    });
    group.add("roundtrip.blocking.connection", || {
        for _ in 0..CALLS {
            std::hint::black_box(
                conn.request::<methods::UserInputAnswerMethod>(&params)
                    .unwrap(),
            );
        }
    });
    round_trip_ratio(&mut report, group, "blocking");

    async_round_trip(&mut report, &params);

    match flood_lines() {
        Ok(lines) => flood(&mut report, &lines),
        Err(reason) => println!("\nnotification flood skipped: {reason}"),
    }
    report.save();
}

fn async_round_trip(report: &mut Report, params: &UserInputAnswerParams) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    println!("\nrequest round trip, tokio current-thread runtime ({CALLS} calls a pass):");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // A host task answering every request line.
    let host = |stream: tokio::io::DuplexStream| async move {
        let (reads, mut writes) = tokio::io::split(stream);
        let mut lines = tokio::io::BufReader::new(reads).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if writes.write_all(answer(&line).as_bytes()).await.is_err() {
                return;
            }
        }
    };
    let (hand_client, hand_host) = tokio::io::duplex(64 * 1024);
    let (conn_client, conn_host) = tokio::io::duplex(64 * 1024);
    let (hand_reads, mut hand_writes) = tokio::io::split(hand_client);
    let mut hand_reads = tokio::io::BufReader::new(hand_reads);
    let conn = runtime.block_on(async {
        tokio::spawn(host(hand_host));
        tokio::spawn(host(conn_host));
        let (reads, writes) = tokio::io::split(conn_client);
        msp_rpc::tokio::Connection::new(reads, writes, Options::new())
    });
    let mut next_id = 1i64;
    let mut group = Group::default();
    group.add("roundtrip.async.hand_loop", || {
        runtime.block_on(async {
            let mut line = String::new();
            for _ in 0..CALLS {
                let call = Call {
                    jsonrpc: "2.0",
                    id: next_id,
                    method: "userInput/answer",
                    params,
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
    group.add("roundtrip.async.connection", || {
        runtime.block_on(async {
            for _ in 0..CALLS {
                std::hint::black_box(
                    conn.request::<methods::UserInputAnswerMethod>(params)
                        .await
                        .unwrap(),
                );
            }
        })
    });
    round_trip_ratio(report, group, "async");
}

/// Runs the round trips of `group` (`roundtrip.<kind>.hand_loop` and `.connection`) in
/// adjacent pairs of passes, as the flood's, and prints each one's time a call and the
/// median of the pairs' ratios: the machine changes speed between seconds, and between runs
/// of this program, by more than the connection costs.
fn round_trip_ratio(report: &mut Report, group: Group, kind: &str) {
    let hand = format!("roundtrip.{kind}.hand_loop");
    let paired = group.run_paired(&hand, rounds(ROUND_TRIP_PAIRS));
    for (name, times) in &paired.times {
        let per_call = median(&mut times.clone()).as_secs_f64() * 1e6 / CALLS as f64;
        println!("  {name:<36} {per_call:>8.1} us a call");
        report.put(name.as_str(), format!("{per_call:.2}"));
    }
    let connection = format!("roundtrip.{kind}.connection");
    if let Some(ratio) = paired.ratio(&connection) {
        let (low, high) = paired.middle_half(&connection).unwrap_or((ratio, ratio));
        let pairs = paired.pairs();
        println!("  connection / hand loop, the median of {pairs} pairs: {ratio:.2} ({low:.2}-{high:.2})");
        report.put(format!("ratio.roundtrip.{kind}"), format!("{ratio:.2}"));
    }
}

/// One pass of the flood each time a pass asks for it (as a host sends a burst, then waits):
/// the connection's reader finds the bytes at once, and reads nothing between passes.
struct Burst<G> {
    bytes: Arc<[u8]>,
    at: usize,
    go: G,
}

impl<G> Burst<G> {
    fn new(bytes: &Arc<[u8]>, go: G) -> Self {
        Burst {
            bytes: bytes.clone(),
            at: bytes.len(),
            go,
        }
    }

    fn fill(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        n
    }
}

// The host's reads stay out of line, so that instruction counts can tell its copy apart from
// the connection's work (scripts/flood_instructions.sh).
impl Read for Burst<std::sync::mpsc::Receiver<()>> {
    #[inline(never)]
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.bytes.len() {
            match self.go.recv() {
                Ok(()) => self.at = 0,
                Err(_) => return Ok(0),
            }
        }
        Ok(self.fill(buf))
    }
}

impl tokio::io::AsyncRead for Burst<tokio::sync::mpsc::UnboundedReceiver<()>> {
    #[inline(never)]
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.at == self.bytes.len() {
            match self.go.poll_recv(cx) {
                Poll::Ready(Some(())) => self.at = 0,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = self.fill(buf.initialize_unfilled());
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

/// Takes `frames` frames of a flood, checking each is a notification.
fn take_flood(inbound: impl Iterator<Item = Inbound>, frames: usize) {
    let mut seen = 0;
    for inbound in inbound.take(frames) {
        assert!(
            matches!(inbound, Inbound::Notification { .. }),
            "{inbound:?}"
        );
        seen += 1;
    }
    assert_eq!(seen, frames, "the flood ended early");
}

fn flood(report: &mut Report, lines: &[String]) {
    let repeat = measure::repeat("MSP_BENCH_FLOOD_REPEAT", FLOOD_REPEAT);
    let frames = lines.len() * repeat;
    let mut bytes = Vec::new();
    for _ in 0..repeat {
        for line in lines {
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
    }
    println!(
        "\nnotification flood ({frames} frames, {} bytes a pass):",
        bytes.len()
    );
    let bytes: Arc<[u8]> = bytes.into();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let workers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Connections that live through every pass, as a flood meets a session under way; each
    // pass has its host send one burst.
    let (go, burst) = std::sync::mpsc::channel();
    let conn = Connection::new(Burst::new(&bytes, burst), std::io::sink(), Options::new());
    let (piped_go, piped_burst) = std::sync::mpsc::channel::<()>();
    let (piped_reads, mut host_writes) = pipe();
    std::thread::spawn({
        let bytes = bytes.clone();
        move || {
            for () in piped_burst {
                if host_writes.write_all(&bytes).is_err() {
                    return;
                }
            }
        }
    });
    let piped = Connection::new(piped_reads, std::io::sink(), Options::new());
    let async_flood = |runtime: &tokio::runtime::Runtime| {
        let (go, burst) = tokio::sync::mpsc::unbounded_channel();
        let conn = runtime.block_on(async {
            let reader = Burst::new(&bytes, burst);
            msp_rpc::tokio::Connection::new(reader, tokio::io::sink(), Options::new())
        });
        (go, conn)
    };
    let (async_go, async_conn) = async_flood(&runtime);
    let (workers_go, workers_conn) = async_flood(&workers);
    let mut async_notifications = runtime.block_on(async_conn.notifications());
    let mut workers_notifications = workers.block_on(workers_conn.notifications());
    let async_pass = |runtime: &tokio::runtime::Runtime,
                      go: &tokio::sync::mpsc::UnboundedSender<()>,
                      notifications: &mut msp_rpc::tokio::Notifications<'_>| {
        go.send(()).unwrap();
        runtime.block_on(async {
            for _ in 0..frames {
                let inbound = notifications.next().await.expect("the flood continues");
                assert!(
                    matches!(inbound, Inbound::Notification { .. }),
                    "{inbound:?}"
                );
            }
        })
    };

    // The baseline parses the pass's own lines, where the replay holds them: 24 MB, as cold in
    // the caches as what the connection reads.
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
    // Diagnostic: the corpus' few hundred distinct lines parsed again and again, all the while
    // in the core's own cache; the ratio shows what cold input costs `Frame::parse` itself.
    group.add("flood.frame_parse_hot_lines", || {
        for _ in 0..repeat {
            for line in lines {
                std::hint::black_box(Frame::parse(Sender::Server, line).unwrap());
            }
        }
    });
    // Diagnostic: the sans-I/O endpoint alone, framing included, on this thread.
    // One endpoint and decoder for every pass, fed 64 KiB at a time, as a driver reads, and
    // drained as the drivers drain it.
    group.add("flood.endpoint", {
        let mut endpoint = msp_rpc::Endpoint::<msp_rpc::Client>::new();
        let mut decoder = msp_rpc::framing::LineDecoder::new(1 << 24);
        let bytes = bytes.clone();
        move || {
            for read in bytes.chunks(64 * 1024) {
                decoder.push(read);
                decoder.drain_lines(|line| {
                    endpoint.handle_line(line.unwrap());
                    while let Some(event) = endpoint.poll_event() {
                        let event = std::hint::black_box(event);
                        assert!(matches!(event, msp_rpc::Event::Notification { .. }));
                    }
                });
            }
        }
    });
    // Diagnostic: the same, with 100 frames typed before any is dropped (what a reader that
    // types everything and queues it would do).
    group.add("flood.endpoint_batched", || {
        let mut endpoint = msp_rpc::Endpoint::<msp_rpc::Client>::new();
        let mut decoder = msp_rpc::framing::LineDecoder::new(1 << 24);
        decoder.push(&bytes);
        let mut held = Vec::with_capacity(100);
        let mut typed = 0;
        while let Some(line) = decoder.next_line() {
            endpoint.handle_line(line.unwrap());
            typed += 1;
            if typed % 100 == 0 {
                held.extend(std::iter::from_fn(|| endpoint.poll_event()));
                held.clear();
            }
        }
        held.extend(std::iter::from_fn(|| endpoint.poll_event()));
    });
    // Diagnostic: the host's part alone, each pass copied into a 64 KiB buffer as the host
    // copies it into the connection's read buffer (what a pipe's `read` does too).
    group.add("flood.host_copy", {
        let bytes = bytes.clone();
        let mut buffer = vec![0; 64 * 1024];
        move || {
            for read in bytes.chunks(buffer.len()) {
                buffer[..read.len()].copy_from_slice(read);
                std::hint::black_box(&mut buffer);
            }
        }
    });
    group.add("flood.connection", || {
        go.send(()).unwrap();
        take_flood(conn.notifications(), frames)
    });
    // Diagnostic: the frames written into a pipe (64 KiB, as an OS pipe holds) by a host
    // thread while the client reads: adds the transport's wake-ups.
    group.add("flood.piped_connection", || {
        piped_go.send(()).unwrap();
        take_flood(piped.notifications(), frames)
    });
    // Diagnostic: a new connection each pass (threads started and stopped included).
    group.add("flood.new_connection_each_pass", || {
        let reader = std::io::Cursor::new(bytes.clone());
        let conn = Connection::new(reader, std::io::sink(), Options::new());
        take_flood(conn.notifications(), frames);
    });
    group.add("flood.async_connection", || {
        async_pass(&runtime, &async_go, &mut async_notifications)
    });
    // The same on a runtime with two worker threads (as `#[tokio::main]` makes).
    group.add("flood.async_workers_connection", || {
        async_pass(&workers, &workers_go, &mut workers_notifications)
    });
    // Each ratio is the median, over pairs of adjacent passes, of the case's pass to the
    // `Frame::parse` pass just before it (see `Group::run_paired`).
    let paired = group.run_paired("flood.frame_parse", rounds(15));
    for (name, times) in &paired.times {
        let per_frame = median(&mut times.clone()).as_secs_f64() * 1e9 / frames as f64;
        println!("  {name:<36} {per_frame:>8.0} ns a frame");
        report.put(name.as_str(), format!("{per_frame:.0}"));
    }
    let pairs = paired.pairs();
    if pairs > 0 {
        println!(
            "  against flood.frame_parse, the median of {pairs} pairs of passes (middle half):"
        );
    }
    for (case, key) in [
        (
            "flood.frame_parse_hot_lines",
            "ratio.flood.frame_parse_hot_lines",
        ),
        ("flood.host_copy", "ratio.flood.host_copy"),
        ("flood.endpoint", "ratio.flood.endpoint"),
        ("flood.connection", "ratio.flood.blocking"),
        ("flood.async_connection", "ratio.flood.async"),
        (
            "flood.async_workers_connection",
            "ratio.flood.async_workers",
        ),
        ("flood.piped_connection", "ratio.flood.blocking_pipe"),
        (
            "flood.new_connection_each_pass",
            "ratio.flood.blocking_fresh",
        ),
    ] {
        if let Some(ratio) = paired.ratio(case) {
            let (low, high) = paired.middle_half(case).unwrap_or((ratio, ratio));
            println!("    {case:<34} {ratio:>6.3}  ({low:.3}-{high:.3})");
            report.put(key, format!("{ratio:.3}"));
        }
    }
}
