//! A streamed turn through the session client against the connection's notification flood
//! alone (target: at most 1.25x).
//!
//! Both read the same bytes: the corpus' server notifications, `REPEAT` times, each
//! repetition's ids and cursors made its own and every frame naming one session, so that
//! each frame is new to the fold (a repeated item would only be stale). `view/gap` frames
//! are left out: a gap makes the session page, and this host answers nothing. Per pass:
//! the flood alone takes every frame from a blocking connection; the session client (a
//! fresh session each pass) routes every frame into the session's fold, and the program
//! takes every event (the frame and what it did to the fold).

use std::io::{Read, Write};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use msp_bench::corpus::{self, Dir};
use msp_bench::measure::{self, median, rounds, Group, Report};
use msp_client::blocking::Client;
use msp_client::Event;
use msp_rpc::blocking::Connection;
use msp_rpc::{Inbound, Options};
use serde_json::Value;

/// Times the corpus is streamed a pass, unless `MSP_BENCH_SESSION_REPEAT` says otherwise.
const REPEAT: usize = 40;

const SESSION: &str = "bench-session";

/// Pairs of passes, unless `MSP_BENCH_ROUNDS` says otherwise: a pass is about 12 ms, and the
/// median of 15 moved by several hundredths from run to run.
const PAIRS: u32 = 41;

/// The members whose values name something of one repetition.
const OWN: [&str; 7] = [
    "itemId",
    "turnId",
    "approvalId",
    "userInputId",
    "viewCursor",
    "commandId",
    "taskId",
];

/// `value` with every id of [`OWN`] prefixed by `r{n}-`, and every session named [`SESSION`].
fn own(value: &mut Value, n: usize) {
    match value {
        Value::Object(members) => {
            for (key, member) in members.iter_mut() {
                match member {
                    Value::String(text) if key == "sessionId" => *text = SESSION.to_owned(),
                    Value::String(text) if OWN.contains(&key.as_str()) => {
                        *text = format!("r{n}-{text}")
                    }
                    other => own(other, n),
                }
            }
        }
        Value::Array(values) => values.iter_mut().for_each(|v| own(v, n)),
        _ => {}
    }
}

/// A host that answers `initialize` once, then sends the flood each time a pass asks.
struct Host {
    handshake: Arc<[u8]>,
    flood: Arc<[u8]>,
    now: Arc<[u8]>,
    at: usize,
    go: Receiver<bool>,
}

