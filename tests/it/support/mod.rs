//! The test context: an isolated HOME, cache and environment, and helpers to build real git
//! repositories, superbuilds, method trees and registries.

#![allow(dead_code)]

pub mod bundles;
pub mod http_server;
pub mod layout;
pub mod scripted;
pub mod servers;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct TestContext {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
}

/// The result of one run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// A run from a finished process, the temp root masked.
    pub fn from_output(out: Output, root: &Path) -> Self {
        Self::from(out, root)
    }

    fn from(out: Output, root: &Path) -> Self {
        let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&root.display().to_string(), "[TMP]");
        let run = Self {
            code: out.status.code().unwrap_or(-1),
            stdout: clean(&out.stdout),
            stderr: clean(&out.stderr),
        };
        run.shows_no_credential(&[]);
        run
    }

    /// Every run of the suite, whatever it tests: no signature parameter of a signed URL, and
    /// none of `secrets`, in anything a2c printed (docs/security.md, "Nothing a2c prints holds
    /// a credential").
    #[track_caller]
    pub fn shows_no_credential(&self, secrets: &[&str]) {
        for text in [&self.stdout, &self.stderr] {
            for signature in SIGNATURE_PARAMETERS {
                assert!(
                    !text.contains(signature),
                    "a2c printed a signed URL's `{signature}`:\n{text}"
                );
            }
            for secret in secrets.iter().filter(|s| s.len() >= 8) {
                assert!(!text.contains(secret), "a2c printed the secret `{secret}`:\n{text}");
            }
        }
    }

    /// The JSON document on stdout of a run that succeeded (exit 0): the exit code is checked
    /// first, so that a failed run is reported as such, not as a parse error.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        self.success();
        self.parse_json()
    }

    /// The JSON document on stdout of a run that failed with exit 1 (as `doctor` does on a
    /// failing finding).
    #[track_caller]
    pub fn json_failure(&self) -> serde_json::Value {
        self.failure();
        self.parse_json()
    }

    /// The JSON document of a command that reports a verdict by its exit code (`doctor`):
    /// exit 0 or 1 — never a crash or a usage error; the caller asserts which.
    #[track_caller]
    pub fn verdict_json(&self) -> serde_json::Value {
        assert!(
            self.code == 0 || self.code == 1,
            "expected a verdict (exit 0 or 1), got {}\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.stdout,
            self.stderr
        );
        self.parse_json()
    }

    #[track_caller]
    fn parse_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    #[track_caller]
    pub fn success(&self) -> &Self {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub fn failure(&self) -> &Self {
        assert_eq!(
            self.code, 1,
            "expected exit 1\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// stderr says `needle` (whatever the exit code), printing stderr when it does not.
    #[track_caller]
    pub fn says(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "expected `{needle}` in stderr:\n{}",
            self.stderr
        );
        self
    }

    /// The rest of the first stderr line that starts with `prefix` (a printed plan, hint or
    /// command), panicking with stderr when no line does.
    #[track_caller]
    pub fn stderr_after(&self, prefix: &str) -> &str {
        self.first_line(&format!("starting `{prefix}`"), |l| l.strip_prefix(prefix))
    }

    /// The first stderr line that contains `needle`, panicking with stderr when none does.
    #[track_caller]
    pub fn stderr_line(&self, needle: &str) -> &str {
        self.first_line(&format!("with `{needle}`"), |l| l.contains(needle).then_some(l))
    }

    #[track_caller]
    fn first_line<'a>(&'a self, what: &str, pick: impl FnMut(&'a str) -> Option<&'a str>) -> &'a str {
        let found = self.stderr.lines().find_map(pick);
        found.unwrap_or_else(|| panic!("no line {what} in stderr:\n{}", self.stderr))
    }

    /// Exit 1, and stderr names every one of `needles`.
    #[track_caller]
    pub fn fails_with(&self, needles: &[&str]) -> &Self {
        self.failure();
        for n in needles {
            assert!(self.stderr.contains(n), "expected `{n}` in stderr:\n{}", self.stderr);
        }
        self
    }

    /// Exit code and stderr, for a snapshot of an error, with stdout after it when the run
    /// printed any (temp paths are already `[TMP]`; see `mask` for the rest), as uv's tests
    /// snapshot their errors.
    pub fn error_transcript(&self) -> String {
        let mut text = format!("exit: {}\n{}", self.code, mask(&self.stderr));
        if !self.stdout.is_empty() {
            text.push_str(&format!("--- stdout\n{}", mask(&self.stdout)));
        }
        text
    }

    /// The whole run as one text (exit code, stdout, stderr), masked as `error_transcript`,
    /// for a snapshot of what a user sees.
    pub fn transcript(&self) -> String {
        format!(
            "exit: {}\n--- stdout\n{}--- stderr\n{}",
            self.code,
            mask(&self.stdout),
            mask(&self.stderr)
        )
    }
}

