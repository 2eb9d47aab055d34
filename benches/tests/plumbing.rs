//! The bench plumbing measures what it claims: the envelope reader and writer keep a frame,
//! payloads land in the right member, responses get the method of their request, and the
//! counting allocator sees an allocation, and a selection of cases picks what it names.

use msp_bench::alloc::{peak_during, Counting};
use msp_bench::corpus::{self, Kind};
use msp_bench::envelope::{write_frame, Envelope, Member};
use msp_bench::measure::picks;
use serde_json::Value;

#[global_allocator]
static ALLOC: Counting = Counting;

fn same_json(a: &str, b: &[u8]) -> bool {
    serde_json::from_str::<Value>(a).unwrap() == serde_json::from_slice::<Value>(b).unwrap()
}

fn round_trip(line: &str) -> Vec<u8> {
    let frame = Envelope::parse(line).unwrap();
    let raw = frame.payload.map(|(_, raw)| raw.get().to_owned());
    let mut out = Vec::new();
    write_frame(&mut out, &frame.head(), |out| {
        out.extend_from_slice(raw.as_deref().unwrap_or_default().as_bytes());
        Ok(())
    })
    .unwrap();
    out
}

#[test]
fn envelope_keeps_every_member() {
    let line = r#"{"jsonrpc":"2.0","id":"a\"b","method":"turn/start","params":{"x":[1,2,{"y":null}]},"emittedAtMs":5,"trace":{"t":1}}"#;
    let frame = Envelope::parse(line).unwrap();
    assert_eq!(frame.method.as_deref(), Some("turn/start"));
    assert_eq!(frame.id, Some(Value::from("a\"b")));
    let (member, raw) = frame.payload.unwrap();
    assert_eq!(member, Member::Params);
    assert_eq!(raw.get(), r#"{"x":[1,2,{"y":null}]}"#);
    assert_eq!(frame.extra.len(), 2, "{:?}", frame.extra);
    assert!(same_json(line, &round_trip(line)));
}

#[test]
fn envelope_rejects_two_payloads() {
    let line = r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#;
    assert!(Envelope::parse(line).is_err());
}

#[test]
fn corpus_frames_survive_the_envelope_and_responses_know_their_method() {
    let corpus = match corpus::load() {
        Ok(corpus) => corpus,
        Err(reason) => {
            eprintln!("skipped: {reason}");
            return;
        }
    };
    for line in &corpus.lines {
        assert!(
            same_json(&line.raw, &round_trip(&line.raw)),
            "{}: envelope round trip changed the frame",
            line.source
        );
        if matches!(line.kind, Kind::ClientResult | Kind::ServerResult) {
            assert!(
                line.method.is_some(),
                "{}: response to no request",
                line.source
            );
        }
    }
}

#[test]
fn counting_allocator_sees_a_megabyte() {
    let (v, peak) = peak_during(|| vec![1u8; 1 << 20]);
    assert_eq!(v.len(), 1 << 20);
    assert!(peak >= 1 << 20, "peak {peak}");
}

#[test]
fn a_selection_picks_cases_by_part_of_their_name_or_with_a_leading_equals_sign_by_all_of_it() {
    assert!(picks("flood.frame_parse", "flood.frame_parse"));
    assert!(picks("flood.frame_parse", "flood.frame_parse_hot_lines"));
    assert!(picks("=flood.frame_parse", "flood.frame_parse"));
    assert!(!picks("=flood.frame_parse", "flood.frame_parse_hot_lines"));
    assert!(!picks("=none", "flood.endpoint"));
}