impl Read for Host {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.now.len() {
            match self.go.recv() {
                Ok(true) => self.now = self.handshake.clone(),
                Ok(false) => self.now = self.flood.clone(),
                Err(_) => return Ok(0),
            }
            self.at = 0;
        }
        let n = buf.len().min(self.now.len() - self.at);
        buf[..n].copy_from_slice(&self.now[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The client's output: the `initialize` request asks the host for the handshake.
struct Output(Sender<bool>);

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if memchr(bytes, br#""method":"initialize""#) {
            let _ = self.0.send(true);
        }
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether the client routes frame `line` to [`SESSION`]: the session its input names, as the
/// client's core finds it (a session's id may sit deeper than `params.sessionId`).
fn names_session(line: &str) -> bool {
    match msp_types::Frame::parse(msp_types::Sender::Server, line) {
        Ok(msp_types::Frame {
            message: msp_types::Message::Notification(n),
            ..
        }) => msp_session::Input::Notification(n).session_id() == Some(SESSION),
        _ => false,
    }
}

fn memchr(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn main() {
    let mut report = Report::new("session");
    let corpus = match corpus::load() {
        Ok(corpus) => corpus,
        Err(reason) => {
            println!("session bench skipped: {reason}");
            return;
        }
    };
    let lines: Vec<Value> = corpus
        .lines
        .iter()
        .filter(|l| l.dir == Some(Dir::Server) && l.kind == corpus::Kind::Notification)
        .filter_map(|l| serde_json::from_str::<Value>(l.raw.trim_end_matches('\r')).ok())
        .filter(|frame| frame["method"] != "view/gap")
        .collect();
    let repeat = measure::repeat("MSP_BENCH_SESSION_REPEAT", REPEAT);
    let mut flood = Vec::new();
    let mut routed = 0;
    for n in 0..repeat {
        for line in &lines {
            let mut line = line.clone();
            own(&mut line, n);
            let line = line.to_string();
            routed += usize::from(names_session(&line));
            flood.extend_from_slice(line.as_bytes());
            flood.push(b'\n');
        }
    }
    let frames = lines.len() * repeat;
    println!(
        "streamed turn through a session ({frames} frames a pass, {routed} naming the session, {} bytes):",
        flood.len()
    );
    let flood: Arc<[u8]> = flood.into();
    let handshake: Arc<[u8]> = format!(
        "{}\n",
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {
            "schema": {"version": 1, "fingerprint": "sha256:bench"},
            "serverInfo": {"name": "bench", "version": "0"}, "userAgent": "bench",
            "museHome": "/h", "platformFamily": "unix", "platformOs": "linux",
            "sessionDurability": "durable"}})
    )
    .into_bytes()
    .into();
    let host = |go| Host {
        handshake: handshake.clone(),
        flood: flood.clone(),
        now: Arc::from(Vec::new()),
        at: 0,
        go,
    };

    // The flood alone: a blocking connection, every frame taken.
    let (flood_go, flood_burst) = channel();
    let connection = Connection::new(host(flood_burst), std::io::sink(), Options::new());
    // The session client: the same bytes, every frame routed to the session's fold and
    // every event taken.
    let (session_go, session_burst) = channel();
    let options = msp_client::Options::new("bench", "0").events(routed + 1);
    let client = Client::over(host(session_burst), Output(session_go.clone()), options)
        .expect("the handshake");

    // Diagnostic: the session without events (the fold alone kept), waited on until it saw
    // every frame.
    let items = {
        let mut fold = msp_session::Fold::for_session(SESSION, Default::default());
        for line in flood.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let line = std::str::from_utf8(line).unwrap();
            if let Ok(msp_types::Frame {
                message: msp_types::Message::Notification(n),
                ..
            }) = msp_types::Frame::parse(msp_types::Sender::Server, line)
            {
                fold.apply(n);
            }
        }
        fold.items().len()
    };
    let (quiet_go, quiet_burst) = channel();
    let quiet = Client::over(
        host(quiet_burst),
        Output(quiet_go.clone()),
        msp_client::Options::new("bench", "0").events(0),
    )
    .expect("the handshake");
    // Diagnostic: the flood taken from a connection and folded on the consumer's thread.
    let (folded_go, folded_burst) = channel();
    let folded = Connection::new(host(folded_burst), std::io::sink(), Options::new());

    // Diagnostic: the flood taken and every notification kept until the pass ends (what
    // keeping state costs, whatever keeps it).
    let (kept_go, kept_burst) = channel();
    let kept = Connection::new(host(kept_burst), std::io::sink(), Options::new());

    let flood_alone = || {
        flood_go.send(false).unwrap();
        let mut seen = 0;
        for inbound in connection.notifications().take(frames) {
            assert!(matches!(inbound, Inbound::Notification { .. }));
            seen += 1;
        }
        assert_eq!(seen, frames);
    };
    // The target's pairs on their own: a diagnostic pass between them (one keeps every
    // frame, then frees them all) would leave the heap in a state neither pass of a pair
    // would otherwise meet.
    let mut target = Group::default();
    target.add("session.flood_alone", flood_alone);
    target.add("session.streamed_turn", || {
        let session = client.open_session(SESSION);
        // Every frame of the previous pass was taken by it: none is left to this one.
        assert_eq!(session.read(|fold| fold.arrivals()), 0);
        session_go.send(false).unwrap();
        let mut events = 0;
        while events < routed {
            match session.next_event().expect("the flood continues") {
                Event::Folded { input, outcome } => {
                    std::hint::black_box((input, outcome));
                    events += 1;
                }
                Event::Lagged { missed } => events += missed as usize,
                other => panic!("{other:?}"),
            }
        }
        std::hint::black_box(session.read(|fold| fold.items().len()));
    });
    let paired = target.run_paired("session.flood_alone", rounds(PAIRS));
    let mut diagnostics = Group::default();
    diagnostics.add("session.flood_alone", flood_alone);
    diagnostics.add("session.fold_only", || {
        let session = quiet.open_session(SESSION);
        assert_eq!(session.read(|fold| fold.arrivals()), 0);
        quiet_go.send(false).unwrap();
        session
            .wait_for(None, |fold| {
                (fold.arrivals() >= routed as u64).then_some(())
            })
            .expect("every frame");
        std::hint::black_box(session.read(|fold| fold.items().len()));
    });
    diagnostics.add("session.flood_then_fold", || {
        folded_go.send(false).unwrap();
        let mut fold = msp_session::Fold::for_session(SESSION, Default::default());
        for inbound in folded.notifications().take(frames) {
            if let Inbound::Notification { notification, .. } = inbound {
                std::hint::black_box(fold.apply(notification));
            }
        }
        assert_eq!(fold.items().len(), items);
    });
    diagnostics.add("session.flood_kept", || {
        kept_go.send(false).unwrap();
        let all: Vec<Inbound> = kept.notifications().take(frames).collect();
        assert_eq!(all.len(), frames);
    });
    let diagnosed = diagnostics.run_paired("session.flood_alone", rounds(PAIRS));
    let per_case = paired.times.iter().chain(
        diagnosed
            .times
            .iter()
            .filter(|(name, _)| name != "session.flood_alone"),
    );
    for (name, times) in per_case {
        let per_frame = median(&mut times.clone()).as_secs_f64() * 1e9 / frames as f64;
        println!("  {name:<24} {per_frame:>8.0} ns a frame");
        report.put(name.as_str(), format!("{per_frame:.0}"));
    }
    for case in [
        "session.fold_only",
        "session.flood_then_fold",
        "session.flood_kept",
    ] {
        if let Some(ratio) = diagnosed.ratio(case) {
            println!("  {case} / flood alone (diagnostic): {ratio:.2}");
            report.put(format!("ratio.{case}"), format!("{ratio:.2}"));
        }
    }
    if let Some(ratio) = paired.ratio("session.streamed_turn") {
        let (low, high) = paired
            .middle_half("session.streamed_turn")
            .unwrap_or((ratio, ratio));
        println!(
            "  streamed turn / flood alone, the median of {} pairs: {ratio:.2} ({low:.2}-{high:.2}; target at most 1.25)",
            paired.pairs()
        );
        report.put("ratio.session_over_flood", format!("{ratio:.2}"));
    }
    report.save();
}