impl TestContext {
    /// Forgets what installs made: `superbuild`'s installed trees and the shared cache, so
    /// that the next install fetches again.
    pub fn forget_installed(&self, superbuild: &str) {
        let _ = fs_err::remove_dir_all(self.path(&format!("{superbuild}/.tools_local")));
        let _ = fs_err::remove_dir_all(self.cache_dir());
    }

    pub fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("a2c-test-").tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        fs_err::create_dir_all(root.join("home")).unwrap();
        Self { dir, root }
    }

    /// A context holding the bundled demo (`fixtures/make-demo.sh`) at `demo/`: its
    /// superbuild at `demo/superbuild`, its registry at `demo/registry`.
    pub fn demo() -> Self {
        let t = Self::new();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/make-demo.sh");
        succeeds(std::process::Command::new(script).arg(t.path("demo")), "make-demo.sh");
        t
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// How `rel` appears in output: the temp root masked as `[TMP]`.
    pub fn shown(&self, rel: &str) -> String {
        format!("[TMP]/{rel}")
    }

    /// Writes `size` bytes no compressor can shrink (xorshift64 from `seed`) at `rel`: a bundle
    /// as large as its tree.
    pub fn write_noise(&self, rel: &str, size: usize, seed: u64) {
        let mut noise = vec![0u8; size];
        let mut state = seed;
        for chunk in noise.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
        }
        fs_err::write(self.path(rel), &noise).unwrap();
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// `a2c` with a clean environment, started in `cwd` (relative to the root).
    /// Gives `cmd` the environment a2c runs with in this test (its home, its a2c cache, git's
    /// identity, no outside A2C_ variable): for a program that runs a2c itself.
    pub fn environment(&self, cmd: &mut Command) {
        for (k, v) in self.cmd(".").get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
    }

    /// `bash -euo pipefail -c text` in `dir` (created) with the test's environment (its home,
    /// its a2c cache, git's identity) and a2c, then /usr/sbin, first on PATH: a documented
    /// shell step run as a user runs it.
    pub fn bash(&self, dir: &str, text: &str) -> Command {
        fs_err::create_dir_all(self.path(dir)).unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["-euo", "pipefail", "-c", text]).current_dir(self.path(dir));
        self.environment(&mut cmd);
        let bin = Path::new(env!("CARGO_BIN_EXE_a2c"))
            .parent()
            .unwrap()
            .display()
            .to_string();
        cmd.env(
            "PATH",
            format!("{bin}:{}:/usr/sbin", std::env::var("PATH").unwrap_or_default()),
        );
        cmd
    }

    pub fn cmd(&self, cwd: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_a2c"));
        cmd.current_dir(self.path(cwd));
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().into_owned();
            let proxy = k.to_ascii_lowercase().ends_with("_proxy");
            if k.starts_with("A2C_")
                || k == "NO_COLOR"
                || k.starts_with("XDG_")
                || proxy
                || k == "SSL_CERT_FILE"
                || k == "SSL_CERT_DIR"
                || k == "NETRC"
                || k == "DOCKER_CONFIG"
                || k.starts_with("AWS_")
                || k.starts_with("AZURE_")
                || k.starts_with("AZURITE_")
                || k.starts_with("GOOGLE_")
                || k.starts_with("GCE_METADATA")
                || k == "STORAGE_EMULATOR_HOST"
            {
                cmd.env_remove(k);
            }
        }
        // A run of the suite with the portable containment path forced (`.ci/run` reruns the
        // containment tests so: macOS's path) forces it in every a2c it starts.
        if let Some(v) = std::env::var_os("A2C_TEST_PORTABLE") {
            cmd.env("A2C_TEST_PORTABLE", v);
        }
        cmd.env("HOME", self.path("home"))
            .env("A2C_CACHE_DIR", self.cache_dir())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "a2c-test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "a2c-test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            // A server that stalls fails a test's request within 5 s, not the default 30 (the
            // retry backoff itself is unit-tested).
            .env("A2C_HTTP_TIMEOUT", "5")
            // No progress lines: their order follows the parallel jobs, which would make every
            // transcript nondeterministic. `cli_surface::progress_bars_in_a_real_terminal` and
            // its neighbours test the default (lines in a pipe, bars in a terminal) by
            // unsetting it.
            .env("A2C_PROGRESS", "none");
        cmd
    }

    /// Runs `a2c args…` in `cwd`.
    pub fn run(&self, cwd: &str, args: &[&str]) -> Run {
        let out = self.cmd(cwd).args(args).output().unwrap();
        Run::from(out, &self.root)
    }

    /// `a2c mcp` started in `cwd` with the test's environment, as the Rust SDK's client
    /// transport (call it inside [`block_on`]: the child is tokio's).
    pub fn mcp_transport(&self, cwd: &str) -> rmcp::transport::TokioChildProcess {
        let std_cmd = self.cmd(cwd);
        let mut cmd = tokio::process::Command::new(std_cmd.get_program());
        for (k, v) in std_cmd.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.arg("mcp").current_dir(self.path(cwd));
        rmcp::transport::TokioChildProcess::new(cmd).unwrap()
    }

    /// Starts `a2c args…` in `cwd` with stdout and stderr piped, for runs that overlap.
    pub fn spawn(&self, cwd: &str, args: &[&str]) -> std::process::Child {
        self.cmd(cwd)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Runs `a2c args…` in `cwd` and asserts it succeeded (exit 0), printing both streams
    /// when it did not; the run comes back for its output.
    #[track_caller]
    pub fn ok(&self, cwd: &str, args: &[&str]) -> Run {
        let run = self.run(cwd, args);
        run.success();
        run
    }

    /// `ok` with extra environment variables.
    #[track_caller]
    pub fn ok_env<V: AsRef<str>>(&self, cwd: &str, args: &[&str], env: &[(&str, V)]) -> Run {
        let run = self.run_env(cwd, args, env);
        run.success();
        run
    }

    /// a2c run in `cwd` with `args` and the variables `env` (borrowed or owned values: a
    /// server's endpoint, a generated secret).
    pub fn run_env<V: AsRef<str>>(&self, cwd: &str, args: &[&str], env: &[(&str, V)]) -> Run {
        let mut cmd = self.cmd(cwd);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v.as_ref());
        }
        let run = Run::from(cmd.output().unwrap(), &self.root);
        // The secrets a test configured never show in what a2c printed.
        let secrets: Vec<&str> = env
            .iter()
            .filter(|(k, _)| is_secret(k))
            .map(|(_, v)| v.as_ref())
            .collect();
        run.shows_no_credential(&secrets);
        run
    }

    /// Runs in `cwd` an `a2c …` command as a message printed it (its `[TMP]` the test's
    /// root; words split at spaces, so its placeholders filled first): a hint followed where
    /// the user stands.
    pub fn run_printed(&self, cwd: &str, printed: &str) -> Run {
        let command = printed.replace("[TMP]", &self.root.display().to_string());
        let mut words = command.split(' ');
        assert_eq!(words.next(), Some("a2c"), "not an a2c command: {printed}");
        let args: Vec<&str> = words.collect();
        self.run(cwd, &args)
    }

    pub fn write(&self, rel: &str, contents: &str) -> PathBuf {
        let path = self.path(rel);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(&path, contents).unwrap();
        path
    }

    /// Makes `rel` a real git repository (with one commit of whatever it holds).
    pub fn git_repo(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        fs_err::create_dir_all(&path).unwrap();
        git(&path, &["init", "-q", "."]);
        path
    }

    /// A git repository that adopted `version` in the canonical layout.
    pub fn canonical_repo(&self, rel: &str, version: &str) -> PathBuf {
        let path = self.git_repo(rel);
        self.write(
            &format!("{rel}/.tools/esys/a2c/adoption.yaml"),
            &format!("schema_version: 2\ntool_version: {version}\ndelivery: package\n"),
        );
        path
    }

    /// Writes `rel`'s adoption record pinning `version` (no delivery named), over any there.
    pub fn adopt(&self, rel: &str, version: &str) {
        self.write(
            &format!("{rel}/.tools/esys/a2c/adoption.yaml"),
            &format!("schema_version: 2\ntool_version: {version}\n"),
        );
    }

    /// A git repository that adopted `version` in the legacy `.a2c/` layout.
    pub fn legacy_repo(&self, rel: &str, version: &str) -> PathBuf {
        let path = self.git_repo(rel);
        self.write(
            &format!("{rel}/.a2c/adoption.yaml"),
            &format!("tool_version: v{version}\ndelivery: submodule\n"),
        );
        path
    }

    /// A superbuild root at `rel` with the given marker body (after `schema_version: 1`).
    pub fn superbuild(&self, rel: &str, marker_body: &str) -> PathBuf {
        let path = self.git_repo(rel);
        // A body that names its own schema_version (2: several registries) keeps it.
        let text = match marker_body.starts_with("schema_version:") {
            true => marker_body.to_string(),
            false => format!("schema_version: 1\n{marker_body}"),
        };
        self.write(&format!("{rel}/.tools/esys/a2c/workspace.yaml"), &text);
        path
    }

    /// The superbuild `w` whose one member `p/app` pins 1.0.0, on `registry`.
    pub fn app_superbuild(&self, registry: &str) {
        self.superbuild("w", &format!("members: [\"p/*\"]\nregistry: {registry}\n"));
        self.canonical_repo("w/p/app", "1.0.0");
    }

    /// 1.0.0 (`trees/1.0.0`) packed into each of `packed_to` with `env`, then
    /// [`Self::app_superbuild`] on `registry`, locked with `env`.
    pub fn app_locked<V: AsRef<str>>(&self, registry: &str, packed_to: &[&str], env: &[(&str, V)]) {
        for to in packed_to {
            self.ok_env(".", &pack_1_0_0(to, &[]), env);
        }
        self.app_superbuild(registry);
        self.ok_env("w", &["lock"], env);
    }

    /// Commits everything in the repository `rel` (an empty commit when nothing changed).
    pub fn commit_all(&self, rel: &str) {
        git(&self.path(rel), &["add", "-A"]);
        git(&self.path(rel), &["commit", "-q", "-m", "state", "--allow-empty"]);
    }

    /// Commits every member of the standard superbuild, each ignoring its `.tools_local/`.
    pub fn commit_members(&self) {
        for r in ["w/p/app", "w/p/web", "w/l/core", "w/l/util"] {
            self.write(&format!("{r}/.gitignore"), ".tools_local/\n");
            self.commit_all(r);
        }
    }

    /// Whether `file` of `version`'s tree is installed (a regular file) in the store of `ws`.
    pub fn has_installed(&self, ws: &str, version: &str, file: &str) -> bool {
        self.path(&layout::installed_file(ws, version, file)).is_file()
    }

    /// A method tree (manifest + a few files) of `version` at `rel`.
    pub fn method_tree(&self, rel: &str, version: &str) -> PathBuf {
        self.method_tree_with_root(rel, version, ".tools/esys/a2c")
    }

    /// A method tree whose manifest declares `tool_state_root = root`.
    pub fn method_tree_with_root(&self, rel: &str, version: &str, root: &str) -> PathBuf {
        self.write(
            &format!("{rel}/a2c-method.toml"),
            &format!("name = \"esys/a2c\"\nversion = \"{version}\"\ntool_state_root = \"{root}\"\n"),
        );
        self.write(&format!("{rel}/rules/core.md"), &format!("# Core rules of {version}\n"));
        self.write(
            &format!("{rel}/prompts/review.md"),
            &format!("Review under method {version}.\n"),
        );
        self.path(rel)
    }
}

