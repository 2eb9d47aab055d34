#!/usr/bin/env bash
# Every benchmark of msp-bench, then a table of each ratio against its target:
# generation (msp-codegen vs typify), wire decode/encode (msp-types vs Value, IgnoredAny and
# typify's types), the msp-rpc connection (round trips, notification flood), the session fold
# and the session client (a streamed turn against the flood), and build time
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
fold=$(exe fold)
session=$(exe session)
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
echo "== session fold (msp-session)"
"$fold" --bench
stage
echo "== session client (msp-client)"
"$session" --bench
stage
echo "== build time"
scripts/bench_build_time.sh
stage

echo
echo "== ratios against targets ($(($(date +%s) - start)) s in all)"
awk -F'\t' -f scripts/ratios.awk "$MSP_BENCH_OUT"/*.tsv
echo "raw numbers: $MSP_BENCH_OUT/*.tsv"
