//! `fixity serve` in the tests: the real binary started on a free port (it says which on
//! standard error), stopped when dropped; and a small HTTP/1.1 client over a plain TCP
//! stream, enough for the server's pages, forms, API and events.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A running server.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// What it printed on standard error after its address line (read as it comes).
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    /// Starts `fixity serve ARGS --listen 127.0.0.1:0` in `dir`, with extra environment
    /// `env`, and waits for its address.
    pub fn start(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut cmd = super::fixity(dir);
        cmd.arg("serve").args(args);
        if !args.contains(&"--listen") {
            cmd.args(["--listen", "127.0.0.1:0"]);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child =
            cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("start fixity serve");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        let mut addr = None;
        for _ in 0..20 {
            let mut line = String::new();
            if err.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            first.push_str(&line);
            if let Some(rest) = line.split("://").nth(1) {
                addr = Some(rest.split('/').next().unwrap().to_string());
                break;
            }
        }
        let Some(addr) = addr else {
            let _ = child.kill();
            panic!("fixity serve did not start: {first}");
        };
        let log = std::sync::Arc::new(std::sync::Mutex::new(first));
        let l = log.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while err.read_line(&mut line).unwrap_or(0) > 0 {
                l.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Server { child, addr, log }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        request(&self.addr, "GET", path, headers, b"")
    }

    /// A form posted (`application/x-www-form-urlencoded`, fields percent-encoded here).
    pub fn post(&self, path: &str, headers: &[(&str, &str)], form: &[(&str, &str)]) -> Response {
        let body: Vec<String> =
            form.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))).collect();
        let mut h = headers.to_vec();
        h.push(("content-type", "application/x-www-form-urlencoded"));
        request(&self.addr, "POST", path, &h, body.join("&").as_bytes())
    }

    /// Waits until `f` holds of `/api/PATH`'s JSON (at most `secs` seconds).
    pub fn wait_json(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        secs: u64,
        f: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let r = self.get(path, headers);
            let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
            if f(&v) {
                return v;
            }
            assert!(
                Instant::now() < end,
                "timed out waiting on {path}: {} {}",
                r.status,
                String::from_utf8_lossy(&r.body)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for the server to exit; its status code.
    pub fn stop(mut self) -> Option<i32> {
        // SIGTERM: the server ends as a service manager ends it.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return s.code();
            }
            assert!(Instant::now() < end, "fixity serve did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }

    /// The session cookie it sets (`fixity_session=...`), if any.
    pub fn cookie(&self) -> Option<String> {
        let set = self.header("set-cookie")?;
        Some(set.split(';').next()?.to_string()).filter(|c| !c.ends_with('='))
    }

    /// The CSRF token of the first form on the page.
    pub fn csrf(&self) -> Option<String> {
        let text = self.text();
        let at = text.find("name=\"csrf\" value=\"")? + "name=\"csrf\" value=\"".len();
        Some(text[at..].split('"').next()?.to_string())
    }
}

/// One request on a new connection (`Connection: close`), its whole answer.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut s = TcpStream::connect(addr).expect("connect to fixity serve");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the answer");
    parse(&raw)
}

/// Parses a whole HTTP/1.1 answer (a chunked body joined).
pub fn parse(raw: &[u8]) -> Response {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("an HTTP answer") + 4;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end..].to_vec();
    if headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked")) {
        let mut out = Vec::new();
        let mut rest = &body[..];
        while let Some(nl) = rest.windows(2).position(|w| w == b"\r\n") {
            let size =
                usize::from_str_radix(String::from_utf8_lossy(&rest[..nl]).trim(), 16).unwrap_or(0);
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[nl + 2..nl + 2 + size]);
            rest = &rest[nl + 2 + size + 2..];
        }
        body = out;
    }
    Response { status, headers, body }
}

/// Percent-encodes a form field.
pub fn enc(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
