//! The routes: pages (HTML), the same data as JSON under `/api/`, `/metrics`, server-sent
//! events, login and logout, and the one route that acts.

use super::actions::{Actions, Kind, Request};
use super::auth::{self, Auth, Denied};
use super::data;
use super::html::{self, query_bytes};
use super::pages::{self, Can};
use super::session::{self, Who};
use super::state::Shared;
use axum::extract::{ConnectInfo, Form, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// What every handler shares.
pub struct App {
    pub shared: Arc<Shared>,
    pub actions: Arc<Actions>,
    pub auth: Auth,
    pub read_only: bool,
    /// HTTPS: cookies are `Secure`.
    pub tls: bool,
    /// The coverage window (ms).
    pub window_ms: i64,
}

type St = State<Arc<App>>;
type Peer = ConnectInfo<SocketAddr>;

/// The router.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(fleet_page))
        .route("/tree/{id}", get(tree_page))
        .route("/tree/{id}/file", get(file_page))
        .route("/tree/{id}/action", post(act))
        .route("/actions", get(actions_page))
        .route("/actions/{n}", get(action_page))
        .route("/api/fleet", get(fleet_api))
        .route("/api/tree/{id}", get(tree_api))
        .route("/api/tree/{id}/file", get(file_api))
        .route("/api/actions", get(actions_api))
        .route("/api/actions/{n}", get(action_api))
        .route("/metrics", get(metrics))
        .route("/events", get(events))
        .route("/login", get(login_page).post(login))
        .route("/logout", post(logout))
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/assets/fixity.css",
            get(|| async { asset("text/css", include_str!("assets/fixity.css")) }),
        )
        .route(
            "/assets/fixity.js",
            get(|| async { asset("text/javascript", include_str!("assets/fixity.js")) }),
        )
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .with_state(app)
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "max-age=3600")], body).into_response()
}

/// Headers every page carries: no framing, no script or style from elsewhere, no
/// caching of data.
fn secure(mut r: Response) -> Response {
    let h = r.headers_mut();
    let set = |h: &mut HeaderMap, k: &'static str, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(
        h,
        "content-security-policy",
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    );
    set(h, "x-content-type-options", "nosniff");
    set(h, "x-frame-options", "DENY");
    set(h, "referrer-policy", "same-origin");
    if !h.contains_key(header::CACHE_CONTROL) {
        set(h, "cache-control", "no-store");
    }
    r
}

fn page(app: &App, who: Option<&Who>, title: &str, body: &str) -> Response {
    secure(Html(html::page(title, who, app.read_only, body)).into_response())
}

fn problem(app: &App, who: Option<&Who>, code: StatusCode, text: &str) -> Response {
    let mut r = page(app, who, "Not done", &pages::problem(text));
    *r.status_mut() = code;
    r
}

/// Who asks, or the answer that turns them away (a page: the login page; the API: 401).
async fn who(
    app: &App,
    headers: &HeaderMap,
    peer: SocketAddr,
    api: bool,
    back: &str,
) -> Result<Who, Response> {
    match app.auth.who(headers, peer, app.read_only).await {
        Ok(w) => Ok(w),
        Err(Denied::Host) => Err(secure(
            (StatusCode::MISDIRECTED_REQUEST, "this server answers loopback names only (localhost, 127.0.0.1, [::1]) when it has no users\n")
                .into_response(),
        )),
        Err(Denied::Login) if api || app.auth.users_file.is_none() => Err(secure(
            (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Basic realm=\"fixity\", charset=\"UTF-8\"")], "log in first\n")
                .into_response(),
        )),
        Err(Denied::Login) => Err(Redirect::to(&format!("/login?next={}", html::enc(back.as_bytes()))).into_response()),
    }
}

async fn fleet_page(State(app): St, ConnectInfo(peer): Peer, headers: HeaderMap) -> Response {
    let w = match who(&app, &headers, peer, false, "/").await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let f = data::fleet(&app.shared.get(), app.window_ms);
    page(&app, Some(&w), "Fleet", &pages::fleet(&f, fixity::clock::now_ms()))
}

