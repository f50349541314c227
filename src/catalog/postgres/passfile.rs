//! The files libpq reads for what a connection string leaves out: the password file
//! (`~/.pgpass`, or `PGPASSFILE`) and the connection service file (`~/.pg_service.conf`,
//! or `PGSERVICEFILE`, then `PGSYSCONFDIR/pg_service.conf`), read by libpq's rules so a
//! fleet's credentials live where every PostgreSQL client looks for them, not in crontabs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A variable's value by name (the environment, in use; a table, in tests).
pub(super) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The password file: `PGPASSFILE`, else `~/.pgpass`.
fn passfile(env: Env<'_>) -> Option<PathBuf> {
    env("PGPASSFILE").map(PathBuf::from).or_else(|| Some(Path::new(&env("HOME")?).join(".pgpass")))
}

/// What the password file gave for a connection.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Looked {
    /// The password of the first line that matches.
    Found(String),
    /// No file, or no line matches.
    None,
    /// The file was not read, and why (libpq's warning, which fixity gives with a failed
    /// connection instead of on its own).
    Ignored(String),
}

/// The password for (host, port, database, user) from the password file, by libpq's
/// rules: lines `host:port:database:user:password`, `*` matching anything in the first
/// four fields, `\:` and `\\` escaping, `#` comments, the first matching line winning; a
/// host that is a Unix socket directory matches `localhost`. A file that group or others
/// can read is ignored (libpq: "permissions should be u=rw (0600) or less").
pub(super) fn password(env: Env<'_>, host: &str, port: u16, db: &str, user: &str) -> Looked {
    let Some(path) = passfile(env) else { return Looked::None };
    let Ok(meta) = std::fs::metadata(&path) else { return Looked::None };
    if !meta.is_file() {
        return Looked::Ignored(format!("{} is not a plain file", path.display()));
    }
    if !crate::sys::owner_only(&meta) {
        return Looked::Ignored(format!(
            "the password file {} has group or world access; permissions should be u=rw \
             (0600) or less (chmod 0600 it)",
            path.display()
        ));
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Looked::Ignored(format!("cannot read the password file {}", path.display()));
    };
    let host = if host.starts_with('/') || host.is_empty() { "localhost" } else { host };
    let port = port.to_string();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_escaped(line);
        if fields.len() < 5 {
            continue;
        }
        let want = [host, port.as_str(), db, user];
        if fields[..4].iter().zip(want).all(|(f, w)| f == "*" || f == w) {
            return Looked::Found(fields[4..].join(":"));
        }
    }
    Looked::None
}

/// A password file line's fields: split on `:` not escaped by `\`; `\x` is `x`.
fn split_escaped(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("one field at least").push(next);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            _ => fields.last_mut().expect("one field at least").push(c),
        }
    }
    fields
}

/// The connection parameters a service file section may set, as libpq names them.
const SERVICE_KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "sslmode",
    "connect_timeout",
    "application_name",
    "passfile",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslcrl",
    "sslcrldir",
];

/// The settings of service `name`: from the user's service file (`PGSERVICEFILE`, else
/// `~/.pg_service.conf`), else the system's (`PGSYSCONFDIR/pg_service.conf`), the first
/// file that defines it. INI sections `[name]` of `key=value` lines, `#` comments. An
/// unknown key, or a service no file defines, is an error in words.
pub(super) fn service(env: Env<'_>, name: &str) -> Result<HashMap<String, String>, String> {
    let user = env("PGSERVICEFILE")
        .map(PathBuf::from)
        .or_else(|| Some(Path::new(&env("HOME")?).join(".pg_service.conf")));
    let system = env("PGSYSCONFDIR").map(|d| Path::new(&d).join("pg_service.conf"));
    for file in [user, system].into_iter().flatten() {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        if let Some(found) = section(&text, name, &file)? {
            return Ok(found);
        }
    }
    Err(format!(
        "definition of service {name:?} not found (in PGSERVICEFILE or ~/.pg_service.conf, \
         then PGSYSCONFDIR/pg_service.conf)"
    ))
}

