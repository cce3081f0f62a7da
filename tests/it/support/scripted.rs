//! A scripted HTTP/1.1 server on 127.0.0.1: each request gets the next answer of a list (the
//! last one repeats), its body written by a bounded sender — the hostile store, metadata service
//! or token endpoint a test needs, whatever a real server's version does.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How an answer's body is sent (every sender stops at its bound, when the client goes, or
/// after two minutes).
#[derive(Clone, Debug)]
pub enum Body {
    /// These bytes, with their `Content-Length` unless the answer's headers give one.
    Fixed(Vec<u8>),
    /// Up to this many bytes of junk after the headers (the `Content-Length` the answer's
    /// headers claim, if any, is a lie), then close.
    Endless(u64),
    /// `Transfer-Encoding: chunked`, up to this many bytes of junk in 64 KiB chunks, never a last
    /// chunk.
    Chunked(u64),
    /// One byte every `every`, at most `n`, after a `Content-Length: n`.
    Trickle { every: Duration, n: usize },
}

#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Body,
}

impl Answer {
    pub fn new(status: u16, body: Body) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body,
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

/// The server; stopped when dropped.
pub struct Scripted {
    pub port: u16,
    stop: Arc<AtomicBool>,
    heads: super::Recorded,
}

impl Scripted {
    pub fn start(answers: Vec<Answer>) -> Self {
        assert!(!answers.is_empty());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let heads = super::Recorded::default();
        let (stop2, heads2) = (stop.clone(), heads.clone());
        std::thread::spawn(move || {
            let mut next = 0;
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let answer = answers[next.min(answers.len() - 1)].clone();
                next += 1;
                let heads = heads2.clone();
                let stop = stop2.clone();
                std::thread::spawn(move || serve(stream, &answer, &heads, &stop));
            }
        });
        Self { port, stop, heads }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The heads of the requests it read, in order.
    pub fn heads(&self) -> Vec<String> {
        self.heads.all()
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(mut stream: TcpStream, answer: &Answer, heads: &super::Recorded, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(head) = super::request_head(&mut stream) else {
        return;
    };
    heads.push(head);
    let mut out = format!("HTTP/1.1 {} Scripted\r\nConnection: close\r\n", answer.status);
    for (name, value) in &answer.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    let claims_length = answer
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-length"));
    match &answer.body {
        Body::Fixed(bytes) if !claims_length => out.push_str(&format!("Content-Length: {}\r\n", bytes.len())),
        Body::Chunked(_) => out.push_str("Transfer-Encoding: chunked\r\n"),
        Body::Trickle { n, .. } => out.push_str(&format!("Content-Length: {n}\r\n")),
        _ => {}
    }
    out.push_str("\r\n");
    if stream.write_all(out.as_bytes()).is_err() {
        return;
    }
    let started = Instant::now();
    let live = || !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(120);
    let junk = vec![b'x'; 64 * 1024];
    match &answer.body {
        Body::Fixed(bytes) => {
            let _ = stream.write_all(bytes);
        }
        Body::Endless(limit) => {
            let mut sent = 0;
            while sent < *limit && live() && stream.write_all(&junk).is_ok() {
                sent += junk.len() as u64;
            }
        }
        Body::Chunked(limit) => {
            let mut sent = 0;
            let mut chunk = format!("{:x}\r\n", junk.len()).into_bytes();
            chunk.extend_from_slice(&junk);
            chunk.extend_from_slice(b"\r\n");
            while sent < *limit && live() && stream.write_all(&chunk).is_ok() {
                sent += junk.len() as u64;
            }
        }
        Body::Trickle { every, n } => {
            for _ in 0..*n {
                if !live() || stream.write_all(b"x").is_err() {
                    break;
                }
                std::thread::sleep(*every);
            }
        }
    }
    let _ = stream.flush();
}

/// A front on loopback before a real server at 127.0.0.1:`upstream`, dropping the request
/// headers `dropped` (any case) from every request it passes on: the condition a test needs (a
/// store that ignores `If-None-Match`) made by the test, whatever the server's version does.
/// One request per connection (`Connection: close` both ways); stopped when dropped.
pub struct Front {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl Front {
    pub fn dropping(upstream: u16, dropped: &'static [&'static str]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                std::thread::spawn(move || pass_on(stream, upstream, dropped));
            }
        });
        Self { port, stop }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// One request from `client` to the upstream, its `dropped` headers left out, and the answer
/// back, byte for byte.
fn pass_on(mut client: TcpStream, upstream: u16, dropped: &[&str]) {
    use std::io::Read;
    let _ = client.set_read_timeout(Some(Duration::from_secs(30)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        match client.read(&mut chunk) {
            Ok(n) if n > 0 && buf.len() < (1 << 20) => buf.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut body = buf[end + 4..].to_vec();
    let length: usize = super::header_of(&head, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while body.len() < length {
        match client.read(&mut chunk) {
            Ok(n) if n > 0 => body.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    }
    let mut lines: Vec<&str> = head
        .split("\r\n")
        .filter(|line| {
            let name = line.split(':').next().unwrap_or_default().trim();
            !dropped.iter().any(|d| d.eq_ignore_ascii_case(name)) && !name.eq_ignore_ascii_case("connection")
        })
        .collect();
    lines.push("Connection: close");
    let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    let forwarded = format!("{}\r\n\r\n", lines.join("\r\n"));
    if up
        .write_all(forwarded.as_bytes())
        .and_then(|()| up.write_all(&body))
        .is_err()
    {
        return;
    }
    let _ = up.set_read_timeout(Some(Duration::from_secs(60)));
    let _ = std::io::copy(&mut up, &mut client);
}

/// A loopback port whose accept queue is full: a connection to it gets no answer at all.
pub struct Unanswering {
    _listener: socket2::Socket,
    _fillers: Vec<std::net::TcpStream>,
    pub address: std::net::SocketAddr,
}

pub fn unanswering() -> Unanswering {
    let listener = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    listener
        .bind(&"127.0.0.1:0".parse::<std::net::SocketAddr>().unwrap().into())
        .unwrap();
    listener.listen(0).unwrap();
    let address = listener.local_addr().unwrap().as_socket().unwrap();
    let fillers: Vec<_> = (0..4)
        .filter_map(|_| std::net::TcpStream::connect_timeout(&address, Duration::from_millis(200)).ok())
        .collect();
    assert!(!fillers.is_empty(), "the accept queue could not be filled");
    Unanswering {
        _listener: listener,
        _fillers: fillers,
        address,
    }
}
