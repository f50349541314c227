//! The manifest writer seam: [`OutputFormat`] names every format fixity writes (the CLI's
//! `--format`, `export`, `--update` and `bench` share it), and [`ManifestWriter`] is what
//! each format's writer does: say which algorithms it holds (its constructor refuses the
//! sets it cannot hold, with a [`Refusal`]), then write a header, one record per file and
//! a footer. Each implementation lives in its format's file.

use super::{b3sum, bsd, cfv_csv, cksum, cloud, gnu, hashdeep, json, rhash, sfv, xxhsum};
use crate::algo::{self, Algorithm};
use crate::digest::{Digest, Encoding};

/// The formats `fixity hash` writes (and `export`, those that hold one algorithm).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// `digest  name` (coreutils *sum); several algorithms switch to bsd.
    Gnu,
    /// `SHA256 (name) = digest` (coreutils --tag); byte for byte what coreutils 9.1's
    /// `cksum -a ALG` prints for every algorithm both have.
    Bsd,
    /// `name CRC32` (cksfv, cfv, rhash --sfv).
    Sfv,
    /// One JSON object per file.
    Json,
    /// hashdeep's `%%%% HASHDEEP-1.0` file: size and several digests on one line.
    Hashdeep,
    /// cfv's `.csv` file (`cfv -t csv`): `name,size,crc32,`.
    CfvCsv,
    /// rhash's default: SFV with its header for CRC32 alone, else `--simple`.
    Rhash,
    /// `rhash --simple`: `digest  name`, or `name  d1  d2` for several algorithms.
    RhashSimple,
    /// `rhash --sfv`: the header, then `name D1 D2`.
    RhashSfv,
    /// `rhash --bsd`: `MD5   (name) = digest`.
    RhashBsd,
    /// `rhash --magnet`: `magnet:?xl=SIZE&dn=NAME&xt=urn:...` (default: tth, ed2k, aich).
    Magnet,
    /// `rhash --ed2k-link`: `ed2k://|file|NAME|SIZE|ED2K|h=AICH|/`.
    Ed2kLink,
    /// POSIX `cksum` (`cksum -a crc`): `CRC SIZE name`, the cksum CRC only.
    Cksum,
    /// `sum` (`sum -r`, `cksum -a bsd`): `%05d %5d name`, size in 1 KiB blocks.
    Sum,
    /// `sum -s` (`cksum -a sysv`): `%d %d name`, size in 512-byte blocks.
    Sysv,
    /// What b3sum prints: `digest  name` (blake3 by default), b3sum's escaping.
    B3sum,
    /// What xxhsum 0.8.1 prints: `digest  name` (xxh64 by default; xxh32, xxh128), and
    /// `XXH3 (name) = digest` for xxh3; names unescaped, standard input is `stdin`.
    Xxhsum,
    /// What `gsutil hash` prints: base64 CRC32C and MD5, as GCS reports them.
    Gcs,
    /// S3's checksum headers: base64 CRC64NVME (by default), CRC32, CRC32C, SHA-1,
    /// SHA-256, Content-MD5, and the ETag (by default).
    S3,
}

/// How a name `-` is to be taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stdin {
    /// `-` is a file of that name (export).
    #[default]
    Never,
    /// `-` is standard input, named on the command line.
    Named,
    /// `-` is standard input, read because no file was named (cksum and sum then print
    /// no name).
    Implicit,
}

/// Where and how a hashdeep file says it was made (its `## Invoked from:` and `## $`
/// lines).
#[derive(Clone, Debug, Default)]
pub struct Invocation {
    /// The directory the names are relative to.
    pub dir: Vec<u8>,
    /// The command line, its words joined by spaces.
    pub command: Vec<u8>,
    /// Run as root (`## #` instead of `## $`).
    pub root: bool,
}

impl Invocation {
    /// This process's command line, run from `dir`.
    pub fn current(dir: &[u8]) -> Invocation {
        use crate::sys::OsStringExt;
        let argv: Vec<Vec<u8>> = std::env::args_os().map(OsStringExt::into_vec).collect();
        let root = crate::sys::is_root();
        Invocation { dir: dir.to_vec(), command: argv.join(&b' '), root }
    }
}

