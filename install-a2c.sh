#!/bin/sh
# install-a2c.sh — installs a2c from its release archives, verified before anything is
# installed (docs/install.md):
#
#   curl -LsSf BASE/install-a2c.sh | sh
#   sh install-a2c.sh [--version X.Y.Z] [--prefix DIR] [--no-verify-signature]
#
# 1. It reads BASE/latest (or takes --version) and downloads BASE/VERSION/SHA256SUMS and its
#    minisign signature SHA256SUMS.minisig, then the archive for this machine.
# 2. It verifies the signature with the release key written below: with `minisign` when it is
#    installed, else with OpenSSL 3 (Ed25519 over the BLAKE2b-512 prehash that minisign signs).
#    With neither it stops, unless --no-verify-signature (the sha256 is still checked).
# 3. It checks the archive's sha256 against SHA256SUMS, unpacks it in a temporary directory,
#    and moves the binary into PREFIX/bin (default ~/.local/bin) with one rename: a failed or
#    refused install leaves any a2c already there as it was.
#
# BASE is the release's own (written by release/build.sh), or A2C_INSTALL_BASE: an https://
# or http:// URL (a mirror, an artifact server, an S3 website), a file:// URL or a directory
# (air-gapped sites). Downloads use curl, else wget.
set -eu

# Written by release/build.sh for a published release; empty in a checkout.
RELEASE_BASE=''
# The public key of a2c's releases (minisign format; release/a2c-release.pub).
RELEASE_KEY='@A2C_RELEASE_KEY@'

say() { printf 'a2c installer: %s\n' "$*" >&2; }
die() { printf 'a2c installer: error: %s\n' "$*" >&2; exit 1; }

version=''
prefix="${HOME:-}/.local"
verify_signature=1
while [ $# -gt 0 ]; do
  case $1 in
    --version) [ $# -ge 2 ] || die "--version needs a version (X.Y.Z)"; version=$2; shift 2 ;;
    --version=*) version=${1#*=}; shift ;;
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --no-verify-signature) verify_signature=0; shift ;;
    -h|--help) sed -n '2,19p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument \`$1\` (--version X.Y.Z, --prefix DIR, --no-verify-signature)" ;;
  esac
done

base=${A2C_INSTALL_BASE:-$RELEASE_BASE}
[ -n "$base" ] || die "no release location: set A2C_INSTALL_BASE to the URL or directory that holds a2c's releases (this copy of the installer was not written by a release build)"
base=${base%/}
[ -n "$prefix" ] || die "no prefix: HOME is not set; give --prefix DIR"

case $version in
  ''|[0-9]*.[0-9]*.[0-9]*) ;;
  *) die "\`$version\` is no version (X.Y.Z)" ;;
esac
case $version in *[!0-9A-Za-z.+-]*) die "\`$version\` is no version (X.Y.Z)" ;; esac

# This machine's target.
os=$(uname -s)
arch=$(uname -m)
case "$os/$arch" in
  Linux/x86_64|Linux/amd64) target=x86_64-unknown-linux-musl ;;
  Linux/aarch64|Linux/arm64) target=aarch64-unknown-linux-musl ;;
  Darwin/x86_64) target=x86_64-apple-darwin ;;
  Darwin/arm64|Darwin/aarch64) target=aarch64-apple-darwin ;;
  *) die "no a2c release for $os $arch (Windows: the .zip archive, or the wheel: see docs/install.md)" ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/a2c-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# fetch URL-PATH FILE: BASE/URL-PATH into FILE, failing on any error (a 404 included).
fetch() {
  case $base in
    file://*) cp "${base#file://}/$1" "$2" 2>/dev/null || die "cannot read ${base#file://}/$1" ;;
    http://*|https://*)
      if command -v curl >/dev/null 2>&1; then
        curl --proto '=http,https' -fsSL --retry 3 -o "$2" "$base/$1" || die "cannot download $base/$1"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$base/$1" || die "cannot download $base/$1"
      else
        die "neither curl nor wget is installed: install one, or set A2C_INSTALL_BASE to a directory"
      fi ;;
    *) cp "$base/$1" "$2" 2>/dev/null || die "cannot read $base/$1" ;;
  esac
}

if [ -z "$version" ]; then
  fetch latest "$tmp/latest"
  version=$(tr -d ' \r\n' <"$tmp/latest")
  case $version in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) die "$base/latest names no version" ;;
  esac
  case $version in *[!0-9A-Za-z.+-]*) die "$base/latest names no version" ;; esac
fi
archive=a2c-$version-$target.tar.gz
say "installing a2c $version ($target) from $base"
fetch "$version/SHA256SUMS" "$tmp/SHA256SUMS"
fetch "$version/SHA256SUMS.minisig" "$tmp/SHA256SUMS.minisig"