impl TestContext {
    /// Every file of the repository `repo` except `.git/` and `.tools_local/`, with contents.
    pub fn files(&self, repo: &str) -> Vec<(String, Vec<u8>)> {
        let root = self.path(repo);
        let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(&root)
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git" && e.file_name() != ".tools_local")
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                (
                    e.path().strip_prefix(&root).unwrap().display().to_string(),
                    fs_err::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    }
}

/// What changes from run to run and is no behaviour, masked in every transcript: the ports of
/// servers a test starts (`127.0.0.1:[PORT]`, `http://vm:[PORT]`), a migration plan's digest
/// (`plan sha256:[PLAN]`: the plan names commits, whose times differ) and a commit's short
/// name (12 hex digits, `[COMMIT]`), signing key ids (16 upper-case hex digits, as minisign shows them), git
/// commits (and anything else of 40 lower-case hex digits, `[SHA1]`: commit times differ), a
/// staging work directory's random name (`.staging/[WORK]/`), durations (`(0.12s)` is
/// `([TIME])`), and retries, told as they happen (`warning: retry 1 of 2 in 0.3 s: …`): how many
/// a loaded machine needs is timing, so transcripts leave those lines out (tests that count them
/// read `stderr`).
/// `text` masked as transcripts are (ports, commits, key ids, timings): for a snapshot of lines
/// a test picked out of a run.
pub fn masked(text: &str) -> String {
    mask(text)
}

fn mask(text: &str) -> String {
    use std::sync::LazyLock;
    static MASKS: LazyLock<Vec<(regex::Regex, &str)>> = LazyLock::new(|| {
        [
            (r"(127\.0\.0\.[0-9]+|localhost|://[A-Za-z0-9.-]+):[0-9]+", "$1:[PORT]"),
            (
                r"(plan |--confirm |reviewed \()sha256:[0-9a-f]{64}",
                "${1}sha256:[PLAN]",
            ),
            (r"\b[0-9a-f]{12}\b", "[COMMIT]"),
            (r"\b[0-9A-F]{16}\b", "[KEYID]"),
            (r"\b[0-9a-f]{40}\b", "[SHA1]"),
            (r"\.staging/[^/`\s]+/", ".staging/[WORK]/"),
            (r"\b[0-9]+(\.[0-9]+)?m?s\)", "[TIME])"),
            (r"(?m)^warning: retry .*\n", ""),
            // How many bytes a trickling server got through in the window is the scheduler's.
            (r"trickled: [0-9]+ bytes", "trickled: [N] bytes"),
        ]
        .into_iter()
        .map(|(re, with)| (regex::Regex::new(re).unwrap(), with))
        .collect()
    });
    MASKS.iter().fold(text.to_string(), |text, (re, with)| {
        re.replace_all(&text, *with).into_owned()
    })
}

/// A program the tests start, as `.ci/run` pins it (`target/ci-venv/bin`, then
/// `target/ci-node/node_modules/.bin`) before whatever PATH holds: a newer or older release
/// elsewhere on the machine never decides what a test sees.
pub fn program(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["target/ci-venv/bin", "target/ci-node/node_modules/.bin"]
        .iter()
        .map(|dir| root.join(dir).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Whether the release of `package` a test is about to start is the one `.ci/run` pins
/// (`.ci/requirements.txt` for PyPI, `.ci/node/package.json` for npm), for a test whose
/// assertion depends on what that release does (its output's shape, what it refuses). Another
/// release — older or newer, from PATH or a venv made by hand — gets one `SKIPPED:` line naming
/// both versions and how to install the pinned one; with `CI=true` the test fails instead.
pub fn at_pinned_version(package: &str) -> bool {
    let (pinned, installed) = match pinned_and_installed(package) {
        Ok(found) => found,
        Err(why) => panic!("{why}"),
    };
    if installed.as_deref() == Some(pinned.as_str()) {
        return true;
    }
    let seen = installed.map_or("not installed".to_string(), |v| format!("at {v}"));
    let what = format!("{package} {pinned} ({package} is {seen}; .ci/run installs the pinned release)");
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} is required under CI=true");
    }
    eprintln!("SKIPPED: install {what}");
    false
}

/// The version `.ci/run` pins for `package`, and the one installed where the tests look first
/// (the pinned venv or node tree, else the `python3` on PATH for a PyPI package).
fn pinned_and_installed(package: &str) -> Result<(String, Option<String>), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let node_pins: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".ci/node/package.json")).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    if let Some(pinned) = node_pins["dependencies"][package].as_str() {
        let installed = std::fs::read_to_string(
            root.join("target/ci-node/node_modules")
                .join(package)
                .join("package.json"),
        )
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|doc| doc["version"].as_str().map(str::to_string));
        return Ok((pinned.to_string(), installed));
    }
    let requirements = std::fs::read_to_string(root.join(".ci/requirements.txt")).map_err(|e| e.to_string())?;
    let normal = |name: &str| name.to_ascii_lowercase().replace(['-', '.'], "_");
    let pinned = requirements
        .lines()
        .filter_map(|line| line.split_once("=="))
        .find(|(name, _)| normal(name.split('[').next().unwrap_or(name).trim()) == normal(package))
        .map(|(_, version)| version.split_whitespace().next().unwrap_or_default().to_string())
        .ok_or_else(|| format!("{package} is pinned neither in .ci/requirements.txt nor in .ci/node/package.json"))?;
    let in_venv = std::fs::read_dir(root.join("target/ci-venv/lib"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|python| {
            std::fs::read_dir(python.path().join("site-packages"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .find_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let (name, version) = name.strip_suffix(".dist-info")?.rsplit_once('-')?;
            (normal(name) == normal(package)).then(|| version.to_string())
        });
    let installed = in_venv.or_else(|| {
        let out = Command::new("python3")
            .args([
                "-c",
                "import importlib.metadata, sys; print(importlib.metadata.version(sys.argv[1]))",
                package,
            ])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    });
    Ok((pinned, installed))
}

/// The query parameters that carry a signed URL's signature or credential (S3's, Cloud
/// Storage's, an Azure SAS's): never in a2c's output.
const SIGNATURE_PARAMETERS: [&str; 7] = [
    "X-Amz-Signature=",
    "X-Amz-Credential=",
    "X-Amz-Security-Token=",
    "X-Goog-Signature=",
    "X-Goog-Credential=",
    "&sig=",
    "?sig=",
];

/// Whether the environment variable `name` holds a secret (its value never shows in output):
/// a2c's own and the clouds' that its registries read, as env.rs declares them.
pub fn is_secret(name: &str) -> bool {
    a2c::env::is_secret(name)
}

/// A third-party program a test needs is missing: one loud line outside CI, a failure with
/// `CI=true` (so CI can never pass without it). `.ci/run` installs them.
pub fn require_program(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what} is required under CI=true: .ci/run installs it");
    }
    eprintln!("SKIPPED: install {what}");
}