/// Section `name` of a service file's `text`, if it has one.
fn section(text: &str, name: &str, file: &Path) -> Result<Option<HashMap<String, String>>, String> {
    let mut inside = false;
    let mut found: Option<HashMap<String, String>> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(head) = line.strip_prefix('[') {
            let Some(title) = head.strip_suffix(']') else {
                return Err(format!(
                    "syntax error in service file {}, line {}",
                    file.display(),
                    n + 1
                ));
            };
            if found.is_some() && inside {
                break;
            }
            inside = title == name;
            if inside {
                found = Some(HashMap::new());
            }
            continue;
        }
        if !inside {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("syntax error in service file {}, line {}", file.display(), n + 1));
        };
        let key = key.trim();
        if !SERVICE_KEYS.contains(&key) {
            return Err(format!(
                "service file {}, line {}: {key:?} is not a connection setting fixity takes",
                file.display(),
                n + 1
            ));
        }
        found.as_mut().expect("inside a section").insert(key.to_string(), value.trim().to_string());
    }
    Ok(found)
}

// The file's permission bits are what libpq checks: Unix only.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn env(vars: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
    }

    fn file(dir: &Path, name: &str, text: &str, mode: u32) -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p.to_string_lossy().into_owned()
    }

    #[test]
    fn the_password_file_by_libpq_rules() {
        let d = tempfile::tempdir().unwrap();
        let text = "# comment\n\
                    db1:5432:fixity:alice:first\n\
                    *:5432:fixity:alice:second\n\
                    localhost:*:*:bob:sock\\:et\n\
                    h\\:x:1:*:*:colon\n\
                    *:*:*:*:any:with:colons\n";
        let p = file(d.path(), "pgpass", text, 0o600);
        let e = env(vec![("PGPASSFILE", p.clone())]);
        let got = |h, port, db, u| password(&e, h, port, db, u);
        assert_eq!(got("db1", 5432, "fixity", "alice"), Looked::Found("first".into()));
        assert_eq!(got("db2", 5432, "fixity", "alice"), Looked::Found("second".into()));
        assert_eq!(got("/run/postgresql", 5433, "x", "bob"), Looked::Found("sock:et".into()));
        assert_eq!(got("h:x", 1, "d", "u"), Looked::Found("colon".into()));
        assert_eq!(got("other", 1, "d", "carol"), Looked::Found("any:with:colons".into()));
        // Group or world access: ignored, and why.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(
            matches!(got("db1", 5432, "fixity", "alice"), Looked::Ignored(m) if m.contains("0600"))
        );
        // ~/.pgpass when PGPASSFILE is not set; none at all is no password.
        file(d.path(), ".pgpass", "*:*:*:*:home\n", 0o600);
        let home = env(vec![("HOME", d.path().to_string_lossy().into_owned())]);
        assert_eq!(password(&home, "h", 1, "d", "u"), Looked::Found("home".into()));
        assert_eq!(password(&env(vec![]), "h", 1, "d", "u"), Looked::None);
        let nothing = file(d.path(), "empty", "", 0o600);
        assert_eq!(password(&env(vec![("PGPASSFILE", nothing)]), "h", 1, "d", "u"), Looked::None);
    }

    #[test]
    fn service_files_user_first_then_system() {
        let d = tempfile::tempdir().unwrap();
        let user = file(
            d.path(),
            "user.conf",
            "[fleet]\nhost=db.lan\nport = 6543\ndbname=fixity\n\n[other]\nuser=x\n",
            0o644,
        );
        std::fs::create_dir(d.path().join("etc")).unwrap();
        file(
            &d.path().join("etc"),
            "pg_service.conf",
            "[sys]\nhost=sys.lan\nsslmode=require\n",
            0o644,
        );
        let e = env(vec![
            ("PGSERVICEFILE", user),
            ("PGSYSCONFDIR", d.path().join("etc").to_string_lossy().into_owned()),
        ]);
        let fleet = service(&e, "fleet").unwrap();
        assert_eq!(fleet.get("host").map(String::as_str), Some("db.lan"));
        assert_eq!(fleet.get("port").map(String::as_str), Some("6543"));
        assert!(!fleet.contains_key("user"), "the next section is another service's");
        assert_eq!(service(&e, "sys").unwrap().get("sslmode").map(String::as_str), Some("require"));
        assert!(service(&e, "nope").unwrap_err().contains("not found"));
        let bad = file(d.path(), "bad.conf", "[s]\nhots=x\n", 0o644);
        let err = service(&env(vec![("PGSERVICEFILE", bad)]), "s").unwrap_err();
        assert!(err.contains("line 2") && err.contains("hots"), "{err}");
    }
}
