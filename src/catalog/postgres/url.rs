//! The catalog's URL: what `--catalog postgresql://...` means, with libpq's environment
//! for what the URL leaves out (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD,
//! PGSSLMODE), and the URL as messages show it (the password masked).

use postgres::Config;
use postgres::config::SslMode;
use std::time::Duration;

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
/// (disable, prefer or require; else prefer). A connection gives up after 10 s unless
/// the URL says otherwise (`connect_timeout`). An error is a message without the URL.
pub(crate) fn settings(url: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, String> {
    let env = |name: &str| env(name).filter(|v| !v.is_empty());
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
    if !query_names(&url, "sslmode")
        && let Some(mode) = env("PGSSLMODE")
    {
        config.ssl_mode(match mode.as_str() {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            _ => return Err(format!("PGSSLMODE {mode:?} is not disable, prefer or require")),
        });
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    config.application_name("fixity");
    Ok(config)
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

/// Whether the URL's query names the parameter `key`.
fn query_names(url: &str, key: &str) -> bool {
    url.split_once('?').is_some_and(|(_, q)| q.split('&').any(|p| p.split('=').next() == Some(key)))
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
    use postgres::config::Host;
    use std::collections::HashMap;

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

    #[test]
    fn bad_settings_are_refused_in_words() {
        assert!(settings("postgresql://h/d", &with(&[])).unwrap_err().contains("no user"));
        let e = settings("postgresql://u@h/d", &with(&[("PGSSLMODE", "verify-full")])).unwrap_err();
        assert!(e.contains("PGSSLMODE"), "{e}");
        assert!(
            settings("postgresql://u@h/d", &with(&[("PGPORT", "x")]))
                .unwrap_err()
                .contains("PGPORT")
        );
        assert!(settings("postgresql://u@h/d?sslmode=bogus", &with(&[])).is_err());
    }
}
