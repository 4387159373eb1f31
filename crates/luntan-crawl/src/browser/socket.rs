//! The WebSockets of the pages luntan's browser draws: the hook's stand-in
//! for `WebSocket` (`browser_hook.js`) asks through the [`BINDING`], and
//! luntan opens the real socket through the site's fetcher
//! ([`Fetcher::open_socket`]: hosts, robots.txt, the gate), sends each
//! frame the page sends when the gate lets a request go, and hands the
//! page, in order, every frame the server sends.
//!
//! For settling, a frame the page sent is a request in flight from the
//! moment luntan hears of it until a frame comes back on its socket or
//! [`SocketHost::answer_within`] has passed since it left (a frame may
//! expect no answer); a frame the server sends is an answer handled once
//! the page's listeners have run. An open socket with nothing pending
//! keeps no page from settling. A page's sockets are closed (1001, going
//! away) when luntan is done with the page.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fetch::Message;
use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::network::GetCookiesParams;
use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, EventBindingCalled, ExecutionContextId};
use chromiumoxide::Page;
use futures_util::StreamExt as _;
use tokio::sync::mpsc;
use tokio::time::Instant;
use url::Url;

use super::{js_string as js, RenderStats, Traffic};
use crate::fetch::{http_twin, FetchError, Fetcher, OpenSocket};

/// The binding the hook's stand-in calls, one JSON message a call.
pub(super) const BINDING: &str = "__luntanSocket";

/// How long luntan waits for the server's closing frame after sending its own.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// What the page asks of luntan (see `browser_hook.js`).
#[derive(Debug, serde::Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Call {
    Open {
        id: u64,
        url: String,
        #[serde(default)]
        protocols: Vec<String>,
    },
    Send {
        id: u64,
        text: Option<String>,
        /// Base64.
        binary: Option<String>,
        #[serde(default)]
        size: u64,
    },
    Close {
        id: u64,
        code: u16,
        #[serde(default)]
        reason: String,
    },
}

/// A socket: the document's context and the stand-in's number in it.
type Key = (i64, u64);

enum Command {
    /// A frame and its size as the page counts it (`bufferedAmount`).
    Send(Message, u64),
    Close(u16, String),
}

/// One page's sockets and the frames it sent whose answer may still come.
#[derive(Default)]
pub(super) struct Sockets {
    open: Mutex<HashMap<Key, mpsc::UnboundedSender<Command>>>,
    /// A frame per entry: `None` while it waits for its turn, then until
    /// when an answer is waited for.
    awaiting: Mutex<Vec<(Key, Option<Instant>)>>,
    /// The page is left: nothing more is opened for it.
    left: std::sync::atomic::AtomicBool,
}

impl Sockets {
    /// Frames counted as requests in flight: waiting for their turn, or
    /// sent and not answered within the bound.
    pub(super) fn in_flight(&self) -> usize {
        let now = Instant::now();
        let mut awaiting = crate::db::lock(&self.awaiting);
        awaiting.retain(|(_, until)| until.is_none_or(|u| now < u));
        awaiting.len()
    }

    fn asked(&self, key: Key) {
        crate::db::lock(&self.awaiting).push((key, None));
    }

    fn sent(&self, key: Key, until: Instant) {
        if let Some(entry) = crate::db::lock(&self.awaiting).iter_mut().find(|(k, u)| *k == key && u.is_none()) {
            entry.1 = Some(until);
        }
    }

    /// A frame came on `key`: the oldest frame sent on it is answered.
    fn answered(&self, key: Key) {
        let mut awaiting = crate::db::lock(&self.awaiting);
        if let Some(i) = awaiting.iter().position(|(k, u)| *k == key && u.is_some()) {
            awaiting.remove(i);
        }
    }

    /// The socket is gone, and with it any answer its frames waited for.
    fn forget(&self, key: Key) {
        crate::db::lock(&self.open).remove(&key);
        crate::db::lock(&self.awaiting).retain(|(k, _)| *k != key);
    }

    /// The page is left: every socket is closed (1001) and none opened again.
    pub(super) fn close_all(&self) {
        self.left.store(true, Ordering::Relaxed);
        // Dropping a socket's sender tells it to close.
        crate::db::lock(&self.open).clear();
        crate::db::lock(&self.awaiting).clear();
    }
}

/// What carries a renderer's sockets: its fetcher, its counters, and how
/// long a frame sent is taken to await an answer.
#[derive(Clone)]
pub(super) struct SocketHost {
    pub(super) fetcher: Arc<Fetcher>,
    pub(super) stats: Arc<RenderStats>,
    pub(super) answer_within: Duration,
}

