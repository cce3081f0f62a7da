#!/usr/bin/env bash
# Installs the `a2c` binary from this checkout with `cargo install --path . --locked`.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: ./install.sh [--prefix DIR] [--demo] [--help]

Installs the a2c binary built from this checkout.

Options:
  --prefix DIR   install into DIR/bin (default: cargo's bin directory,
                 $CARGO_INSTALL_ROOT/bin, else $CARGO_HOME/bin, else ~/.cargo/bin)
  --demo         afterwards, run a2c's main job on a fresh copy of the bundled
                 demo superbuild (fixtures/) in a temporary directory
  -h, --help     print this help

Running it again is safe: cargo rebuilds only what changed and replaces the binary.
USAGE
}

prefix=""
demo=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "error: --prefix needs a directory" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --demo) demo=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown option \`$1\`" >&2; echo "hint: run ./install.sh --help" >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)

need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "error: \`$1\` was not found on PATH" >&2
  echo "hint: $2" >&2
  exit 1
}
need cargo "install Rust with rustup (https://rustup.rs), then open a new shell"
need rustc "install Rust with rustup (https://rustup.rs), then open a new shell"
need git "install git: a2c reads git repositories and the demo creates some"

min_rust=1.89
have_rust=$(rustc --version | awk '{print $2}')
if [ "$(printf '%s\n%s\n' "$min_rust" "$have_rust" | sort -V | head -n1)" != "$min_rust" ]; then
  echo "error: Rust $have_rust is too old; a2c needs Rust $min_rust or newer" >&2
  echo "hint: run \`rustup update stable\`" >&2
  exit 1
fi

args=(install --path "$here" --locked --bin a2c)
if [ -n "$prefix" ]; then
  mkdir -p "$prefix"
  prefix=$(cd "$prefix" && pwd)
  args+=(--root "$prefix")
  bindir="$prefix/bin"
else
  root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
  bindir="$root/bin"
fi

echo "installing a2c from $here (cargo ${args[*]})" >&2
cargo "${args[@]}"

bin="$bindir/a2c"
[ -x "$bin" ] || { echo "error: cargo finished but \`$bin\` is missing" >&2; exit 1; }
echo "installed $("$bin" --version) at $bin" >&2
case ":$PATH:" in
  *":$bindir:"*) echo "$bindir is on your PATH: run \`a2c --help\`" >&2 ;;
  *) echo "note: $bindir is not on your PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" >&2 ;;
esac

if [ "$demo" = 1 ]; then
  exec "$here/fixtures/demo.sh" --bin "$bin"
fi
