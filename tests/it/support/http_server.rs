//! A real HTTP/1.1 server bound to 127.0.0.1, started by the tests, serving a registry
//! directory — with fault injection per path, Range support that can be switched off, request
//! counting, and an optional TLS mode with a CA generated for the test.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server does instead of answering normally, once per request.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer with this status and an empty body.
    Status(u16),
    /// 429 with `Retry-After: <seconds>`.
    TooMany(u64),
    /// Full headers, then only the first `n` bytes of the body, then close.
    Truncate(usize),
    /// Full headers and `n` body bytes, then hold the connection open for a while.
    Stall(usize),
    /// Declare a Content-Length that is `n` bytes shorter than the file and send that much.
    ShortLength(usize),
    /// Reset the connection (RST) without answering.
    Reset,
    /// 200 with no Content-Length and `n` bytes of junk (a bounded "endless" body), then close.
    Endless(u64),
    /// Full headers, then one body byte every `interval`, for at most `n` bytes.
    Trickle { interval: Duration, n: usize },
    /// 302 to this location (absolute or relative to the request).
    Redirect(String),
    /// The file gzip-compressed, with `Content-Encoding: gzip`, whatever the request accepts.
    Gzip,
    /// 401 with `WWW-Authenticate: Bearer realm="<realm>"`.
    Challenge(String),
    /// This status with `Content-Type: application/json` and this body (an API's own error).
    Json(u16, String),
    /// This status, these extra header lines (each ending in CRLF), and an empty body.
    Headers(u16, String),
    /// The file, with the connection kept open (no `Connection: close`), then the next request
    /// on it read and the connection closed unanswered: how a keep-alive server or proxy
    /// (tinyproxy) closing an idle connection races the client that reuses it.
    KeepAlive,
}

#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub headers: HashMap<String, String>,
}

struct State {
    root: PathBuf,
    faults: Mutex<HashMap<String, VecDeque<Fault>>>,
    requests: Mutex<Vec<Request>>,
    /// The paths of requests read and left unanswered (see `Fault::KeepAlive`).
    dropped: Mutex<Vec<String>>,
    range: AtomicBool,
    stop: AtomicBool,
    tls: Option<Arc<rustls::ServerConfig>>,
    /// When set, every request without `Authorization: Bearer <token>` gets a 401 (with a
    /// Bearer challenge naming the realm, when one is set).
    token: Mutex<Option<(String, Option<String>)>>,
}

pub struct Server {
    pub port: u16,
    pub ip: String,
    state: Arc<State>,
    /// PEM of the CA that signed the TLS certificate (TLS mode only).
    pub ca_pem: Option<String>,
}

/// A CA made for one test, and a server certificate it signed for `names` and `ips`.
pub struct TestCa {
    pub ca_pem: String,
    pub cert: rcgen::Certificate,
    pub key: rcgen::KeyPair,
}

impl TestCa {
    pub fn new(names: &[&str], ips: &[&str]) -> Self {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, "a2c test CA");
        let ca_pem = ca_params.self_signed(&ca_key).unwrap().pem();
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        for ip in ips {
            params.subject_alt_names.push(SanType::IpAddress(ip.parse().unwrap()));
        }
        let cert = params.signed_by(&key, &issuer).unwrap();
        Self { ca_pem, cert, key }
    }

    /// Writes the CA, the certificate and its key under `dir`; the registry's `http.tls`
    /// configuration naming them.
    pub fn write(&self, dir: &std::path::Path) -> String {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("ca.pem"), &self.ca_pem).unwrap();
        std::fs::write(dir.join("cert.pem"), self.cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), self.key.serialize_pem()).unwrap();
        format!(
            "  tls:\n    certificate: {}\n    key: {}\n",
            dir.join("cert.pem").display(),
            dir.join("key.pem").display()
        )
    }
}

impl Server {
    /// Serves `root` over plain HTTP.
    pub fn start(root: PathBuf) -> Self {
        Self::spawn(root, None, None, "127.0.0.1")
    }

    /// Serves `root` over plain HTTP on another loopback address (`127.0.0.2`: another host
    /// as far as origins and credentials go).
    pub fn start_on(root: PathBuf, ip: &str) -> Self {
        Self::spawn(root, None, None, ip)
    }

    /// Serves `root` over HTTPS with a certificate for 127.0.0.1 and localhost, signed by a CA
    /// generated here (see `ca_pem`).
    pub fn start_tls(root: PathBuf) -> Self {
        let ca = TestCa::new(&["localhost"], &["127.0.0.1"]);
        let (cert, key) = (ca.cert, ca.key);
        let certs = vec![rustls::pki_types::CertificateDer::from(cert.der().to_vec())];
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
        let ca_pem = ca.ca_pem;
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        Self::spawn(root, Some(Arc::new(config)), Some(ca_pem), "127.0.0.1")
    }

