#!/usr/bin/env bash
# release/build.sh VERSION OUTDIR — a2c's release, built here from this commit:
#
#   OUTDIR/latest                               VERSION
#   OUTDIR/install-a2c.sh                       the installer, with the release key (and base) in it
#   OUTDIR/VERSION/a2c-VERSION-TARGET.tar.gz    a2c, man pages, completions, licenses, README
#   OUTDIR/VERSION/a2c-VERSION-TARGET.zip       (Windows)
#   OUTDIR/VERSION/wheels/a2c-VERSION-py3-none-PLATFORM.whl   the static Linux binaries as wheels
#   OUTDIR/VERSION/SHA256SUMS                   every archive's and wheel's sha256
#   OUTDIR/VERSION/SHA256SUMS.minisig           signed by the release key, when given
#
# Targets (A2C_RELEASE_TARGETS, default all three built here):
#   x86_64-unknown-linux-musl, aarch64-unknown-linux-musl — static binaries, built by maturin
#     (PyPI `maturin` 1.16.0, `--zig`: linked by PyPI `ziglang` 0.17.1, in target/ci-venv or on
#     PATH) with Debian's rustc-web and rust-web-src (-Zbuild-std): docs/install.md says why
#     this over musl-tools. One build gives the archive's binary and the wheel that carries it,
#     tagged both manylinux2014 and musllinux_1_2 (a static binary needs no libc of the host's):
#     pip, uv and pipx install it on any Linux of that architecture, glibc or musl.
#   x86_64-pc-windows-gnu — mingw-w64, as .ci/wine-smoke builds it.
# The Apple targets are built by the hosted workflow (.github/workflows/release.yml): no
# Apple SDK exists here.
#
# Signing: A2C_RELEASE_SECRET_KEY (a key from `a2c key generate`; its password in
# A2C_KEY_PASSWORD when it has one) signs SHA256SUMS with `a2c sign --file`; its public key
# (the .pub beside it) goes into the installer and each binary. A2C_RELEASE_BASE is the URL
# the release is published at, written into the installer and each binary (without it they
# ask for A2C_INSTALL_BASE).
#
# The host's a2c of this commit writes the man pages and completions and signs: built here
# (target/release/a2c) unless A2C_RELEASE_HOST names one already built from this commit (CI
# passes the test suite's; its version is checked).
#
# Reproducible: every archive is packed from files whose times are SOURCE_DATE_EPOCH (the
# commit's time unless set), sorted, owned by 0:0, gzip without a name or time; the script
# packs each archive twice and refuses to go on if the two differ.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ $# -eq 2 ] || { echo "usage: release/build.sh VERSION OUTDIR" >&2; exit 2; }
version=$1
out=$(mkdir -p "$2" && cd "$2" && pwd)
crate_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
[ "$version" = "$crate_version" ] || {
  echo "error: VERSION $version is not Cargo.toml's version $crate_version (a2c --version would disagree): bump Cargo.toml first" >&2
  exit 1
}
targets=${A2C_RELEASE_TARGETS:-x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-pc-windows-gnu}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) && [ -n "$SOURCE_DATE_EPOCH" ] || {
    echo "error: git cannot read this commit's time (not a git checkout, or one git does not trust: git config --global --add safe.directory \"$PWD\"); or set SOURCE_DATE_EPOCH" >&2
    exit 1
  }
fi
export SOURCE_DATE_EPOCH
export TZ=UTC
stage() { echo "== [release] $*" >&2; }

# Debian's compiler with its std sources; its own CARGO_HOME (as .ci/cross-check).
build_env() {
  export PATH="/usr/bin:$root/target/ci-venv/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
  export CARGO_HOME="$root/target/cross/cargo-home"
}
zig_path() {
  local z
  z=$(ls "$root"/target/ci-venv/lib/python3*/site-packages/ziglang/zig 2>/dev/null | head -n1 || true)
  [ -n "$z" ] || z=$(command -v zig || true)
  [ -n "$z" ] || { echo "error: zig is missing: target/ci-venv/bin/pip install maturin==1.16.0 ziglang==0.17.1 (the releases built here used these)" >&2; exit 1; }
  echo "$z"
}

# binary TARGET: builds a2c for TARGET; prints the binary's path.
binary() {
  local target=$1
  case $target in
    *-linux-musl)
      stage "maturin build --release --target $target --zig -Zbuild-std (the binary and its wheel)"
      ( build_env
        export CARGO_ZIGBUILD_ZIG_PATH
        CARGO_ZIGBUILD_ZIG_PATH=$(zig_path)
        RUSTFLAGS="-C link-self-contained=no" maturin build --release --target "$target" --zig -Z build-std \
          --compatibility manylinux2014 musllinux_1_2 \
          --target-dir "$root/target/release-build" --out "$out/$version/wheels" --quiet ) >&2
      echo "$root/target/release-build/$target/release/a2c" ;;
    x86_64-pc-windows-gnu)
      stage "cargo build --release --target $target -Zbuild-std (mingw-w64)"
      ( build_env
        export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar
        export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
        cargo build -Zbuild-std --release --locked --target "$target" --bin a2c \
          --target-dir "$root/target/release-build" --quiet ) >&2
      echo "$root/target/release-build/$target/release/a2c.exe" ;;
    *) echo "error: $target is not built here (the Apple targets are the hosted workflow's)" >&2; exit 1 ;;
  esac
}

