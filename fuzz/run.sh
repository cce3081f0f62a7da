#!/usr/bin/env bash
# Fuzzes every target of fuzz/Cargo.toml (or those named) for SECONDS each (default 20), from
# its committed corpus, with libFuzzer's limits set low: any crash, panic (a broken property),
# input slower than TIMEOUT seconds (default 2) or run above RSS_MB MiB (default 512) fails
# the script, naming the target and the input libFuzzer saved under fuzz/artifacts/TARGET/.
# New inputs go to a scratch directory; the committed corpus is not changed.
#
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On a stable toolchain it runs with
# RUSTC_BOOTSTRAP=1 (the sanitizer flags cargo-fuzz passes are unstable). The first build takes
# minutes. Environment: TIMEOUT, RSS_MB, BUILD (below), JOBS (targets fuzzed at once; default
# one per CPU); STATS=FILE appends one line of figures per target.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-20}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^a2c-fuzz$')
fi
command -v cargo-fuzz >/dev/null || {
  echo "error: cargo-fuzz is not installed" >&2
  echo "hint: cargo install cargo-fuzz --locked" >&2
  exit 1
}
export RUSTC_BOOTSTRAP=1
echo "== [$(( $(date +%s) - ${A2C_CI_START:-$(date +%s)} ))s] cargo fuzz build (${#targets[@]} targets)"
# BUILD: cargo fuzz build options, e.g. "--dev" (unoptimized: a quicker build, fewer
# executions) or "-s none" (no AddressSanitizer); the default is a release build with ASan.
read -r -a build <<<"${BUILD:-}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if ! cargo fuzz build "${build[@]}" > "$scratch/build.log" 2>&1; then
  cat "$scratch/build.log" >&2
  echo "error: the fuzz targets do not build" >&2
  exit 1
fi
# One target's run: its line of figures in $scratch/$t.line, its failure in $scratch/$t.failed.
fuzz_one() {
  local t=$1 dict=() log=$scratch/$1.log status=0
  mkdir -p "$scratch/$t" "artifacts/$t"
  [ -f "dict/$t.dict" ] && dict=(-dict="dict/$t.dict")
  cargo fuzz run "${build[@]}" "$t" "$scratch/$t" "corpus/$t" -- \
    -max_total_time="$seconds" -max_len=65536 -timeout="${TIMEOUT:-2}" -rss_limit_mb="${RSS_MB:-512}" \
    -malloc_limit_mb="${RSS_MB:-512}" -print_final_stats=1 -artifact_prefix="artifacts/$t/" "${dict[@]}" \
    > "$log" 2>&1 || status=$?
  local execs done_line cov ft corpus
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
  corpus=$(ls "corpus/$t" | wc -l)
  echo "$t: ${execs:-?} executions in ${seconds}s, cov ${cov:-?}, ft ${ft:-?}, corpus $corpus (+$(ls "$scratch/$t" | wc -l) new)" > "$scratch/$t.line"
  [ "$status" = 0 ] || echo "$status" > "$scratch/$t.failed"
}
# JOBS targets at a time (default: one per CPU; each libFuzzer run is one process on one CPU).
jobs=${JOBS:-$(nproc 2>/dev/null || echo 1)}
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
failed=()
for t in "${targets[@]}"; do
  line=$(cat "$scratch/$t.line")
  if [ -f "$scratch/$t.failed" ]; then
    failed+=("$t")
    echo "error: $line: libFuzzer exited with $(cat "$scratch/$t.failed")" >&2
    grep -E "^==[0-9]+==|SUMMARY|panicked|Test unit written|Slowest unit|out-of-memory|timeout" "$scratch/$t.log" | head -20 >&2 || true
  else
    echo "$line"
  fi
  [ -z "${STATS:-}" ] || echo "$line" >> "$STATS"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "error: ${#failed[@]} target(s) failed: ${failed[*]} (their inputs are in fuzz/artifacts/)" >&2
  echo "hint: reproduce one with: (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET artifacts/TARGET/FILE)" >&2
  exit 1
fi