/// The string `field` of every object in the array `list` of a `--json` document (a member's
/// `relative`, `path` or `version`, …), in order.
#[track_caller]
pub fn strings_of(doc: &serde_json::Value, list: &str, field: &str) -> Vec<String> {
    doc[list]
        .as_array()
        .unwrap_or_else(|| panic!("no array `{list}` in {doc}"))
        .iter()
        .map(|item| {
            item[field]
                .as_str()
                .unwrap_or_else(|| panic!("no `{field}` in {item}"))
                .to_string()
        })
        .collect()
}

/// The elements of a JSON array, panicking with the value when it is not one.
#[track_caller]
pub fn items(value: &serde_json::Value) -> &[serde_json::Value] {
    value.as_array().unwrap_or_else(|| panic!("not an array: {value}"))
}

/// The strings `a` and `b` of every object in the array `list` of a `--json` document, in
/// order (a member's path and version, a migration's member and status, …).
#[track_caller]
pub fn pairs_of(doc: &serde_json::Value, list: &str, a: &str, b: &str) -> Vec<(String, String)> {
    let text = |item: &serde_json::Value, field: &str| {
        item[field]
            .as_str()
            .unwrap_or_else(|| panic!("no `{field}` in {item}"))
            .to_string()
    };
    items(&doc[list])
        .iter()
        .map(|item| (text(item, a), text(item, b)))
        .collect()
}

