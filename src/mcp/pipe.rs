//! The stdio pipe between the client and the protocol engine: every line the client sends is
//! bounded ([`MAX_LINE`]) and checked to be JSON before the engine sees it, so that a line too
//! long or not JSON gets its JSON-RPC error (-32600, -32700) instead of silence, and the
//! server keeps serving. Only protocol messages ever reach stdout.
//!
//! The pipe also bounds what is in flight: at most [`MAX_IN_FLIGHT`] requests the engine has
//! not answered yet (a request past it is answered at once with an error, so that a client
//! cannot start hundreds of child commands, each answer held in memory), and never two with
//! the same id (the second is answered with an error: its answer could not be told apart). A
//! batch (a JSON array, which MCP 2025-06-18 removed) is refused.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Mutex;

/// The longest request line read (1 MiB): a request past it is refused without being held.
pub const MAX_LINE: usize = 1 << 20;

type Out = Arc<Mutex<tokio::io::Stdout>>;

async fn write_line(out: &Out, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    if !line.ends_with(b"\n") {
        out.write_all(b"\n").await?;
    }
    out.flush().await
}

/// The most requests the engine may be answering at once.
pub const MAX_IN_FLIGHT: usize = 16;

fn error_line(code: i64, message: &str) -> Vec<u8> {
    error_for(&serde_json::Value::Null, code, message)
}

fn error_for(id: &serde_json::Value, code: i64, message: &str) -> Vec<u8> {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes()
}

/// The ids of the requests sent to the engine and not answered yet (as JSON text: `1` and
/// `"1"` are two ids).
type InFlight = Arc<std::sync::Mutex<HashSet<String>>>;

/// What a message from the client is, for the in-flight count.
#[derive(serde::Deserialize)]
struct Message {
    id: Option<serde_json::Value>,
    method: Option<serde_json::Value>,
    params: Option<serde_json::Value>,
}

/// Admits the request `m` to the engine, or the error line that answers it instead.
fn admit(in_flight: &InFlight, m: &Message) -> Result<(), Vec<u8>> {
    let mut ids = crate::util::parallel::locked(in_flight);
    match (&m.id, &m.method) {
        // A request.
        (Some(id), Some(_)) => {
            let key = id.to_string();
            if ids.contains(&key) {
                return Err(error_for(
                    id,
                    -32600,
                    &format!("a request with the id {key} is already in flight: give each request an id of its own"),
                ));
            }
            if ids.len() >= MAX_IN_FLIGHT {
                return Err(error_for(
                    id,
                    -32000,
                    &format!("{MAX_IN_FLIGHT} requests are already in flight: wait for an answer, then send it again"),
                ));
            }
            ids.insert(key);
        }
        // A cancelled request is answered by nobody: it no longer counts.
        (None, Some(method)) if method == "notifications/cancelled" => {
            if let Some(id) = m.params.as_ref().and_then(|p| p.get("requestId")) {
                ids.remove(&id.to_string());
            }
        }
        _ => {}
    }
    Ok(())
}

/// Counts the engine's answer `line` out of the requests in flight.
fn answered(in_flight: &InFlight, line: &[u8]) {
    #[derive(serde::Deserialize)]
    struct Answer {
        id: Option<serde_json::Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    if let Ok(Answer {
        id: Some(id),
        method: None,
    }) = serde_json::from_slice::<Answer>(line)
    {
        crate::util::parallel::locked(in_flight).remove(&id.to_string());
    }
}

/// The engine's end of the pipe; the tasks that feed it from stdin and copy its answers to
/// stdout run until stdin closes.
pub fn start() -> DuplexStream {
    let (engine, ours) = tokio::io::duplex(MAX_LINE * 2);
    let (from_engine, mut to_engine) = tokio::io::split(ours);
    let out: Out = Arc::new(Mutex::new(tokio::io::stdout()));
    let answers = out.clone();
    let in_flight: InFlight = Default::default();
    let engine_in_flight = in_flight.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_engine);
        let mut line = Vec::new();
        while lines.read_until(b'\n', &mut line).await.is_ok_and(|n| n > 0) {
            answered(&engine_in_flight, &line);
            if write_line(&answers, &line).await.is_err() {
                return;
            }
            line.clear();
        }
    });
    tokio::spawn(async move {
        let mut input = BufReader::new(tokio::io::stdin());
        loop {
            match read_bounded(&mut input).await {
                Ok(Line::End) => break,
                Ok(Line::TooLong(n)) => {
                    let msg = format!("the request is longer than {MAX_LINE} bytes ({n} read): refused");
                    if write_line(&out, &error_line(-32600, &msg)).await.is_err() {
                        break;
                    }
                }
                Ok(Line::Text(text)) => {
                    if text.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match serde_json::from_slice::<serde_json::Value>(&text) {
                        Ok(v) if v.is_array() => {
                            let msg = "batches are not supported (MCP 2025-06-18 removed them): send each message on its own line";
                            if write_line(&out, &error_line(-32600, msg)).await.is_err() {
                                break;
                            }
                        }
                        Ok(v) if v.is_object() => {
                            if let Ok(m) = serde_json::from_value::<Message>(v)
                                && let Err(refusal) = admit(&in_flight, &m)
                            {
                                if write_line(&out, &refusal).await.is_err() {
                                    break;
                                }
                                continue;
                            }
                            let mut text = text;
                            if !text.ends_with(b"\n") {
                                text.push(b'\n');
                            }
                            if to_engine.write_all(&text).await.is_err() {
                                break;
                            }
                        }
                        Ok(_) => {
                            let line = error_line(-32600, "a JSON-RPC message is an object");
                            if write_line(&out, &line).await.is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            let line = error_line(-32700, &format!("not JSON: {e}"));
                            if write_line(&out, &line).await.is_err() {
                                break;
                            }
                        }
                    }
                }
                Err(_) => break,
            }
        }
        let _ = to_engine.shutdown().await;
    });
    engine
}

enum Line {
    Text(Vec<u8>),
    /// A line past [`MAX_LINE`], read to its end and dropped (its length).
    TooLong(usize),
    End,
}

/// One line of at most [`MAX_LINE`] bytes; a longer one is read to its end without being kept.
async fn read_bounded<R: tokio::io::AsyncBufRead + Unpin>(input: &mut R) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut seen = 0usize;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (seen, line.is_empty()) {
                (0, _) => Line::End,
                (n, _) if n > MAX_LINE => Line::TooLong(n),
                _ => Line::Text(line),
            });
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let n = chunk.len();
        seen += n;
        if seen <= MAX_LINE + 1 {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        input.consume(n);
        if done {
            return Ok(match seen > MAX_LINE + 1 {
                true => Line::TooLong(seen),
                false => Line::Text(line),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn lines_are_bounded() {
        let long = vec![b'x'; MAX_LINE + 10];
        let mut text = b"{\"a\":1}\n".to_vec();
        text.extend_from_slice(&long);
        text.extend_from_slice(b"\nlast");
        let mut input = BufReader::new(&text[..]);
        assert!(matches!(read_bounded(&mut input).await.unwrap(), Line::Text(t) if t == b"{\"a\":1}\n"));
        assert!(matches!(read_bounded(&mut input).await.unwrap(), Line::TooLong(n) if n == MAX_LINE + 11));
        assert!(matches!(read_bounded(&mut input).await.unwrap(), Line::Text(t) if t == b"last"));
        assert!(matches!(read_bounded(&mut input).await.unwrap(), Line::End));
    }
}
