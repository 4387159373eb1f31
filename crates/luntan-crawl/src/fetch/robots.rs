//! robots.txt: each host's rules loaded once through the gate (RFC 9309's
//! reading of a missing or failing file), its Crawl-delay raising the
//! site's delay, and every URL checked against them.

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::{Core, FetchError, Outcome, Want};

#[derive(Debug, Clone)]
pub(super) enum RobotsRule {
    AllowAll,
    Rules(Arc<texting_robots::Robot>),
    Unavailable(String),
}

impl Core {
    pub(super) async fn check_robots(&self, url: &Url) -> Result<(), FetchError> {
        let key = format!("{}://{}", url.scheme(), url.authority());
        let cell = {
            let mut map = self.robots.lock().expect("robots lock");
            map.entry(key.clone()).or_default().clone()
        };
        let rule = cell.get_or_init(|| self.load_robots(&key)).await;
        match rule {
            RobotsRule::AllowAll => Ok(()),
            RobotsRule::Rules(robot) if robot.allowed(url.as_str()) => Ok(()),
            RobotsRule::Rules(_) => Err(FetchError::Robots { url: url.clone() }),
            RobotsRule::Unavailable(why) => Err(FetchError::RobotsUnavailable { url: url.clone(), why: why.clone() }),
        }
    }

    /// RFC 9309: a 4xx robots.txt means no rules; an unreachable one or a
    /// 5xx means "assume everything is disallowed". Up to five redirects are
    /// followed on the forum's hosts; a longer chain, or one that leaves
    /// them, counts as unavailable, which RFC 9309 treats like a 4xx.
    async fn load_robots(&self, origin: &str) -> RobotsRule {
        let Ok(mut url) = Url::parse(&format!("{origin}/robots.txt")) else {
            return RobotsRule::AllowAll;
        };
        let mut hops = 0;
        let fetched = loop {
            match self.get_with_retries(&self.client, &url, None, Want::Any, None).await {
                Ok(Outcome::Page(f)) => break Ok(f),
                Ok(Outcome::NotModified) => return RobotsRule::AllowAll,
                Ok(Outcome::Redirect(next)) if hops < 5 && self.site.host_allowed(&next) => {
                    hops += 1;
                    url = next;
                }
                Ok(Outcome::Redirect(_)) => return RobotsRule::AllowAll,
                Err(e) => break Err(e),
            }
        };
        match fetched {
            Ok(f) => match texting_robots::Robot::new(&self.site.politeness.user_agent, &f.body) {
                Ok(robot) => {
                    if let Some(secs) = robot.delay.filter(|d| d.is_finite() && *d > 0.0) {
                        self.gate.raise_delay(Duration::from_secs_f32(secs.min(600.0)));
                    }
                    RobotsRule::Rules(Arc::new(robot))
                }
                Err(_) => RobotsRule::AllowAll,
            },
            Err(e) => match e.status() {
                Some(s) if (400..500).contains(&s) && s != 429 => RobotsRule::AllowAll,
                _ => RobotsRule::Unavailable(e.to_string()),
            },
        }
    }
}