/// Fails, showing the whole text, unless `text` contains `needle` (for a property of a file
/// or a command's output; a message's wording is a snapshot's).
#[track_caller]
pub fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} is not in:\n{text}");
}

/// The string at `field` of a JSON object, panicking with the object when there is none.
#[track_caller]
pub fn text_of<'a>(value: &'a serde_json::Value, field: &str) -> &'a str {
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("no string `{field}` in {value}"))
}

/// What a test's server records of the requests it gets (their heads, their lines, or what
/// it made of them), shared with the threads that serve them; a clone is the same record.
pub struct Recorded<T = String>(std::sync::Arc<std::sync::Mutex<Vec<T>>>);

impl<T> Default for Recorded<T> {
    fn default() -> Self {
        Self(Default::default())
    }
}

impl<T> Clone for Recorded<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T: Clone> Recorded<T> {
    /// Records `entry` after the others.
    pub fn push(&self, entry: T) {
        self.0.lock().unwrap().push(entry);
    }

    /// Whether anything recorded so far is as `wanted` says.
    pub fn any(&self, wanted: impl FnMut(&T) -> bool) -> bool {
        self.0.lock().unwrap().iter().any(wanted)
    }

    /// Everything recorded so far, in order.
    pub fn all(&self) -> Vec<T> {
        self.0.lock().unwrap().clone()
    }
}

