//! The memory of `verify --remote` over a listing of N objects (default 1,000,000),
//! without a server: an object store made here pages N keys (1000 a page, as S3 does)
//! against a catalog of N/2 files of other names, so every object is compared with the
//! records merged in byte order (half extra, half missing). Prints the objects compared
//! and the peak RSS: run with N = 100000 and 1000000 to see it flat.
//!
//!   cargo run --release --example remote_memory -- 1000000

use fixity::algo::Algorithm;
use fixity::catalog::{Found, OpenOptions, StoreSpec, open_store};
use fixity::device::Stamp;
use fixity::digest::Digest;
use fixity::remote::object::{Head, Listed};
use fixity::remote::{ObjectStore, Options, RemoteError, compare};

struct Synthetic {
    n: u64,
    next: u64,
}

impl ObjectStore for Synthetic {
    fn describe(&self) -> String {
        "s3://synthetic/p".into()
    }
    fn next_page(&mut self) -> Result<Option<Vec<Listed>>, RemoteError> {
        if self.next >= self.n {
            return Ok(None);
        }
        let end = (self.next + 1000).min(self.n);
        let page = (self.next..end)
            .map(|i| Listed {
                key: format!("p/d{:06}/o{i:09}", i / 1000),
                size: 1,
                etag: Some("00000000000000000000000000000000".into()),
                checksums: Vec::new(),
            })
            .collect::<Vec<_>>();
        self.next = end;
        // Keys in byte order, as S3 lists them.
        let mut page = page;
        page.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Some(page))
    }
    fn head_many(&self, keys: &[(String, bool)]) -> Vec<Result<Head, RemoteError>> {
        keys.iter().map(|_| Err(RemoteError::Gone)).collect()
    }
    fn download_many(
        &self,
        keys: &[(String, Vec<&'static Algorithm>)],
    ) -> Vec<Result<(u64, Vec<Digest>), RemoteError>> {
        keys.iter().map(|_| Err(RemoteError::Gone)).collect()
    }
    fn requests(&self) -> u64 {
        self.next / 1000
    }
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let dir = std::env::temp_dir().join(format!("fixity-remote-memory-{}", std::process::id()));
    let root = dir.join("t");
    std::fs::create_dir_all(&root).unwrap();
    let md5 = fixity::algo::lookup("md5").unwrap();
    let how = OpenOptions { create: true, algorithm: Some(md5), ..OpenOptions::default() };
    let mut store = open_store(&StoreSpec::Sqlite(root.join(".fixity/catalog.db")), &how).unwrap();
    // A record for every other object's key: the rest of the records have names no object has.
    for i in 0..n {
        let rel = if i % 2 == 0 {
            format!("d{:06}/o{i:09}", i / 1000)
        } else {
            format!("d{:06}/r{i:09}", i / 1000)
        };
        let found = Found {
            digest: md5.digest(b"x"),
            stamp: Stamp::sized(1, 0),
            file_id: None,
            access: None,
        };
        if i % 2 == 0 || i % 4 == 1 {
            store.record_new(rel.as_bytes(), &found, 1).unwrap();
        }
    }
    store.commit().unwrap();
    let before = rss_kib();
    let mut remote = Synthetic { n, next: 0 };
    let mut events = 0u64;
    let started = std::time::Instant::now();
    let sum = compare(store.as_mut(), &root, &mut remote, "p/", &Options::default(), &mut |_| {
        events += 1
    })
    .map_err(|f| f.error)
    .unwrap();
    println!(
        "{n} objects listed, {events} events ({:?}) in {:.1} s; peak RSS {} MiB (after making the catalog: {} MiB)",
        sum.counts,
        started.elapsed().as_secs_f64(),
        rss_kib() / 1024,
        before / 1024
    );
    let _ = std::fs::remove_dir_all(&dir);
}
