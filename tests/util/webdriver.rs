//! A small W3C WebDriver client for the browser tests (tests/browser.rs): chromedriver
//! started on a free port and stopped when dropped, driving one headless Chromium; each
//! command is one HTTP/1.1 request of JSON over a plain TCP stream. (fantoccini would pull
//! a C build and ICU data into the tests; this is the little of the protocol they use.)

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The key an element's id is under in WebDriver's answers (the W3C web element identifier).
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How long a wait on the page lasts before the test fails.
pub const WAIT: Duration = Duration::from_secs(30);

/// A command the browser refused: WebDriver's error code (`no such element`, `stale
/// element reference`, ...) and its message.
#[derive(Debug)]
pub struct Refused {
    pub code: String,
    pub message: String,
}

/// chromedriver and its one session of headless Chromium.
pub struct Browser {
    driver: Child,
    /// chromedriver's `127.0.0.1:PORT`.
    addr: String,
    session: String,
}

impl Browser {
    /// Starts chromedriver on a free port and a headless Chromium session; what is missing
    /// or failed, in words, if it cannot.
    pub fn start() -> Result<Browser, String> {
        let driver = super::which("chromedriver").ok_or("no chromedriver on PATH")?;
        let chromium = ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .find_map(|b| super::which(b))
            .ok_or("no chromium (or chromium-browser, google-chrome) on PATH")?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", driver.display()))?;
        let mut b =
            Browser { driver: child, addr: format!("127.0.0.1:{port}"), session: String::new() };
        b.wait_ready(&driver)?;
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--window-size=1400,1000", "--disable-dev-shm-usage"],
            },
        }}});
        let v = b.http("POST", "/session", Some(caps)).map_err(|e| {
            format!("{} cannot start {}: {}", driver.display(), chromium.display(), e.message)
        })?;
        b.session = v["sessionId"].as_str().ok_or(format!("no sessionId in {v}"))?.to_string();
        Ok(b)
    }

    /// Waits until chromedriver answers `/status` ready.
    fn wait_ready(&mut self, driver: &std::path::Path) -> Result<(), String> {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(s)) = self.driver.try_wait() {
                return Err(format!("{} ended at once ({s})", driver.display()));
            }
            if self.http("GET", "/status", None).is_ok_and(|v| v["ready"] == true) {
                return Ok(());
            }
            if Instant::now() > end {
                return Err(format!("{} was not ready within 20 s", driver.display()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One request to chromedriver: the answer's `value`, or the error it holds.
    fn http(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, Refused> {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let broken = |e: std::io::Error| Refused {
            code: "io".into(),
            message: format!("chromedriver: {e}"),
        };
        let mut s = TcpStream::connect(&self.addr).map_err(broken)?;
        s.set_read_timeout(Some(Duration::from_secs(90))).map_err(broken)?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        s.write_all(head.as_bytes()).and_then(|_| s.write_all(body.as_bytes())).map_err(broken)?;
        // chromedriver says `Connection: close` and keeps the connection open: the body
        // is read by its length.
        let mut r = BufReader::new(s);
        let (mut status, mut length, mut line) = (0, 0, String::new());
        while r.read_line(&mut line).map_err(broken)? > 0 && line != "\r\n" {
            if let Some(rest) = line.strip_prefix("HTTP/1.1 ") {
                status = rest.split(' ').next().and_then(|c| c.parse().ok()).unwrap_or(0);
            } else if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
            line.clear();
        }
        let mut body = vec![0; length];
        r.read_exact(&mut body).map_err(broken)?;
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        let value = v.get("value").cloned().unwrap_or(Value::Null);
        match value.get("error").and_then(Value::as_str) {
            Some(code) if status >= 400 => Err(Refused {
                code: code.to_string(),
                message: value["message"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string(),
            }),
            _ => Ok(value),
        }
    }

    /// A command of the session (`path` after `/session/ID`).
    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, Refused> {
        self.http(method, &format!("/session/{}{path}", self.session), body)
    }

    /// A command that must succeed.
    fn must(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.command(method, path, body)
            .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e:?}"))
    }

    /// Opens `url` (and waits for it to load).
    pub fn goto(&self, url: &str) {
        self.must("POST", "/url", Some(json!({ "url": url })));
    }

    /// The current page's URL.
    pub fn url(&self) -> String {
        self.must("GET", "/url", None).as_str().unwrap_or_default().to_string()
    }

    /// The current page's HTML as the browser has it now.
    pub fn source(&self) -> String {
        self.must("GET", "/source", None).as_str().unwrap_or_default().to_string()
    }

    /// Runs `script` (a function body; a promise it returns is waited for) with `args`;
    /// what it returns.
    pub fn execute(&self, script: &str, args: &[Value]) -> Value {
        self.must("POST", "/execute/sync", Some(json!({ "script": script, "args": args })))
    }

    /// The value of the cookie `name` (HttpOnly ones too), if the page has it.
    pub fn cookie(&self, name: &str) -> Option<String> {
        let v = self.command("GET", &format!("/cookie/{name}"), None).ok()?;
        v["value"].as_str().map(str::to_string)
    }

    /// The viewport as a PNG.
    pub fn screenshot(&self) -> Vec<u8> {
        use base64::Engine as _;
        let v = self.must("GET", "/screenshot", None);
        let text = v.as_str().expect("a screenshot is base64 text");
        base64::engine::general_purpose::STANDARD.decode(text).expect("a screenshot is base64")
    }

    /// The ids of the elements `css` selects, in document order.
    fn elements(&self, css: &str) -> Vec<String> {
        let v =
            self.must("POST", "/elements", Some(json!({ "using": "css selector", "value": css })));
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e[ELEMENT].as_str().map(str::to_string))
            .collect()
    }

    /// How many elements `css` selects.
    pub fn count(&self, css: &str) -> usize {
        self.elements(css).len()
    }

    /// The visible text of every element `css` selects (an element the page's script
    /// replaced meanwhile is left out).
    pub fn texts(&self, css: &str) -> Vec<String> {
        self.elements(css)
            .iter()
            .filter_map(|e| self.command("GET", &format!("/element/{e}/text"), None).ok())
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// The visible text of the first element `css` selects, if there is one.
    pub fn text(&self, css: &str) -> Option<String> {
        self.texts(css).into_iter().next()
    }

    /// Waits until `f` gives something (asked again every 100 ms), and returns it; fails
    /// the test after [`WAIT`], saying what it waited for and where the browser was.
    pub fn wait<T>(&self, what: &str, mut f: impl FnMut(&Browser) -> Option<T>) -> T {
        let end = Instant::now() + WAIT;
        loop {
            if let Some(t) = f(self) {
                return t;
            }
            if Instant::now() > end {
                let shown =
                    self.execute("return document.body ? document.body.innerText : ''", &[]);
                panic!(
                    "waited {} s for {what}; the browser is at {} showing:\n{}",
                    WAIT.as_secs(),
                    self.url(),
                    shown.as_str().unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Does `act` on the first element `css` selects, once there is one; again if the
    /// page's script replaced the element meanwhile (a stale reference).
    fn on_element(&self, css: &str, what: &str, act: impl Fn(&str) -> Result<Value, Refused>) {
        self.wait(&format!("{what} {css}"), |b| {
            let e = b.elements(css).into_iter().next()?;
            match act(&e) {
                Ok(_) => Some(()),
                Err(r) if r.code == "stale element reference" => None,
                Err(r) => panic!("{what} {css}: {r:?}"),
            }
        })
    }

    /// Clicks the first element `css` selects (a link or a form's button: the browser
    /// follows it and loads the next page).
    pub fn click(&self, css: &str) {
        self.on_element(css, "click", |e| {
            self.command("POST", &format!("/element/{e}/click"), Some(json!({})))
        });
    }

    /// Types `text` into the first input `css` selects.
    pub fn type_into(&self, css: &str, text: &str) {
        self.on_element(css, "type into", |e| {
            self.command("POST", &format!("/element/{e}/value"), Some(json!({ "text": text })))
        });
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ending the session closes Chromium; then chromedriver goes.
        if !self.session.is_empty() {
            let _ = self.command("DELETE", "", None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The PNG signature every screenshot starts with.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Where screenshots are kept: `$FIXITY_ARTIFACTS`, else `target/serve-screenshots/`.
pub fn screenshot_dir() -> PathBuf {
    match std::env::var_os("FIXITY_ARTIFACTS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/serve-screenshots"),
    }
}
