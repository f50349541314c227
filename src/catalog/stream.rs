//! A run's cursor over a catalog's records ([`Records`]) for the catalogs that keep
//! them in path order (SQLite, PostgreSQL): a thread of its own reads pages ahead
//! (bounded), so reading rows overlaps with the walk. A read error ends the stream and
//! is kept (see [`Records::error`]).

use super::store::{Pages, Record, Records, StoreError};
use std::collections::VecDeque;
use std::path::Path;

/// Records in path order, read ahead by a thread.
pub(crate) struct Stream {
    pages: crossbeam_channel::Receiver<Result<Vec<Record>, StoreError>>,
    page: VecDeque<Record>,
    error: Option<StoreError>,
}

impl Stream {
    /// Streams the records `page` gives, from the path `from` on (from the start with
    /// `None`): `page(after, inclusive)` is up to a page of records after the path given
    /// (or from it, when `inclusive`; from the start with `None`), in path order; an
    /// empty page is the end.
    pub(crate) fn spawn<F>(from: Option<&[u8]>, mut page: F) -> Stream
    where
        F: FnMut(Option<&[u8]>, bool) -> Result<Vec<Record>, StoreError> + Send + 'static,
    {
        let from = from.map(<[u8]>::to_vec);
        let mut first = true;
        let pages = read_ahead(4, move |after: Option<&Record>| {
            // The first page starts at `from` itself; the others after the last record.
            let inclusive = std::mem::take(&mut first) && from.is_some();
            page(after.map_or(from.as_deref(), |r| Some(r.path.as_slice())), inclusive)
        });
        Stream { pages, page: VecDeque::new(), error: None }
    }

    fn peek(&mut self) -> Option<&Record> {
        if self.page.is_empty() && self.error.is_none() {
            match self.pages.recv() {
                Ok(Ok(records)) => self.page.extend(records),
                Ok(Err(e)) => self.error = Some(e),
                Err(_) => {}
            }
        }
        self.page.front()
    }

    /// The next record if its path is `rel`.
    fn take(&mut self, rel: &[u8]) -> Option<Record> {
        match self.peek() {
            Some(r) if r.path == rel => self.page.pop_front(),
            _ => None,
        }
    }
}

impl Records for Stream {
    fn next_before(&mut self, rel: Option<&[u8]>) -> Option<Record> {
        let r = self.peek()?;
        if rel.is_some_and(|rel| r.path.as_slice() >= rel) {
            return None;
        }
        self.page.pop_front()
    }

    fn file(&mut self, rel: &[u8], _full: &Path) -> Result<Option<Record>, String> {
        Ok(self.take(rel))
    }

    fn other(&mut self, rel: &[u8]) -> Option<Record> {
        self.take(rel)
    }

    fn error(&mut self) -> Option<StoreError> {
        self.error.take()
    }

    fn none(&mut self) -> bool {
        self.peek().is_none() && self.error.is_none()
    }
}

/// Pages read ahead by a thread of their own, at most `depth` waiting: `page(after)` is
/// the page after the last record of the one before (`None` for the first). The end (an
/// empty page, or an error) is sent too; then the thread ends, as it does when the
/// receiver is dropped (the run stopped reading).
fn read_ahead<F>(
    depth: usize,
    mut page: F,
) -> crossbeam_channel::Receiver<Result<Vec<Record>, StoreError>>
where
    F: FnMut(Option<&Record>) -> Result<Vec<Record>, StoreError> + Send + 'static,
{
    let (tx, pages) = crossbeam_channel::bounded(depth);
    std::thread::spawn(move || {
        let mut after: Option<Record> = None;
        loop {
            let got = page(after.as_ref());
            let last = got.as_ref().ok().and_then(|p| p.last().cloned());
            if tx.send(got).is_err() || last.is_none() {
                return;
            }
            after = last;
        }
    });
    pages
}

/// Rows in a page of stale records read ahead.
const STALE_PAGE: usize = 2048;

/// A verification pass's stale records, least recently verified first, read ahead (two
/// pages at most) by a thread of their own on a connection of their own: the run reads
/// files while the next page comes, and the catalog's index search is off its thread.
pub(crate) struct StaleStream {
    pages: crossbeam_channel::Receiver<Result<Vec<Record>, StoreError>>,
    page: VecDeque<Record>,
}

impl StaleStream {
    /// Streams the pages `page` gives: `page(after, limit)` is up to `limit` records
    /// after the record given (from the start with `None`) in the pass's order; an
    /// empty page is the end.
    pub(crate) fn spawn<F>(mut page: F) -> StaleStream
    where
        F: FnMut(Option<&Record>, usize) -> Result<Vec<Record>, StoreError> + Send + 'static,
    {
        let pages = read_ahead(2, move |after: Option<&Record>| page(after, STALE_PAGE));
        StaleStream { pages, page: VecDeque::new() }
    }
}

impl Pages for StaleStream {
    fn next_page(&mut self, limit: usize) -> Result<Vec<Record>, StoreError> {
        if self.page.is_empty() {
            match self.pages.recv() {
                Ok(page) => self.page.extend(page?),
                Err(_) => return Ok(Vec::new()),
            }
        }
        let n = limit.max(1).min(self.page.len());
        Ok(self.page.drain(..n).collect())
    }
}