    fn spawn(root: PathBuf, tls: Option<Arc<rustls::ServerConfig>>, ca_pem: Option<String>, ip: &str) -> Self {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State {
            root,
            faults: Mutex::new(HashMap::new()),
            requests: Mutex::new(Vec::new()),
            dropped: Mutex::new(Vec::new()),
            range: AtomicBool::new(true),
            stop: AtomicBool::new(false),
            tls,
            token: Mutex::new(None),
        });
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let s = s.clone();
                std::thread::spawn(move || serve(&s, stream));
            }
        });
        Self {
            port,
            ip: ip.to_string(),
            state,
            ca_pem,
        }
    }

    /// The base URL of the served registry.
    pub fn url(&self) -> String {
        let scheme = if self.state.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}:{}/", self.ip, self.port)
    }

    /// `host:port`, as credentials are bound to it.
    pub fn host(&self) -> String {
        format!("{}:{}", self.ip, self.port)
    }

    /// Queues faults for `path` (e.g. `/bundles/a2c-1.0.0.tar.gz`), one per request.
    pub fn fault(&self, path: &str, faults: &[Fault]) {
        self.state
            .faults
            .lock()
            .unwrap()
            .entry(path.to_string())
            .or_default()
            .extend(faults.iter().cloned());
    }

    /// Requires `Authorization: Bearer <token>` on every request from now on.
    pub fn require_token(&self, token: &str) {
        *self.state.token.lock().unwrap() = Some((token.to_string(), None));
    }

    /// Requires `Authorization: Bearer <token>`, answering a request without it with a Bearer
    /// challenge that names `realm` (the token protocol of OCI registries).
    pub fn require_token_from(&self, token: &str, realm: &str) {
        *self.state.token.lock().unwrap() = Some((token.to_string(), Some(realm.to_string())));
    }

    pub fn set_range_support(&self, on: bool) {
        self.state.range.store(on, Ordering::SeqCst);
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }

    /// The paths of the requests a `Fault::KeepAlive` connection closed unanswered.
    pub fn dropped(&self) -> Vec<String> {
        self.state.dropped.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }

    /// Requests for `path` made after the first `since` requests.
    pub fn count_of_since(&self, path: &str, since: usize) -> usize {
        self.requests().iter().skip(since).filter(|r| r.path == path).count()
    }

    /// Requests for `path`.
    pub fn count_of(&self, path: &str) -> usize {
        self.requests().iter().filter(|r| r.path == path).count()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect((self.ip.as_str(), self.port)); // wake the accept loop
    }
}

fn serve(state: &State, stream: TcpStream) {
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let raw = stream.try_clone().unwrap();
    match &state.tls {
        Some(config) => {
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, stream);
            handle(state, &mut tls, &raw);
        }
        None => {
            let mut stream = stream;
            handle(state, &mut stream, &raw);
        }
    }
}