/// Options that change how lines are written.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// Mark names with `*` (GNU format, `-b`).
    pub binary: bool,
    /// End records with NUL instead of newline and never escape names (`-z`).
    pub zero: bool,
    /// Write digests in this encoding instead of each algorithm's own (`--base64`).
    pub encoding: Option<Encoding>,
    /// Leave out SFV's header comment (`--update` appending to a file that has one).
    pub no_header: bool,
    /// What a name `-` stands for.
    pub stdin: Stdin,
    /// The digest encoding and letter case of rhash's layouts.
    pub rhash: rhash::Style,
    /// What hashdeep's header says.
    pub invocation: Invocation,
}

/// One hashed file, as a writer receives it.
#[derive(Clone, Copy, Debug)]
pub struct FileEntry<'a> {
    /// The name as written (a path as given or found by the walk).
    pub name: &'a [u8],
    /// Size in bytes.
    pub size: u64,
    /// Modification time in seconds since the epoch (absent for standard input).
    pub mtime: Option<i64>,
    /// One digest per algorithm of [`ManifestWriter::algorithms`], in that order.
    pub digests: &'a [Digest],
}

/// Why a writer cannot hold a set of algorithms or an option. The texts depend on who
/// asked: [`Refusal::hash_message`] for `fixity hash`, [`Refusal::catalog_message`] for a
/// catalog's export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// SFV and cfv `.csv` hold CRC32, cksum, sum and sysv lines their own checksum, and
    /// nothing else.
    Only(OutputFormat, &'static str),
    /// xxhsum lines hold one of its algorithms.
    Xxhsum,
    /// b3sum lines hold one digest.
    OneDigest,
    /// hashdeep files hold their columns only; the first algorithm they do not hold.
    Hashdeep(&'static str),
    /// `-z` or `-b` on a format that has neither (b3sum, xxhsum).
    NoZeroOrBinary(OutputFormat),
    /// `-z` on hashdeep.
    HashdeepZero,
    /// `--base64` on a format other than gnu and bsd.
    Base64,
    /// gcs and s3 hold their store's digests only; the first one asked they do not hold.
    Cloud(OutputFormat, &'static str),
    /// An S3 ETag has one written form: no `--base64`, `--base32` or `--hex`.
    EtagEncoding,
}

impl Refusal {
    /// The message `fixity hash` gives.
    pub fn hash_message(&self) -> String {
        match self {
            Refusal::Only(OutputFormat::Sfv, _) => {
                "SFV files hold CRC32 only: drop -a or use -a crc32".into()
            }
            Refusal::Only(OutputFormat::CfvCsv, _) => {
                "cfv's .csv files hold CRC32 only: drop -a or use -a crc32".into()
            }
            Refusal::Only(f, algo) => {
                format!("{} lines hold the {algo} checksum only: drop -a", f.name())
            }
            Refusal::Xxhsum => {
                format!("xxhsum lines hold one of {}: drop -a or name one", xxhsum::names())
            }
            Refusal::OneDigest => {
                "b3sum lines hold one digest: drop -a or name one algorithm".into()
            }
            Refusal::Hashdeep(not) => {
                format!("hashdeep files hold {} only, not {not}", hashdeep::COLUMNS.join(", "))
            }
            Refusal::NoZeroOrBinary(f) => format!("{} has no -z or -b: drop them", f.name()),
            Refusal::HashdeepZero => {
                "hashdeep files end lines with newline: -z does not apply".into()
            }
            Refusal::Base64 => "--base64 goes with gnu, bsd and rhash's formats only".into(),
            Refusal::Cloud(f, not) => {
                format!("{} lines hold {} only, not {not}", f.name(), cloud::CloudWriter::holds(*f))
            }
            Refusal::EtagEncoding => {
                "an S3 ETag (s3etag) is written one way only: drop --base64, --base32 and --hex"
                    .into()
            }
        }
    }

    /// The message `fixity export` gives for a catalog of `algo` digests.
    pub fn catalog_message(&self, algo: &Algorithm) -> String {
        let what = match self {
            Refusal::Only(OutputFormat::Sfv, _) => "SFV holds CRC32 only".to_string(),
            Refusal::Only(OutputFormat::CfvCsv, _) => "cfv's .csv files hold CRC32 only".into(),
            Refusal::Only(f, a) => format!("{} lines hold the {a} checksum only", f.name()),
            Refusal::Xxhsum => format!("xxhsum lines hold {}", xxhsum::names()),
            Refusal::Hashdeep(_) => {
                format!("hashdeep files hold {} only", hashdeep::COLUMNS.join(", "))
            }
            other => other.hash_message(),
        };
        format!("{what}; the catalog holds {} digests (`fixity scan -a` sets them)", algo.name)
    }
}

/// A record a format cannot hold: `what` (`SFV`, `a hashdeep file`) cannot hold a name
/// with a newline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unwritable {
    pub what: &'static str,
}

impl Unwritable {
    /// `NAME: WHAT cannot hold a name with a newline`, with the name as `shown`.
    pub fn message(&self, shown: &str) -> String {
        format!("{shown}: {} cannot hold a name with a newline", self.what)
    }
}

/// `Err` when `name` holds a newline, which the line-based formats cannot hold.
pub(crate) fn one_line(name: &[u8], what: &'static str) -> Result<(), Unwritable> {
    if name.contains(&b'\n') { Err(Unwritable { what }) } else { Ok(()) }
}

/// A format's writer. Built by [`OutputFormat::writer`] (or a format's own constructor,
/// such as rhash's printf templates), which checks the algorithms and options; then
/// [`ManifestWriter::header`], one [`ManifestWriter::record`] per file in order, and
/// [`ManifestWriter::footer`].
pub trait ManifestWriter {
    /// The algorithms to compute for each file, in the order records take their digests.
    fn algorithms(&self) -> &[&'static Algorithm];

    /// Appends what comes before the first record.
    fn header(&mut self, _out: &mut Vec<u8>) {}

    /// Appends the record of one file (or keeps it for the footer).
    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable>;

    /// Appends the record of a file that could not be hashed, for formats that keep one
    /// (JSON); `skipped` when it was left out on purpose rather than failing.
    fn problem(&mut self, _name: &[u8], _message: &str, _skipped: bool, _out: &mut Vec<u8>) {}

    /// Appends what comes after the last record.
    fn footer(&mut self, _out: &mut Vec<u8>) {}
}

fn registered(name: &str) -> &'static Algorithm {
    algo::lookup(name).expect("registered")
}

impl OutputFormat {
    /// The format's name as `--format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Gnu => "gnu",
            OutputFormat::Bsd => "bsd",
            OutputFormat::Sfv => "sfv",
            OutputFormat::Json => "json",
            OutputFormat::Hashdeep => "hashdeep",
            OutputFormat::CfvCsv => "cfv-csv",
            OutputFormat::Rhash => "rhash",
            OutputFormat::RhashSimple => "rhash-simple",
            OutputFormat::RhashSfv => "rhash-sfv",
            OutputFormat::RhashBsd => "rhash-bsd",
            OutputFormat::Magnet => "magnet",
            OutputFormat::Ed2kLink => "ed2k-link",
            OutputFormat::Cksum => "cksum",
            OutputFormat::Sum => "sum",
            OutputFormat::Sysv => "sysv",
            OutputFormat::B3sum => "b3sum",
            OutputFormat::Xxhsum => "xxhsum",
            OutputFormat::Gcs => "gcs",
            OutputFormat::S3 => "s3",
        }
    }

    /// The format called `name` (as `--format` takes it; also `tag` for bsd and `csv`
    /// for cfv-csv), in any letter case.
    pub fn named(name: &str) -> Option<OutputFormat> {
        use clap::ValueEnum;
        let name = name.to_ascii_lowercase();
        let name = match name.as_str() {
            "tag" => "bsd",
            "csv" => "cfv-csv",
            other => other,
        };
        OutputFormat::value_variants().iter().copied().find(|f| f.name() == name)
    }

    /// Every format's name, for messages: "gnu, bsd, ...".
    pub fn names() -> String {
        use clap::ValueEnum;
        let names: Vec<_> = OutputFormat::value_variants().iter().map(|f| f.name()).collect();
        names.join(", ")
    }

    /// The algorithms the format computes when `asked` (from `-a`) is `None`, or for
    /// rhash's layouts, the ones they compute whatever was asked, in rhash's order.
    pub fn algorithms(self, asked: Option<Vec<&'static Algorithm>>) -> Vec<&'static Algorithm> {
        if let Some(layout) = self.rhash_layout() {
            return rhash::layout_algorithms(layout, asked.unwrap_or_default());
        }
        if let Some(asked) = asked {
            return asked;
        }
        match self {
            OutputFormat::Sfv | OutputFormat::CfvCsv => vec![registered("crc32")],
            OutputFormat::Hashdeep => hashdeep::DEFAULT.iter().map(|n| registered(n)).collect(),
            OutputFormat::Cksum | OutputFormat::Sum | OutputFormat::Sysv => {
                vec![registered(self.name())]
            }
            // The algorithm of the tool whose lines these are.
            OutputFormat::B3sum => vec![algo::by_tool("b3sum").expect("registered")],
            OutputFormat::Xxhsum => vec![xxhsum::default_algorithm()],
            OutputFormat::Gcs | OutputFormat::S3 => cloud::defaults(self),
            _ => vec![algo::default_algorithm()],
        }
    }

    /// rhash's layout for its formats.
    fn rhash_layout(self) -> Option<rhash::Layout> {
        Some(match self {
            OutputFormat::Rhash => rhash::Layout::Default,
            OutputFormat::RhashSimple => rhash::Layout::Simple,
            OutputFormat::RhashSfv => rhash::Layout::Sfv,
            OutputFormat::RhashBsd => rhash::Layout::Bsd,
            OutputFormat::Magnet => rhash::Layout::Magnet,
            OutputFormat::Ed2kLink => rhash::Layout::Ed2kLink,
            _ => return None,
        })
    }

    /// Whether this is one of rhash's layouts (which set their own digest encoding).
    pub fn is_rhash(self) -> bool {
        self.rhash_layout().is_some()
    }

    /// The writer of this format for `algos` (see [`OutputFormat::algorithms`]), or why
    /// the format cannot hold them or the options.
    pub fn writer(
        self,
        algos: Vec<&'static Algorithm>,
        opts: WriteOptions,
    ) -> Result<Box<dyn ManifestWriter>, Refusal> {
        let base64 = opts.encoding.is_some();
        let etag = algos.iter().any(|a| a.encoding == Encoding::S3Etag);
        if etag && (base64 || opts.rhash.enc != rhash::Enc::Default) {
            return Err(Refusal::EtagEncoding);
        }
        let w: Box<dyn ManifestWriter> = match self {
            OutputFormat::Gnu => Box::new(gnu::GnuWriter::new(algos, opts)),
            OutputFormat::Bsd => Box::new(bsd::BsdWriter::new(algos, opts)),
            OutputFormat::Json => Box::new(json::JsonWriter::new(algos)),
            OutputFormat::Sfv => Box::new(sfv::SfvWriter::new(algos, opts)?),
            OutputFormat::CfvCsv => Box::new(cfv_csv::CsvWriter::new(algos)?),
            OutputFormat::Hashdeep => Box::new(hashdeep::HashdeepWriter::new(algos, opts)?),
            OutputFormat::Cksum | OutputFormat::Sum | OutputFormat::Sysv => {
                Box::new(cksum::SumWriter::new(self, algos, opts)?)
            }
            OutputFormat::B3sum => Box::new(b3sum::B3sumWriter::new(algos, &opts)?),
            OutputFormat::Xxhsum => Box::new(xxhsum::XxhsumWriter::new(algos, &opts)?),
            OutputFormat::Gcs | OutputFormat::S3 => {
                Box::new(cloud::CloudWriter::new(self, algos, &opts)?)
            }
            _ => {
                let layout = self.rhash_layout().expect("the rest are rhash's");
                return Ok(Box::new(rhash::RhashWriter::new(layout, algos, &opts)));
            }
        };
        if base64 && !matches!(self, OutputFormat::Gnu | OutputFormat::Bsd) {
            return Err(Refusal::Base64);
        }
        Ok(w)
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