/// Serves a tab's binding calls, for whichever page it draws; a page luntan
/// is done with (parked) opens nothing.
pub(super) async fn carry(
    mut calls: chromiumoxide::listeners::EventStream<EventBindingCalled>,
    page: Page,
    host: SocketHost,
    tab_traffic: Arc<Mutex<Option<Arc<Traffic>>>>,
) {
    while let Some(call) = calls.next().await {
        if call.name != BINDING {
            continue;
        }
        let ctx = *call.execution_context_id.inner();
        let parsed = match serde_json::from_str::<Call>(&call.payload) {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("a socket call luntan could not read ({e}): {}", call.payload);
                continue;
            }
        };
        let Some(traffic) = crate::db::lock(&tab_traffic).clone() else {
            // Never answered: a parked page's socket stays connecting, so
            // its script does not try again and again.
            tracing::debug!("{parsed:?}: ignored (a page luntan is done with)");
            continue;
        };
        match parsed {
            Call::Open { id, url, protocols } => {
                let key = (ctx, id);
                let url = match Url::parse(&url).map_err(|e| e.to_string()).and_then(|u| http_twin(&u).map(|_| u).map_err(|e| e.to_string())) {
                    Ok(u) => u,
                    Err(why) => {
                        tracing::warn!("{url}: the page's WebSocket was not opened: {why}");
                        say(&page, ctx, id, "\"error\"").await;
                        say(&page, ctx, id, "\"close\",1006").await;
                        continue;
                    }
                };
                if traffic.sockets.left.load(Ordering::Relaxed) {
                    continue;
                }
                let (tx, rx) = mpsc::unbounded_channel();
                crate::db::lock(&traffic.sockets.open).insert(key, tx);
                let socket = Socket { key, url, page: page.clone(), host: host.clone(), traffic };
                tokio::spawn(socket.run(protocols, rx));
            }
            Call::Send { id, text, binary, size } => {
                let key = (ctx, id);
                let frame = match (text, binary) {
                    (Some(t), _) => Message::text(t),
                    (None, Some(b)) => match base64::engine::general_purpose::STANDARD.decode(b) {
                        Ok(bytes) => Message::binary(bytes),
                        Err(_) => continue,
                    },
                    (None, None) => continue,
                };
                let open = crate::db::lock(&traffic.sockets.open).get(&key).cloned();
                if let Some(tx) = open {
                    traffic.sockets.asked(key);
                    traffic.touch();
                    if tx.send(Command::Send(frame, size)).is_err() {
                        traffic.sockets.forget(key);
                    }
                }
            }
            Call::Close { id, code, reason } => {
                if let Some(tx) = crate::db::lock(&traffic.sockets.open).get(&(ctx, id)) {
                    let _ = tx.send(Command::Close(code, reason));
                }
            }
        }
    }
}

/// One socket of a page, served until either side closes it or luntan
/// leaves the page.
struct Socket {
    key: Key,
    url: Url,
    page: Page,
    host: SocketHost,
    traffic: Arc<Traffic>,
}

/// How a socket ended, for the page's `close` event.
enum End {
    /// The server's closing frame (code, reason), or luntan's own once the
    /// server did not answer it.
    Closed(u16, String),
    Failed(FetchError),
    /// The connection ended without a closing frame.
    Dropped,
}

impl Socket {
    async fn say(&self, what: &str) {
        say(&self.page, self.key.0, self.key.1, what).await;
    }