/// Runs `work` to its end on a runtime of one thread (the Rust SDK's client is async).
pub fn block_on<F: std::future::Future>(work: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

/// The first finding with `code` in a `doctor --json` document.
#[track_caller]
pub fn finding(doc: &serde_json::Value, code: &str) -> serde_json::Value {
    items(&doc["findings"])
        .iter()
        .find(|f| f["code"] == code)
        .cloned()
        .unwrap_or_else(|| panic!("no finding `{code}` in {doc}"))
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=a2c-test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl TestContext {
    /// `a2c args…` in `cwd` under GNU time: the output and the peak RSS in KiB, or `None`
    /// (after the SKIPPED line) when /usr/bin/time is absent.
    pub fn run_measured(&self, cwd: &str, args: &[&str]) -> Option<(Output, u64)> {
        self.run_measured_env::<&str>(cwd, args, &[])
    }

    /// `run_measured` with extra environment variables.
    pub fn run_measured_env<V: AsRef<str>>(
        &self,
        cwd: &str,
        args: &[&str],
        env: &[(&str, V)],
    ) -> Option<(Output, u64)> {
        if !Path::new("/usr/bin/time").exists() {
            require_program("time (GNU time at /usr/bin/time)");
            return None;
        }
        let mut cmd = Command::new("/usr/bin/time");
        cmd.args(["-f", "peak-rss-kib=%M"]);
        let out = self.timed(cmd, cwd, args, env);
        let kib = peak_kib(&out);
        Some((out, kib))
    }

    /// `a2c args…` in `cwd` with this test's environment and `env`, started by `runner` (GNU
    /// time, or prlimit then GNU time).
    fn timed<V: AsRef<str>>(&self, mut runner: Command, cwd: &str, args: &[&str], env: &[(&str, V)]) -> Output {
        let a2c = self.cmd(cwd);
        runner.arg(a2c.get_program()).args(args).current_dir(self.path(cwd));
        for (k, v) in a2c.get_envs() {
            match v {
                Some(v) => runner.env(k, v),
                None => runner.env_remove(k),
            };
        }
        runner.envs(env.iter().map(|(k, v)| (k, v.as_ref())));
        runner.output().unwrap()
    }
}

/// The peak RSS in KiB GNU time reported (`-f peak-rss-kib=%M`).
fn peak_kib(out: &Output) -> u64 {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kib=").map(|v| v.trim().parse().unwrap()))
        .expect("GNU time reports the peak RSS")
}

impl TestContext {
    /// `a2c args…` in `cwd` with `env`, under an address-space limit of `bytes` (`prlimit --as`:
    /// a regression aborts a2c, not the machine) and GNU time: the output and the peak RSS in
    /// KiB, or `None` (after the SKIPPED line) when prlimit or /usr/bin/time is absent.
    pub fn run_limited<V: AsRef<str>>(
        &self,
        cwd: &str,
        args: &[&str],
        env: &[(&str, V)],
        bytes: u64,
    ) -> Option<(Output, u64)> {
        if !Path::new("/usr/bin/time").exists() || Command::new("prlimit").arg("--version").output().is_err() {
            require_program("prlimit (util-linux) and GNU time at /usr/bin/time");
            return None;
        }
        let mut cmd = Command::new("prlimit");
        cmd.arg(format!("--as={bytes}"))
            .args(["--", "/usr/bin/time", "-f", "peak-rss-kib=%M"]);
        let mut out = self.timed(cmd, cwd, args, env);
        let kib = peak_kib(&out);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        // GNU time's own lines are not a2c's output (its exit status is a2c's).
        let own: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.starts_with("peak-rss-kib=") && !l.starts_with("Command exited with non-zero status"))
            .collect();
        out.stderr = own.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes();
        Some((out, kib))
    }
}

/// Runs a third-party program to its end and asserts it succeeded, naming it as `what` with
/// both its streams when it did not.
#[track_caller]
pub fn succeeds(cmd: &mut Command, what: &str) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A free TCP port on 127.0.0.1.
/// Every file below `from`, copied below `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            fs_err::create_dir_all(&target).unwrap();
        } else {
            fs_err::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The suite's usual first publish, `pack trees/1.0.0 --version 1.0.0 --registry REGISTRY`,
/// then `extra`: the arguments of a run.
pub fn pack_1_0_0<'a>(registry: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["pack", "trees/1.0.0", "--version", "1.0.0", "--registry", registry];
    args.extend_from_slice(extra);
    args
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The head of the HTTP request `stream` sends (request line and headers, without the blank
/// line): at most 64 KiB read, `None` when the client sent none in time.
pub fn request_head(stream: &mut impl std::io::Read) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        match stream.read(&mut buf) {
            Ok(n) if n > 0 && head.len() < 65536 => head.extend_from_slice(&buf[..n]),
            _ => return None,
        }
    };
    Some(String::from_utf8_lossy(&head[..end]).into_owned())
}

