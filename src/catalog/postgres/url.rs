//! The catalog's URL: what `--catalog postgresql://...` means, with libpq's environment
//! for what the URL leaves out (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD,
//! PGSSLMODE), and the URL as messages show it (the password masked).

use super::{passfile, tls};
use postgres::Config;
use postgres::config::Host;
use std::collections::HashMap;
use std::time::Duration;
use tls::Tls;

/// Whether `catalog` (what `--catalog` was given) names a PostgreSQL catalog.
pub fn is_url(catalog: &[u8]) -> bool {
    catalog.starts_with(b"postgresql://") || catalog.starts_with(b"postgres://")
}

/// `url` with its password (in the authority, or a `password=` parameter) replaced by
/// `***`: the only form of the URL a message or a report shows.
pub fn mask(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let authority_len = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_len);
    let authority = match authority.rfind('@') {
        Some(at) => match authority[..at].find(':') {
            Some(colon) => format!("{}:***{}", &authority[..colon], &authority[at..]),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if k == "password" => format!("{k}=***"),
                    _ => p.to_string(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{}{authority}{tail}", &url[..scheme_end])
}

/// The connection settings `url` gives, with `env` (a variable's value by name) filling
/// in what it leaves out as libpq would: host (else localhost), port (else 5432), user
/// (else the login name, `USER`), database (else the user's name), password, sslmode
/// (see `tls`; else prefer). A connection gives up after 10 s unless
/// the URL says otherwise (`connect_timeout`). An error is a message without the URL.
#[cfg(test)]
pub(crate) fn settings(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, String> {
    settings_noted(url, env).map(|s| s.config)
}

/// What a URL and the environment give: the connection settings, TLS, and why the
/// password file was not read when it was not (libpq's warning, said with a connection
/// that fails).
pub(crate) struct Settings {
    pub(crate) config: Config,
    pub(crate) tls: Tls,
    pub(crate) passfile_note: Option<String>,
}

/// [`settings`], with TLS and the password file's note.
///
/// A service (`service=NAME` in the URL, else `PGSERVICE`) fills in, from the service
/// file, what the URL leaves out, before the environment does (libpq's order); then the
/// password file gives the password if none was given (see `passfile`). TLS is libpq's
/// sslmode, sslrootcert, sslcert, sslkey, sslcrl and sslcrldir (and PGSSLMODE,
/// PGSSLROOTCERT, PGSSLCERT, PGSSLKEY, PGSSLCRL, PGSSLCRLDIR; see `tls`).
pub(crate) fn settings_noted(
    url: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Settings, String> {
    let (url, service_name) = take_query(url, "service");
    let mut from_url = tls::Asked::default();
    let (url, mode) = take_query(&url, "sslmode");
    let (url, rootcert) = take_query(&url, "sslrootcert");
    let (url, cert) = take_query(&url, "sslcert");
    let (url, key) = take_query(&url, "sslkey");
    let (url, crl) = take_query(&url, "sslcrl");
    let (url, crldir) = take_query(&url, "sslcrldir");
    for (slot, value) in [
        (&mut from_url.mode, mode),
        (&mut from_url.rootcert, rootcert),
        (&mut from_url.cert, cert),
        (&mut from_url.key, key),
        (&mut from_url.crl, crl),
        (&mut from_url.crldir, crldir),
    ] {
        *slot = value.map(|v| decode(&v)).transpose()?;
    }
    let plain = |name: &str| env(name).filter(|v| !v.is_empty());
    let service = match service_name.map(|n| decode(&n)).transpose()?.or_else(|| plain("PGSERVICE"))
    {
        Some(name) => passfile::service(&plain, &name)?,
        None => HashMap::new(),
    };
    // The service's settings stand before the environment's.
    let env = |name: &str| {
        let key = match name {
            "PGHOST" => "host",
            "PGPORT" => "port",
            "PGUSER" => "user",
            "PGDATABASE" => "dbname",
            "PGPASSWORD" => "password",
            "PGSSLMODE" => "sslmode",
            "PGSSLROOTCERT" => "sslrootcert",
            "PGSSLCERT" => "sslcert",
            "PGSSLKEY" => "sslkey",
            "PGSSLCRL" => "sslcrl",
            "PGSSLCRLDIR" => "sslcrldir",
            "PGCONNECT_TIMEOUT" => "connect_timeout",
            "PGPASSFILE" => "passfile",
            _ => "",
        };
        service.get(key).cloned().filter(|v| !v.is_empty()).or_else(|| plain(name))
    };
    let mode_from = match (&from_url.mode, service.contains_key("sslmode")) {
        (Some(_), _) => "the URL",
        (None, true) => "the service",
        (None, false) => "PGSSLMODE",
    };
    let asked = tls::Asked {
        mode: from_url.mode.or_else(|| env("PGSSLMODE")),
        rootcert: from_url.rootcert.or_else(|| env("PGSSLROOTCERT")),
        cert: from_url.cert.or_else(|| env("PGSSLCERT")),
        key: from_url.key.or_else(|| env("PGSSLKEY")),
        crl: from_url.crl.or_else(|| env("PGSSLCRL")),
        crldir: from_url.crldir.or_else(|| env("PGSSLCRLDIR")),
    };
    let url = url.as_str();
    let port = match env("PGPORT") {
        Some(p) => Some(p.parse::<u16>().map_err(|_| format!("bad PGPORT {p:?}"))?),
        None => None,
    };
    let url = match port {
        Some(p) => with_port(url, p),
        None => url.to_string(),
    };
    let mut config: Config = url.parse().map_err(|e: postgres::Error| cause(&e))?;
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        let hosts = env("PGHOST").unwrap_or_else(|| "localhost".into());
        for h in hosts.split(',') {
            config.host(h);
        }
    }
    if config.get_ports().is_empty()
        && let Some(port) = port
    {
        config.port(port);
    }
    if config.get_user().is_none() {
        let user = env("PGUSER")
            .or_else(|| env("USER"))
            .ok_or("no user: give one in the URL or PGUSER")?;
        config.user(&user);
    }
    if config.get_dbname().is_none() {
        let db = env("PGDATABASE").or_else(|| config.get_user().map(str::to_string));
        if let Some(db) = db {
            config.dbname(&db);
        }
    }
    if config.get_password().is_none()
        && let Some(password) = env("PGPASSWORD")
    {
        config.password(password);
    }
    if config.get_connect_timeout().is_none() {
        let secs = match env("PGCONNECT_TIMEOUT") {
            Some(t) => t.parse::<u64>().map_err(|_| format!("bad connect_timeout {t:?}"))?,
            None => 10,
        };
        config.connect_timeout(Duration::from_secs(secs));
    }
    config.application_name("fixity");
    let mut note = None;
    if config.get_password().is_none() {
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            // A socket directory's path (Unix only).
            #[cfg(unix)]
            Some(Host::Unix(p)) => p.to_string_lossy().into_owned(),
            None => "localhost".into(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let db = config.get_dbname().unwrap_or_default().to_string();
        let user = config.get_user().unwrap_or_default().to_string();
        match passfile::password(&env, &host, port, &db, &user) {
            passfile::Looked::Found(pw) => {
                config.password(pw);
            }
            passfile::Looked::Ignored(why) => note = Some(why),
            passfile::Looked::None => {}
        }
    }
    let sockets_only = !config.get_hosts().is_empty()
        && config.get_hostaddrs().is_empty()
        && config.get_hosts().iter().all(|h| !matches!(h, Host::Tcp(_)));
    let home = env(tls::CERT_HOME).map(std::path::PathBuf::from);
    let tls = tls::resolve(&asked, home.as_deref(), sockets_only).map_err(|e| {
        match e.starts_with("invalid sslmode") {
            true => format!("{mode_from}: {e}"),
            false => e,
        }
    })?;
    config.ssl_mode(tls.wire);
    Ok(Settings { config, tls, passfile_note: note })
}

/// `text` with its `%XX` escapes decoded (a URL's query value).
fn decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(b) = hex else { return Err(format!("bad %-escape in {text:?}")) };
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{text:?} is not UTF-8 once decoded"))
}

/// `url` without its query parameter `key`, and that parameter's value (percent-decoded
/// as far as service names need: none is).
fn take_query(url: &str, key: &str) -> (String, Option<String>) {
    let Some((head, query)) = url.split_once('?') else { return (url.to_string(), None) };
    let mut value = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| match p.split_once('=') {
            Some((k, v)) if k == key => {
                value = Some(v.to_string());
                false
            }
            _ => true,
        })
        .collect();
    let url = if kept.is_empty() { head.to_string() } else { format!("{head}?{}", kept.join("&")) };
    (url, value)
}

/// `url` with `port` given to each of its hosts that has none (the parser would take
/// 5432 for them).
fn with_port(url: &str, port: u16) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else { return url.to_string() };
    let rest = &url[start..];
    let end = start + rest.find(['/', '?']).unwrap_or(rest.len());
    let hosts_at = url[start..end].rfind('@').map_or(start, |at| start + at + 1);
    if hosts_at == end {
        return url.to_string();
    }
    let hosts: Vec<String> = url[hosts_at..end]
        .split(',')
        .map(|h| {
            let named = match h.strip_prefix('[') {
                Some(v6) => v6.split_once(']').is_some_and(|(_, after)| after.starts_with(':')),
                None => h.contains(':'),
            };
            if named || h.is_empty() { h.to_string() } else { format!("{h}:{port}") }
        })
        .collect();
    format!("{}{}{}", &url[..hosts_at], hosts.join(","), &url[end..])
}

/// A client error and its causes, in words.
pub(crate) fn cause(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use postgres::config::SslMode;

    fn with(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> =
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn the_password_is_masked_wherever_it_is() {
        assert_eq!(
            mask("postgresql://fixity:s3cr3t@db:5433/fixity"),
            "postgresql://fixity:***@db:5433/fixity"
        );
        assert_eq!(
            mask("postgres://u:p@ss@h/d?sslmode=require"),
            "postgres://u:***@h/d?sslmode=require"
        );
        assert_eq!(
            mask("postgresql://u@h/d?password=x&sslmode=disable"),
            "postgresql://u@h/d?password=***&sslmode=disable"
        );
        assert_eq!(mask("postgresql://h/d"), "postgresql://h/d");
        assert_eq!(mask("postgresql://"), "postgresql://");
        assert_eq!(mask("postgresql://u:pw@h"), "postgresql://u:***@h");
        assert!(is_url(b"postgres://h") && is_url(b"postgresql://") && !is_url(b"/tmp/c.db"));
    }

    #[test]
    fn the_url_wins_over_the_environment() {
        let env = with(&[
            ("PGHOST", "envhost"),
            ("PGPORT", "6000"),
            ("PGUSER", "envuser"),
            ("PGPASSWORD", "envpw"),
            ("PGDATABASE", "envdb"),
            ("PGSSLMODE", "disable"),
        ]);
        let c = settings("postgresql://u:pw@h:5433/d?sslmode=require", &env).unwrap();
        assert_eq!(c.get_hosts(), &[Host::Tcp("h".into())]);
        assert_eq!(c.get_ports(), &[5433]);
        assert_eq!(c.get_user(), Some("u"));
        assert_eq!(c.get_password(), Some(&b"pw"[..]));
        assert_eq!(c.get_dbname(), Some("d"));
        assert_eq!(c.get_ssl_mode(), SslMode::Require);
    }

    #[cfg(unix)]
    #[test]
    fn the_environment_fills_in_what_the_url_leaves_out() {
        let env = with(&[
            ("PGHOST", "/run/pg"),
            ("PGPORT", "6000"),
            ("PGUSER", "envuser"),
            ("PGPASSWORD", "envpw"),
            ("PGSSLMODE", "disable"),
        ]);
        let c = settings("postgresql://", &env).unwrap();
        assert_eq!(c.get_hosts(), &[Host::Unix("/run/pg".into())]);
        assert_eq!(c.get_ports(), &[6000]);
        assert_eq!(c.get_user(), Some("envuser"));
        assert_eq!(c.get_password(), Some(&b"envpw"[..]));
        assert_eq!(c.get_dbname(), Some("envuser"), "the database defaults to the user's name");
        assert_eq!(c.get_ssl_mode(), SslMode::Disable);
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(10)));
        let c = settings("postgres:///fixity", &with(&[("USER", "login")])).unwrap();
        assert_eq!(c.get_hosts(), &[Host::Tcp("localhost".into())]);
        assert_eq!((c.get_user(), c.get_dbname()), (Some("login"), Some("fixity")));
        assert_eq!(c.get_ssl_mode(), SslMode::Prefer);
        let c = settings("postgresql://u@h1,h2:7/d", &with(&[("PGPORT", "6000")])).unwrap();
        assert_eq!(c.get_ports(), &[6000, 7], "PGPORT for the hosts without a port");
        let c = settings("postgresql://u@[::1]/d", &with(&[("PGPORT", "6000")])).unwrap();
        assert_eq!(c.get_ports(), &[6000]);
        let c = settings("postgresql:///d?host=/tmp/sock&port=7000&user=x", &with(&[])).unwrap();
        assert_eq!(c.get_hosts(), &[Host::Unix("/tmp/sock".into())]);
        assert_eq!(c.get_ports(), &[7000]);
    }

    #[cfg(unix)]
    #[test]
    fn a_service_fills_in_before_the_environment_and_the_password_file_last() {
        let d = tempfile::tempdir().unwrap();
        let svc = d.path().join("svc.conf");
        std::fs::write(
            &svc,
            "[fleet]\nhost=db.lan\nport=6543\ndbname=fixity\nuser=host_a\nconnect_timeout=3\n",
        )
        .unwrap();
        let pass = d.path().join("pgpass");
        std::fs::write(&pass, "db.lan:6543:fixity:host_a:from-file\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o600)).unwrap();
        let (s, p) = (svc.to_string_lossy().into_owned(), pass.to_string_lossy().into_owned());
        let vars = [
            ("PGSERVICEFILE", s.as_str()),
            ("PGPASSFILE", p.as_str()),
            ("PGHOST", "envhost"),
            ("PGUSER", "envuser"),
        ];
        let env = with(&vars);
        let c = settings("postgresql://?service=fleet", &env).unwrap();
        assert_eq!(c.get_hosts(), &[Host::Tcp("db.lan".into())], "the service before PGHOST");
        assert_eq!(
            (c.get_ports(), c.get_user(), c.get_dbname()),
            (&[6543][..], Some("host_a"), Some("fixity"))
        );
        assert_eq!(c.get_password(), Some(&b"from-file"[..]));
        assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(3)));
        // PGSERVICE names it too; the URL still wins over the service.
        let vars =
            [("PGSERVICEFILE", s.as_str()), ("PGPASSFILE", p.as_str()), ("PGSERVICE", "fleet")];
        let env = with(&vars);
        let c = settings("postgresql://other:1/d2", &env).unwrap();
        assert_eq!((c.get_hosts(), c.get_ports()), (&[Host::Tcp("other".into())][..], &[1][..]));
        assert_eq!(c.get_password(), None, "no line for other:1:d2:host_a");
        // A password given is never replaced by the file's.
        let c = settings("postgresql://host_a:given@db.lan:6543/fixity", &env).unwrap();
        assert_eq!(c.get_password(), Some(&b"given"[..]));
        assert!(settings("postgresql://?service=none", &env).unwrap_err().contains("not found"));
        // A password file others can read is not read, and the reason is kept.
        std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o644)).unwrap();
        let s = settings_noted("postgresql://?service=fleet", &env).unwrap();
        assert_eq!(s.config.get_password(), None);
        assert!(s.passfile_note.unwrap().contains("group or world access"));
    }

    #[test]
    fn bad_settings_are_refused_in_words() {
        assert!(settings("postgresql://h/d", &with(&[])).unwrap_err().contains("no user"));
        let e = settings("postgresql://u@h/d", &with(&[("PGSSLMODE", "verify-fool")])).unwrap_err();
        assert!(e.starts_with("PGSSLMODE: invalid sslmode \"verify-fool\""), "{e}");
        // Verifying needs the root file: the URL's (%-escaped), else PGSSLROOTCERT.
        let e = settings(
            "postgresql://u@h/d?sslmode=verify-full&sslrootcert=%2Fno%20such.pem",
            &with(&[]),
        )
        .unwrap_err();
        assert!(e.contains("root certificate file \"/no such.pem\" does not exist"), "{e}");
        let env = with(&[("PGSSLMODE", "verify-ca"), ("PGSSLROOTCERT", "/env.pem")]);
        let e = settings("postgresql://u@h/d", &env).unwrap_err();
        assert!(e.contains("\"/env.pem\" does not exist"), "{e}");
        // The URL's sslmode wins over the environment's.
        let c = settings("postgresql://u@h/d?sslmode=disable", &env).unwrap();
        assert_eq!(c.get_ssl_mode(), SslMode::Disable);
        assert!(
            settings("postgresql://u@h/d", &with(&[("PGPORT", "x")]))
                .unwrap_err()
                .contains("PGPORT")
        );
        assert!(settings("postgresql://u@h/d?sslmode=bogus", &with(&[])).is_err());
    }
}
