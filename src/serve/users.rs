//! The users file of `fixity serve`: one user a line, `NAME ROLE HASH`, the hash an
//! Argon2id PHC string (`$argon2id$v=19$m=19456,t=2,p=1$SALT$HASH`, RustCrypto's argon2
//! with its default parameters, OWASP's minimum). `#` starts a comment. No password is
//! ever kept or logged in clear; the file is written atomically, mode 0600.

use crate::cli::Role;
use anyhow::{Context, bail};
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use fixity::pathtext::{path_bytes, quote_env};
use std::io::Write;
use std::path::Path;

/// One user of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub role: Role,
    /// The Argon2id PHC string.
    pub hash: String,
}

/// The users a file names.
#[derive(Clone, Debug, Default)]
pub struct Users {
    pub list: Vec<User>,
}

impl Role {
    pub fn word(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
        }
    }

    fn parse(word: &str) -> Option<Role> {
        match word {
            "viewer" => Some(Role::Viewer),
            "operator" => Some(Role::Operator),
            _ => None,
        }
    }
}

/// A user name: letters, digits and `._@-`, 1 to 64 characters (it is shown on pages and
/// recorded in the catalog's history).
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c))
}

impl Users {
    /// Reads the users file (a file that does not exist yet has no users).
    pub fn load(path: &Path) -> anyhow::Result<Users> {
        let shown = quote_env(path_bytes(path));
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Users::default()),
            Err(e) => return Err(e).with_context(|| format!("cannot read the users file {shown}")),
        };
        Users::parse(&text).with_context(|| format!("users file {shown}"))
    }

    /// The users in `text`.
    pub fn parse(text: &str) -> anyhow::Result<Users> {
        let mut list: Vec<User> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [name, role, hash] = fields[..] else {
                bail!("line {}: expected NAME ROLE HASH", n + 1);
            };
            let Some(role) = Role::parse(role) else {
                bail!("line {}: role {role:?} is neither viewer nor operator", n + 1);
            };
            if !valid_name(name) {
                bail!("line {}: user name {name:?} (letters, digits and ._@- only)", n + 1);
            }
            match PasswordHash::new(hash) {
                Ok(h) if h.algorithm.as_str() == "argon2id" => {}
                _ => bail!("line {}: the hash of {name} is not an Argon2id PHC string", n + 1),
            }
            if list.iter().any(|u| u.name == name) {
                bail!("line {}: user {name} named twice", n + 1);
            }
            list.push(User { name: name.into(), role, hash: hash.into() });
        }
        Ok(Users { list })
    }

    /// The file's text.
    pub fn text(&self) -> String {
        let mut out = String::from(
            "# fixity serve users: NAME ROLE ARGON2ID-HASH (fixity serve --add-user)\n",
        );
        for u in &self.list {
            out.push_str(&format!("{} {} {}\n", u.name, u.role.word(), u.hash));
        }
        out
    }

    /// The user `name`, if the file has it.
    pub fn get(&self, name: &str) -> Option<&User> {
        self.list.iter().find(|u| u.name == name)
    }

    /// Adds `name` (or replaces its role and password).
    pub fn set(&mut self, name: &str, role: Role, password: &str) -> anyhow::Result<()> {
        let hash = hash(password)?;
        match self.list.iter_mut().find(|u| u.name == name) {
            Some(u) => (u.role, u.hash) = (role, hash),
            None => self.list.push(User { name: name.into(), role, hash }),
        }
        Ok(())
    }

    /// Writes the file atomically, readable by its owner only.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let shown = quote_env(path_bytes(path));
        let mut f = fixity::output::AtomicFile::create_mode(path, 0o600)
            .with_context(|| format!("cannot write the users file {shown}"))?;
        f.write_all(self.text().as_bytes())?;
        f.commit().with_context(|| format!("cannot write the users file {shown}"))
    }
}

/// The Argon2id PHC string of `password`, with a fresh 16-byte salt.
pub fn hash(password: &str) -> anyhow::Result<String> {
    let mut salt = [0u8; 16];
    super::session::random(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| anyhow::anyhow!("salt: {e}"))?;
    Ok(Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| anyhow::anyhow!("argon2: {e}"))?
        .to_string())
}

/// Whether `password` is the one `hash` was made from (in constant time, by argon2).
pub fn verify(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
}

/// A hash to check against when the user does not exist, so that the answer takes as long
/// as for a user who does (no user names learnt from timing).
pub fn decoy() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash("no such user").unwrap_or_default())
}

/// `fixity serve --add-user NAME --users FILE [--role R] [--password-env VAR]`.
pub fn add_user(file: &Path, name: &str, role: Role, env: Option<&str>) -> anyhow::Result<()> {
    if !valid_name(name) {
        bail!("user name {name:?}: letters, digits and ._@- only, at most 64");
    }
    let mut users = Users::load(file)?;
    let password = match env {
        Some(var) => std::env::var(var).with_context(|| format!("${var} is not set"))?,
        None => read_password(name)?,
    };
    if password.chars().count() < 8 {
        bail!("the password is shorter than 8 characters");
    }
    let existed = users.get(name).is_some();
    users.set(name, role, &password)?;
    users.save(file)?;
    crate::ui::error(&format!(
        "{} user {name} ({}) in {}",
        if existed { "changed" } else { "added" },
        role.word(),
        quote_env(path_bytes(file))
    ));
    Ok(())
}

/// The password, from the terminal without echo (asked twice), or one line of standard
/// input.
fn read_password(name: &str) -> anyhow::Result<String> {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let mut line = String::new();
        stdin.read_line(&mut line)?;
        return Ok(line.trim_end_matches(['\r', '\n']).to_string());
    }
    let first = prompt(&format!("password for {name}: "))?;
    let second = prompt("again: ")?;
    if first != second {
        bail!("the two passwords differ");
    }
    Ok(first)
}

/// One line read from the terminal with echo off (Unix); as typed elsewhere.
fn prompt(text: &str) -> anyhow::Result<String> {
    eprint!("{text}");
    let _quiet = fixity::sys::EchoOff::begin();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    eprintln!();
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let h = hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        assert!(verify("correct horse", &h));
        assert!(!verify("correct horsf", &h));
        assert!(!verify("correct horse", "not a hash"));
    }

    #[test]
    fn the_file_round_trips_and_refuses_what_it_cannot_trust() {
        let mut u = Users::default();
        u.set("alice", Role::Operator, "password1").unwrap();
        u.set("bob", Role::Viewer, "password2").unwrap();
        let back = Users::parse(&u.text()).unwrap();
        assert_eq!(back.list, u.list);
        assert_eq!(back.get("alice").unwrap().role, Role::Operator);
        let h = &u.list[0].hash;
        for bad in [
            format!("alice admin {h}"),
            "alice operator $argon2i$v=19$m=16,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g".to_string(),
            format!("al ice operator {h}"),
            format!("alice operator {h}\nalice viewer {h}"),
            "alice operator plaintext".to_string(),
        ] {
            assert!(Users::parse(&bad).is_err(), "{bad}");
        }
        assert!(Users::parse("# only a comment\n\n").unwrap().list.is_empty());
    }
}
