#!/usr/bin/env bash
# Every benchmark of msp-bench, then a table of each ratio against its target:
# generation (msp-codegen vs typify), wire decode/encode (msp-types vs Value, IgnoredAny and
# typify's types), the msp-rpc connection (round trips, notification flood) and build time
# (scripts/bench_build_time.sh). Set MSP_SHARED_DIR for the
# experimental bundle and the golden transcripts; without it the typify comparisons are skipped.
# MSP_BENCH_SECS (default 1) is the measurement time of each wire case.
set -euo pipefail
cd "$(dirname "$0")/.."
export MSP_BENCH_OUT=${MSP_BENCH_OUT:-$PWD/target/msp-bench}
export MSP_BENCH_SECS=${MSP_BENCH_SECS:-1}
rm -rf "$MSP_BENCH_OUT"
mkdir -p "$MSP_BENCH_OUT"
start=$(date +%s)
stage_start=$start
stage() {
  local now
  now=$(date +%s)
  echo "-- $((now - stage_start)) s"
  stage_start=$now
}

# Built once; the binaries run as built, so that a change to the tree during the run cannot
# rebuild between stages.
echo "== building the benches (bench profile)"
built=$(cargo bench -p msp-bench --no-run 2>&1) || { echo "$built"; exit 1; }
exe() { sed -n "s|.*Executable benches/$1.rs (\(.*\))|\1|p" <<<"$built"; }
generation=$(exe generation)
wire=$(exe wire)
rpc=$(exe rpc)
stage
echo "== generation"
"$generation" --bench
stage
echo "== wire"
"$wire" --bench
stage
echo "== connection (msp-rpc)"
"$rpc" --bench
stage
echo "== build time"
scripts/bench_build_time.sh
stage

echo
echo "== ratios against targets ($(($(date +%s) - start)) s in all)"
cat "$MSP_BENCH_OUT"/*.tsv | awk -F'\t' '
  { v[$1] = $2 }
  function row(what, key, op, target,   val, ok) {
    if (!(key in v)) { printf "%-64s %9s %8s  %s\n", what, "n/a", op target, "skipped"; return }
    val = v[key]
    ok = (op == ">=") ? (val + 0 >= target) : (val + 0 <= target)
    printf "%-64s %9.2f %8s  %s\n", what, val, op target, ok ? "met" : "MISSED"
  }
  function info(what, key) {
    if (!(key in v)) { printf "%-64s %9s\n", what, "n/a"; return }
    printf "%-64s %9.2f\n", what, v[key]
  }
  END {
    printf "%-64s %9s %8s  %s\n", "ratio", "value", "target", ""
    row("generation time msp-codegen/typify (bundle)", "bundle.ratio.time", "<=", 0.25)
    row("generation time msp-codegen/typify (schema)", "schema.ratio.time", "<=", 0.25)
    row("generation peak memory msp-codegen/typify (bundle)", "bundle.ratio.peak", "<=", 1.0)
    row("generation peak memory msp-codegen/typify (schema)", "schema.ratio.peak", "<=", 1.0)
    row("decode frame, Frame::parse(_tracked) / Value", "decode.frame.msp_api/value", ">=", 1.5)
    row("decode frame, Frame::parse(_tracked) / typify types (bundle)", "decode.frame.msp_api/typify", ">=", 1.0)
    row("decode frame, Frame::parse(_tracked) / IgnoredAny (within 2x)", "decode.frame.msp_api/ignored_any", ">=", 0.5)
    row("decode payload, *::decode_raw / Value", "decode.payload.msp_api_raw/value", ">=", 1.5)
    row("decode payload, *::decode_raw / typify types (bundle)", "decode.payload.msp_api_raw/typify", ">=", 1.0)
    row("decode payload, *::decode_raw / IgnoredAny (within 2x)", "decode.payload.msp_api_raw/ignored_any", ">=", 0.5)
    row("encode frame, Frame::to_line / Value", "encode.frame.msp_api/value", ">=", 1.0)
    row("encode payload, types (Serialize) / Value", "encode.payload.msp_types/value", ">=", 1.0)
    row("build: generated crate / typify crate (debug)", "ratio.crate", "<=", 1.0)
    row("request round trip, blocking connection / hand-written loop", "ratio.roundtrip.blocking", "<=", 2.0)
    row("request round trip, tokio connection / hand-written loop", "ratio.roundtrip.async", "<=", 2.0)
    row("notification flood, blocking connection / Frame::parse", "ratio.flood.blocking", "<=", 1.1)
    row("notification flood, tokio connection (current thread) / Frame::parse", "ratio.flood.async", "<=", 1.1)
    row("notification flood, tokio connection (2 workers) / Frame::parse", "ratio.flood.async_workers", "<=", 1.1)
    row("no-op build: generator runs", "noop.generator_runs", "<=", 0)
    print ""
    print "like for like: typify on schema/msp.schema.json, the input msp-types is generated from"
    row("  decode frame, Frame::parse(_tracked) / typify types (schema)", "decode.frame.msp_api/typify_schema", ">=", 1.0)
    row("  decode payload, *::decode_raw / typify types (schema)", "decode.payload.msp_api_raw/typify_schema", ">=", 1.0)
    row("  decode payload, types / typify types (schema)", "decode.payload.msp_types/typify_schema", ">=", 1.0)
    row("  encode payload, types / typify types (schema)", "encode.payload.msp_types/typify_schema", ">=", 1.0)
    print ""
    print "diagnostic: the API from a Value the caller already holds (*::decode(method, Value), params()):"
    print "a Value is made first (decode, timed from text) or last (params), so these sit below Value"
    info("  decode payload, *::decode / Value", "decode.payload.msp_api/value")
    info("  encode payload, params() / Value", "encode.payload.msp_api/value")
    print ""
    print "diagnostic: the flood through the sans-I/O endpoint alone (framing and events, no threads),"
    print "through an in-memory pipe fed by a host thread, and with a new connection every pass;"
    print "and Frame::parse on the corpus lines again and again, always in cache (the baseline parses"
    print "the lines of each pass as read), and the bench host's copy of each pass into the read buffer"
    print "alone (part of every connection's ratio); scripts/flood_instructions.sh counts the flood in"
    print "instructions"
    info("  notification flood, Frame::parse on cached lines / Frame::parse", "ratio.flood.frame_parse_hot_lines")
    info("  notification flood, the host's copy alone / Frame::parse", "ratio.flood.host_copy")
    info("  notification flood, Endpoint / Frame::parse", "ratio.flood.endpoint")
    info("  notification flood, blocking connection over a pipe / Frame::parse", "ratio.flood.blocking_pipe")
    info("  notification flood, new blocking connection each pass / Frame::parse", "ratio.flood.blocking_fresh")
    print ""
    print "diagnostic: the generated types alone (serde_json::from_str::<T>, no Value in between)"
    info("  decode frame, types / Value", "decode.frame.msp_types/value")
    info("  decode frame, types / typify types (bundle)", "decode.frame.msp_types/typify")
    info("  decode payload, types / Value", "decode.payload.msp_types/value")
    info("  decode payload, types / typify types (bundle)", "decode.payload.msp_types/typify")
    info("  decode payload, types / IgnoredAny (within 2x)", "decode.payload.msp_types/ignored_any")
    info("  encode payload, types / typify types (bundle)", "encode.payload.msp_types/typify")
  }'
echo "raw numbers: $MSP_BENCH_OUT/*.tsv"
