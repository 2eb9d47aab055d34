//! The session fold's cost: the golden corpus' server notifications, parsed and folded (a fresh
//! fold per transcript, as a client folds each session), against parsing them alone; and the
//! memory a fold keeps for a session of N items, for several N.
//!
//! The ratio printed is what folding adds to `Frame::parse` of the same frames: (parse and
//! fold) / parse - 1, the median over adjacent pairs of passes, which of the two runs first
//! alternating (target: at most 0.2).

use msp_bench::alloc::{kept_by, Counting};
use msp_bench::corpus::{self, Dir};
use msp_bench::measure::{self, median, rounds, Group, Report};
use msp_session::{Fold, FoldRules};
use msp_types::{Frame, Message, ProtocolNotification, Sender};
use serde_json::json;

#[global_allocator]
static COUNTING: Counting = Counting;

/// Times the corpus is folded a pass, unless `MSP_BENCH_FOLD_REPEAT` says otherwise.
const REPEAT: usize = 40;

fn main() {
    let mut report = Report::new("fold");
    let corpus = match corpus::load() {
        Ok(corpus) => corpus,
        Err(reason) => {
            println!("fold bench skipped: {reason}");
            return;
        }
    };
    // The server's notifications, transcript by transcript.
    let mut sessions: Vec<Vec<String>> = Vec::new();
    let mut last = String::new();
    for line in &corpus.lines {
        if line.dir != Some(Dir::Server) || line.kind != corpus::Kind::Notification {
            continue;
        }
        let scenario = line.source.split(':').next().unwrap_or_default().to_owned();
        if scenario != last || sessions.is_empty() {
            sessions.push(Vec::new());
            last = scenario;
        }
        sessions
            .last_mut()
            .unwrap()
            .push(line.raw.trim_end_matches('\r').to_owned());
    }
    let repeat = measure::repeat("MSP_BENCH_FOLD_REPEAT", REPEAT);
    let frames: usize = sessions.iter().map(Vec::len).sum::<usize>() * repeat;
    println!(
        "session fold ({frames} notifications a pass, {} sessions):",
        sessions.len() * repeat
    );
    let parse = |line: &str| match Frame::parse(Sender::Server, line)
        .expect("the corpus decodes")
        .message
    {
        Message::Notification(notification) => notification,
        _ => unreachable!("notifications only"),
    };
    let mut group = Group::default();
    group.add("fold.parse", || {
        for _ in 0..repeat {
            for session in &sessions {
                for line in session {
                    std::hint::black_box(parse(line));
                }
            }
        }
    });
    group.add("fold.parse_and_fold", || {
        for _ in 0..repeat {
            for session in &sessions {
                let mut fold = Fold::new(FoldRules::default());
                for line in session {
                    std::hint::black_box(fold.apply(parse(line)));
                }
                std::hint::black_box(&fold);
            }
        }
    });
    let paired = group.run_paired("fold.parse", rounds(31));
    for (name, times) in &paired.times {
        let per_frame = median(&mut times.clone()).as_secs_f64() * 1e9 / frames as f64;
        println!("  {name:<24} {per_frame:>8.0} ns a notification");
        report.put(name.as_str(), format!("{per_frame:.0}"));
    }
    if let Some(ratio) = paired.ratio("fold.parse_and_fold") {
        let (low, high) = paired
            .middle_half("fold.parse_and_fold")
            .unwrap_or((ratio, ratio));
        println!(
            "  folding / Frame::parse, the median of {} pairs: {:.3} ({:.3}-{:.3})",
            paired.pairs(),
            ratio - 1.0,
            low - 1.0,
            high - 1.0
        );
        report.put("ratio.fold_over_parse", format!("{:.3}", ratio - 1.0));
    }

    if !measure::selected("fold.memory") {
        report.save();
        return;
    }
    println!("\nmemory a fold keeps for a session of N items (each started, streamed in 4 deltas, completed):");
    let mut per_item = Vec::new();
    for n in [100usize, 1_000, 10_000] {
        // The events are made inside the measure, so that what the fold keeps of them counts
        // and what it drops nets out.
        let (fold, bytes) = kept_by(|| {
            let mut fold = Fold::for_session("s", FoldRules::default());
            for event in session_of(n) {
                fold.apply(event);
            }
            fold
        });
        assert_eq!(fold.items().len(), n, "every item folded");
        println!(
            "  N = {n:>6}: {bytes:>10} bytes kept, {:>6.0} an item",
            bytes as f64 / n as f64
        );
        report.put(format!("fold.memory.{n}"), bytes.to_string());
        per_item.push(bytes as f64 / n as f64);
    }
    let spread = per_item.iter().cloned().fold(f64::MIN, f64::max)
        / per_item.iter().cloned().fold(f64::MAX, f64::min);
    println!("  bytes an item, largest over smallest: {spread:.2} (1 is linear)");
    report.put("fold.memory.linearity", format!("{spread:.2}"));
    report.save();
}

/// The notifications of a session whose `n` items each start, stream four deltas and
/// complete.
fn session_of(n: usize) -> Vec<ProtocolNotification> {
    let range = json!({"stream": {"kind": "run", "id": "t"}, "first": {"id": "r", "sequence": 1}, "last": {"id": "r", "sequence": 1}});
    let mut events = Vec::new();
    let decode = |method: &str, params| ProtocolNotification::decode(method, Some(params)).unwrap();
    for i in 0..n {
        let id = format!("item-{i:08}");
        let item = |revision: i64, status: &str, text: &str| json!({"itemId": id, "kind": "agentMessage", "revision": revision, "status": status, "turnId": "t", "text": text});
        events.push(decode("item/started", json!({"sessionId": "s", "viewCursor": format!("v:s:{i}.0"), "sourceRange": range, "item": item(1, "inProgress", "")})));
        for d in 0..4 {
            events.push(decode("item/delta", json!({"sessionId": "s", "itemId": id, "field": "text", "delta": "twenty-five bytes of text", "viewCursor": format!("v:s:{i}.{}", d + 1)})));
        }
        let text = "twenty-five bytes of text".repeat(4);
        events.push(decode("item/completed", json!({"sessionId": "s", "viewCursor": format!("v:s:{i}.5"), "sourceRange": range, "item": item(2, "completed", &text)})));
    }
    events
}
