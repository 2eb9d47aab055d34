//! A streamed turn through the session client against the connection's notification flood
//! alone (target: at most 1.25x).
//!
//! Both read the same bytes: the corpus' server notifications, `REPEAT` times, as
//! [`msp_bench::streamed`] makes them, so that each frame is new to the fold (a repeated
//! cursor would be refused, a repeated item only stale; checked before timing). Per pass:
//! the flood alone takes every frame from a blocking connection; the session client (a fresh
//! session each pass) routes every frame into the session's fold, and the program takes
//! every event (the frame and what it did to the fold). Diagnostics: the fold without
//! events, the fold with no client, every notification kept, only each item's latest
//! notification kept, and the streamed turn with each repetition in a session of its own
//! (what the size of one long session costs), all alive through the pass or each dropped
//! before the next is streamed. Apart from the flood: a turn's items
//! followed through one long streamed text against many short ones ([`turn_items`]).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use msp_bench::corpus;
use msp_bench::measure::{self, median, rounds, Group, Report};
use msp_bench::streamed;
use msp_client::blocking::{Client, Session};
use msp_client::Event;
use msp_rpc::blocking::Connection;
use msp_rpc::{Inbound, Options};
use msp_session::Outcome;
use msp_types::ProtocolNotification;
use serde_json::Value;

/// Times the corpus is streamed a pass, unless `MSP_BENCH_SESSION_REPEAT` says otherwise.
const REPEAT: usize = 40;

const SESSION: &str = "bench-session";

/// Pairs of passes, unless `MSP_BENCH_ROUNDS` says otherwise: a pass is about 12 ms, and the
/// median of 15 moved by several hundredths from run to run.
const PAIRS: u32 = 41;

/// A host that sends the bytes each pass asks for (the handshake when the client asks).
struct Host {
    now: Arc<[u8]>,
    at: usize,
    go: Receiver<Arc<[u8]>>,
}

impl Host {
    fn new(go: Receiver<Arc<[u8]>>) -> Self {
        Host {
            now: Arc::from(Vec::new()),
            at: 0,
            go,
        }
    }
}

