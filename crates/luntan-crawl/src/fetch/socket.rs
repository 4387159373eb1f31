//! A WebSocket a page in the browser opens (browser mode, S4), made and fed
//! here so that it is held to the site's politeness like any request: the
//! handshake is a request (allowed hosts and robots.txt by its `http`
//! twin, a slot and a turn of the gate, the site's user agent, the
//! request log), and so is every frame sent, which waits for its turn as
//! a request does. Frames the server sends are read as they come; an open
//! socket holds no slot, as a let-go long-poll holds none.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt as _, StreamExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode, CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use url::Url;

use super::log::request_log;
use super::{on_io, Core, FetchError, Fetcher};

type Stream = WebSocketStream<TcpStream>;

/// The reading half of a site's socket: the frames the server sends, in order.
pub struct SocketFrames {
    url: Url,
    timeout: std::time::Duration,
    frames: SplitStream<Stream>,
}

impl SocketFrames {
    /// The next frame (pings and pongs included, which the socket answers
    /// itself); `None` once the connection is gone.
    pub async fn next(&mut self) -> Option<Result<Message, FetchError>> {
        let got = self.frames.next().await?;
        Some(got.map_err(|e| ws_error(&self.url, e, self.timeout)))
    }
}

/// A socket open to the forum: its writing half, its reading half, and the
/// subprotocol the server chose.
pub struct OpenSocket {
    pub sender: SocketSender,
    pub frames: SocketFrames,
    pub protocol: Option<String>,
}

/// The writing half of a site's socket: each frame waits for its turn.
pub struct SocketSender {
    core: Arc<Core>,
    url: Url,
    sink: SplitSink<Stream, Message>,
}

/// The `http(s)` URL a `ws(s)` one is checked as: the handshake is an HTTP
/// GET to it, and the site's hosts and robots.txt speak of those.
pub fn http_twin(url: &Url) -> Result<Url, FetchError> {
    let scheme = match url.scheme() {
        "ws" => "http",
        "wss" => "https",
        other => return Err(FetchError::Refused { url: url.clone(), why: format!("scheme {other} is not a WebSocket's") }),
    };
    let mut twin = url.clone();
    twin.set_scheme(scheme).map_err(|()| FetchError::Refused { url: url.clone(), why: "not a WebSocket URL".into() })?;
    Ok(twin)
}

impl Fetcher {
    /// Opens the WebSocket at `url` (`ws://`) offering `protocols`, with
    /// `cookie` (the browser's cookies for it) if any: checked, gated and
    /// logged as a request, one attempt (a page's socket library tries
    /// again itself, each try a request).
    pub async fn open_socket(&self, url: &Url, protocols: &[String], cookie: Option<String>) -> Result<OpenSocket, FetchError> {
        let (core, target, protocols) = (self.core.clone(), url.clone(), protocols.join(", "));
        on_io(url, async move {
            let twin = http_twin(&target)?;
            core.check_target(&twin)?;
            if core.site.politeness.robots {
                core.check_robots(&twin).await?;
            }
            let p = &core.site.politeness;
            let mut request = target.as_str().into_client_request().map_err(|e| ws_error(&target, e, p.timeout))?;
            let headers = request.headers_mut();
            let mut header = |name: &'static str, value: &str| match HeaderValue::from_str(value) {
                Ok(v) => {
                    headers.insert(name, v);
                }
                Err(_) => tracing::debug!("{target}: {name} {value:?} is not a header value; sent without"),
            };
            header("user-agent", &p.user_agent);
            if !protocols.is_empty() {
                header("sec-websocket-protocol", &protocols);
            }
            if let Some(cookie) = cookie.as_deref().filter(|c| !c.is_empty()) {
                header("cookie", cookie);
            }
            // A frame larger than a page the site may send is refused as a page would be.
            let limit = usize::try_from(p.max_body_bytes).unwrap_or(usize::MAX);
            let config = WebSocketConfig::default().max_message_size(Some(limit)).max_frame_size(Some(limit));
            let log = request_log();
            let (permit, started) = core.gate.enter().await;
            core.stats.requests.fetch_add(1, Ordering::Relaxed);
            let handshake = async {
                let host = target.host_str().ok_or_else(|| FetchError::Refused { url: target.clone(), why: "no host".into() })?;
                let port = target.port_or_known_default().unwrap_or(80);
                let tcp =
                    TcpStream::connect((host, port)).await.map_err(|e| FetchError::Network { url: target.clone(), what: format!("cannot connect: {e}") })?;
                tokio_tungstenite::client_async_with_config(request, tcp, Some(config)).await.map_err(|e| ws_error(&target, e, p.timeout))
            };
            let opened = match tokio::time::timeout(p.timeout, handshake).await {
                Ok(r) => r,
                Err(_) => Err(FetchError::Timeout { url: target.clone(), after: p.timeout }),
            };
            drop(permit);
            if let Some(log) = log {
                let outcome = match &opened {
                    Ok((_, resp)) => resp.status().as_u16().to_string(),
                    Err(e) => e.to_string(),
                };
                log.record_line(&core.site.id, &target, started, &outcome, 0);
            }
            let (stream, response) = opened.inspect_err(|e| {
                if e.is_transient() {
                    core.gate.failure(core.backoff_base);
                }
            })?;
            core.gate.success();
            let protocol = response.headers().get("sec-websocket-protocol").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let (sink, frames) = stream.split();
            let frames = SocketFrames { url: target.clone(), timeout: p.timeout, frames };
            Ok(OpenSocket { sender: SocketSender { core: core.clone(), url: target, sink }, frames, protocol })
        })
        .await
    }
}

