//! Sessions: one cookie jar per forum account on the site's fetcher (its
//! gate, robots.txt, retries and caps), for logins, form POSTs and the
//! searches made logged in.

use std::sync::Arc;

use reqwest::cookie::CookieStore as _;
use url::Url;

use super::{build_client, client_builder, on_io, Core, FetchError, Fetched, Fetcher};

impl Fetcher {
    /// A cookie session on this forum (one per account): its own cookie jar,
    /// this fetcher's gate, robots.txt, retries and caps.
    pub fn session(&self) -> Result<Session, FetchError> {
        let jar = Arc::new(reqwest::cookie::Jar::default());
        let client = build_client(&self.core.site, client_builder(&self.core.site.politeness).cookie_provider(jar.clone()))?;
        Ok(Session { core: self.core.clone(), client, jar })
    }
}

/// A cookie session with a forum: what one account's requests share. The
/// cookies a response sets, redirects included, are kept for the next request.
#[derive(Clone)]
pub struct Session {
    core: Arc<Core>,
    client: reqwest::Client,
    jar: Arc<reqwest::cookie::Jar>,
}

impl Session {
    /// Adds the cookies of a `Cookie` header value (`a=1; b=2`, copied from
    /// a logged-in browser) for the whole forum.
    pub fn add_cookies(&self, header: &str) {
        let home = &self.core.site.home;
        for kv in header.split(';').map(str::trim).filter(|kv| kv.contains('=')) {
            self.jar.add_cookie_str(&format!("{kv}; Path=/"), home);
        }
    }

    /// Whether any cookie would be sent to `url`.
    pub fn has_cookies_for(&self, url: &Url) -> bool {
        self.jar.cookies(url).is_some()
    }

    /// GETs an HTML page with this session's cookies, as [`Fetcher::get_html`] does.
    pub async fn get_html(&self, url: &Url) -> Result<Fetched, FetchError> {
        let (core, client, target) = (self.core.clone(), self.client.clone(), url.clone());
        on_io(url, async move { core.fetch(&client, &target, None).await }).await
    }

    /// POSTs a form (`body` already encoded as `application/x-www-form-urlencoded`,
    /// in the forum's encoding) and follows the redirect that answers it as a
    /// GET, as a browser does after a login. The POST itself is not checked
    /// against robots.txt: it is the user's own account logging in, not a
    /// page crawled; every page it leads to is.
    pub async fn post_form(&self, url: &Url, body: String) -> Result<Fetched, FetchError> {
        let (core, client, target) = (self.core.clone(), self.client.clone(), url.clone());
        on_io(url, async move { core.fetch(&client, &target, Some(body)).await }).await
    }
}
