//! `fixity serve`: a live web view of this host's trees or a PostgreSQL fleet, with the
//! CLI's actions one click away (docs/serve.md). The pieces: `state` keeps every tree's
//! view in memory (a thread reads the catalogs that changed), `data` is each page's data
//! (the API's JSON), `pages` and `html` render it, `actions` runs the CLI as a child for
//! each action, `auth`, `session` and `users` decide who may look and act, `http` routes.
//! Here: the command's arguments turned into a server, and its accept loop (plain HTTP
//! or TLS by rustls, bounded connections, slow clients timed out).

mod actions;
mod auth;
mod data;
mod html;
mod http;
mod pages;
mod session;
mod state;
mod users;

use crate::cli::ServeArgs;
use crate::cmd::Status;
use anyhow::{Context, bail};
use fixity::pathtext::{path_bytes, quote_env};
use state::{Looker, Source, Tree};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Connections served at once; more wait in the kernel's backlog.
const MOST_CONNECTIONS: usize = 512;

pub fn run(args: ServeArgs) -> anyhow::Result<Status> {
    if let (Some(name), Some(file)) = (&args.add_user, &args.users) {
        users::add_user(file, name, args.role, args.password_env.as_deref())?;
        return Ok(Status::Ok);
    }
    let proxy =
        args.proxy_header.clone().map(|h| (h.to_ascii_lowercase(), args.trusted_proxy.clone()));
    let auth = auth::Auth::new(args.users.clone(), proxy)?;
    if !args.listen.ip().is_loopback() && !auth.required() {
        bail!(
            "{} is not a loopback address: give --users FILE (fixity serve --add-user NAME --users FILE) \
             or --proxy-header with --trusted-proxy; without them the server listens on loopback only",
            args.listen
        );
    }
    if args.users.is_some() && auth.users().list.is_empty() {
        bail!(
            "the users file {} has no user: add one with fixity serve --add-user NAME --users FILE",
            quote_env(path_bytes(
                args.users.as_deref().unwrap_or_else(|| std::path::Path::new(""))
            ))
        );
    }
    let window_ms =
        crate::cmd::monitor::age("--max-age", args.max_age.as_deref())?.unwrap_or(7 * 86_400_000);
    // WARNING past the window, CRITICAL past 30 days or the window, whichever is later.
    let defaults = fixity::monitor::nagios::Thresholds::default();
    let thresholds = fixity::monitor::nagios::Thresholds {
        warning_age_ms: Some(window_ms),
        critical_age_ms: defaults.critical_age_ms.map(|c| c.max(window_ms)),
        ..defaults
    };
    if !(args.refresh.is_finite() && args.refresh > 0.0) {
        bail!("--refresh takes a number of seconds above 0 (e.g. 2, 0.5)");
    }
    let source = source(&args)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some(tls_config(c, k)?),
        _ => None,
    };
    let exe =
        std::env::current_exe().context("cannot find this program's own path (to run actions)")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .context("cannot start the server's threads")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let looker = Looker {
            source,
            thresholds,
            every: Duration::from_secs_f64(args.refresh.clamp(0.2, 3600.0)),
            runs_kept: 100,
            pending: Default::default(),
        };
        let shared = tokio::task::spawn_blocking(move || looker.start()).await?;
        let app = Arc::new(http::App {
            shared,
            actions: Arc::new(actions::Actions::new(exe)),
            auth,
            read_only: args.read_only,
            tls: tls.is_some(),
            window_ms,
        });
        let scheme = if tls.is_some() { "https" } else { "http" };
        let local = listener.local_addr()?;
        crate::ui::error(&format!(
            "serving {scheme}://{local}/ ({} tree{}{}{})",
            app.shared.get().views.len(),
            if app.shared.get().views.len() == 1 { "" } else { "s" },
            if app.auth.required() { ", logins required" } else { ", no logins: loopback only" },
            if app.read_only { ", read-only" } else { "" }
        ));
        serve(listener, http::router(app), tls).await
    })?;
    Ok(Status::Ok)
}

/// The trees to serve: a PostgreSQL catalog without trees is the fleet; else each TREE
/// (the current directory by default) with its catalog, found as `status` finds it.
fn source(args: &ServeArgs) -> anyhow::Result<Source> {
    let url = args.catalog.as_deref().and_then(crate::cmd::pg_url);
    if let (Some(url), true) = (url, args.trees.is_empty()) {
        return Ok(Source::Fleet { url: url.to_string(), host: args.host.clone() });
    }
    if args.host.is_some() {
        bail!(
            "--host picks a host's trees in a PostgreSQL fleet: give --catalog postgresql://... and no TREE"
        );
    }
    let trees = if args.trees.is_empty() { vec![PathBuf::from(".")] } else { args.trees.clone() };
    if args.catalog.is_some() && url.is_none() && trees.len() > 1 {
        bail!("--catalog FILE is one tree's catalog: name one TREE with it");
    }
    let host = fixity::catalog::postgres::this_host();
    let mut list = Vec::new();
    for (id, t) in trees.iter().enumerate() {
        let found = crate::cmd::tree::locate(t, args.catalog.as_deref(), None, args.find, false)?;
        let spec = crate::cmd::catalog_spec(Some(&found.catalog), &found.root, None);
        let root = fixity::sys::canonicalize(&found.root).unwrap_or(found.root.clone());
        list.push(Arc::new(Tree {
            id,
            host: host.clone(),
            root: path_bytes(&root).to_vec(),
            spec,
            catalog: found.catalog.clone(),
            local: true,
        }));
    }
    Ok(Source::Local(list))
}

/// rustls' server settings from a PEM certificate chain and key.
fn tls_config(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(cert).and_then(|i| i.collect::<Result<_, _>>()).map_err(
            |e| anyhow::anyhow!("cannot read the certificate {}: {e}", quote_env(path_bytes(cert))),
        )?;
    if chain.is_empty() {
        bail!("{} holds no certificate", quote_env(path_bytes(cert)));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| anyhow::anyhow!("cannot read the key {}: {e}", quote_env(path_bytes(key))))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the certificate and key do not go together")?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Accepts connections until Ctrl-C or SIGTERM; each served on a task of its own.
async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> anyhow::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt as _;
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let slots = Arc::new(tokio::sync::Semaphore::new(MOST_CONNECTIONS));
    let stop = shutdown();
    tokio::pin!(stop);
    loop {
        let permit = tokio::select! {
            _ = &mut stop => return Ok(()),
            p = slots.clone().acquire_owned() => p?,
        };
        let (stream, peer) = tokio::select! {
            _ = &mut stop => return Ok(()),
            a = listener.accept() => match a {
                Ok(a) => a,
                // Out of descriptors and the like: wait a moment, go on.
                Err(_) => { tokio::time::sleep(Duration::from_millis(50)).await; continue }
            },
        };
        let _ = stream.set_nodelay(true);
        let service =
            router.clone().map_request(move |mut r: axum::http::Request<hyper::body::Incoming>| {
                r.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                r
            });
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let hyper_service = hyper_util::service::TowerToHyperService::new(service);
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(Duration::from_secs(15));
            match acceptor {
                Some(a) => {
                    let Ok(Ok(tls)) =
                        tokio::time::timeout(Duration::from_secs(15), a.accept(stream)).await
                    else {
                        return;
                    };
                    let _ = builder.serve_connection(TokioIo::new(tls), hyper_service).await;
                }
                None => {
                    let _ = builder.serve_connection(TokioIo::new(stream), hyper_service).await;
                }
            }
        });
    }
}

/// Resolves at Ctrl-C or (Unix) SIGTERM.
async fn shutdown() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
