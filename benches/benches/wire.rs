//! Decode and encode of the golden corpus: msp-types (its public API, and its types directly)
//! against `serde_json::Value`, the `IgnoredAny` floor, typify's types for the experimental
//! bundle and typify's types for our own schema (the same input msp-types comes from).
//! Prints MB/s (corpus bytes over the median pass) and the ratios the targets name.

use std::collections::BTreeMap;

use msp_bench::codec::{self, Codec};
use msp_bench::corpus::{self, Line, Tables};
use msp_bench::envelope::Head;
use msp_bench::measure::{budget, mb_per_s, Group, Report};
use msp_bench::wire::{self, Source, Typed};
use msp_types::rpc::PendingRequests;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::Value;

/// Generated types that decode a payload through `serde_json::from_str::<T>` (frames through
/// the bench's own envelope reader, see `msp_bench::envelope`).
struct Side {
    /// Name in the case keys.
    name: &'static str,
    /// The type of each corpus line's payload, by line.
    codecs: Vec<Option<Codec>>,
}

/// Results by case name: MB/s.
#[derive(Default)]
struct Speeds(BTreeMap<String, f64>);

impl Speeds {
    /// Times the cases of one section side by side (see [`Group`]); each pass handles `bytes`.
    fn run(&mut self, group: Group<'_>, bytes: usize) {
        for (name, median) in group.run(budget()) {
            let speed = mb_per_s(bytes, median);
            println!(
                "  {name:<30} {speed:>8.1} MB/s  ({:>8.1} us a pass)",
                median.as_secs_f64() * 1e6
            );
            self.0.insert(name, speed);
        }
    }

    fn get(&self, name: &str) -> Option<f64> {
        self.0.get(name).copied()
    }
}

fn must<T>(outcome: wire::Outcome<T>) -> T {
    outcome.expect("accepted when the corpus was checked")
}

/// The typed sides this build and environment have.
fn sides(lines: &[Line]) -> Vec<Side> {
    let root = corpus::workspace_root();
    let ours = Tables::load(&root.join("schema/msp.schema.json")).expect("schema/msp.schema.json");
    let side = |name, tables: &Tables, lookup: fn(&str) -> Option<Codec>| Side {
        name,
        codecs: lines
            .iter()
            .map(|l| tables.definition(l).and_then(lookup))
            .collect(),
    };
    let mut sides = vec![side("msp_types", &ours, codec::msp)];
    match (corpus::shared_dir(), cfg!(typify_bundle)) {
        (Ok(shared), true) => {
            let bundle = shared.join("msp-upstream/experimental/msp.schema.json");
            let tables = Tables::load(&bundle).expect("the bundle typify read");
            sides.push(side("typify", &tables, codec::typify));
        }
        (Err(reason), _) => println!("typify (bundle) comparison skipped: {reason}"),
        (Ok(_), false) => println!(
            "typify (bundle) comparison skipped: this build has no typify output (build.rs warnings)"
        ),
    }
    if cfg!(typify_schema) {
        sides.push(side("typify_schema", &ours, codec::typify_schema));
    } else {
        println!("typify (schema) comparison skipped: typify rejected schema/msp.schema.json");
    }
    sides
}

