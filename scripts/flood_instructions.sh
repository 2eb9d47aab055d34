#!/usr/bin/env bash
# The notification flood in instructions, not seconds: each flood case of the rpc bench under
# callgrind, which counts the same for the same binary and input however busy the machine is.
# Per frame of a sustained flood: each case runs two passes at two flood lengths, and the
# difference between the lengths is what the extra frames cost (set-up, warm-up and each
# pass's start cancel out). Prints, against `Frame::parse` alone (parsing and dropping):
# - the consumer's thread, which is each frame's critical path (the readers of the threaded
#   drivers run beside it);
# - all threads, which is the CPU the flood costs.
# The bench's in-memory host copies each pass into the connection's read buffer; that is the
# transport's work, and `memcpy` does it with `rep movsb`, which callgrind counts once a byte,
# so it is left out and shown apart. Needs MSP_SHARED_DIR (the golden corpus) and valgrind.
# About five minutes on 2 cores once the bench is built; the profiles stay in
# target/flood-instructions.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${MSP_SHARED_DIR:?set MSP_SHARED_DIR to the shared material (the golden transcripts)}"
export MSP_SHARED_DIR
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

built=$(cargo bench -p msp-bench --bench rpc --no-run 2>&1) || { echo "$built"; exit 1; }
rpc=$(sed -n 's|.*Executable benches/rpc.rs (\(.*\))|\1|p' <<<"$built")
# Kept after the run for a look at each thread's profile (callgrind_annotate).
out=target/flood-instructions
rm -rf "$out"
mkdir -p "$out"

short=20
long=60
# `none` selects no case: what the bench does anyway (loading the corpus, building the replay).
cases=(none flood.frame_parse flood.endpoint flood.connection flood.async_connection
  flood.async_workers_connection)

# Prints "<consumer> <all> <host copy>" instructions for one case at one flood length.
count() {
  local case=$1 repeat=$2 dir="$out/$1.$2"
  mkdir -p "$dir"
  # Fair scheduling hands the threads the one core valgrind runs them on in turn; without it a
  # thread can run long enough for the stall check to take the consumer's lines.
  MSP_BENCH_ONLY="=$case" MSP_BENCH_ROUNDS=1 MSP_BENCH_FLOOD_REPEAT=$repeat \
    MSP_BENCH_OUT="$dir" valgrind --tool=callgrind --fair-sched=yes --separate-threads=yes \
    --callgrind-out-file="$dir/cg.%p" "$rpc" >"$dir/stdout" 2>"$dir/stderr" ||
    { cat "$dir/stderr" >&2; exit 1; }
  local consumer=0 all=0 copy=0 file total burst
  for file in "$dir"/cg.*-*; do
    total=$(sed -n 's/^totals: *//p' "$file" | head -1)
    burst=$(callgrind_annotate --inclusive=yes "$file" 2>/dev/null |
      awk '/rpc::Burst</ { gsub(",", "", $1); n += $1 } END { print n + 0 }')
    all=$((all + total))
    copy=$((copy + burst))
    [[ $file == *-01 ]] && consumer=$((total - burst))
  done
  echo "$consumer $((all - copy)) $copy"
}

frames() {
  sed -n 's/^notification flood (\([0-9]*\) frames.*/\1/p' "$out/flood.frame_parse.$1/stdout"
}

declare -A at_short at_long
for case in "${cases[@]}"; do
  at_short[$case]=$(count "$case" $short)
  at_long[$case]=$(count "$case" $long)
done
# Two passes at each length.
extra=$((2 * ($(frames $long) - $(frames $short))))

echo "instructions a frame of a sustained flood ($extra frames between the two lengths):"
printf '  %-34s %10s %8s %10s %8s %10s\n' case consumer ratio "all threads" ratio "host copy"
{
  read -r base_consumer base_all _ <<<"$(
    paste -d' ' <(echo "${at_long[flood.frame_parse]}") <(echo "${at_short[flood.frame_parse]}") \
      <(echo "${at_long[none]}") <(echo "${at_short[none]}") |
      awk -v n=$extra '{ printf "%.0f %.0f 0\n", ($1-$4-$7+$10)/n, ($2-$5-$8+$11)/n }'
  )"
  for case in "${cases[@]:1}"; do
    paste -d' ' <(echo "${at_long[$case]}") <(echo "${at_short[$case]}") \
      <(echo "${at_long[none]}") <(echo "${at_short[none]}") |
      awk -v n=$extra -v name="$case" -v bc="$base_consumer" -v ba="$base_all" '{
        c = ($1 - $4 - $7 + $10) / n; a = ($2 - $5 - $8 + $11) / n; h = ($3 - $6 - $9 + $12) / n
        printf "  %-34s %10.0f %8.3f %10.0f %8.3f %10.0f\n", name, c, c / bc, a, a / ba, h
      }'
  done
}
