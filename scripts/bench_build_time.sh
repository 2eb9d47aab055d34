#!/usr/bin/env bash
# Build time of generated code: a clean debug build of the crate msp-codegen makes from a schema
# against a crate of typify's output for the same schema (same dependencies, dependencies built
# beforehand so only the crate itself is timed; separate target dirs, back to back), and a no-op
# `cargo build` of the workspace, showing that msp-types' build script (the generator) did not run.
#
# Input: the experimental bundle under $MSP_SHARED_DIR, else schema/msp.schema.json
# (MSP_BENCH_BUILD_INPUT=bundle|schema to choose). MSP_BENCH_BUILD_RUNS timed builds each
# (default 3, median). Writes $MSP_BENCH_OUT/build.tsv when MSP_BENCH_OUT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${MSP_BENCH_BUILD_RUNS:-3}
scratch=$root/target/bench-build
bundle=${MSP_SHARED_DIR:+$MSP_SHARED_DIR/msp-upstream/experimental/msp.schema.json}
input=${MSP_BENCH_BUILD_INPUT:-}
if [ -z "$input" ]; then
  if [ -n "$bundle" ] && [ -f "$bundle" ]; then input=bundle; else input=schema; fi
fi
case $input in
  bundle)
    if [ -z "$bundle" ] || [ ! -f "$bundle" ]; then
      echo "bundle input skipped: MSP_SHARED_DIR not set or bundle missing" >&2
      exit 1
    fi
    schema=$bundle ;;
  schema) schema=$root/schema/msp.schema.json ;;
  *) echo "MSP_BENCH_BUILD_INPUT must be bundle or schema" >&2; exit 2 ;;
esac

results=()
put() { results+=("$1	$2"); }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "== generators (bench profile, shared with cargo bench)"
cargo build --profile bench -q -p msp-bench --bin bench-gen
gen=$root/target/release/bench-gen

# One scratch crate: its own workspace and target dir, the workspace's lock file for the same
# dependency versions, and the same dependencies for both (typify's output needs regress,
# msp-types' serde_json's raw_value).
make_crate() {
  local name=$1 dir=$scratch/$1
  rm -rf "$dir/src"
  mkdir -p "$dir/src"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "$name"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
regress = "0.12"
serde = { version = "1", features = ["derive"] }
serde_json = { version = "1", features = ["raw_value"] }

[workspace]
TOML
  cp "$root/Cargo.lock" "$dir/Cargo.lock"
}

# The generated crate's features: every one its code names, `experimental` on (typify's output
# has every definition), the opt-in extras (`reflect`, `sample`, ...) off.
add_features() {
  local toml=$scratch/$1/Cargo.toml
  {
    echo '[features]'
    echo 'default = ["experimental"]'
    { echo experimental; grep -ohE 'feature = "[A-Za-z0-9_-]+"' "$scratch/$1"/src/*.rs | cut -d'"' -f2; } \
      | sort -u | sed 's/$/ = []/'
  } >> "$toml"
}

make_crate gen-msp
"$gen" msp "$schema" "$scratch/gen-msp/src"
add_features gen-msp
make_crate gen-typify
{
  echo '#![allow(clippy::all, dead_code, unused)]'
  "$gen" typify "$schema" /dev/stdout
} > "$scratch/gen-typify/src/lib.rs"
for name in gen-msp gen-typify; do
  lines=$(cat "$scratch/$name"/src/*.rs | wc -l)
  echo "$name: $lines lines of Rust from $input"
  put "$name.lines" "$lines"
done

# Clean build including dependencies, then the crate alone (dependencies kept).
time_crate() {
  local name=$1 dir=$scratch/$1 t0 t1 all=() with_deps m
  rm -rf "$dir/target"
  t0=$(now)
  if ! (cd "$dir" && cargo build >"$dir/build.log" 2>&1); then
    tail -40 "$dir/build.log" >&2
    echo "$name does not build (log: $dir/build.log)" >&2
    return 1
  fi
  t1=$(now)
  with_deps=$(secs "$t0" "$t1")
  put "$name.with_deps_s" "$with_deps"
  for _ in $(seq "$runs"); do
    (cd "$dir" && cargo clean -q -p "$name")
    t0=$(now)
    (cd "$dir" && cargo build >>"$dir/build.log" 2>&1)
    t1=$(now)
    all+=("$(secs "$t0" "$t1")")
  done
  m=$(echo "${all[*]}" | median)
  put "$name.crate_s" "$m"
  echo "$name: crate alone ${all[*]} s (median $m); clean with dependencies $with_deps s"
}

echo "== clean debug builds ($input, $runs runs each)"
time_crate gen-msp
time_crate gen-typify
msp_s=$(printf '%s\n' "${results[@]}" | awk -F'\t' '$1 == "gen-msp.crate_s" { print $2 }')
typify_s=$(printf '%s\n' "${results[@]}" | awk -F'\t' '$1 == "gen-typify.crate_s" { print $2 }')
ratio=$(awk -v a="$msp_s" -v b="$typify_s" 'BEGIN { printf "%.4f", a / b }')
echo "ratio generated crate / typify crate: $ratio"
put input "$input"
put ratio.crate "$ratio"

echo "== no-op workspace build"
cargo build -q
t0=$(now)
log=$(cargo build -v 2>&1)
t1=$(now)
noop=$(secs "$t0" "$t1")
ran=$(grep -c 'msp-types-[0-9a-f]*/build-script-build' <<<"$log" || true)
fresh=$(grep -E '^ *Fresh msp-types ' <<<"$log" || true)
echo "no-op cargo build: $noop s"
echo "msp-types: ${fresh:-no Fresh line}"
grep -E 'Running|Compiling|Dirty|Blocking' <<<"$log" | sed 's/^/  /' || true
if [ "$ran" -eq 0 ]; then
  echo "generator (msp-types build script) did not run"
else
  echo "generator (msp-types build script) RAN"
fi
put noop_s "$noop"
put noop.generator_runs "$ran"

if [ -n "${MSP_BENCH_OUT:-}" ]; then
  mkdir -p "$MSP_BENCH_OUT"
  printf '%s\n' "${results[@]}" > "$MSP_BENCH_OUT/build.tsv"
fi
