//! The servers a test starts on loopback (package indexes, object stores, their emulators):
//! one way to start them on fresh ports, and one way to ask them for an HTTP status with curl.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

use super::{Spawned, TestContext, free_port};

/// The suite's runs wait 5 s for an answer; these servers (an object store's writes go through
/// its filer, then a volume server; an emulator in Node) can take longer on a loaded 2-core
/// machine running the whole suite: runs against them wait 30.
pub const PATIENT: (&str, &str) = ("A2C_HTTP_TIMEOUT", "30");

/// A server [`start`] started: the process (killed when dropped) and the ports it was given.
pub struct Started {
    pub child: Spawned,
    pub ports: Vec<u16>,
}

/// Starts the server `command` builds for `ports` fresh loopback ports, its stdout discarded
/// and its stderr in the test's `NAME.log`, and waits until `ready` says it serves (`ready`
/// may make what the test needs on it: a bucket, a container). Another process may take a free
/// port before the server binds it, and the server then exits or never answers: it is started
/// again on other ports, five times at most, then the test fails with the server's log.
pub fn start(
    t: &TestContext,
    name: &str,
    ports: usize,
    mut command: impl FnMut(&[u16]) -> Command,
    mut ready: impl FnMut(&mut Spawned, &[u16]) -> bool,
) -> Started {
    let log_path = t.path(&format!("{name}.log"));
    for _ in 0..5 {
        let ports: Vec<u16> = (0..ports).map(|_| free_port()).collect();
        let log = fs_err::File::create(&log_path).unwrap();
        let child = command(&ports)
            .stdout(Stdio::null())
            .stderr(Stdio::from(log.into_parts().0))
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut child = Spawned(child);
        if ready(&mut child, &ports) {
            return Started { child, ports };
        }
    }
    panic!(
        "{name} did not start on loopback in 5 attempts; its log ends:\n{}",
        log_tail(t, name)
    );
}

/// The last 40 lines of the server `name`'s log (the test's `NAME.log`), for a failure's message.
pub fn log_tail(t: &TestContext, name: &str) -> String {
    let log = fs_err::read_to_string(t.path(&format!("{name}.log"))).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// [`start`] ready once it listens on its first port (60 s at the most).
pub fn start_listening(t: &TestContext, name: &str, ports: usize, command: impl FnMut(&[u16]) -> Command) -> Started {
    start(t, name, ports, command, |child, ports| child.listening(ports[0], 60))
}

/// The address of a server on loopback `port`: `https://` when it speaks TLS (`ca`: the PEM file
/// of the CA the test made for it), else `http://`.
pub fn loopback_url(port: u16, ca: Option<&std::path::Path>) -> String {
    format!("{}://127.0.0.1:{port}", if ca.is_some() { "https" } else { "http" })
}

/// The HTTP status curl got for the request its `args` make (silent, 30 s at the most; the
/// body discarded unless `args` name an `-o` of their own).
pub fn curl_status<S: AsRef<OsStr>>(args: &[S]) -> String {
    let mut curl = Command::new("curl");
    curl.args(["-s", "-w", "%{http_code}", "--max-time", "30"]);
    if !args.iter().any(|a| a.as_ref() == "-o") {
        curl.args(["-o", "/dev/null"]);
    }
    let out = curl.args(args).output().expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