async fn fleet_api(State(app): St, ConnectInfo(peer): Peer, headers: HeaderMap) -> Response {
    if let Err(r) = who(&app, &headers, peer, true, "").await {
        return r;
    }
    secure(Json(data::fleet(&app.shared.get(), app.window_ms)).into_response())
}

async fn tree_page(
    State(app): St,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(id): Path<usize>,
    RawQuery(q): RawQuery,
) -> Response {
    let back = format!("/tree/{id}");
    let w = match who(&app, &headers, peer, false, &back).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let after = query_bytes(q.as_deref(), "after");
    let window = app.window_ms;
    let (_, t) =
        match page_read(&app, &w, id, move |v| data::tree(v, window, after.as_deref())).await {
            Ok(got) => got,
            Err(r) => return r,
        };
    let can = can(&app, &w);
    let body = pages::tree(&t, &can, fixity::clock::now_ms());
    page(&app, Some(&w), &t.row.tree.text, &body)
}

/// What the user's pages offer: actions for an operator of a server that acts.
fn can<'a>(app: &App, w: &'a Who) -> Can<'a> {
    Can { who: w, act: !app.read_only && w.role == crate::cli::Role::Operator }
}

/// What a page about tree `id` shows: its view and `f` of it, run where a catalog may be
/// read; or the page that says there is no such tree.
async fn page_read<T: Send + 'static>(
    app: &App,
    w: &Who,
    id: usize,
    f: impl FnOnce(&super::state::View) -> T + Send + 'static,
) -> Result<(Arc<super::state::View>, T), Response> {
    let Some(v) = app.shared.view(id) else {
        return Err(problem(app, Some(w), StatusCode::NOT_FOUND, "no such tree"));
    };
    let v2 = v.clone();
    match tokio::task::spawn_blocking(move || f(&v2)).await {
        Ok(t) => Ok((v, t)),
        Err(e) => Err(problem(app, Some(w), StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())),
    }
}

async fn tree_api(
    State(app): St,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(id): Path<usize>,
    RawQuery(q): RawQuery,
) -> Response {
    let after = query_bytes(q.as_deref(), "after");
    let window = app.window_ms;
    api_read(&app, &headers, peer, id, move |v| data::tree(&v, window, after.as_deref())).await
}