# The signature of SHA256SUMS, by the release key.
b64d() { openssl base64 -d -A; }
verify_with_openssl() {
  sums=$1 sig=$2
  sigline=$(sed -n 2p "$sig")
  comment=$(sed -n 3p "$sig")
  globalline=$(sed -n 4p "$sig")
  case $comment in "trusted comment: "*) comment=${comment#trusted comment: } ;; *) return 1 ;; esac
  printf '%s' "$sigline" | b64d >"$tmp/sig.raw" 2>/dev/null || return 1
  printf '%s' "$RELEASE_KEY" | b64d >"$tmp/key.raw" 2>/dev/null || return 1
  printf '%s' "$globalline" | b64d >"$tmp/global.raw" 2>/dev/null || return 1
  [ "$(wc -c <"$tmp/sig.raw" | tr -d ' ')" = 74 ] || return 1
  [ "$(wc -c <"$tmp/key.raw" | tr -d ' ')" = 42 ] || return 1
  [ "$(wc -c <"$tmp/global.raw" | tr -d ' ')" = 64 ] || return 1
  # "ED" (prehashed), the key id the release key has, then the signature.
  [ "$(head -c 2 "$tmp/sig.raw")" = ED ] || return 1
  [ "$(dd if="$tmp/sig.raw" bs=1 skip=2 count=8 2>/dev/null | od -An -tx1 | tr -d ' \n')" = \
    "$(dd if="$tmp/key.raw" bs=1 skip=2 count=8 2>/dev/null | od -An -tx1 | tr -d ' \n')" ] || return 1
  dd if="$tmp/sig.raw" of="$tmp/sig.bin" bs=1 skip=10 count=64 2>/dev/null
  # The Ed25519 public key as DER: the SubjectPublicKeyInfo prefix, then its 32 bytes.
  printf '\060\052\060\005\006\003\053\145\160\003\041\000' >"$tmp/key.der"
  dd if="$tmp/key.raw" bs=1 skip=10 count=32 2>/dev/null >>"$tmp/key.der"
  openssl pkey -pubin -inform DER -in "$tmp/key.der" -out "$tmp/key.pem" 2>/dev/null || return 1
  openssl dgst -blake2b512 -binary "$sums" >"$tmp/prehash" || return 1
  openssl pkeyutl -verify -pubin -inkey "$tmp/key.pem" -rawin -in "$tmp/prehash" -sigfile "$tmp/sig.bin" >/dev/null 2>&1 || return 1
  # The global signature: over the signature and the trusted comment.
  { cat "$tmp/sig.bin"; printf '%s' "$comment"; } >"$tmp/global.msg"
  openssl pkeyutl -verify -pubin -inkey "$tmp/key.pem" -rawin -in "$tmp/global.msg" -sigfile "$tmp/global.raw" >/dev/null 2>&1 || return 1
}
if [ "$verify_signature" = 1 ]; then
  case $RELEASE_KEY in @*) die "this copy of the installer holds no release key: use the installer published with a release, or --no-verify-signature" ;; esac
  if command -v minisign >/dev/null 2>&1; then
    minisign -Vm "$tmp/SHA256SUMS" -x "$tmp/SHA256SUMS.minisig" -P "$RELEASE_KEY" -q >/dev/null 2>&1 \
      || die "the signature of SHA256SUMS is not the release key's (minisign): nothing installed"
    say "SHA256SUMS is signed by the release key (minisign)"
  elif command -v openssl >/dev/null 2>&1 && openssl dgst -blake2b512 </dev/null >/dev/null 2>&1; then
    verify_with_openssl "$tmp/SHA256SUMS" "$tmp/SHA256SUMS.minisig" \
      || die "the signature of SHA256SUMS is not the release key's (OpenSSL): nothing installed"
    say "SHA256SUMS is signed by the release key (OpenSSL)"
  else
    die "cannot check the signature: install minisign (or OpenSSL 3), or run with --no-verify-signature (the sha256 is still checked)"
  fi
else
  say "warning: the signature of SHA256SUMS is not checked (--no-verify-signature)"
fi

# The archive, by its sha256 in SHA256SUMS.
want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$tmp/SHA256SUMS")
[ -n "$want" ] || die "SHA256SUMS lists no $archive (no $target build of $version?)"
fetch "$version/$archive" "$tmp/$archive"
if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$tmp/$archive" | cut -d' ' -f1)
elif command -v shasum >/dev/null 2>&1; then
  got=$(shasum -a 256 "$tmp/$archive" | cut -d' ' -f1)
else
  got=$(openssl dgst -sha256 -r "$tmp/$archive" | cut -d' ' -f1)
fi
[ "$got" = "$want" ] || die "$archive has sha256 $got, SHA256SUMS says $want: nothing installed"

mkdir "$tmp/unpacked"
tar -xzf "$tmp/$archive" -C "$tmp/unpacked" || die "$archive cannot be unpacked: nothing installed"
binary=$tmp/unpacked/a2c-$version-$target/a2c
[ -f "$binary" ] && [ ! -L "$binary" ] || die "$archive holds no a2c-$version-$target/a2c: nothing installed"
bindir=$prefix/bin
mkdir -p "$bindir" || die "cannot make $bindir"
cp "$binary" "$bindir/.a2c-install.$$" && chmod 755 "$bindir/.a2c-install.$$" \
  || { rm -f "$bindir/.a2c-install.$$"; die "cannot write into $bindir"; }
mv -f "$bindir/.a2c-install.$$" "$bindir/a2c" || { rm -f "$bindir/.a2c-install.$$"; die "cannot replace $bindir/a2c"; }
say "installed a2c $version: $bindir/a2c"
case ":${PATH:-}:" in
  *":$bindir:"*) ;;
  *) say "$bindir is not on your PATH: add it (for example \`export PATH=\"$bindir:\$PATH\"\` in ~/.profile), then run \`a2c --version\`" ;;
esac
