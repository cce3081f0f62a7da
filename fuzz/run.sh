#!/usr/bin/env bash
# A short fuzzing run of every target (default 20 s each), on the committed corpus.
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`). On a stable toolchain it runs with
# RUSTC_BOOTSTRAP=1 (the sanitizer flags are unstable); the first build takes minutes.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(archive_tar_gz archive_zip adoption_yaml workspace_marker index_json lock_toml yaml_flat pypi_page mcp_uri_prompt)
command -v cargo-fuzz >/dev/null || { echo "error: cargo-fuzz is not installed" >&2; echo "hint: cargo install cargo-fuzz" >&2; exit 1; }
export RUSTC_BOOTSTRAP=1
for t in "${targets[@]}"; do
  echo "== $t (${seconds}s)"
  mkdir -p "corpus/$t"
  cargo fuzz run "$t" "corpus/$t" -- -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 2>&1 | grep -E "^(#[0-9]+ *DONE|stat::number_of_executed_units|INFO: Loaded|==[0-9]+==|SUMMARY|panicked)" || true
  # A crash leaves artifacts/<target>/crash-*: fail loudly.
  if ls "artifacts/$t"/crash-* >/dev/null 2>&1; then echo "error: $t found a crash: $(ls artifacts/$t/crash-*)" >&2; exit 1; fi
done