fn main() {
    let corpus = match corpus::load() {
        Ok(corpus) => corpus,
        Err(e) => {
            println!("wire bench skipped: {e}");
            return;
        }
    };
    let total = corpus.lines.len();
    println!("corpus: {} ({total} frames)", corpus.source);
    let sides = sides(&corpus.lines);
    let payloads = corpus.lines.iter().filter(|l| l.payload.is_some()).count();
    for side in &sides {
        let typed = side.codecs.iter().filter(|c| c.is_some()).count();
        println!(
            "{}: {typed}/{payloads} payloads typed (the rest decode as Value)",
            side.name
        );
    }

    // Which frames each side accepts; the benches run on the frames every side accepts.
    let mut rejected: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut frames = Vec::new();
    for (i, line) in corpus.lines.iter().enumerate() {
        let mut ok = true;
        let mut check = |side: &'static str, outcome: wire::Outcome| {
            if let Err(e) = outcome {
                let errors = rejected.entry(side).or_default();
                errors.push(format!("{}: {e}", line.source));
                ok = false;
            }
        };
        check(
            "msp_api",
            wire::api_frame_check(line, &mut PendingRequests::default()),
        );
        for side in &sides {
            check(side.name, wire::envelope_check(side.codecs[i], line));
        }
        if ok {
            frames.push(i);
        }
    }
    for (side, errors) in &rejected {
        println!(
            "{side} rejects {} frames; first: {}",
            errors.len(),
            errors[0]
        );
    }
    // Payload level: the payloads every side types.
    let payloads: Vec<usize> = frames
        .iter()
        .copied()
        .filter(|&i| sides.iter().all(|s| s.codecs[i].is_some()))
        .collect();
    let line = |i: usize| &corpus.lines[i];
    let text = |i: usize| line(i).payload_text().unwrap_or_default();
    let frame_bytes: usize = frames.iter().map(|&i| line(i).raw.len()).sum();
    let payload_bytes: usize = payloads.iter().map(|&i| text(i).len()).sum();
    println!(
        "benched: {} of {total} frames ({frame_bytes} bytes); {} payloads every side types ({payload_bytes} bytes)",
        frames.len(),
        payloads.len()
    );

    let mut report = Report::new("wire");
    report.put("frames", frames.len());
    report.put("frame_bytes", frame_bytes);
    report.put("payloads", payloads.len());
    report.put("payload_bytes", payload_bytes);
    for (side, errors) in &rejected {
        report.put(format!("rejected.{side}"), errors.len());
    }
    let mut speeds = Speeds::default();

    println!("\ndecode, whole frames:");
    let mut pending = PendingRequests::default();
    let mut group = Group::default();
    group.add("decode.frame.value", || {
        for &i in &frames {
            drop(serde_json::from_str::<Value>(&line(i).raw));
        }
    });
    group.add("decode.frame.ignored_any", || {
        for &i in &frames {
            drop(serde_json::from_str::<IgnoredAny>(&line(i).raw));
        }
    });
    group.add("decode.frame.msp_api", || {
        for &i in &frames {
            drop(wire::api_frame_check(line(i), &mut pending));
        }
    });
    for side in &sides {
        group.add(format!("decode.frame.{}", side.name), || {
            for &i in &frames {
                drop(wire::envelope_check(side.codecs[i], line(i)));
            }
        });
    }
    speeds.run(group, frame_bytes);

    println!("\ndecode, payloads every side types:");
    // The `&RawValue`s a frame reader would hand over, made outside the timing.
    let raws: Vec<&RawValue> = payloads
        .iter()
        .map(|&i| serde_json::from_str(text(i)).expect("accepted"))
        .collect();
    let mut group = Group::default();
    group.add("decode.payload.value", || {
        for &i in &payloads {
            drop(serde_json::from_str::<Value>(text(i)));
        }
    });
    group.add("decode.payload.ignored_any", || {
        for &i in &payloads {
            drop(serde_json::from_str::<IgnoredAny>(text(i)));
        }
    });
    group.add("decode.payload.msp_api", || {
        for &i in &payloads {
            drop(wire::api_payload_check(line(i), Source::Value(text(i))));
        }
    });
    group.add("decode.payload.msp_api_raw", || {
        for (&i, raw) in payloads.iter().zip(&raws) {
            drop(wire::api_payload_check(line(i), Source::Raw(raw)));
        }
    });
    for side in &sides {
        group.add(format!("decode.payload.{}", side.name), || {
            for &i in &payloads {
                drop(wire::typed_check(side.codecs[i], text(i)));
            }
        });
    }
    speeds.run(group, payload_bytes);

    println!("\nencode, whole frames (each side from what it decoded):");
    let values: Vec<Value> = frames
        .iter()
        .map(|&i| serde_json::from_str(&line(i).raw).expect("accepted"))
        .collect();
    let api_frames: Vec<_> = frames
        .iter()
        .map(|&i| must(wire::api_frame_decode(line(i), &mut pending)))
        .collect();
    let decoded: Vec<Vec<(Head, Option<Typed>)>> = sides
        .iter()
        .map(|side| {
            frames
                .iter()
                .map(|&i| must(wire::envelope_decode(side.codecs[i], line(i))))
                .collect()
        })
        .collect();
    let mut group = Group::default();
    group.add("encode.frame.value", || {
        for v in &values {
            drop(serde_json::to_string(v));
        }
    });
    group.add("encode.frame.msp_api", || {
        for f in &api_frames {
            drop(wire::api_frame_encode(f));
        }
    });
    for (side, kept) in sides.iter().zip(&decoded) {
        group.add(format!("encode.frame.{}", side.name), move || {
            for (head, payload) in kept {
                drop(wire::envelope_encode(head, payload.as_ref()));
            }
        });
    }
    speeds.run(group, frame_bytes);

    println!("\nencode, payloads every side types:");
    let payload_values: Vec<Value> = payloads
        .iter()
        .map(|&i| serde_json::from_str(text(i)).expect("accepted"))
        .collect();
    let api_payloads: Vec<_> = payloads
        .iter()
        .zip(&raws)
        .map(|(&i, raw)| must(wire::api_payload_decode(line(i), Source::Raw(raw))))
        .collect();
    let typed: Vec<Vec<Typed>> = sides
        .iter()
        .map(|side| {
            payloads
                .iter()
                .map(|&i| must(wire::typed_decode(side.codecs[i], text(i))))
                .collect()
        })
        .collect();
    let mut group = Group::default();
    group.add("encode.payload.value", || {
        for v in &payload_values {
            drop(serde_json::to_string(v));
        }
    });
    group.add("encode.payload.msp_api", || {
        for p in &api_payloads {
            drop(wire::api_payload_encode(p));
        }
    });
    for (side, kept) in sides.iter().zip(&typed) {
        group.add(format!("encode.payload.{}", side.name), move || {
            for p in kept {
                drop(wire::typed_encode(p, &mut Vec::with_capacity(128)));
            }
        });
    }
    speeds.run(group, payload_bytes);

    // Lossless: does re-encoding give the same JSON back?
    println!("\nre-encoded frames equal to the input as JSON:");
    let same = |i: usize, out: &[u8]| {
        serde_json::from_str::<Value>(&line(i).raw).ok() == serde_json::from_slice(out).ok()
    };
    let differ: Vec<&str> = frames
        .iter()
        .zip(&api_frames)
        .filter(|(&i, f)| !same(i, wire::api_frame_encode(f).as_bytes()))
        .map(|(&i, _)| line(i).source.as_str())
        .collect();
    println!(
        "  msp_api {}/{} (differ: {})",
        frames.len() - differ.len(),
        frames.len(),
        differ.join(", ")
    );
    report.put("lossless.msp_api", frames.len() - differ.len());
    for (side, kept) in sides.iter().zip(&decoded) {
        let equal = frames
            .iter()
            .zip(kept)
            .filter(|(&i, (head, payload))| {
                same(i, &must(wire::envelope_encode(head, payload.as_ref())))
            })
            .count();
        println!("  {} {equal}/{}", side.name, frames.len());
        report.put(format!("lossless.{}", side.name), equal);
    }

    println!("\nratios (throughput, higher is better for the first):");
    let mut ratio = |key: String, a: &str, b: &str| {
        if let (Some(a), Some(b)) = (speeds.get(a), speeds.get(b)) {
            println!("  {key:<44} {:.2}", a / b);
            report.put(key, format!("{:.4}", a / b));
        }
    };
    let names: Vec<&str> = sides.iter().map(|s| s.name).collect();
    for op in ["decode", "encode"] {
        for level in ["frame", "payload"] {
            for ours in ["msp_api", "msp_api_raw", "msp_types"] {
                for base in ["value", "ignored_any", "typify", "typify_schema"] {
                    let (a, b) = (
                        format!("{op}.{level}.{ours}"),
                        format!("{op}.{level}.{base}"),
                    );
                    ratio(format!("{a}/{base}"), &a, &b);
                }
            }
            for theirs in names.iter().filter(|n| n.starts_with("typify")) {
                let (a, b) = (
                    format!("{op}.{level}.{theirs}"),
                    format!("{op}.{level}.value"),
                );
                ratio(format!("{a}/value"), &a, &b);
            }
        }
    }
    for (name, speed) in &speeds.0 {
        report.put(format!("{name}.mb_s"), format!("{speed:.2}"));
    }
    report.save();
}
