# The table of ratios against targets, from msp-bench's TSV lines (`key<TAB>value`):
# `awk -F'\t' -f scripts/ratios.awk target/msp-bench/*.tsv` (scripts/bench_all.sh runs it;
# tests/scripts.rs runs it on sample lines).
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
    row("generation time msp-codegen/typify (bundle)", "bundle.ratio.time", "<=", 1.0)
    row("generation time msp-codegen/typify (schema)", "schema.ratio.time", "<=", 1.0)
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
    row("session fold: folding over Frame::parse alone", "ratio.fold_over_parse", "<=", 0.2)
    row("streamed turn through a session / the connection's flood", "ratio.session_over_flood", "<=", 1.25)
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
  }
