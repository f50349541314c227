//! What `--help` says after the options: each command's exit statuses, and notes.

pub(super) const HASH_EXIT: &str = "Exit status: 0 every file hashed; 1 some file could not be read (it is \
named on stderr, the others are hashed); 2 could not run (usage, an unknown algorithm or \
format, an output that cannot be written).";

pub(super) const BAG_EXIT: &str = "Exit status: 0 valid, warnings or not (create: made); 1 invalid, or \
warnings with --strict (create: a file could not be read); 2 could not run (not a directory, already a \
bag, a half-made bag, usage).";

pub(super) const PLAN_EXIT: &str = "Exit status: 0 planned; 1 planned, but the walk could not enter some directories (they are reported again by the merge); 2 no plan (usage, an unwritable directory, a directory that holds results of a plan).";

pub(super) const SCRUB_EXIT: &str = "Exit status: 0 clean; 1 findings (corrupt, missing or unreadable files); \
2 could not run (usage, a catalog that cannot be opened, read or written, a failed write of the \
report). Findings are printed before a catalog error is. With --remote: 0 every object holds the \
recorded content (objects the catalog has no record of are listed, not findings); 1 an object \
differs, is missing, could not be proven or looked at; 2 no comparison (usage, the listing or the \
catalog failed: no bucket, no credentials).";

pub(super) const RESOLVE_EXIT: &str = "Exit status: 0 done; 2 nothing done (a PATH outside the tree, not \
recorded, or in the wrong state; the catalog busy or failing).";

pub(super) const CHECK_EXIT: &str = "Exit status: 0 every listed file matches; 1 a file differs, is missing \
or unreadable, or a line was refused (as `sha256sum -c`); 2 could not run (usage, a manifest \
that cannot be read).";

pub(super) const COMPLETIONS_HELP: &str = "Install, for example: fixity completions bash > \
/usr/share/bash-completion/completions/fixity; fixity completions zsh > \
/usr/share/zsh/vendor-completions/_fixity; fixity completions fish > \
/usr/share/fish/vendor_completions.d/fixity.fish.";

pub(super) const MERGE_EXIT: &str = "Exit status: 0 merged (with --status: every part done); 1 merged, with files that could not be read or changed since the plan (with --status: some part not done); 2 no merge (a part missing, of another plan, or covering other files; a bad plan).";

pub(super) const READ_EXIT: &str = "Exit status: 0 done; 1 some records could not be written out; 2 could \
not run (no catalog, not a fixity catalog, a read error).";

pub(super) const STATUS_EXIT: &str = "Exit status: 0 shown; 1 with --max-age, the last complete \
verification pass is older than AGE (or there is none); 2 could not run (no catalog, not a fixity \
catalog, a read error, metrics not written). With --nagios: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN \
(the catalog could not be read).";

pub(super) const REPORT_EXIT: &str = "Exit status: 0 written (findings or not: the report shows them); 2 could \
not run (no catalog, not a fixity catalog, a read error, an output that cannot be written, \
neither --html nor --json).";

#[cfg(feature = "serve")]
pub(super) const SERVE_EXIT: &str = "Exit status: 0 stopped by a signal (Ctrl-C, SIGTERM) or a user \
added; 2 could not run (usage, an address that cannot be listened on, a non-loopback address \
without --users or --proxy-header, a users file, certificate or catalog that cannot be read).";

pub(super) const IMPORT_EXIT: &str = "Exit status: 0 every entry of the source imported (or already in the \
catalog); 1 some entries refused (missing, another size or mtime, a path outside the tree, another \
algorithm, malformed): each is listed; 2 could not run (usage, a source or catalog that cannot be \
read, a catalog holding another algorithm).";

pub(super) const PROTECT_EXIT: &str = "Exit status: 0 every recorded file is in an up-to-date \
recovery set (or left out only for a finding that stands); 1 a file was found corrupt while \
read, or left out (changed since the catalog recorded it, unreadable): each is listed; 2 could \
not run (usage, a catalog or recovery directory that cannot be read or written).";

pub(super) const REPAIR_EXIT: &str = "Exit status: 0 every file asked for (default: every file \
with a finding) is repaired or reads as recorded; 1 some could not be repaired (too few \
recovery slices: how many more are needed; no recovery set or replica copy holds it; changed \
since recorded): each is listed with why, and its finding stands; 2 could not run (usage, a \
catalog, tree or replica that cannot be read).";

pub(super) const DUPS_EXIT: &str = "Exit status: 0 done, duplicates found or not; 1 some file \
could not be looked at or read (each is named on stderr and left out; the groups of the others \
are listed); 2 could not run (usage, no catalog, a catalog that cannot be read, a temporary \
file that cannot be written).";

pub(super) const ROLES_EXIT: &str = "Roles are created without a password: set one (ALTER ROLE \
web1 PASSWORD '...', then ~/.pgpass on the host) or use certificates. Running it again is harmless; \
run it again with more --host to add hosts. Exit status: 0 printed, or applied; 2 could not run \
(usage, a role name PostgreSQL would change, a catalog that cannot be reached, an administrator \
who may not create roles or hand over the schema, a host or monitor role that is a superuser or \
has BYPASSRLS).";

pub(super) const AUDIT_PROOF_EXIT: &str = "Exit status: 0 intact (the signature verifies, the chain \
is whole and holds the head, the records give the last root, every file read holds its recorded \
content); 1 the chain breaks somewhere (each break on standard output); 2 could not run (usage, a \
head that cannot be read or is not one, a catalog that cannot be opened or keeps no chain).";