/// An API answer about tree `id`: `f` of its view, run where a catalog may be read, as
/// JSON; 401 to whom may not look, 404 for no such tree.
async fn api_read<T: serde::Serialize + Send + 'static>(
    app: &App,
    headers: &HeaderMap,
    peer: SocketAddr,
    id: usize,
    f: impl FnOnce(Arc<super::state::View>) -> T + Send + 'static,
) -> Response {
    if let Err(r) = who(app, headers, peer, true, "").await {
        return r;
    }
    let Some(v) = app.shared.view(id) else {
        return (StatusCode::NOT_FOUND, "no such tree\n").into_response();
    };
    match tokio::task::spawn_blocking(move || f(v)).await {
        Ok(t) => secure(Json(t).into_response()),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

async fn file_page(
    State(app): St,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(id): Path<usize>,
    RawQuery(q): RawQuery,
) -> Response {
    let raw = query_bytes(q.as_deref(), "p").unwrap_or_default();
    let back = format!("/tree/{id}/file?p={}", html::enc(&raw));
    let w = match who(&app, &headers, peer, false, &back).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let p = raw.clone();
    let (v, f) = match page_read(&app, &w, id, move |v| data::file(&v.tree, &p)).await {
        Ok(got) => got,
        Err(r) => return r,
    };
    let row = data::row(&v, app.window_ms);
    let can = can(&app, &w);
    let body = pages::file(&f, &row, &can, &app.actions.on(id, &raw), &raw);
    page(&app, Some(&w), &f.path.text, &body)
}

async fn file_api(
    State(app): St,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(id): Path<usize>,
    RawQuery(q): RawQuery,
) -> Response {
    let raw = query_bytes(q.as_deref(), "p").unwrap_or_default();
    api_read(&app, &headers, peer, id, move |v| data::file(&v.tree, &raw)).await
}

/// Starts an action: the form's `kind`, `p` (the file, percent-encoded; none: the whole
/// tree), `from` (repair's replica) and `csrf`.
async fn act(
    State(app): St,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(id): Path<usize>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/json"));
    let w = match who(&app, &headers, peer, json, &format!("/tree/{id}")).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let refuse = |code: StatusCode, text: &str| {
        if json {
            secure((code, Json(serde_json::json!({ "error": text }))).into_response())
        } else {
            problem(&app, Some(&w), code, text)
        }
    };
    if let Err(why) =
        auth::may_act(&w, app.read_only, form.get("csrf").map(String::as_str), &headers)
    {
        return refuse(StatusCode::FORBIDDEN, why);
    }
    let Some(kind) = form.get("kind").and_then(|k| Kind::parse(k)) else {
        return refuse(StatusCode::BAD_REQUEST, "kind is one of verify, repair, accept, forget");
    };
    let Some(v) = app.shared.view(id) else { return refuse(StatusCode::NOT_FOUND, "no such tree") };
    let path = form.get("p").map(|p| html::dec(p)).unwrap_or_default();
    let req =
        Request { kind, path: &path, from: form.get("from").map(String::as_str), by: w.actor() };
    let shared = app.shared.clone();
    match app.actions.start(&v.tree, req, move || {
        let _ = shared.poke.try_send(());
    }) {
        Ok(n) if json => {
            secure((StatusCode::ACCEPTED, Json(serde_json::json!({ "action": n }))).into_response())
        }
        Ok(n) => Redirect::to(&format!("/actions/{n}")).into_response(),
        Err(e) => refuse(StatusCode::CONFLICT, &e.to_string()),
    }
}

async fn actions_page(State(app): St, ConnectInfo(peer): Peer, headers: HeaderMap) -> Response {
    let w = match who(&app, &headers, peer, false, "/actions").await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let list = app.actions.list();
    let body = format!(
        "<h1>Actions</h1>{}",
        if list.is_empty() {
            "<p>No action since the server started.</p>".into()
        } else {
            pages::action_table(&list.iter().collect::<Vec<_>>())
        }
    );
    page(&app, Some(&w), "Actions", &body)
}

async fn action_page(
    State(app): St,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(n): Path<u64>,
) -> Response {
    let w = match who(&app, &headers, peer, false, &format!("/actions/{n}")).await {
        Ok(w) => w,
        Err(r) => return r,
    };
    let Some(a) = app.actions.get(n) else {
        return problem(&app, Some(&w), StatusCode::NOT_FOUND, "no such action");
    };
    let row = app.shared.view(a.tree).map(|v| data::row(&v, app.window_ms));
    page(&app, Some(&w), &format!("Action {n}"), &pages::action(&a, row.as_ref()))
}

async fn actions_api(State(app): St, ConnectInfo(peer): Peer, headers: HeaderMap) -> Response {
    if let Err(r) = who(&app, &headers, peer, true, "").await {
        return r;
    }
    secure(Json(app.actions.list()).into_response())
}

async fn action_api(
    State(app): St,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(n): Path<u64>,
) -> Response {
    if let Err(r) = who(&app, &headers, peer, true, "").await {
        return r;
    }
    match app.actions.get(n) {
        Some(a) => secure(Json(a).into_response()),
        None => (StatusCode::NOT_FOUND, "no such action\n").into_response(),
    }
}

/// Prometheus metrics of every tree, from the snapshot.
async fn metrics(State(app): St, ConnectInfo(peer): Peer, headers: HeaderMap) -> Response {
    if let Err(r) = who(&app, &headers, peer, true, "").await {
        return r;
    }
    let snap = app.shared.get();
    let now = fixity::clock::now_ms();
    let texts: Vec<Vec<u8>> = snap
        .views
        .iter()
        .filter_map(|v| {
            let s = v.summary.as_ref()?;
            let mut out = Vec::new();
            let input = fixity::monitor::prometheus::Input {
                tree: &v.tree.root,
                algorithm: &v.algorithm,
                summary: s,
                now_ms: now,
                previous: None,
            };
            fixity::monitor::prometheus::write(&mut out, &input).ok()?;
            Some(out)
        })
        .collect();
    let mut body = fixity::monitor::prometheus::merge(&texts);
    let unread = snap.views.iter().filter(|v| v.trouble.is_some()).count();
    body.extend_from_slice(
        format!("# HELP fixity_serve_catalogs_unreadable Trees whose catalog the server could not read at its last look.\n# TYPE fixity_serve_catalogs_unreadable gauge\nfixity_serve_catalogs_unreadable {unread}\n").as_bytes(),
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], body).into_response()
}

/// Server-sent events: `change` (the snapshot's number) when anything shown changed,
/// `action` (its number) when an action's state or output changed.
async fn events(State(app): St, ConnectInfo(peer): Peer, headers: HeaderMap) -> Response {
    if let Err(mut r) = who(&app, &headers, peer, true, "").await {
        // A page's EventSource gets no Basic challenge: the browser would put its own
        // login prompt over the page (the login page's own form among them).
        r.headers_mut().remove(header::WWW_AUTHENTICATE);
        return r;
    }
    let mut rx = app.shared.changed.subscribe();
    let actions = app.actions.clone();
    let stream = async_stream(move |tx| async move {
        let mut seen: Vec<(u64, Option<i64>, usize)> = Vec::new();
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(500));
        loop {
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() { break }
                    let v = *rx.borrow_and_update();
                    if tx.send(Event::default().event("change").data(v.to_string())).await.is_err() { break }
                }
                _ = tick.tick() => {
                    let now = actions.states();
                    for a in now.iter().filter(|a| !seen.contains(a)) {
                        if tx.send(Event::default().event("action").data(a.0.to_string())).await.is_err() { return }
                    }
                    seen = now;
                }
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

/// A stream fed by a task through a bounded channel.
fn async_stream<F, Fut>(
    f: F,
) -> impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Event>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(f(tx));
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (Ok(e), rx)) })
}