impl SocketSender {
    /// Sends one frame the page sent, once the gate lets a request go: to
    /// the forum a frame is a request like a page's, and as close to the
    /// last as the delay allows. Logged in the request log as one.
    pub async fn send(&mut self, frame: Message) -> Result<(), FetchError> {
        let bytes = frame.len();
        let (permit, started) = self.core.gate.enter().await;
        self.core.stats.requests.fetch_add(1, Ordering::Relaxed);
        let timeout = self.core.site.politeness.timeout;
        let sent = match tokio::time::timeout(timeout, self.sink.send(frame)).await {
            Ok(r) => r.map_err(|e| ws_error(&self.url, e, timeout)),
            Err(_) => Err(FetchError::Timeout { url: self.url.clone(), after: timeout }),
        };
        drop(permit);
        if let Some(log) = request_log() {
            let outcome = match &sent {
                Ok(()) => "frame sent".to_owned(),
                Err(e) => e.to_string(),
            };
            log.record_line(&self.core.site.id, &self.url, started, &outcome, bytes);
        }
        sent
    }

    /// Closes the socket with `code` and `reason` (the page's, or 1001
    /// "going away" when luntan leaves the page). Not gated: it ends
    /// traffic, it asks the forum for nothing.
    pub async fn close(&mut self, code: u16, reason: &str) {
        let frame = CloseFrame { code: CloseCode::from(code), reason: reason.to_owned().into() };
        let timeout = self.core.site.politeness.timeout;
        let _ = tokio::time::timeout(timeout, self.sink.send(Message::Close(Some(frame)))).await;
    }
}

/// A WebSocket error as the fetcher's: a refused handshake is the
/// status it was refused with.
fn ws_error(url: &Url, e: WsError, timeout: std::time::Duration) -> FetchError {
    match e {
        WsError::Http(resp) => FetchError::Status { url: url.clone(), status: resp.status().as_u16(), retry_after: None },
        WsError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => FetchError::Timeout { url: url.clone(), after: timeout },
        WsError::Capacity(c) => FetchError::Network { url: url.clone(), what: format!("frame too large: {c}") },
        WsError::Url(u) => FetchError::Refused { url: url.clone(), why: u.to_string() },
        other => FetchError::Network { url: url.clone(), what: other.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_websocket_is_checked_as_its_http_twin() {
        let twin = |s: &str| http_twin(&Url::parse(s).unwrap()).map(|u| u.to_string());
        assert_eq!(twin("ws://127.0.0.1:8080/st/socket?tid=7").unwrap(), "http://127.0.0.1:8080/st/socket?tid=7");
        assert_eq!(twin("wss://bbs.example.cn/ws").unwrap(), "https://bbs.example.cn/ws");
        assert!(twin("http://bbs.example.cn/ws").unwrap_err().to_string().contains("not a WebSocket's"));
    }
}