# The release key's public line and the base URL, written into each release binary
# (`a2c self update` reads and verifies releases with them) and into the installer.
key_line='@A2C_RELEASE_KEY@'
if [ -n "${A2C_RELEASE_SECRET_KEY:-}" ]; then
  key_line=$(sed -n 2p "$A2C_RELEASE_SECRET_KEY.pub")
  export A2C_RELEASE_KEY=$key_line
fi
export A2C_RELEASE_BASE=${A2C_RELEASE_BASE:-}

# The host's a2c of this commit: writes the man pages and completions, and signs.
host=${A2C_RELEASE_HOST:-}
if [ -z "$host" ]; then
  stage "cargo build --release (the host's a2c: man pages, completions, signing)"
  cargo build --release --locked --quiet --bin a2c
  host=$root/target/release/a2c
fi
said=$("$host" --version)
[ "${said#a2c $version}" != "$said" ] || { echo "error: the host's a2c ($host) says \`$said\`, not a2c $version: build it from this commit" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/a2c-release.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out/$version/wheels"
mkdir -p "$out/$version"

# pack DIR NAME ARCHIVE: DIR/NAME packed reproducibly into ARCHIVE (.tar.gz or .zip).
pack() {
  local dir=$1 name=$2 archive=$3
  find "$dir/$name" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  case $archive in
    *.tar.gz)
      tar -C "$dir" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
        --mode='u+rwX,go+rX,go-w' -cf - "$name" | gzip -n -9 >"$archive" ;;
    *.zip)
      rm -f "$archive"
      (cd "$dir" && find "$name" -print | LC_ALL=C sort | zip -X -q -9 "$archive" -@) ;;
  esac
}

for target in $targets; do
  bin=$(binary "$target")
  [ -f "$bin" ] || { echo "error: the build of $target left no binary at $bin" >&2; exit 1; }
  name=a2c-$version-$target
  stage "stage $name"
  d=$tmp/stage
  rm -rf "$d" && mkdir -p "$d/$name/man" "$d/$name/completions"
  case $target in
    *windows*) cp "$bin" "$d/$name/a2c.exe"; ext=zip ;;
    *) cp "$bin" "$d/$name/a2c"; chmod 755 "$d/$name/a2c"; ext=tar.gz ;;
  esac
  cp LICENSE-MIT LICENSE-APACHE README.md "$d/$name/"
  "$host" man --out "$d/$name/man" >/dev/null
  for shell in bash zsh fish powershell elvish; do
    "$host" completions "$shell" >"$d/$name/completions/a2c.$shell"
  done
  chmod -R u+rwX,go+rX,go-w "$d/$name"
  archive=$out/$version/$name.$ext
  pack "$d" "$name" "$archive"
  # Reproducible packing: the same files packed again give the same bytes.
  pack "$d" "$name" "$tmp/again.$ext"
  cmp -s "$archive" "$tmp/again.$ext" || { echo "error: packing $name twice gave two archives" >&2; exit 1; }
  rm -f "$tmp/again.$ext"
done

stage "SHA256SUMS"
(cd "$out/$version" && { find . -maxdepth 1 -type f \( -name '*.tar.gz' -o -name '*.zip' \) -printf '%f\n'
  find wheels -type f -name '*.whl' 2>/dev/null || true; } | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
if [ -n "${A2C_RELEASE_SECRET_KEY:-}" ]; then
  stage "a2c sign --file SHA256SUMS"
  "$host" -q sign --file "$out/$version/SHA256SUMS" --key "$A2C_RELEASE_SECRET_KEY"
else
  echo "warning: A2C_RELEASE_SECRET_KEY is not set: SHA256SUMS is not signed, and the installer holds no key" >&2
fi
sed -e "s|^RELEASE_KEY='@A2C_RELEASE_KEY@'|RELEASE_KEY='$key_line'|" \
    -e "s|^RELEASE_BASE=''|RELEASE_BASE='${A2C_RELEASE_BASE:-}'|" install-a2c.sh >"$out/install-a2c.sh"
chmod 755 "$out/install-a2c.sh"
echo "$version" >"$out/latest"
stage "done: $out"
ls -l "$out/$version" >&2
