//! Who is asking: sessions (a random token in an HttpOnly, SameSite=Strict cookie), the
//! CSRF token each session carries (every form of an action posts it back), and the
//! limits that keep a password guesser slow and the table of sessions bounded.

use crate::cli::Role;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The session cookie's name.
pub const COOKIE: &str = "fixity_session";
/// A session ends this long after its last request.
pub const IDLE: Duration = Duration::from_secs(12 * 3600);
/// At most this many sessions are kept; the least recently used goes first.
const MOST: usize = 10_000;

/// Fills `buf` from the system's random source (ring's `SystemRandom`: getrandom(2),
/// BCryptGenRandom, SecRandomCopyBytes).
pub fn random(buf: &mut [u8]) {
    use ring::rand::SecureRandom;
    ring::rand::SystemRandom::new().fill(buf).expect("the system's random source failed");
}

/// 32 random bytes in hex.
pub fn token() -> String {
    let mut b = [0u8; 32];
    random(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Who a request is from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Who {
    /// The user's name; `None` with no authentication (loopback without --users).
    pub user: Option<String>,
    pub role: Role,
    /// The token every action must carry.
    pub csrf: String,
}

impl Who {
    /// The name the catalog's history records an action by.
    pub fn actor(&self) -> String {
        match &self.user {
            Some(u) => format!("{u} (fixity serve)"),
            None => "fixity serve (loopback, no login)".into(),
        }
    }
}

struct Session {
    who: Who,
    used: Instant,
}

/// The sessions of logged-in users, and failed logins per user name.
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Session>>,
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

impl Sessions {
    /// A new session for `user`; its token.
    pub fn open(&self, user: &str, role: Role) -> String {
        let id = token();
        let who = Who { user: Some(user.into()), role, csrf: token() };
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, s| s.used.elapsed() < IDLE);
        if map.len() >= MOST
            && let Some(oldest) = map.iter().min_by_key(|(_, s)| s.used).map(|(k, _)| k.clone())
        {
            map.remove(&oldest);
        }
        map.insert(id.clone(), Session { who, used: Instant::now() });
        id
    }

    /// The session of `id`, if it is one and has not expired.
    pub fn get(&self, id: &str) -> Option<Who> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let s = map.get_mut(id)?;
        if s.used.elapsed() >= IDLE {
            map.remove(id);
            return None;
        }
        s.used = Instant::now();
        Some(s.who.clone())
    }

    /// Ends the session `id`.
    pub fn close(&self, id: &str) {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }

    /// Ends every session of `user` whose role is no longer `role` (the users file
    /// changed): they log in again.
    pub fn revoke_unless(&self, keep: impl Fn(&str, Role) -> bool) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, s| s.who.user.as_deref().is_some_and(|u| keep(u, s.who.role)));
    }

    /// How long a login for `user` must wait after its failures: none for the first
    /// five, then doubling from 1 s up to 5 min; the count ends 15 minutes after the
    /// last failure.
    pub fn wait_before(&self, user: &str) -> Duration {
        let f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        match f.get(user) {
            Some((n, last)) if *n >= 5 && last.elapsed() < Duration::from_secs(900) => {
                let wait = Duration::from_secs(1 << (n - 5).min(8)).min(Duration::from_secs(300));
                wait.saturating_sub(last.elapsed())
            }
            _ => Duration::ZERO,
        }
    }

    /// Notes a failed (`ok` false) or successful login of `user`.
    pub fn note_login(&self, user: &str, ok: bool) {
        let mut f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if ok {
            f.remove(user);
            return;
        }
        if f.len() >= MOST {
            f.retain(|_, (_, last)| last.elapsed() < Duration::from_secs(900));
        }
        let e = f.entry(user.into()).or_insert((0, Instant::now()));
        if e.1.elapsed() >= Duration::from_secs(900) {
            e.0 = 0;
        }
        *e = (e.0 + 1, Instant::now());
    }
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').map(str::trim).find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then_some(v)
    })
}

/// Whether two tokens are equal, in time independent of where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_by_its_token_and_ends_when_closed() {
        let s = Sessions::default();
        let id = s.open("alice", Role::Operator);
        assert_eq!(id.len(), 64);
        let who = s.get(&id).unwrap();
        assert_eq!((who.user.as_deref(), who.role), (Some("alice"), Role::Operator));
        assert_eq!(who.csrf.len(), 64);
        assert_ne!(who.csrf, id);
        assert!(s.get("0000").is_none());
        s.revoke_unless(|u, r| u == "alice" && r == Role::Viewer);
        assert!(s.get(&id).is_none());
        let id = s.open("bob", Role::Viewer);
        s.close(&id);
        assert!(s.get(&id).is_none());
    }

    #[test]
    fn failures_slow_a_guesser_after_five() {
        let s = Sessions::default();
        for _ in 0..5 {
            assert_eq!(s.wait_before("alice"), Duration::ZERO);
            s.note_login("alice", false);
        }
        assert!(s.wait_before("alice") > Duration::from_millis(500));
        assert_eq!(s.wait_before("bob"), Duration::ZERO);
        s.note_login("alice", true);
        assert_eq!(s.wait_before("alice"), Duration::ZERO);
    }

    #[test]
    fn cookies_and_tokens() {
        assert_eq!(cookie("a=1; fixity_session=xyz; b=2", COOKIE), Some("xyz"));
        assert_eq!(cookie("fixity_session_x=1", COOKIE), None);
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
    }
}
