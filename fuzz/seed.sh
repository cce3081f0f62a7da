#!/usr/bin/env bash
# Writes each fuzz target's seed inputs, fuzz/corpus/TARGET/seed-*, made by the real producers:
# GNU tar, bsdtar, Python's tarfile and zipfile, Info-ZIP, hatchling and a2c's own wheels, git
# (index formats 2, 3, 4, SHA-256, split), a2c itself (snapshot, lock, markers, index, vendor
# manifest), minisign, pypiserver, conan and conan_server. Text formats read from environment
# variables or headers (NO_PROXY, WWW-Authenticate, netrc, registry locations) get the forms
# their documentation gives. Run from anywhere; needs the programs .ci/run installs and a built
# a2c (target/debug/a2c, else `cargo build`). Seeds are committed: rerun after a format changes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
corpus=$here/corpus
a2c=$root/target/debug/a2c
[ -d "$root/target/ci-venv/bin" ] && export PATH="$root/target/ci-venv/bin:$PATH"
[ -x "$a2c" ] || (cd "$root" && cargo build --quiet)
for p in tar bsdtar zip python3 git minisign pypi-server devpi-server devpi twine conan conan_server curl hatchling; do
  command -v "$p" >/dev/null || { echo "error: $p is missing (run .ci/run's setup, or put target/ci-venv/bin on PATH)" >&2; exit 1; }
done
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
seed() { mkdir -p "$corpus/$1"; cat > "$corpus/$1/seed-$2"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.2; done; return 1; }

