//! Command-line arguments (clap derive). Raw values only; `cmd::*` turns them into work.

use clap::{Args, Parser, Subcommand};
use fixity::formats::OutputFormat;
use std::ffi::OsString;
use std::path::PathBuf;

mod bag;
mod catalog;
mod dups;
mod exit;
mod import;
mod manual;
mod monitor;
mod proof;
mod remote;
mod repair;
mod report;
mod scale;
#[cfg(feature = "serve")]
mod serve;
mod storage;
pub use bag::{BagCheckArgs, BagCommand, BagCreateArgs};
pub use catalog::{CatalogCommand, ExportArgs, FindArgs, InitRolesArgs, StatusArgs};
pub use dups::DupsArgs;
use exit::*;
pub use import::{ImportArgs, ImportFrom, XattrName};
pub use manual::{CompletionsArgs, ManArgs};
pub use monitor::HealthArgs;
pub use proof::AuditProofArgs;
pub use remote::RemoteArgs;
pub use repair::{ProtectArgs, RepairArgs};
pub use report::ReportArgs;
pub use scale::{MergeArgs, PlanArgs};
#[cfg(feature = "serve")]
pub use serve::{Role, ServeArgs};
pub use storage::{Storage, note_storage_source};

/// Prove files are intact: hash trees of files, write and check checksum manifests.
#[derive(Parser, Debug)]
#[command(name = "fixity", version = env!("FIXITY_VERSION"), about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Cap fixity's own SIMD kernels (PAR2's GF(2^16), the MD5/SHA-1/SHA-256/BLAKE3 lanes
    /// of many small files) at LEVEL: scalar, ssse3, avx2, avx512 or gfni on x86-64, scalar
    /// or neon on aarch64. Default: the highest this CPU has, or the environment variable
    /// FIXITY_SIMD. Results are the same at every level; only the speed differs.
    #[arg(long, global = true, value_name = "LEVEL")]
    pub simd: Option<String>,
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum Command {
    /// Hash files and trees; print (or write with -o) a manifest.
    #[command(after_help = HASH_EXIT)]
    Hash(HashArgs),
    /// Verify files against manifests (GNU, BSD tag, SFV), like `sha256sum -c`.
    #[command(after_help = CHECK_EXIT)]
    Check(CheckArgs),
    /// List the algorithms fixity computes.
    Algorithms(AlgorithmsArgs),
    /// Record a tree in its catalog: hash new and changed files, note deleted ones.
    #[command(after_help = SCRUB_EXIT)]
    Scan(ScanArgs),
    /// Re-read files and compare with the catalog: find corruption, edits, moves, losses.
    #[command(after_help = SCRUB_EXIT)]
    Verify(VerifyArgs),
    /// Fill a tree's catalog from digests other tools took (xattrs, NTFS streams, chkbit,
    /// bitrot, scorch, manifests), without re-hashing: marked unverified until a verify
    /// reads them.
    #[command(after_help = IMPORT_EXIT)]
    Import(ImportArgs),
    /// Show what a tree's catalog knows: counts, coverage, problems, recent runs; or judge
    /// its health for monitoring (--nagios, --metrics, --max-age).
    #[command(after_help = STATUS_EXIT)]
    Status(StatusArgs),
    /// Write the catalog out as a checksum manifest, or as PREMIS 3 XML.
    #[command(after_help = READ_EXIT)]
    Export(ExportArgs),
    /// Report a tree's state, findings with their history, runs and coverage: one
    /// self-contained HTML page (--html FILE) or JSON (--json).
    #[command(after_help = REPORT_EXIT)]
    Report(ReportArgs),
    /// Serve a live web view of trees (or a PostgreSQL fleet) on http://127.0.0.1:8470:
    /// coverage, findings, runs, and the actions (verify, repair, accept, forget).
    #[cfg(feature = "serve")]
    #[command(after_help = SERVE_EXIT)]
    Serve(ServeArgs),
    /// Check a tree's catalog and files against a head kept outside the machine (`status
    /// --proof`, signed with ssh-keygen or minisign): say where the chain of proofs breaks.
    #[command(name = "audit-proof", after_help = AUDIT_PROOF_EXIT)]
    AuditProof(AuditProofArgs),
    /// Make PAR2 recovery data for the files the catalog records as good (kept in step
    /// with the catalog: an edit re-makes its set, rot never does), usable with par2cmdline.
    #[command(after_help = PROTECT_EXIT)]
    Protect(ProtectArgs),
    /// Rebuild corrupt and missing files as the catalog recorded them, from the recovery
    /// data or from a replica (--from); each replaced atomically, only with the recorded digest.
    #[command(after_help = REPAIR_EXIT)]
    Repair(RepairArgs),
    /// List files with the same content: from the catalog, reading nothing (groups of
    /// equal size and digest), or with --read from a tree without one.
    #[command(after_help = DUPS_EXIT)]
    Dups(DupsArgs),
    /// Record the current content of corrupt (or other) files as good: the explicit end
    /// of a CORRUPT finding, once the change is known to be wanted.
    #[command(after_help = RESOLVE_EXIT)]
    Accept(ResolveArgs),
    /// Drop the records of missing files (each PATH a file or a directory) once they are
    /// gone for good; until then every scan and verify reports them.
    #[command(after_help = RESOLVE_EXIT)]
    Forget(ResolveArgs),
    /// Set up a shared PostgreSQL catalog: `init-roles` keeps each host to its own records.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Measure algorithms and tools on this machine, with the method built in.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// BagIt bags (RFC 8493): make a directory into a bag in place, validate bags.
    #[command(subcommand)]
    Bag(BagCommand),
    /// Freeze a tree's file list into N parts balanced by bytes, for `hash --plan` on
    /// many machines (a Slurm array, a Kubernetes Indexed Job) and `merge`.
    #[command(after_help = PLAN_EXIT)]
    Plan(PlanArgs),
    /// Merge the parts of a plan into the manifest one `fixity hash` would have written,
    /// and print a root digest of the tree; or show where the parts stand (--status).
    #[command(after_help = MERGE_EXIT)]
    Merge(MergeArgs),
    /// Print a shell completion script to standard output.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions(CompletionsArgs),
    /// Print the manual page of fixity or of one command (roff), or write every page into
    /// a directory.
    #[command(after_help = "Read one: fixity man hash | man -l -")]
    Man(ManArgs),
}