/// The value of header `name` (any case) in a request's `head`.
pub fn header_of(head: &str, name: &str) -> Option<String> {
    head.split("\r\n").skip(1).find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

/// A program a test started, killed and reaped when dropped.
pub struct Spawned(pub std::process::Child);

/// Files a server leaves outside the test's directory (SeaweedFS's gRPC sockets are always
/// `/tmp/seaweedfs-*-grpc-PORT.sock`), removed when dropped (after the server: declare it
/// first, or hold it in a field after the server's).
pub struct Litter(pub Vec<PathBuf>);

impl Drop for Litter {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Spawned {
    /// Waits up to `seconds` until it listens on 127.0.0.1:`port`; `false` when it exited or
    /// the time ran out.
    pub fn listening(&mut self, port: u16, seconds: u64) -> bool {
        self.ready_within(seconds, || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok())
    }

    /// Waits up to `seconds` until `ready` says so; `false` when it exited or the time ran out.
    pub fn ready_within(&mut self, seconds: u64, mut ready: impl FnMut() -> bool) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        while std::time::Instant::now() < deadline {
            if ready() {
                return true;
            }
            if let Ok(Some(_)) = self.0.try_wait() {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }
}

/// Every regular file below `dir` (relative path, sorted) with its bytes.
pub fn tree_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned(),
                fs_err::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The files a2c installed for `version` in the superbuild `w` (its receipt and tree record
/// aside): what a method tree must equal.
pub fn installed_tree(t: &TestContext, version: &str) -> Vec<(String, Vec<u8>)> {
    tree_files(&t.path(&layout::installed("w", version)))
        .into_iter()
        .filter(|(p, _)| !p.starts_with(".a2c-"))
        .collect()
}

/// A superbuild `w` whose marker names `registry`, one member `p/mN` per version pinned.
pub fn superbuild_pinning(t: &TestContext, registry: &str, versions: &[&str]) {
    t.superbuild("w", &format!("members: [\"p/*\"]\nregistry: {registry}\n"));
    for (i, v) in versions.iter().enumerate() {
        t.canonical_repo(&format!("w/p/m{i}"), v);
    }
}

/// What `.ci/run` installed is what `.ci/requirements.txt` and `.ci/node/package.json` pin, so
/// a test that reads a program's behaviour ([`at_pinned_version`]) runs under CI. A pin changed
/// without a reinstall is named; outside CI (a venv of an older checkout) it is one SKIPPED
/// line per package.
#[test]
fn the_installed_programs_are_the_pinned_releases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let requirements = std::fs::read_to_string(root.join(".ci/requirements.txt")).unwrap();
    let node: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".ci/node/package.json")).unwrap()).unwrap();
    let mut packages: Vec<String> = requirements
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(|line| line.split_once("=="))
        .map(|(name, _)| name.split('[').next().unwrap_or(name).trim().to_string())
        .collect();
    assert!(
        packages.iter().any(|p| p == "skills-ref"),
        "the validator's pin is read"
    );
    packages.extend(node["dependencies"].as_object().unwrap().keys().cloned());
    let mut off = Vec::new();
    for package in &packages {
        let (pinned, installed) = pinned_and_installed(package).unwrap();
        if installed.as_deref() != Some(pinned.as_str()) {
            off.push(format!("{package}: pinned {pinned}, installed {installed:?}"));
        }
    }
    if off.is_empty() {
        return;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "run .ci/run's install stage again (pip install -r .ci/requirements.txt, npm ci in .ci/node):\n{}",
            off.join("\n")
        );
    }
    for line in off {
        eprintln!("SKIPPED: install {line} (.ci/run installs the pinned release)");
    }
}
