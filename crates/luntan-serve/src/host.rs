//! The `Host` check that keeps DNS rebinding off a server on loopback.
//!
//! A page on `evil.example` whose name is then made to resolve to 127.0.0.1
//! can read a loopback server's answers as its own origin; the browser
//! still sends `Host: evil.example`. So a request is answered only if its
//! `Host` is an IP address (no name to rebind), `localhost` on a server
//! bound to loopback or to every address, or one of the names the operator
//! gave with `--public-host`.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::header::HOST;
use axum::http::uri::Authority;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::State as AppState;

/// The names a server answers to.
#[derive(Debug, Clone)]
pub(crate) struct HostRule {
    bound: IpAddr,
    /// Lowercased, without a trailing dot.
    names: Vec<String>,
}

impl HostRule {
    pub fn new(bound: SocketAddr, names: &[String]) -> HostRule {
        HostRule { bound: bound.ip(), names: names.iter().map(|n| normal(n)).collect() }
    }

    /// Whether a request whose `Host` header is `host` is answered.
    pub fn allows(&self, host: &str) -> bool {
        let Ok(authority) = host.parse::<Authority>() else { return false };
        if authority.as_str().contains('@') {
            return false;
        }
        let name = authority.host();
        let bare = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
        if bare.parse::<IpAddr>().is_ok() {
            return true;
        }
        let name = normal(name);
        if name == "localhost" && (self.bound.is_loopback() || self.bound.is_unspecified()) {
            return true;
        }
        self.names.contains(&name)
    }
}

fn normal(name: &str) -> String {
    name.trim().trim_end_matches('.').to_ascii_lowercase()
}

pub async fn check_host(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let mut hosts = req.headers().get_all(HOST).iter();
    let (first, second) = (hosts.next(), hosts.next());
    // No Host at all is HTTP/1.0 from a tool, never a browser; two are a request
    // a proxy and this server could read differently.
    let ok = match (first, second) {
        (None, _) => true,
        (Some(h), None) => h.to_str().is_ok_and(|h| st.hosts.allows(h)),
        (Some(_), Some(_)) => false,
    };
    if !ok {
        let shown = first.map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned()).unwrap_or_default();
        let shown: String = shown.chars().take(100).collect();
        return ApiError::bad(format!("Host {shown:?} is not a name this server answers to; start luntan-serve with --public-host NAME to allow a name"))
            .into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_addresses_localhost_on_loopback_and_named_hosts_pass_others_do_not() {
        let loopback = HostRule::new("127.0.0.1:7700".parse().unwrap(), &[]);
        for ok in ["127.0.0.1:7700", "127.0.0.1", "[::1]:7700", "localhost:7700", "LOCALHOST.", "10.0.0.5:80"] {
            assert!(loopback.allows(ok), "{ok}");
        }
        for bad in ["evil.example:7700", "evil.example", "localhost.evil.example", "", "a b", "user@127.0.0.1", "127.0.0.1.nip.io"] {
            assert!(!loopback.allows(bad), "{bad}");
        }
        let public = HostRule::new("192.0.2.1:80".parse().unwrap(), &["Search.Example.org".into()]);
        assert!(public.allows("search.example.org") && public.allows("SEARCH.example.org.:80"));
        assert!(!public.allows("localhost"), "a server bound to one outside address is not localhost");
        assert!(!public.allows("other.example.org"));
        let everywhere = HostRule::new("0.0.0.0:7700".parse().unwrap(), &[]);
        assert!(everywhere.allows("localhost:7700") && !everywhere.allows("evil.example"));
    }
}
