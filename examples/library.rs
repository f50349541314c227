//! fixity as a library: hash a tree into a manifest, check the manifest, and scan the tree
//! into a catalog, then find a flipped byte. Run it with `cargo run --example library`;
//! it prints what each job reported and exits 1 if any step does not come out as it should.
//!
//! Every job is a function that takes a plan and hands typed events back in order; what to
//! print (or not) is the caller's choice, as it is the `fixity` binary's.

use fixity::catalog::{Class, OpenOptions, StoreSpec, open_store};
use fixity::check::{self, CheckPlan, Event, Outcome};
use fixity::formats::{FileEntry, OutputFormat, WriteOptions};
use fixity::hashing::{self, HashEvent, HashPlan, Inputs};
use fixity::pipeline::Config;
use fixity::scrub::{self, Mode, Options};
use fixity::sources::Sources;
use fixity::walk::Exclude;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("fixity-example-{}", std::process::id()));
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("sub"))?;
    std::fs::write(tree.join("a.txt"), b"hello\n")?;
    std::fs::write(tree.join("sub/b.bin"), vec![7u8; 100_000])?;
    let result = run(&dir, &tree);
    std::fs::remove_dir_all(&dir)?;
    result
}

fn run(dir: &Path, tree: &Path) -> Result<(), Box<dyn std::error::Error>> {
    // 1. Hash the tree into a coreutils-style SHA-256 manifest.
    let format = OutputFormat::Gnu;
    let algos = format.algorithms(Some(vec![fixity::algo::lookup("sha256").unwrap()]));
    let mut writer =
        format.writer(algos.clone(), WriteOptions::default()).map_err(|r| r.hash_message())?;
    let mut manifest = Vec::new();
    writer.header(&mut manifest);
    let plan = HashPlan {
        inputs: Inputs::Sources(Sources::new(vec![tree.into()])),
        algos,
        config: Config::for_storage(false),
    };
    let mut failures = 0;
    hashing::run(plan, |event| {
        match event {
            HashEvent::Hashed { name, hashed } => {
                let file =
                    FileEntry { name, size: hashed.size, mtime: None, digests: &hashed.digests };
                writer.record(&file, &mut manifest).expect("names without newlines");
            }
            other => {
                eprintln!("hash: {other:?}");
                failures += 1;
            }
        }
        true
    });
    writer.footer(&mut manifest);
    print!("{}", String::from_utf8_lossy(&manifest));
    let manifest_path = dir.join("tree.sha256");
    std::fs::write(&manifest_path, &manifest)?;

    // 2. Check it: every listed file comes back as one event with its outcome.
    let plan = CheckPlan { manifests: vec![manifest_path.into()], ..CheckPlan::default() };
    let mut ok = 0;
    check::run(&plan, &Config::for_storage(false), &mut |event| {
        match event {
            Event::Checked { outcome: Outcome::Ok, .. } => ok += 1,
            // The end of the manifest; and a note that its names are absolute paths
            // (they lead outside its directory), which is what this example wrote.
            Event::ManifestDone { .. } | Event::Outside { .. } => {}
            other => {
                eprintln!("check: {other:?}");
                failures += 1;
            }
        }
        true
    });
    println!("check: {ok} files OK");

    // 3. Scan the tree into a SQLite catalog, flip a byte behind the catalog's back
    //    keeping the size and modification time, and verify: the inode's change time
    //    (ctime) moved, which bitrot never does, so it is an edit that put its mtime back
    //    (changed), not rot (corrupt); never repaired over.
    let spec = StoreSpec::Sqlite(dir.join("catalog.db"));
    let victim = tree.join("sub/b.bin");
    let scan = |mode| -> Result<scrub::Report, Box<dyn std::error::Error>> {
        let how = OpenOptions { create: mode == Mode::Scan, ..OpenOptions::default() };
        let mut store = open_store(&spec, &how)?;
        let opts = Options {
            mode,
            follow: false,
            exclude: Exclude::default(),
            max_bytes: None,
            max_duration: None,
            engine: Config::for_storage(false),
            modify_window_ns: None,
        };
        Ok(scrub::run(tree, store.as_mut(), &opts, &mut |notice| eprintln!("{notice:?}"))?)
    };
    let first = scan(Mode::Scan)?;
    let mtime = std::fs::metadata(&victim)?.modified()?;
    let mut bytes = std::fs::read(&victim)?;
    bytes[50_000] ^= 1;
    std::fs::write(&victim, &bytes)?;
    std::fs::File::options().write(true).open(&victim)?.set_modified(mtime)?;
    let second = scan(Mode::Verify)?;
    let count = |r: &scrub::Report, class| r.count(class);
    let changed = count(&second, Class::Changed);
    println!(
        "scan: {} files new; verify: {} corrupt, {} changed with the mtime kept",
        count(&first, Class::New),
        count(&second, Class::Corrupt),
        changed
    );

    if failures > 0 || ok != 2 || changed != 1 {
        eprintln!("the example did not come out as expected");
        std::process::exit(1);
    }
    Ok(())
}