# A superbuild made and installed by a2c (the bundled demo).
"$root/fixtures/demo.sh" --bin "$a2c" --keep > "$tmp/demo.log" 2>&1
demo=$(sed -n 's/^the demo is kept in //p' "$tmp/demo.log")
w=$demo/superbuild
trap 'cleanup; rm -rf "$(dirname "$demo")"' EXIT
# A snapshot is written for plain members only: libs/core keeps a legacy `.a2c/` record.
rm -rf "$w/libs/core"
sleep 1.1
(cd "$w" && "$a2c" install --offline --from ../registry/bundles > /dev/null 2>&1)
seed workspace_snapshot demo < "$w/.tools_local/esys/a2c/.workspace-snapshot"
seed lock_toml demo < "$w/.tools/esys/a2c/a2c.lock"
seed workspace_marker demo < "$w/.tools/esys/a2c/workspace.yaml"
n=0
for f in $(find "$w" -name 'adoption.yaml' -not -path '*/.git/*'); do n=$((n + 1)); seed adoption_yaml "demo-$n" < "$f"; done
seed index_json demo < "$demo/registry/index/esys/a2c.json"
seed yaml_flat demo-marker < "$w/.tools/esys/a2c/workspace.yaml"
(cd "$w" && "$a2c" vendor "$tmp/vendor" > /dev/null 2>&1)
seed vendor_manifest demo < "$tmp/vendor/a2c-vendor.json"
for f in "$demo"/registry/bundles/*.tar.gz; do seed archive_tar_gz "demo-$(basename "$f")" < "$f"; done
for f in "$demo"/registry/bundles/*.zip; do seed archive_zip "demo-$(basename "$f")" < "$f"; done

# Tar streams (uncompressed) of one method tree, a long name, an executable and an empty
# directory, by each producer and in each format.
t=$tmp/tree
mkdir -p "$t/m/rules/$(printf 'd%.0s' $(seq 120))" "$t/m/empty"
printf 'name = "esys/a2c"\nversion = "1.0.0"\ntool_state_root = ".tools/esys/a2c"\n' > "$t/m/a2c-method.toml"
printf 'a rule\n' > "$t/m/rules/r.md"
printf 'deep\n' > "$t/m/rules/$(printf 'd%.0s' $(seq 120))/x.md"
printf '#!/bin/sh\n' > "$t/m/rules/run.sh"; chmod +x "$t/m/rules/run.sh"
for fmt in gnu oldgnu pax ustar v7; do
  tar -C "$t" --format=$fmt -cf - m 2>/dev/null | seed archive_tar "gnu-tar-$fmt" || true
done
for fmt in pax ustar gnutar; do bsdtar -C "$t" --format=$fmt -cf - m | seed archive_tar "bsdtar-$fmt"; done
for fmt in PAX_FORMAT GNU_FORMAT USTAR_FORMAT; do
  python3 -c "import sys,tarfile; t=tarfile.open(fileobj=sys.stdout.buffer, mode='w|', format=tarfile.$fmt); t.add('$t/m', arcname='m'); t.close()" | seed archive_tar "python-$fmt" || true
done
tar -C "$t" -czf - m | seed archive_tar_gz gnu-tar-gzip
(cd "$t" && zip -qr - m) | seed archive_zip info-zip
python3 -c "import sys,zipfile,io,os
b=io.BytesIO(); z=zipfile.ZipFile(b,'w',zipfile.ZIP_DEFLATED)
for d,_,fs in os.walk('$t/m'):
    for f in fs: p=os.path.join(d,f); z.write(p, os.path.relpath(p,'$t'))
z.close(); sys.stdout.buffer.write(b.getvalue())" | seed archive_zip python-zipfile

# Wheels: a2c's own and hatchling's, of the same method tree; their RECORDs.
"$a2c" pack "$t/m" --version 1.0.0 --registry "$tmp/wheels" --format wheel > /dev/null
seed archive_wheel a2c-pack < "$tmp/wheels/bundles/esys_a2c-1.0.0-py3-none-any.whl"
h=$tmp/hatch
mkdir -p "$h/esys_a2c"
cp -r "$t/m/." "$h/esys_a2c/"
printf '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n[project]\nname = "esys-a2c"\nversion = "1.0.0"\n[tool.hatch.build.targets.wheel]\npackages = ["esys_a2c"]\n' > "$h/pyproject.toml"
(cd "$h" && python3 -m build --wheel --no-isolation --outdir dist > /dev/null 2>&1)
seed archive_wheel hatchling < "$(ls "$h"/dist/*.whl)"
for whl in "$tmp/wheels/bundles/esys_a2c-1.0.0-py3-none-any.whl" "$(ls "$h"/dist/*.whl)"; do
  name=$(basename "$(dirname "$(dirname "$whl")")")
  python3 -c "import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); sys.stdout.buffer.write(z.read([n for n in z.namelist() if n.endswith('.dist-info/RECORD')][0]))" "$whl" | seed wheel_record "$name"
done

# git indexes: formats 2, 3 (an intent-to-add entry), 4; SHA-256 names; a tracked
# .tools_local; a split index.
g=$tmp/git
for v in 2 3 4; do
  git init -q "$g$v"
  (cd "$g$v" && mkdir -p .tools_local/x src && echo a > a && echo b > src/b && echo t > .tools_local/x/t \
    && git add a src && git update-index --index-version $v -q)
  [ $v = 3 ] && (cd "$g$v" && echo n > new && git add -N new)
  seed git_index "format-$v" < "$g$v/.git/index"
  (cd "$g$v" && git add -f .tools_local) && seed git_index "format-$v-tracked" < "$g$v/.git/index"
done
git init -q --object-format=sha256 "$g-sha256" && (cd "$g-sha256" && echo a > a && git add a)
seed git_index sha256 < "$g-sha256/.git/index"
git init -q "$g-split" && (cd "$g-split" && echo a > a && git add a && git update-index --split-index)
seed git_index split < "$g-split/.git/index"

# minisign: a key, a signature of an index, the index (NUL-separated).
(cd "$tmp" && minisign -G -W -p k.pub -s k.key > /dev/null && cp "$demo/registry/index/esys/a2c.json" idx \
  && minisign -S -s k.key -m idx -t 'a2c index' > /dev/null)
{ cat "$tmp/k.pub"; printf '\0'; cat "$tmp/idx.minisig"; printf '\0'; cat "$tmp/idx"; } | seed minisign signed-index

# pypiserver: the PEP 503 page and the PEP 691 JSON page of the wheel above.
port=$(free_port)
mkdir -p "$tmp/pypi" && cp "$tmp/wheels/bundles/"*.whl "$(ls "$h"/dist/*.whl)" "$tmp/pypi/" 2>/dev/null || true
pypi-server run -i 127.0.0.1 -p "$port" "$tmp/pypi" > "$tmp/pypi.log" 2>&1 & pids+=($!)
wait_port "$port"
curl -sf "http://127.0.0.1:$port/simple/esys-a2c/" | seed pypi_page pypiserver-html

# devpi-server: its PEP 691 JSON page and its HTML page, of the same wheels uploaded by twine.
port=$(free_port)
devpi-init --serverdir "$tmp/devpi" --root-passwd r00t > /dev/null 2>&1
devpi-server --serverdir "$tmp/devpi" --host 127.0.0.1 --port "$port" > "$tmp/devpi.log" 2>&1 & pids+=($!)
wait_port "$port"
url=http://127.0.0.1:$port
devpi --clientdir "$tmp/devpi-client" use "$url" > /dev/null
devpi --clientdir "$tmp/devpi-client" user -c alice password=alic3 > /dev/null
devpi --clientdir "$tmp/devpi-client" login alice --password alic3 > /dev/null
devpi --clientdir "$tmp/devpi-client" index -c alice/dev bases= > /dev/null
twine upload --disable-progress-bar --repository-url "$url/alice/dev/" -u alice -p alic3 "$tmp/pypi/"*.whl > /dev/null 2>&1
curl -sf -H 'Accept: application/vnd.pypi.simple.v1+json' "$url/alice/dev/+simple/esys-a2c/" | seed pypi_page devpi-json
curl -sf -H 'Accept: text/html' "$url/alice/dev/+simple/esys-a2c/" | seed pypi_page devpi-html

# conan_server: a recipe packed by a2c, created and uploaded by conan; each answer a2c reads,
# and the package's manifest and tgz (NUL-separated), as conan_server serves them.
port=$(free_port)
cs=$tmp/conan-server
mkdir -p "$cs"
printf '[server]\njwt_secret: s\njwt_expire_minutes: 120\nssl_enabled: False\nport: %s\npublic_port:\nhost_name: 127.0.0.1\nauthorize_timeout: 1800\ndisk_storage_path: ./data\ndisk_authorize_timeout: 1800\nupdown_secret: u\n\n[write_permissions]\n*/*@*/*: alice\n\n[read_permissions]\n*/*@*/*: *\n\n[users]\nalice: s3cret\n' "$port" > "$cs/server.conf"
CONAN_SERVER_HOME=$cs conan_server > "$tmp/conan-server.log" 2>&1 & pids+=($!)
wait_port "$port"
export CONAN_HOME=$tmp/conan-home
conan profile detect > /dev/null 2>&1
conan remote add local "http://127.0.0.1:$port" > /dev/null
conan remote login local alice -p s3cret > /dev/null
mkdir -p "$tmp/cproj" && cp -r "$t/m" "$tmp/cproj/method"
"$a2c" pack "$tmp/cproj/method" --version 1.0.0 --registry "conan+http://127.0.0.1:$port" > /dev/null
conan create "$tmp/cproj" --version 1.0.0 > /dev/null 2>&1
conan upload esys-a2c/1.0.0 -r local -c > /dev/null 2>&1
api=http://127.0.0.1:$port/v2/conans
curl -sf "$api/search?q=esys-a2c" | seed conan_remote search
curl -sf "$api/esys-a2c/1.0.0/_/_/latest" | seed conan_remote recipe-latest
rrev=$(curl -sf "$api/esys-a2c/1.0.0/_/_/latest" | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')
curl -sf "$api/esys-a2c/1.0.0/_/_/revisions/$rrev/search" | seed conan_remote packages
pkg=$(curl -sf "$api/esys-a2c/1.0.0/_/_/revisions/$rrev/search" | python3 -c 'import json,sys; print(next(iter(json.load(sys.stdin))))')
prev=$(curl -sf "$api/esys-a2c/1.0.0/_/_/revisions/$rrev/packages/$pkg/latest" | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')
files=$api/esys-a2c/1.0.0/_/_/revisions/$rrev/packages/$pkg/revisions/$prev/files
curl -sf "$files" | seed conan_remote files
{ curl -sf "$files/conanmanifest.txt"; printf '\0'; curl -sf "$files/conan_package.tgz"; } | seed conan_remote manifest-and-package

# Text read from the environment, headers and config files, in the forms their documentation
# (curl's NO_PROXY, the distribution token protocol, netrc(5), docs/registries.md) gives.
printf 'localhost,127.0.0.1,.example.org' | seed no_proxy curl-doc
printf '*' | seed no_proxy all
printf '[::1]:8080, 10.0.0.0/8 ,Example.COM:443' | seed no_proxy ports-and-nets
printf 'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/alpine:pull"' | seed www_authenticate docker-hub
printf 'Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:o/r:pull,push"' | seed www_authenticate ghcr
printf 'Basic realm="registry", charset="UTF-8"' | seed www_authenticate basic
printf 'machine reg.example.org login alice password s3cret\ndefault login anon password anon\n' | seed netrc machine-and-default
printf 'machine a.example\n  login u\n  password "p w"\nmacdef init\ncd /tmp\n\nmachine b.example login v password x\n' | seed netrc macdef
for loc in 'https://reg.example.org/a2c/' 'file:///srv/a2c' '../registry' 'oci://127.0.0.1:5000/esys/a2c' \
  'pypi+https://pypi.example.org/simple/#esys-a2c' 'conan+https://conan.example.org/#esys-a2c@esys/stable' \
  'http://plain.example/r/'; do
  printf '%s' "$loc" | seed registry_location "$(printf '%s' "$loc" | tr -c 'a-z0-9' '_' | cut -c1-40)"
done
# Typed targets read their input as typed values (`arbitrary`): a few fixed byte strings start
# them; libFuzzer finds the rest.
for target in archive_tar_typed git_index_typed wheel_record_typed; do
  for n in 1 2 3; do
    python3 -c "import random,sys; r=random.Random($n); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(64*$n)))" | seed "$target" "fixed-$n"
  done
done
echo "seeds written to $corpus/*/seed-*" >&2