fn handle<S: Read + Write>(state: &State, stream: &mut S, raw: &TcpStream) {
    let mut reader = BufReader::new(&mut *stream);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    drop(reader);
    state.requests.lock().unwrap().push(Request {
        path: path.clone(),
        headers: headers.clone(),
    });
    let fault = state
        .faults
        .lock()
        .unwrap()
        .get_mut(&path)
        .and_then(VecDeque::pop_front);
    let wanted = state.token.lock().unwrap().clone();
    let fault = match wanted {
        // The token endpoint itself (`/token…`) is open: it is where the token comes from.
        Some((tok, realm))
            if headers.get("authorization") != Some(&format!("Bearer {tok}"))
                && !(realm.is_some() && path.starts_with("/token")) =>
        {
            match realm {
                Some(realm) => Some(Fault::Challenge(realm)),
                None => Some(Fault::Status(401)),
            }
        }
        _ => fault,
    };
    let file = state
        .root
        .join(path.split('?').next().unwrap_or_default().trim_start_matches('/'));
    // A directory is its `index.html` (a package index's project page, `…/simple/NAME/`), or
    // its `index.json` (a PEP 691 page, served as one).
    let json = file.is_dir() && file.join("index.json").is_file();
    let file = match (file.is_dir(), json) {
        (true, true) => file.join("index.json"),
        (true, false) => file.join("index.html"),
        (false, _) => file,
    };
    let body = std::fs::read(&file).ok();
    let respond = |stream: &mut S, status: &str, extra: &str, body: &[u8]| {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(body);
        let _ = stream.flush();
    };
    match fault {
        Some(Fault::Reset) => {
            // Closing with SO_LINGER 0 makes the kernel send a reset instead of a FIN.
            let _ = socket2::SockRef::from(raw).set_linger(Some(Duration::ZERO));
        }
        Some(Fault::Status(code)) => respond(stream, &format!("{code} Fault"), "", b""),
        Some(Fault::TooMany(secs)) => respond(
            stream,
            "429 Too Many Requests",
            &format!("Retry-After: {secs}\r\n"),
            b"",
        ),
        Some(Fault::Truncate(n)) | Some(Fault::Stall(n)) if body.is_some() => {
            let body = body.unwrap();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body[..n.min(body.len())]);
            let _ = stream.flush();
            if matches!(fault, Some(Fault::Stall(_))) {
                std::thread::sleep(Duration::from_secs(4));
            }
        }
        Some(Fault::Endless(n)) => {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
            let chunk = vec![b'x'; 1 << 20];
            let mut sent = 0u64;
            while sent < n {
                let len = chunk.len().min((n - sent) as usize);
                if stream.write_all(&chunk[..len]).is_err() {
                    break; // the client hung up: what the test wants
                }
                sent += len as u64;
            }
        }
        Some(Fault::Trickle { interval, n }) if body.is_some() => {
            let body = body.unwrap();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            for b in body.iter().take(n) {
                if stream.write_all(&[*b]).and_then(|()| stream.flush()).is_err() {
                    break;
                }
                std::thread::sleep(interval);
            }
        }
        Some(Fault::Challenge(realm)) => respond(
            stream,
            "401 Unauthorized",
            &format!("WWW-Authenticate: Bearer realm=\"{realm}\",service=\"test\"\r\n"),
            b"",
        ),
        Some(Fault::Json(code, body)) => respond(
            stream,
            &format!("{code} Fault"),
            "Content-Type: application/json\r\n",
            body.as_bytes(),
        ),
        Some(Fault::KeepAlive) if body.is_some() => {
            let body = body.unwrap();
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
            let _ = stream.flush();
            let mut reader = BufReader::new(&mut *stream);
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) > 0 {
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                state.requests.lock().unwrap().push(Request {
                    path: path.clone(),
                    headers: HashMap::new(),
                });
                state.dropped.lock().unwrap().push(path);
            }
        }
        Some(Fault::Redirect(to)) => respond(stream, "302 Found", &format!("Location: {to}\r\n"), b""),
        Some(Fault::Headers(code, extra)) => respond(stream, &format!("{code} Fault"), &extra, b""),
        Some(Fault::Gzip) if body.is_some() => {
            use flate2::write::GzEncoder;
            let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&body.unwrap()).unwrap();
            respond(stream, "200 OK", "Content-Encoding: gzip\r\n", &gz.finish().unwrap());
        }
        Some(Fault::ShortLength(n)) if body.is_some() => {
            let body = body.unwrap();
            respond(stream, "200 OK", "", &body[..body.len().saturating_sub(n)]);
        }
        _ => match body {
            None => respond(stream, "404 Not Found", "", b""),
            Some(body) => {
                let range = headers.get("range").filter(|_| state.range.load(Ordering::SeqCst));
                match range
                    .and_then(|r| r.strip_prefix("bytes="))
                    .and_then(|r| r.strip_suffix('-'))
                    .and_then(|r| r.parse::<usize>().ok())
                {
                    Some(from) if from >= body.len() => respond(
                        stream,
                        "416 Range Not Satisfiable",
                        &format!("Content-Range: bytes */{}\r\n", body.len()),
                        b"",
                    ),
                    Some(from) => {
                        let cr = format!("Content-Range: bytes {from}-{}/{}\r\n", body.len() - 1, body.len());
                        respond(stream, "206 Partial Content", &cr, &body[from..])
                    }
                    None if json => respond(
                        stream,
                        "200 OK",
                        "Content-Type: application/vnd.pypi.simple.v1+json\r\n",
                        &body,
                    ),
                    None => respond(stream, "200 OK", "", &body),
                }
            }
        },
    }
}

impl crate::support::TestContext {
    /// The standard superbuild with its registry `reg` served over HTTP, the marker pointing
    /// at the server.
    pub fn standard_http_superbuild(&self) -> Server {
        self.standard_superbuild();
        let server = Server::start(self.path("reg"));
        self.write(
            "w/.tools/esys/a2c/workspace.yaml",
            &format!(
                "schema_version: 1\nmembers: [\"p/*\", \"l/*\"]\nregistry: {}\n",
                server.url()
            ),
        );
        server
    }
}
