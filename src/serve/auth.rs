//! Who a request is from, and whether it may do what it asks: a session's cookie, HTTP
//! Basic credentials (for `/api/` and `/metrics` scrapers), a reverse proxy's header from
//! a trusted address only, or nobody at all on loopback without --users (then the `Host`
//! must be a loopback name: no DNS-rebound page can talk to the server). Actions need the
//! operator role, a server that is not read-only, and the CSRF token of the session.

use super::session::{self, Sessions, Who};
use super::users::{self, Users};
use crate::cli::Role;
use axum::http::{HeaderMap, header};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// How requests are authenticated.
pub struct Auth {
    /// The users file; `None`: no logins (loopback only, or the proxy's header).
    pub users_file: Option<PathBuf>,
    users: Mutex<(Users, Option<SystemTime>)>,
    /// The reverse proxy's header and the addresses it is believed from.
    pub proxy: Option<(String, Vec<IpAddr>)>,
    pub sessions: Sessions,
    /// The CSRF token of requests with no session (loopback without logins, a proxy's
    /// users): derived from a secret of this run of the server.
    secret: String,
    /// Basic credentials checked lately (a scraper asks every few seconds; Argon2 is slow
    /// on purpose): the SHA-256 of `user:password` and when.
    basic: Mutex<HashMap<Vec<u8>, (Role, Instant)>>,
    /// Argon2 checks at once (each takes 19 MiB and tens of ms).
    pub checks: tokio::sync::Semaphore,
}

/// Why a request is not let in.
pub enum Denied {
    /// Log in first (pages: the login page; the API: 401).
    Login,
    /// The `Host` is not a loopback name on a server without logins.
    Host,
}

impl Auth {
    pub fn new(
        users_file: Option<PathBuf>,
        proxy: Option<(String, Vec<IpAddr>)>,
    ) -> anyhow::Result<Auth> {
        let users = match &users_file {
            Some(f) => (Users::load(f)?, mtime(f)),
            None => (Users::default(), None),
        };
        Ok(Auth {
            users_file,
            users: Mutex::new(users),
            proxy,
            sessions: Sessions::default(),
            secret: session::token(),
            basic: Mutex::new(HashMap::new()),
            checks: tokio::sync::Semaphore::new(2),
        })
    }

    /// Whether anyone must say who they are.
    pub fn required(&self) -> bool {
        self.users_file.is_some() || self.proxy.is_some()
    }

    /// The users, the file read again when it changed (sessions whose user is gone or
    /// whose role changed end then).
    pub fn users(&self) -> Users {
        let mut u = self.users.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = &self.users_file {
            let now = mtime(f);
            if now != u.1
                && let Ok(fresh) = Users::load(f)
            {
                self.sessions
                    .revoke_unless(|name, role| fresh.get(name).is_some_and(|x| x.role == role));
                self.basic.lock().unwrap_or_else(|e| e.into_inner()).clear();
                *u = (fresh, now);
            }
        }
        u.0.clone()
    }

    fn derived_csrf(&self, user: &str) -> String {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, self.secret.as_bytes());
        let tag = ring::hmac::sign(&key, user.as_bytes());
        tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Who sent a request (from `peer`, with `headers`).
    pub async fn who(
        &self,
        headers: &HeaderMap,
        peer: SocketAddr,
        read_only: bool,
    ) -> Result<Who, Denied> {
        let most = if read_only { Role::Viewer } else { Role::Operator };
        if let Some((name, proxies)) = &self.proxy
            && proxies.contains(&peer.ip())
            && let Some(user) = headers.get(name.as_str()).and_then(|v| v.to_str().ok())
            && users::valid_name(user)
        {
            let role = self.users().get(user).map_or(Role::Viewer, |u| u.role);
            return Ok(Who {
                user: Some(user.into()),
                role: role.min(most),
                csrf: self.derived_csrf(user),
            });
        }
        if !self.required() {
            if !loopback_host(headers) {
                return Err(Denied::Host);
            }
            return Ok(Who { user: None, role: most, csrf: self.derived_csrf("") });
        }
        if self.users_file.is_none() {
            return Err(Denied::Login);
        }
        // The users file read again if it changed: a user removed or given another role
        // loses the sessions it had.
        let _ = self.users();
        let cookies = headers.get(header::COOKIE).and_then(|v| v.to_str().ok()).unwrap_or("");
        if let Some(id) = session::cookie(cookies, session::COOKIE)
            && let Some(mut who) = self.sessions.get(id)
        {
            who.role = who.role.min(most);
            return Ok(who);
        }
        if let Some((user, password)) = basic(headers)
            && let Some(role) = self.basic_login(&user, &password).await
        {
            return Ok(Who {
                user: Some(user.clone()),
                role: role.min(most),
                csrf: self.derived_csrf(&user),
            });
        }
        Err(Denied::Login)
    }