// Arguments of `accept` and `forget`.
#[derive(Args, Debug)]
pub struct ResolveArgs {
    /// The catalog file (default: TREE/.fixity/catalog.db), or a PostgreSQL URL holding
    /// TREE's records (this machine's).
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// The tree the catalog records (default: the nearest directory above the first PATH
    /// holding .fixity/catalog.db; with --catalog, the current directory).
    #[arg(long, value_name = "DIR")]
    pub tree: Option<PathBuf>,
    /// If another run holds the catalog, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
    /// Where the digests are kept: `xattr` accepts into the files' user.fixity.*
    /// attributes (the xattr store keeps no record of a file once it is gone, so it has
    /// nothing to forget).
    #[arg(long, value_enum, default_value = "sqlite")]
    pub store: Store,
    #[command(flatten)]
    pub find: FindArgs,
    /// Files (for forget, also directories), as paths from here.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
}

#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum BenchCommand {
    /// In-memory throughput of each algorithm at each message size.
    Algorithms(BenchAlgorithmsArgs),
    /// Hash a file or tree with each algorithm (and with the peer tools): seconds, MB/s,
    /// files/s, manifest size, and the plain-read ceiling.
    Tree(BenchTreeArgs),
}

#[derive(Args, Debug)]
pub struct BenchAlgorithmsArgs {
    /// Algorithms (comma-separated; default: all but imohash, which samples instead of
    /// reading); `par2` is the row of making PAR2 recovery data (`fixity protect`'s work at
    /// 10%, in memory, every core).
    #[arg(short = 'a', long = "algorithm", value_name = "LIST")]
    pub algorithm: Option<String>,
    /// Message sizes (K = 1000, Ki = 1024; up to 1Gi). Larger sizes show little more than
    /// 16M does and take long with the slow algorithms.
    #[arg(long, default_value = "1K,64K,1M,16M")]
    pub sizes: String,
    /// Threads for algorithms that use several on one message (default: all cores; at most
    /// 256).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Timed runs per cell (after one warm-up).
    #[arg(long, default_value = "5")]
    pub runs: usize,
    /// table, markdown, json or csv.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Measure the rows that depend on the SIMD level (PAR2, and many messages at once
    /// for md5, sha1, sha256, blake3) at each of these levels: `all` (every level this
    /// CPU has) or a list such as `scalar,avx2`.
    #[arg(long, value_name = "LIST")]
    pub levels: Option<String>,
}