    async fn run(self, protocols: Vec<String>, mut commands: mpsc::UnboundedReceiver<Command>) {
        // The handshake is a request in flight until the page has heard.
        self.traffic.started();
        let cookie = cookies(&self.page, &self.url).await;
        let opened = self.host.fetcher.open_socket(&self.url, &protocols, cookie).await;
        let OpenSocket { mut sender, mut frames, protocol } = match opened {
            Ok(o) => o,
            Err(e) => {
                if matches!(e, FetchError::Refused { .. } | FetchError::Robots { .. }) {
                    self.host.stats.refused.fetch_add(1, Ordering::Relaxed);
                }
                tracing::warn!("{}: the page's WebSocket was not opened: {e}", self.url);
                self.say("\"error\"").await;
                self.say("\"close\",1006").await;
                self.traffic.sockets.forget(self.key);
                self.traffic.ended();
                return;
            }
        };
        self.host.stats.requests.fetch_add(1, Ordering::Relaxed);
        self.host.stats.sockets.fetch_add(1, Ordering::Relaxed);
        self.say(&format!("\"open\",{}", js(protocol.as_deref().unwrap_or("")))).await;
        self.traffic.ended();

        // Sending waits for the gate while frames keep coming in: two halves
        // side by side.
        let writer = async {
            while let Some(command) = commands.recv().await {
                match command {
                    Command::Send(frame, size) => {
                        sender.send(frame).await?;
                        self.host.stats.frames_sent.fetch_add(1, Ordering::Relaxed);
                        self.traffic.sockets.sent(self.key, Instant::now() + self.host.answer_within);
                        self.say(&format!("\"sent\",{size}")).await;
                        self.traffic.touch();
                    }
                    Command::Close(code, reason) => {
                        sender.close(code, &reason).await;
                        return Ok((code, reason));
                    }
                }
            }
            // The page is left.
            sender.close(1001, "").await;
            Ok((1001, String::new()))
        };
        let reader = async {
            while let Some(frame) = frames.next().await {
                let data = match frame {
                    Ok(Message::Text(t)) => format!("{},false", js(t.as_str())),
                    Ok(Message::Binary(b)) => format!("{},true", js(&base64::engine::general_purpose::STANDARD.encode(&b))),
                    Ok(Message::Close(c)) => return c.map_or(End::Closed(1005, String::new()), |c| End::Closed(c.code.into(), c.reason.to_string())),
                    Ok(_) => continue,
                    Err(e) => return End::Failed(e),
                };
                self.host.stats.frames_received.fetch_add(1, Ordering::Relaxed);
                self.say(&format!("\"message\",{data}")).await;
                // Its listeners have run: an answer handled.
                self.traffic.sockets.answered(self.key);
                self.traffic.touch();
            }
            End::Dropped
        };
        tokio::pin!(writer, reader);
        // With whether luntan sent the closing frame (the page closed the
        // socket, or was left): a server that then drops the connection
        // without its own frame has ended it, not failed it.
        let (end, closing) = tokio::select! {
            end = &mut reader => (end, false),
            sent = &mut writer => match sent {
                Err(e) => (End::Failed(e), false),
                Ok((code, reason)) => (tokio::time::timeout(CLOSE_WAIT, &mut reader).await.unwrap_or(End::Closed(code, reason)), true),
            },
        };
        self.traffic.sockets.forget(self.key);
        match end {
            End::Closed(code, reason) => self.say(&format!("\"close\",{code},{},true", js(&reason))).await,
            End::Dropped => self.say("\"close\",1006").await,
            End::Failed(e) => {
                if closing {
                    tracing::debug!("{}: the server ended the page's WebSocket after its closing frame without one of its own: {e}", self.url);
                } else {
                    tracing::warn!("{}: the page's WebSocket failed: {e}", self.url);
                }
                self.say("\"error\"").await;
                self.say("\"close\",1006").await;
            }
        }
        self.traffic.touch();
    }
}

/// Tells the page's stand-in of socket `id` in context `ctx`: `what` is
/// the rest of `L.socket`'s arguments, as JavaScript. A page gone (its
/// context with it) hears nothing, and needs nothing.
async fn say(page: &Page, ctx: i64, id: u64, what: &str) {
    let js = format!("window.__luntan && window.__luntan.socket && window.__luntan.socket({id},{what})");
    let Ok(params) = EvaluateParams::builder().expression(js).context_id(ExecutionContextId::new(ctx)).build() else { return };
    let _ = tokio::time::timeout(super::COMMAND_TIMEOUT, page.execute(params)).await;
}

/// The browser's cookies for the socket's `http` twin, as a `Cookie`
/// header: those a page's responses set (its session) go with the
/// handshake, as Chromium's own socket would send them.
async fn cookies(page: &Page, url: &Url) -> Option<String> {
    let twin = http_twin(url).ok()?;
    let params = GetCookiesParams { urls: Some(vec![twin.to_string()]) };
    let got = tokio::time::timeout(super::COMMAND_TIMEOUT, page.execute(params)).await.ok()?.ok()?;
    let header = got.result.cookies.iter().map(|c| format!("{}={}", c.name, c.value)).collect::<Vec<_>>().join("; ");
    (!header.is_empty()).then_some(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_frame_sent_is_in_flight_until_its_socket_answers_or_its_bound_passes() {
        let s = Sockets::default();
        let (a, b) = ((1, 1), (1, 2));
        let bound = Duration::from_secs(2);
        s.asked(a);
        assert_eq!(s.in_flight(), 1, "waiting for its turn");
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(s.in_flight(), 1, "its turn, however late, is waited for");
        s.sent(a, Instant::now() + bound);
        s.answered(b);
        assert_eq!(s.in_flight(), 1, "a frame on another socket answers nothing of this one's");
        s.answered(a);
        assert_eq!(s.in_flight(), 0);
        s.asked(a);
        s.sent(a, Instant::now() + bound);
        tokio::time::advance(bound).await;
        assert_eq!(s.in_flight(), 0, "no answer within the bound: no longer waited for");
        s.asked(b);
        s.answered(b);
        assert_eq!(s.in_flight(), 1, "a frame not yet sent is not answered by one that comes meanwhile");
        s.forget(b);
        assert_eq!(s.in_flight(), 0, "a socket gone takes its frames with it");
    }
}