    /// Checks a user's password (slowed down after failures); the role if it is right.
    pub async fn login(&self, user: &str, password: &str) -> Option<Role> {
        let wait = self.sessions.wait_before(user);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let users = self.users();
        let found = users.get(user).cloned();
        let hash = found.as_ref().map_or_else(|| users::decoy().to_string(), |u| u.hash.clone());
        let password = password.to_string();
        let _slot = self.checks.acquire().await.ok()?;
        let ok = tokio::task::spawn_blocking(move || users::verify(&password, &hash))
            .await
            .unwrap_or(false);
        let ok = ok && found.is_some();
        self.sessions.note_login(user, ok);
        found.filter(|_| ok).map(|u| u.role)
    }

    async fn basic_login(&self, user: &str, password: &str) -> Option<Role> {
        let key =
            ring::digest::digest(&ring::digest::SHA256, format!("{user}:{password}").as_bytes())
                .as_ref()
                .to_vec();
        let users = self.users();
        if let Some((role, at)) =
            self.basic.lock().unwrap_or_else(|e| e.into_inner()).get(&key).copied()
            && at.elapsed() < Duration::from_secs(300)
            && users.get(user).is_some_and(|u| u.role == role)
        {
            return Some(role);
        }
        let role = self.login(user, password).await?;
        let mut cache = self.basic.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 1000 {
            cache.clear();
        }
        cache.insert(key, (role, Instant::now()));
        Some(role)
    }
}

fn mtime(f: &std::path::Path) -> Option<SystemTime> {
    std::fs::metadata(f).and_then(|m| m.modified()).ok()
}

/// HTTP Basic credentials of a request.
fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let b64 = v.strip_prefix("Basic ").or_else(|| v.strip_prefix("basic "))?;
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::STANDARD.decode(b64.trim()).ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (u, p) = text.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// Whether the request's `Host` is a loopback name (`localhost`, 127.x, `[::1]`).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else { return false };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a state-changing request may go on: the role, a server that is not
/// read-only, the CSRF token of the form, and (where the browser says) the same origin.
pub fn may_act(
    who: &Who,
    read_only: bool,
    csrf: Option<&str>,
    headers: &HeaderMap,
) -> Result<(), &'static str> {
    if read_only {
        return Err("this server is read-only (--read-only): it looks, never acts");
    }
    if who.role != Role::Operator {
        return Err("viewers cannot act: an operator can");
    }
    same_origin(headers)?;
    match csrf {
        Some(t) if session::same(t, &who.csrf) => Ok(()),
        _ => Err("the form's CSRF token is missing or wrong: reload the page and try again"),
    }
}

/// The browser's word on where a request comes from: `Sec-Fetch-Site` cross-site, or an
/// `Origin` whose host is not the request's, is refused.
pub fn same_origin(headers: &HeaderMap) -> Result<(), &'static str> {
    let get = |h: &str| headers.get(h).and_then(|v| v.to_str().ok());
    if matches!(get("sec-fetch-site"), Some("cross-site" | "same-site")) {
        return Err("a request from another site is refused");
    }
    if let (Some(origin), Some(host)) = (get("origin"), get("host"))
        && origin != "null"
        && origin.split_once("://").map(|(_, h)| h) != Some(host)
    {
        return Err("a request from another origin is refused");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(list: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in list {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_loopback_hosts_pass_without_logins() {
        for ok in ["localhost:8470", "127.0.0.1:8470", "[::1]:8470", "LOCALHOST", "127.1.2.3"] {
            assert!(loopback_host(&headers(&[("host", ok)])), "{ok}");
        }
        for bad in ["evil.example:8470", "10.0.0.1:8470", "localhost.evil.example", ""] {
            assert!(!loopback_host(&headers(&[("host", bad)])), "{bad}");
        }
    }

    #[test]
    fn basic_credentials_decode() {
        let h = headers(&[("authorization", "Basic YWxpY2U6b3BlbiBzZXNhbWU=")]);
        assert_eq!(basic(&h), Some(("alice".into(), "open sesame".into())));
        assert_eq!(basic(&headers(&[("authorization", "Basic !!!")])), None);
        assert_eq!(basic(&headers(&[("authorization", "Bearer x")])), None);
    }

    #[test]
    fn actions_need_the_role_the_token_and_the_origin() {
        let op = Who { user: Some("a".into()), role: Role::Operator, csrf: "t0k".into() };
        let viewer = Who { role: Role::Viewer, ..op.clone() };
        let same = headers(&[("host", "h:1"), ("origin", "https://h:1")]);
        assert!(may_act(&op, false, Some("t0k"), &same).is_ok());
        assert!(may_act(&op, true, Some("t0k"), &same).is_err());
        assert!(may_act(&viewer, false, Some("t0k"), &same).is_err());
        assert!(may_act(&op, false, None, &same).is_err());
        assert!(may_act(&op, false, Some("t0x"), &same).is_err());
        let other = headers(&[("host", "h:1"), ("origin", "https://evil.example")]);
        assert!(may_act(&op, false, Some("t0k"), &other).is_err());
        let cross = headers(&[("host", "h:1"), ("sec-fetch-site", "cross-site")]);
        assert!(may_act(&op, false, Some("t0k"), &cross).is_err());
    }
}