async fn login_page(State(app): St, RawQuery(q): RawQuery) -> Response {
    let next = query_bytes(q.as_deref(), "next")
        .map(|n| String::from_utf8_lossy(&n).into_owned())
        .unwrap_or_else(|| "/".into());
    page(&app, None, "Log in", &pages::login(None, &next))
}

async fn login(
    State(app): St,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let next = form
        .get("next")
        .filter(|n| n.starts_with('/') && !n.starts_with("//"))
        .cloned()
        .unwrap_or_else(|| "/".into());
    if auth::same_origin(&headers).is_err() || app.auth.users_file.is_none() {
        return problem(
            &app,
            None,
            StatusCode::FORBIDDEN,
            "logins are taken from this server's own page, on a server with --users",
        );
    }
    let (user, password) = (
        form.get("user").cloned().unwrap_or_default(),
        form.get("password").cloned().unwrap_or_default(),
    );
    match app.auth.login(&user, &password).await {
        Some(role) => {
            let id = app.auth.sessions.open(&user, role);
            let cookie = format!(
                "{}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
                session::COOKIE,
                session::IDLE.as_secs(),
                if app.tls { "; Secure" } else { "" }
            );
            let mut r = Redirect::to(&next).into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        None => {
            let mut r =
                page(&app, None, "Log in", &pages::login(Some("wrong user or password"), &next));
            *r.status_mut() = StatusCode::UNAUTHORIZED;
            r
        }
    }
}

async fn logout(
    State(app): St,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    if let Ok(w) = app.auth.who(&headers, peer, app.read_only).await
        && form.get("csrf").is_some_and(|t| session::same(t, &w.csrf))
    {
        let cookies = headers.get(header::COOKIE).and_then(|v| v.to_str().ok()).unwrap_or("");
        if let Some(id) = session::cookie(cookies, session::COOKIE) {
            app.auth.sessions.close(id);
        }
    }
    let mut r = Redirect::to("/login").into_response();
    r.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("fixity_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    r
}