#[derive(Args, Debug)]
pub struct BenchTreeArgs {
    /// Algorithms (comma-separated; default: md5,sha1,sha256,blake2b,blake3,xxh3,crc32).
    #[arg(short = 'a', long = "algorithm", value_name = "LIST")]
    pub algorithm: Option<String>,
    /// Timed runs per row (min / median / max), after one warm-up.
    #[arg(long, default_value = "3")]
    pub runs: usize,
    /// Empty the page cache before every run (drop_caches as root, else fadvise), and
    /// check with mincore that it worked.
    #[arg(long)]
    pub cold: bool,
    /// Also run the peer tools found on PATH and check their digests against fixity's.
    #[arg(long)]
    pub compare: bool,
    /// table, markdown, json or csv.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Also write an SVG bar chart to FILE.
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// A file or directory.
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
}

/// Where digests are kept between runs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// A SQLite catalog (ROOT/.fixity/catalog.db, or --catalog).
    Sqlite,
    /// Extended attributes on each file (user.fixity.*; reads cshatag's user.shatag.*);
    /// on Windows, NTFS alternate data streams of the same names (also named `ads`).
    #[value(alias = "ads")]
    Xattr,
}

// Options shared by `scan` and `verify`.
#[derive(Args, Debug, Clone)]
pub struct ScrubArgs {
    /// The catalog file (default: PATH/.fixity/catalog.db), or a PostgreSQL URL
    /// (postgresql://USER:PASSWORD@HOST:PORT/DB?sslmode=require; PGHOST, PGUSER,
    /// PGPASSWORD ... fill in what it leaves out) shared by many hosts.
    #[arg(long, value_name = "FILE|URL")]
    pub catalog: Option<PathBuf>,
    /// Where digests are kept.
    #[arg(long, value_enum, default_value = "sqlite")]
    pub store: Store,
    /// With --store xattr: also keep these tools' attributes up to date (checksum:
    /// user.checksum.ALGO; shatag: cshatag's, with -a sha256).
    #[arg(long, value_enum, value_name = "NAMES", value_delimiter = ',')]
    pub xattr_names: Vec<XattrName>,
    /// Algorithm for a new catalog or for files without a record (default: blake3).
    #[arg(short = 'a', long = "algorithm", value_name = "NAME")]
    pub algorithm: Option<String>,
    /// Leave out names matching GLOB (also read from PATH/.fixityignore, one per line).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Follow symbolic links inside the tree.
    #[arg(short = 'L', long)]
    pub follow: bool,
    /// Treat mtimes this many seconds apart as equal (default: as the file system keeps
    /// them: 2 on FAT, 0.01 on exFAT, else 0; SMB shares may drift).
    #[arg(long, value_name = "SECONDS")]
    pub modify_window: Option<f64>,
    /// Print only problems (corrupt, unreadable, missing), and the summary only then.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Print one JSON object per file that is not ok, then one with the summary.
    #[arg(long)]
    pub json: bool,
    /// Append a one-line summary of the run to FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// After the run, write the tree's Prometheus metrics (node_exporter's textfile
    /// format) to FILE.prom, atomically.
    #[arg(long, value_name = "FILE.prom")]
    pub metrics: Option<PathBuf>,
    /// If another run holds the catalog, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
    /// Cover one part of a plan (`fixity plan TREE --parts N -o DIR`) instead of the
    /// whole tree: the files the part's list names, the records of its range; parts run
    /// at once on one catalog (a PostgreSQL one across machines).
    #[arg(long, value_name = "DIR")]
    pub plan: Option<PathBuf>,
    /// With --plan: which part (from 0; default: SLURM_ARRAY_TASK_ID or
    /// JOB_COMPLETION_INDEX).
    #[arg(long, value_name = "I", requires = "plan")]
    pub part: Option<usize>,
    /// Where `fixity protect` keeps the tree's recovery sets (default: PATH/.fixity/par2):
    /// on a protected tree, the sets of files recorded as edited are re-made after the run.
    #[arg(long, value_name = "DIR")]
    pub par2_dir: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub find: FindArgs,
    /// The tree (default: the current directory; with --plan, the tree the plan was made
    /// of).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ScanArgs {
    #[command(flatten)]
    pub common: ScrubArgs,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub common: ScrubArgs,
    /// Stop starting new reads after this long (e.g. 2h, 30m, 1h30m); the next run
    /// continues where this one stopped.
    #[arg(long, value_name = "DURATION", conflicts_with = "plan")]
    pub max_duration: Option<String>,
    /// Stop starting new reads after this many bytes (e.g. 500G); the next run continues.
    #[arg(long, value_name = "SIZE", conflicts_with = "plan")]
    pub max_bytes: Option<String>,
    /// Once the findings are reported, repair them as `fixity repair` does (listed, and in
    /// the catalog's history); the exit status still says findings were made.
    #[arg(long, conflicts_with = "plan")]
    pub repair: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

// Options shared by commands that read files.
#[derive(Args, Debug, Clone)]
pub struct ReadArgs {
    /// Worker threads (default: 4 per core on SSDs and in cache, 1 per core with a
    /// single sequential reader on a rotational disk).
    #[arg(short = 'j', long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Most memory for read buffers, all workers together (default 256M): buffers shrink
    /// (to 64K each at least), then workers, to fit. Suffixes K, M, G.
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub buffer_memory: Option<u64>,
    /// Storage policy: `auto` decides per device from a few timed 4 KiB reads of the files
    /// being read (milliseconds: a seeking disk; less: flash; NFS, SMB, sshfs ...: network),
    /// the kernel's rotational flag when it cannot time any; `ssd` keeps many reads in
    /// flight everywhere; `hdd` reads one file at a time per device, in physical order.
    /// `--verbose` shows each device's decision and why. The environment variable
    /// `FIXITY_STORAGE` sets it too (also for the drop-ins, which have no such option).
    #[arg(long, value_enum, default_value = "auto", env = "FIXITY_STORAGE")]
    pub storage: Storage,
    /// Never map files into memory; always read with a buffer.
    #[arg(long)]
    pub no_mmap: bool,
    /// Show a progress bar on stderr (default: when stderr is a terminal).
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,
    /// Never show a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Say how the files are read (each device's storage policy and why) on stderr; with
    /// `check --audit`, also list the files matched; with `scan` and `verify`, also list
    /// each new file and each entry skipped on purpose (else counted once).
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

#[derive(Args, Debug)]
pub struct HashArgs {
    /// Algorithm, or a comma-separated list (default: blake3; crc32 with --sfv; md5,sha256
    /// for hashdeep).
    #[arg(short = 'a', long = "algorithm", value_name = "LIST")]
    pub algorithm: Option<String>,
    /// Hash one part of the plan in DIR (`fixity plan`) and write DIR/part-I; the part is
    /// --part, else SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["paths", "output", "format"])]
    pub plan: Option<PathBuf>,
    /// With --plan: which part (from 0).
    #[arg(long, value_name = "I", requires = "plan")]
    pub part: Option<usize>,
    /// Manifest format (--tag, --sfv and --json are shorthands; rhash's layouts too).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with_all = ["tag", "sfv", "json"])]
    pub format: Option<OutputFormat>,
    /// Write BSD-style lines: `SHA256 (name) = digest` (the default for several algorithms).
    #[arg(long)]
    pub tag: bool,
    /// Write an SFV file: `name CRC32` (cksfv, cfv, rhash --sfv).
    #[arg(long, conflicts_with = "tag")]
    pub sfv: bool,
    /// Write one JSON object per file instead of manifest lines.
    #[arg(long, conflicts_with_all = ["tag", "sfv"])]
    pub json: bool,
    /// Mark names with `*` (binary mode), as `sha256sum -b` does.
    #[arg(short = 'b', long, overrides_with = "text")]
    pub binary: bool,
    /// Text mode (the default; accepted for compatibility).
    #[arg(short = 't', long)]
    pub text: bool,
    /// End each line with NUL, not newline, and do not escape names.
    #[arg(short = 'z', long)]
    pub zero: bool,
    /// Recurse into directories (a directory argument always is).
    #[arg(short = 'r', long)]
    pub recursive: bool,
    /// Follow symbolic links inside trees (loops are detected and skipped).
    #[arg(short = 'L', long)]
    pub follow: bool,
    /// Leave out names matching GLOB (no `/`: any name; with `/`: path below the root).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Write the manifest to FILE atomically (temp file, fsync, rename).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// What the manifest is for: `tamper` notes (never blocks) when an algorithm is
    /// broken for that use (md4, md5, sha1) or is a plain checksum (CRC, xxHash); either
    /// purpose notes a sampled algorithm (imohash), which reads only part of each file.
    #[arg(long = "for", value_name = "USE", value_enum)]
    pub purpose: Option<Purpose>,
    /// Never walk directories: a directory argument is an error ("Is a directory"), as
    /// coreutils' *sum tools do (drop-in mode sets this).
    #[arg(long, hide = true)]
    pub no_walk: bool,
    #[command(flatten)]
    pub read: ReadArgs,
    #[command(flatten)]
    pub rhash: RhashArgs,
    /// Files and directories; `-` or nothing means standard input.
    #[arg(value_name = "PATH")]
    pub paths: Vec<OsString>,
}

// rhash's output options of `fixity hash`.
#[derive(Args, Debug, Default)]
pub struct RhashArgs {
    /// Print each file through an rhash printf template (`%p`, `%f`, `%s`, `%{md5}`,
    /// `%xh`, `%{mtime}`, `\n`, ...; see `man rhash`).
    #[arg(long, value_name = "TEMPLATE", conflicts_with_all = ["template", "format"])]
    pub printf: Option<OsString>,
    /// Read the printf template from FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "format")]
    pub template: Option<PathBuf>,
    /// Print digests in hex (rhash formats).
    #[arg(long, conflicts_with_all = ["base32", "base64"])]
    pub hex: bool,
    /// Print digests in base32 (rhash formats).
    #[arg(long, conflicts_with = "base64")]
    pub base32: bool,
    /// Print digests in base64 (rhash formats; on gnu and bsd lines as `cksum --base64`).
    #[arg(long)]
    pub base64: bool,
    /// Print hex and base32 digests in uppercase (rhash formats).
    #[arg(long, conflicts_with = "lowercase")]
    pub uppercase: bool,
    /// Print hex and base32 digests in lowercase (rhash formats).
    #[arg(long)]
    pub lowercase: bool,
    /// Hash only the files under PATHs that MANIFEST does not list yet and append their
    /// lines to it, in its own format (atomically), as `rhash -u` does.
    #[arg(long, value_name = "MANIFEST", conflicts_with = "output")]
    pub update: Option<PathBuf>,
    /// Rename each file to carry its CRC32 (`name [1A2B3C4D].ext`), as `rhash -e` does.
    #[arg(long)]
    pub embed_crc: bool,
    /// What goes before the `[CRC32]` inserted by --embed-crc.
    #[arg(long, value_name = "TEXT", default_value = " ", requires = "embed_crc")]
    pub embed_crc_delimiter: String,
    /// Leave out the header comment of SFV output (--update appends without it).
    #[arg(long, hide = true)]
    pub no_header: bool,
}

/// What a manifest is meant to detect.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Accidental corruption (bitrot, bad copies): any algorithm will do.
    Corruption,
    /// Deliberate tampering: needs a cryptographic hash without known collisions.
    Tamper,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Algorithm for untagged lines (default: from the tag, the manifest's name, or the
    /// digest length).
    #[arg(short = 'a', long = "algorithm", value_name = "NAME")]
    pub algorithm: Option<String>,
    /// Don't print OK for each successfully verified file.
    #[arg(long, overrides_with_all = ["status", "warn"])]
    pub quiet: bool,
    /// Print nothing; the exit status tells.
    #[arg(long, overrides_with_all = ["quiet", "warn"])]
    pub status: bool,
    /// Exit non-zero for improperly formatted lines.
    #[arg(long)]
    pub strict: bool,
    /// Warn about each improperly formatted line.
    #[arg(short = 'w', long, overrides_with_all = ["quiet", "status"])]
    pub warn: bool,
    /// Don't fail or report status for missing files.
    #[arg(long)]
    pub ignore_missing: bool,
    /// Manifest records end with NUL (as `fixity hash -z` writes them).
    #[arg(short = 'z', long)]
    pub zero: bool,
    /// Print one JSON object per checked line instead of `name: OK` lines.
    #[arg(long)]
    pub json: bool,
    /// Refuse lines whose path is absolute or climbs out with `..` (without it, such
    /// lines are checked, as coreutils does, with one notice per manifest).
    #[arg(long)]
    pub confine: bool,
    /// Audit mode (hashdeep -a): hash every file under the PATHs (default: the current
    /// directory) with the known files' algorithms and report files matched, moved,
    /// partially matched and new, and known files not found.
    #[arg(long, requires = "known")]
    pub audit: bool,
    /// A hashdeep file of known hashes for --audit (repeat for several).
    #[arg(short = 'k', long = "known", value_name = "FILE", requires = "audit")]
    pub known: Vec<PathBuf>,
    /// Verify the CRC32 embedded in each FILE's name (`name [1A2B3C4D].ext`), as
    /// `rhash --check-embedded` does: the arguments are the files, not manifests.
    #[arg(long)]
    pub check_embedded: bool,
    /// Drop-in mode: print exactly what coreutils prints (no notices of fixity's own).
    #[arg(skip)]
    pub coreutils: bool,
    /// Drop-in `cksum -c` (coreutils 9.1): without `-a`, only tagged lines count, and
    /// warnings name the algorithm of the last tagged line (CRC before any).
    #[arg(skip)]
    pub cksum_tags: bool,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Manifests; `-` or nothing means standard input. With --audit: the files and trees
    /// to audit.
    #[arg(value_name = "MANIFEST")]
    pub manifests: Vec<OsString>,
}

#[derive(Args, Debug)]
pub struct AlgorithmsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Leave out the speed column (it is measured on this machine, in memory, each run).
    #[arg(long)]
    pub no_speed: bool,
}

/// Parses a byte count such as `64M` or `1G` for clap.
fn parse_size_arg(text: &str) -> Result<u64, String> {
    fixity::units::parse_size(text).ok_or_else(|| format!("not a size: {text:?} (try 64M)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }

    /// Subcommands are built when used (`defer`): a flattened argument struct with a doc
    /// comment would then replace the subcommand's own about line. Built or not, every
    /// command says the same.
    #[test]
    fn deferred_arguments_leave_every_about_line_as_it_was() {
        fn abouts(cmd: &clap::Command, path: &str, out: &mut Vec<(String, String, String)>) {
            for sub in cmd.get_subcommands() {
                let name = format!("{path} {}", sub.get_name());
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                let long = sub.get_long_about().map(|a| a.to_string()).unwrap_or_default();
                out.push((name.clone(), about, long));
                abouts(sub, &name, out);
            }
        }
        let eager = Cli::command();
        let mut before = Vec::new();
        abouts(&eager, "fixity", &mut before);
        let mut built = Cli::command();
        built.build();
        let mut after = Vec::new();
        abouts(&built, "fixity", &mut after);
        assert!(before.len() > 20, "{} commands", before.len());
        // Nested subcommands exist only once their parent is built.
        after.retain(|(name, ..)| before.iter().any(|(n, ..)| n == name));
        assert_eq!(before, after);
        let hash = built.find_subcommand("hash").unwrap();
        assert!(
            hash.get_arguments().any(|a| a.get_long() == Some("algorithm")),
            "hash built with its arguments"
        );
    }

    /// The rule behind the test above, for the nested subcommands it cannot see unbuilt:
    /// no argument struct has a doc comment (clap would make it the about line).
    #[test]
    fn argument_structs_have_no_doc_comment() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cli");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (i, line) in lines.iter().enumerate() {
                if !(line.starts_with("#[derive(") && line.contains("Args")) {
                    continue;
                }
                checked += 1;
                let attrs_above = lines[..i]
                    .iter()
                    .rev()
                    .take_while(|l| l.starts_with("#[") || l.starts_with("///"));
                let attrs_below = lines[i + 1..]
                    .iter()
                    .take_while(|l| l.starts_with("#[") || l.starts_with("///"));
                for l in attrs_above.chain(attrs_below) {
                    assert!(
                        !l.starts_with("///"),
                        "{}:{}: a doc comment on an argument struct",
                        path.display(),
                        i + 1
                    );
                }
            }
        }
        assert!(checked > 20, "{checked} argument structs");
    }

    #[test]
    fn last_of_quiet_status_warn_wins() {
        let c = Cli::try_parse_from(["fixity", "check", "--status", "--quiet", "m"]).unwrap();
        let Command::Check(a) = c.command else { panic!() };
        assert!(a.quiet && !a.status);
    }
}