impl Read for Host {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.now.len() {
            match self.go.recv() {
                Ok(bytes) => self.now = bytes,
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
struct Output {
    go: Sender<Arc<[u8]>>,
    handshake: Arc<[u8]>,
}

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if memchr(bytes, br#""method":"initialize""#) {
            let _ = self.go.send(self.handshake.clone());
        }
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether the client routes frame `line` to [`SESSION`]: the session its input names, as the
/// client's core finds it (a session's id may sit deeper than `params.sessionId`).
fn names_session(line: &str, session: &str) -> bool {
    match msp_types::Frame::parse(msp_types::Sender::Server, line) {
        Ok(msp_types::Frame {
            message: msp_types::Message::Notification(n),
            ..
        }) => msp_session::Input::Notification(n).session_id() == Some(session),
        _ => false,
    }
}

/// The session of repetition `n` in the flood whose repetitions each name their own.
fn repetition(n: usize) -> String {
    format!("{SESSION}-r{n}")
}

/// Takes `routed` events from `session`, as a program streaming its turns would.
fn take_events(session: &Session, routed: usize) {
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
    let lines = streamed::frames(&corpus);
    let repeat = measure::repeat("MSP_BENCH_SESSION_REPEAT", REPEAT);
    // The flood, and (a diagnostic) the same frames with each repetition naming a session
    // of its own: what a session's size costs. `bursts` are the latter's repetitions apart.
    let mut flood = Vec::new();
    let mut routed = 0;
    let mut apart = Vec::new();
    let mut routed_apart = vec![0; repeat];
    let mut bursts: Vec<Arc<[u8]>> = Vec::new();
    for (n, routed_apart) in routed_apart.iter_mut().enumerate() {
        let burst_start = apart.len();
        for (scenario, line) in &lines {
            for (session, bytes, routed) in [
                (SESSION.to_owned(), &mut flood, &mut routed),
                (repetition(n), &mut apart, &mut *routed_apart),
            ] {
                let line = streamed::line(line, scenario, n, &session);
                *routed += usize::from(names_session(&line, &session));
                bytes.extend_from_slice(line.as_bytes());
                bytes.push(b'\n');
            }
        }
        bursts.push(apart[burst_start..].into());
    }
    let apart: Arc<[u8]> = apart.into();
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
    let output = |go: &Sender<Arc<[u8]>>| Output {
        go: go.clone(),
        handshake: handshake.clone(),
    };
    // A session client keeping `events` events a session, and what feeds it its bytes.
    let fed_client = |events: usize| {
        let (go, burst) = channel();
        let options = msp_client::Options::new("bench", "0").events(events);
        let client = Client::over(Host::new(burst), output(&go), options).expect("the handshake");
        (go, client)
    };

    // The flood alone: a blocking connection, every frame taken.
    let (flood_go, flood_burst) = channel();
    let connection = Connection::new(Host::new(flood_burst), std::io::sink(), Options::new());
    // The session client: the same bytes, every frame routed to the session's fold and
    // every event taken.
    let (session_go, client) = fed_client(routed + 1);

    // Before timing: the fold refuses no frame of the flood (the workload is what it says),
    // and how many items it ends with (`flood_then_fold` checks it).
    let items = {
        let mut fold = msp_session::Fold::for_session(SESSION, Default::default());
        for line in flood.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let line = std::str::from_utf8(line).unwrap();
            if let Ok(msp_types::Frame {
                message: msp_types::Message::Notification(n),
                ..
            }) = msp_types::Frame::parse(msp_types::Sender::Server, line)
            {
                let outcome = fold.apply(n);
                assert!(
                    !matches!(outcome, Outcome::DuplicateCursor { .. }),
                    "every frame is new to the fold: {outcome:?}"
                );
            }
        }
        fold.items().len()
    };
    // Diagnostic: the session without events (the fold alone kept), waited on until it saw
    // every frame.
    let (quiet_go, quiet) = fed_client(0);
    // Diagnostic: the flood taken from a connection and folded on the consumer's thread.
    let (folded_go, folded_burst) = channel();
    let folded = Connection::new(Host::new(folded_burst), std::io::sink(), Options::new());

    // Diagnostic: the flood taken and every notification kept until the pass ends (what
    // keeping state costs, whatever keeps it).
    let (kept_go, kept_burst) = channel();
    let kept = Connection::new(Host::new(kept_burst), std::io::sink(), Options::new());
    // Diagnostic: the flood taken and, of every item, the notification of its latest
    // revision kept until the pass ends, every other frame dropped: the part of a fold's
    // state its rules cannot do without, kept by the cheapest means (no fold).
    let (items_go, items_burst) = channel();
    let items_kept = Connection::new(Host::new(items_burst), std::io::sink(), Options::new());

    let take_flood = |bytes: &Arc<[u8]>| {
        flood_go.send(bytes.clone()).unwrap();
        let mut seen = 0;
        for inbound in connection.notifications().take(frames) {
            assert!(matches!(inbound, Inbound::Notification { .. }));
            seen += 1;
        }
        assert_eq!(seen, frames);
    };
    let flood_alone = || take_flood(&flood);
    // The target's pairs on their own: a diagnostic pass between them (one keeps every
    // frame, then frees them all) would leave the heap in a state neither pass of a pair
    // would otherwise meet.
    let mut target = Group::default();
    target.add("session.flood_alone", flood_alone);
    target.add("session.streamed_turn", || {
        let session = client.open_session(SESSION);
        // Every frame of the previous pass was taken by it: none is left to this one.
        assert_eq!(session.read(|fold| fold.arrivals()), 0);
        session_go.send(flood.clone()).unwrap();
        take_events(&session, routed);
    });
    let paired = target.run_paired("session.flood_alone", rounds(PAIRS));
    let mut diagnostics = Group::default();
    diagnostics.add("session.flood_alone", flood_alone);
    diagnostics.add("session.fold_only", || {
        let session = quiet.open_session(SESSION);
        assert_eq!(session.read(|fold| fold.arrivals()), 0);
        quiet_go.send(flood.clone()).unwrap();
        session
            .wait_for(None, |fold| {
                (fold.arrivals() >= routed as u64).then_some(())
            })
            .expect("every frame");
        std::hint::black_box(session.read(|fold| fold.items().len()));
    });
    diagnostics.add("session.flood_then_fold", || {
        folded_go.send(flood.clone()).unwrap();
        let mut fold = msp_session::Fold::for_session(SESSION, Default::default());
        for inbound in folded.notifications().take(frames) {
            if let Inbound::Notification { notification, .. } = inbound {
                std::hint::black_box(fold.apply(notification));
            }
        }
        assert_eq!(fold.items().len(), items);
    });
    diagnostics.add("session.flood_kept", || {
        kept_go.send(flood.clone()).unwrap();
        let all: Vec<Inbound> = kept.notifications().take(frames).collect();
        assert_eq!(all.len(), frames);
    });
    diagnostics.add("session.flood_items_kept", || {
        items_go.send(flood.clone()).unwrap();
        let mut latest: HashMap<String, ProtocolNotification> = HashMap::new();
        for inbound in items_kept.notifications().take(frames) {
            let Inbound::Notification { notification, .. } = inbound else {
                continue;
            };
            let item_id = match &notification {
                ProtocolNotification::ItemStarted(p) => p.item.item_id.clone(),
                ProtocolNotification::ItemUpdated(p) => p.item.item_id.clone(),
                ProtocolNotification::ItemCompleted(p) => p.item.item_id.clone(),
                _ => continue,
            };
            latest.insert(item_id, notification);
        }
        assert_eq!(latest.len(), items);
    });
    let diagnosed = diagnostics.run_paired("session.flood_alone", rounds(PAIRS));

    // Diagnostic: the streamed turn again, each repetition in a session of its own (opened
    // before the pass, each dropped once its frames were taken), against the flood alone of
    // the same bytes.
    let (apart_go, apart_client) = fed_client(routed + 1);
    let mut sizes = Group::default();
    sizes.add("session.flood_alone", || take_flood(&apart));
    sizes.add("session.apart", || {
        let sessions: Vec<_> = (0..repeat)
            .map(|n| apart_client.open_session(&repetition(n)))
            .collect();
        assert!(sessions.iter().all(|s| s.read(|fold| fold.arrivals()) == 0));
        apart_go.send(apart.clone()).unwrap();
        for (session, &routed) in sessions.into_iter().zip(&routed_apart) {
            take_events(&session, routed);
        }
    });
    let apart_paired = sizes.run_paired("session.flood_alone", rounds(PAIRS));

    // Diagnostic: each repetition in a session of its own, opened, streamed and dropped
    // before the next (a session of one turn's size, at most one alive), against the flood
    // alone of the same bursts.
    let (turns_go, turns_client) = fed_client(routed + 1);
    let (bursts_go, bursts_burst) = channel();
    let bursts_alone = Connection::new(Host::new(bursts_burst), std::io::sink(), Options::new());
    let mut turns = Group::default();
    turns.add("session.flood_alone", || {
        for burst in &bursts {
            bursts_go.send(burst.clone()).unwrap();
            let seen = bursts_alone.notifications().take(lines.len()).count();
            assert_eq!(seen, lines.len());
        }
    });
    turns.add("session.turn_by_turn", || {
        for (n, burst) in bursts.iter().enumerate() {
            let session = turns_client.open_session(&repetition(n));
            turns_go.send(burst.clone()).unwrap();
            take_events(&session, routed_apart[n]);
        }
    });
    let turns_paired = turns.run_paired("session.flood_alone", rounds(PAIRS));

    let per_case = paired.times.iter().chain(
        diagnosed
            .times
            .iter()
            .chain(&apart_paired.times)
            .chain(&turns_paired.times)
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
        "session.flood_items_kept",
    ] {
        if let Some(ratio) = diagnosed.ratio(case) {
            println!("  {case} / flood alone (diagnostic): {ratio:.2}");
            report.put(format!("ratio.{case}"), format!("{ratio:.2}"));
        }
    }
    if let Some(ratio) = apart_paired.ratio("session.apart") {
        println!("  session.apart / flood alone (diagnostic, a session a repetition): {ratio:.2}");
        report.put("ratio.session.apart", format!("{ratio:.2}"));
    }
    if let Some(ratio) = turns_paired.ratio("session.turn_by_turn") {
        println!("  session.turn_by_turn / flood alone (diagnostic, a session a repetition, one alive): {ratio:.2}");
        report.put("ratio.session.turn_by_turn", format!("{ratio:.2}"));
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
    turn_items(&handshake, &mut report);
    report.save();
}

/// Deltas a pass of [`turn_items`] streams.
const DELTAS: usize = 16_000;

/// Turns of the short-texts pass of [`turn_items`].
const SHORT_TURNS: usize = 16;

/// Diagnostic: a turn's items followed while deltas stream into one long text (16,000
/// deltas of 100 bytes, one turn) against the same deltas spread over 16 turns (texts 16
/// times shorter). The follower gets the item at each delta; the ratio stays near 1 while
/// that costs the same whatever the text's length (copying the text at each one made it
/// quadratic: 9x here).
fn turn_items(handshake: &Arc<[u8]>, report: &mut Report) {
    let name = "bench-turn";
    let range = serde_json::json!({"stream": {"kind": "run", "id": "t"},
        "first": {"id": "r", "sequence": 1}, "last": {"id": "r", "sequence": 1}});
    let delta = "x".repeat(100);
    let stream = |turns: usize| -> (Arc<[u8]>, Vec<String>) {
        let mut bytes = String::new();
        let mut at = 0;
        let mut frame = |method: &str, mut params: Value| {
            at += 1;
            params["sessionId"] = name.into();
            params["viewCursor"] = format!("v:{name}:{at}").into();
            let frame = serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params});
            bytes.push_str(&frame.to_string());
            bytes.push('\n');
        };
        let ids: Vec<String> = (0..turns).map(|n| format!("t{n}")).collect();
        for turn in &ids {
            let item = serde_json::json!({"itemId": format!("{turn}-i"), "kind": "agentMessage",
                "turnId": turn, "revision": 1, "status": "inProgress"});
            frame(
                "turn/started",
                serde_json::json!({"turnId": turn, "commandId": turn, "sourceRange": range}),
            );
            frame(
                "item/started",
                serde_json::json!({"sourceRange": range, "item": item}),
            );
            for _ in 0..DELTAS / turns {
                frame(
                    "item/delta",
                    serde_json::json!({"itemId": format!("{turn}-i"), "field": "text", "delta": delta}),
                );
            }
            let mut item = item;
            item["revision"] = 2.into();
            item["status"] = "completed".into();
            frame(
                "item/completed",
                serde_json::json!({"sourceRange": range, "item": item}),
            );
            frame(
                "turn/completed",
                serde_json::json!({"turnId": turn, "sourceRange": range,
                "terminal": "completed", "durationMs": 1,
                "usage": {"inputTokens": 1, "outputTokens": 1, "cachedTokens": 0, "reasoningTokens": 0}}),
            );
        }
        (Arc::from(bytes.into_bytes()), ids)
    };
    let (go, burst) = channel();
    let output = Output {
        go: go.clone(),
        handshake: handshake.clone(),
    };
    let client = Client::over(
        Host::new(burst),
        output,
        msp_client::Options::new("bench", "0").events(0),
    )
    .expect("the handshake");
    let follow = |(bytes, turns): &(Arc<[u8]>, Vec<String>)| {
        let session = client.open_session(name);
        assert_eq!(session.read(|fold| fold.arrivals()), 0);
        let turns: Vec<_> = turns.iter().map(|id| session.turn(id)).collect();
        go.send(bytes.clone()).unwrap();
        let mut changes = 0;
        for turn in &turns {
            for item in turn.items() {
                std::hint::black_box(item.text("text"));
                changes += 1;
            }
        }
        // Changes not taken yet coalesce: most deltas are seen one by one.
        assert!(changes > DELTAS / 2, "{changes} changes");
    };
    let short = stream(SHORT_TURNS);
    let long = stream(1);
    let mut group = Group::default();
    group.add("session.turn_items_short", || follow(&short));
    group.add("session.turn_items_long", || follow(&long));
    let paired = group.run_paired("session.turn_items_short", rounds(PAIRS));
    if let Some(ratio) = paired.ratio("session.turn_items_long") {
        println!(
            "  a turn's items through one long text / through {SHORT_TURNS} short ones (diagnostic, {DELTAS} deltas): {ratio:.2}"
        );
        report.put("ratio.session.turn_items_long", format!("{ratio:.2}"));
    }
}
