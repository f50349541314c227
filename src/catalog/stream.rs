//! A run's cursor over a catalog's records ([`Records`]) for the catalogs that keep
//! them in path order (SQLite, PostgreSQL): a thread of its own reads pages ahead
//! (bounded), so reading rows overlaps with the walk. A read error ends the stream and
//! is kept (see [`Records::error`]).

use super::store::{Pages, Record, Records, Store, StoreError};
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
    /// `None`): `page(after, inclusive, limit)` is up to `limit` records after the path
    /// given (or from it, when `inclusive`; from the start with `None`), in path order.
    /// Pages grow ([`Growing`]); one shorter than asked (or empty) is the last.
    pub(crate) fn spawn<F>(from: Option<&[u8]>, mut page: F) -> Stream
    where
        F: FnMut(Option<&[u8]>, bool, usize) -> Result<Vec<Record>, StoreError> + Send + 'static,
    {
        let from = from.map(<[u8]>::to_vec);
        let (mut first, mut paged) = (true, Paged::default());
        let pages = read_ahead(4, move |after: Option<&Record>| {
            let at = after.map_or(from.as_deref(), |r| Some(r.path.as_slice()));
            let got = paged.next(|n| {
                // The first page starts at `from` itself; the others after the last record.
                let inclusive = std::mem::take(&mut first) && from.is_some();
                page(at, inclusive, n)
            })?;
            Ok(got.unwrap_or_default())
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

/// A cursor over every record of a store with a path after a given one, in path order, a
/// page at a time ([`Store::records_page`]). Pages grow as [`Growing`] says and one
/// shorter than asked is the last: a catalog across a network waits a round trip per page
/// (50,000 records are 5 pages, not 13 and an empty one). The store is lent to each
/// [`RecordPages::next`] only, so a caller may write to it between pages.
pub struct RecordPages {
    after: Option<Vec<u8>>,
    paged: Paged,
}

impl RecordPages {
    /// The records after `after` (every record with `None`).
    pub fn after(after: Option<Vec<u8>>) -> RecordPages {
        RecordPages { after, paged: Paged::default() }
    }

    /// The next page; `None` after the last.
    pub fn next(&mut self, store: &dyn Store) -> Result<Option<Vec<Record>>, StoreError> {
        let after = self.after.as_deref();
        let Some(page) = self.paged.next(|n| store.records_page(after, n))? else {
            return Ok(None);
        };
        let Some(last) = page.last() else { return Ok(None) };
        self.after = Some(last.path.clone());
        Ok(Some(page))
    }
}

/// The pages of a read in path order: their sizes as [`Growing`] says, and the end at the
/// first page shorter than asked (the end is not asked for again).
#[derive(Default)]
struct Paged {
    rows: Growing,
    ended: bool,
}

impl Paged {
    /// The page `read(limit)` gives; `None` once one came back shorter than asked.
    fn next<E>(
        &mut self,
        read: impl FnOnce(usize) -> Result<Vec<Record>, E>,
    ) -> Result<Option<Vec<Record>>, E> {
        if self.ended {
            return Ok(None);
        }
        let n = self.rows.next();
        let page = read(n)?;
        self.ended = page.len() < n;
        Ok(Some(page))
    }
}

/// Rows of pages read ahead: the first page small (the run starts at once), each next one
/// twice as large up to a bound (a catalog across a network waits one round trip per page:
/// 50,000 records are 5 pages, not 25; four pages read ahead hold 64Ki records at most).
pub(crate) struct Growing(usize);

impl Default for Growing {
    fn default() -> Growing {
        Growing(Self::FIRST)
    }
}

impl Growing {
    const FIRST: usize = 2048;
    const MAX: usize = 16384;

    /// The rows of the next page.
    pub(crate) fn next(&mut self) -> usize {
        let n = self.0;
        self.0 = (n * 2).min(Self::MAX);
        n
    }
}

/// A verification pass's stale records in path order, read ahead (two pages at most) by
/// a thread of their own on a connection of their own: the run reads files while the
/// next page comes, and the catalog's search is off its thread.
pub(crate) struct StaleStream {
    pages: crossbeam_channel::Receiver<Result<Vec<Record>, StoreError>>,
    page: VecDeque<Record>,
}

impl StaleStream {
    /// Streams the pages `page` gives, from after the path `from` to the end and then
    /// from the start up to `from` (from the start to the end with `None`):
    /// `page(after, upto, limit)` is up to `limit` records with paths after `after` (from
    /// the start with `None`) and not after `upto` (to the end with `None`), in path
    /// order; an empty page is the end of the range.
    pub(crate) fn spawn<F>(from: Option<&[u8]>, mut page: F) -> StaleStream
    where
        F: FnMut(Option<&[u8]>, Option<&[u8]>, usize) -> Result<Vec<Record>, StoreError>
            + Send
            + 'static,
    {
        let from = from.map(<[u8]>::to_vec);
        // The first range ends at the end; the second (after a cursor) at the cursor. A
        // record read in the first is not read again in the second, even before its
        // check is committed.
        let mut wrapped = from.is_none();
        let mut rows = Growing::default();
        let pages = read_ahead(2, move |after: Option<&Record>| {
            let after = after.map(|r| r.path.as_slice());
            let n = rows.next();
            if !wrapped {
                let got = page(after.or(from.as_deref()), None, n)?;
                if !got.is_empty() {
                    return Ok(got);
                }
                wrapped = true;
                return page(None, from.as_deref(), n);
            }
            // In the second range `after` is one of its own records (the first page of a
            // range starts from `None`, and so does the only range of a whole pass).
            page(after, from.as_deref(), n)
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths a stale stream from `from` gives over `paths`, in pages of `limit`.
    fn streamed(paths: &[&str], from: Option<&str>, limit: usize) -> Vec<String> {
        let rows: Vec<Vec<u8>> = paths.iter().map(|p| p.as_bytes().to_vec()).collect();
        let mut pages = StaleStream::spawn(from.map(str::as_bytes), move |after, upto, n| {
            Ok(rows
                .iter()
                .filter(|p| after.is_none_or(|a| p.as_slice() > a))
                .filter(|p| upto.is_none_or(|u| p.as_slice() <= u))
                .take(n.min(limit))
                .map(|p| Record::sample(p, "sha256", Some(1)))
                .collect())
        });
        let mut got = Vec::new();
        loop {
            let page = pages.next_page(1000).unwrap();
            if page.is_empty() {
                return got;
            }
            got.extend(page.into_iter().map(|r| String::from_utf8(r.path).unwrap()));
        }
    }

    #[test]
    fn pages_grow_from_small_to_a_bound() {
        let mut g = Growing::default();
        let sizes: Vec<usize> = (0..6).map(|_| g.next()).collect();
        assert_eq!(sizes, [2048, 4096, 8192, 16384, 16384, 16384]);
    }

    #[test]
    fn a_stale_stream_goes_on_after_its_cursor_and_wraps_to_it_once() {
        let paths = ["a", "b", "c", "d", "e"];
        for limit in [1, 2, 10] {
            assert_eq!(streamed(&paths, None, limit), paths, "pages of {limit}");
            assert_eq!(streamed(&paths, Some("b"), limit), ["c", "d", "e", "a", "b"]);
            // A cursor between records, before the first, at the last.
            assert_eq!(streamed(&paths, Some("bb"), limit), ["c", "d", "e", "a", "b"]);
            assert_eq!(streamed(&paths, Some(""), limit), paths);
            assert_eq!(streamed(&paths, Some("e"), limit), paths);
            assert_eq!(streamed(&paths, Some("z"), limit), paths);
        }
        assert!(streamed(&[], Some("b"), 2).is_empty());
        assert!(streamed(&[], None, 2).is_empty());
    }
}
