//! One tree hashed in parts on many machines (docs/scale.md): `fixity plan` freezes the file
//! list into parts, each part is hashed on its own (`fixity hash --plan`), and
//! `fixity merge` joins them into the manifest one `fixity hash` run would have written,
//! byte for byte. The parts run as a real Slurm job array (`.ci/slurm-up` starts a
//! one-node cluster), and as a Kubernetes Indexed Job's pods would: one process per index,
//! `JOB_COMPLETION_INDEX` alone in the environment, in any order, some twice. The example
//! Indexed Job in docs/ is parsed and held to the same contract.

use crate::util::{self, fixity, run};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use yaml_rust2::{Yaml, YamlLoader};

/// How many parts the tests plan.
const PARTS: usize = 4;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Fails with the command's stderr unless it exited 0.
fn ok(what: &str, out: &Output) {
    assert!(out.status.success(), "{what}: {:?}\n{}", out.status, text(&out.stderr));
}

/// A tree of a few hundred files under `dir/tree`: small files of random sizes in nested
/// directories, a few large ones (so balancing by bytes matters), an empty file, a name
/// with a space and one that is not UTF-8.
fn make_tree(dir: &Path) {
    let mut rng = util::Rng(0x5ca1_ab1e);
    for i in 0..300 {
        let mut rel = std::path::PathBuf::from("tree");
        for _ in 0..rng.below(3) {
            rel.push(format!("d{}", rng.below(4)));
        }
        rel.push(format!("f{i:03}"));
        let len = if rng.chance(3) { 256 * 1024 + rng.below(512 * 1024) } else { rng.below(6000) };
        let data: Vec<u8> = (0..len.div_ceil(8)).flat_map(|_| rng.next().to_le_bytes()).collect();
        util::write(dir, rel, &data[..len]);
    }
    util::write(dir, "tree/empty", b"");
    util::write(dir, "tree/with space.txt", b"a name with a space\n");
    util::write(dir, std::ffi::OsStr::from_bytes(b"tree/d1/caf\xe9.txt"), b"latin-1 name\n");
}

/// The manifest one machine writes: `fixity hash -a sha256 tree`, run in `dir`.
fn one_machine(dir: &Path) -> Vec<u8> {
    let out = run(dir, ["hash", "-a", "sha256", "tree"]);
    ok("fixity hash -a sha256 tree", &out);
    assert!(out.stdout.split(|&b| b == b'\n').count() > 300, "the tree is all there");
    out.stdout
}

/// A temporary directory with the test tree, planned there:
/// `fixity plan tree --parts 4 -o plan`.
fn planned_tree() -> tempfile::TempDir {
    let d = util::tempdir();
    make_tree(d.path());
    let parts = PARTS.to_string();
    let out = run(d.path(), ["plan", "tree", "--parts", &parts, "-o", "plan"]);
    ok("fixity plan", &out);
    assert!(!text(&out.stdout).trim().is_empty(), "plan prints its id");
    d
}

/// `fixity merge plan` in `dir`, the manifest on stdout or, with `to_file`, written with
/// `-o merged.sha256`: the manifest and the root line (`root blake3:... over ...`).
fn merge(dir: &Path, to_file: bool) -> (Vec<u8>, String) {
    let mut args = vec!["merge", "plan"];
    if to_file {
        args.extend(["-o", "merged.sha256"]);
    }
    let out = run(dir, &args);
    ok("fixity merge", &out);
    // The root line is on stderr after a manifest on stdout, and on stdout with -o.
    let said = if to_file { text(&out.stdout) } else { text(&out.stderr) };
    let root = said.lines().find_map(|l| l.trim_start_matches("fixity: ").strip_prefix("root "));
    let root = root.unwrap_or_else(|| panic!("merge prints its root digest:\n{said}"));
    let manifest =
        if to_file { std::fs::read(dir.join("merged.sha256")).unwrap() } else { out.stdout };
    (manifest, root.to_owned())
}

/// `fixity merge plan --status --json`: its exit code and each part's state, in order.
fn status(dir: &Path) -> (Option<i32>, Vec<String>) {
    let out = run(dir, ["merge", "plan", "--status", "--json"]);
    let said: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("--status --json: {e}:\n{}", text(&out.stdout)));
    let parts = said["parts"].as_array().expect("--status --json lists the parts");
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p["part"].as_u64(), Some(i as u64), "parts in order: {said}");
    }
    let states = parts.iter().map(|p| p["state"].as_str().unwrap_or("?").to_owned());
    (out.status.code(), states.collect())
}

/// Asserts that `--status` says every part is done, in JSON and in words.
fn all_done(dir: &Path) {
    let (code, states) = status(dir);
    assert_eq!(states, vec!["done"; PARTS], "every part is done");
    assert_eq!(code, Some(0), "--status --json exits 0 when every part is done");
    let out = run(dir, ["merge", "plan", "--status"]);
    assert_eq!(out.status.code(), Some(0), "--status exits 0:\n{}", text(&out.stdout));
}

/// `fixity hash --plan plan -a sha256` with the index as Kubernetes gives it: only
/// `JOB_COMPLETION_INDEX`, whatever the test process has.
fn as_pod(dir: &Path, index: &str) -> Output {
    fixity(dir)
        .args(["hash", "--plan", "plan", "-a", "sha256"])
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env("JOB_COMPLETION_INDEX", index)
        .output()
        .expect("run fixity")
}

/// Why Slurm cannot run a job here, if it cannot.
fn slurm_unready() -> Option<String> {
    for tool in ["sbatch", "sinfo"] {
        if !util::have(tool) {
            return Some(format!("{tool} is not installed (.ci/slurm-up installs and starts it)"));
        }
    }
    let out = match Command::new("sinfo").args(["-h", "-o", "%T"]).output() {
        Ok(out) => out,
        Err(e) => return Some(format!("sinfo: {e}")),
    };
    if !out.status.success() {
        return Some(format!("sinfo failed: {}", text(&out.stderr).trim()));
    }
    // A node busy with the other Slurm test's array ("allocated", "mixed", "completing")
    // is up: this test's array waits in the queue for it. Only a node that cannot take a
    // job (down, drained, failing, or not responding: "idle*") means the cluster is not
    // ready.
    let states = text(&out.stdout);
    let up = |s: &str| matches!(s.trim(), "idle" | "mixed" | "allocated" | "completing");
    if states.lines().any(up) {
        return None;
    }
    Some(format!("no node is up (sinfo -h -o %T: {:?}); run .ci/slurm-up", states.trim()))
}

/// `s` quoted for the shell of `sbatch --wrap`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Everything the array's tasks wrote to their `slurm-*.out` files, for a failure message.
fn slurm_logs(dir: &Path) -> String {
    let mut logs = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("slurm-") {
            let body = std::fs::read(e.path()).unwrap_or_default();
            logs.push_str(&format!("--- {name}\n{}", text(&body)));
        }
    }
    logs
}

/// Runs `wrap` (a shell command line) as a Slurm array of `PARTS` tasks in `dir`, two at
/// a time, and waits for it; the output of `sbatch --wait` (its status is the highest of
/// the tasks').
fn sbatch_array(dir: &Path, wrap: &str) -> Output {
    let name = format!("fixity-scale-{}", std::process::id());
    let mut child = Command::new("sbatch")
        .args(["--wait", "--quiet", "--time=10", "--job-name", &name])
        .arg(format!("--array=0-{}%2", PARTS - 1))
        .arg("--chdir")
        .arg(dir)
        .arg("--output")
        .arg(dir.join("slurm-%A_%a.out"))
        .args(["--wrap", wrap])
        // The tasks get this environment (sbatch --export=ALL): the same locale as the
        // one-machine run.
        .env("LC_ALL", "C")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sbatch");
    // A bound on a broken cluster (a job that never leaves the queue), not a timing:
    // the array takes seconds.
    let limit = Instant::now() + Duration::from_secs(900);
    while child.try_wait().expect("wait sbatch").is_none() {
        if Instant::now() > limit {
            let _ = Command::new("scancel").args(["--name", &name]).status();
            let _ = child.kill();
            panic!("the Slurm array did not end in 15 minutes\n{}", slurm_logs(dir));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = child.wait_with_output().expect("sbatch output");
    let logs = slurm_logs(dir);
    for i in 0..PARTS {
        assert!(logs.contains(&format!("_{i}.out\n")), "array task {i} ran:\n{logs}");
    }
    out
}

#[test]
fn slurm_array_parts_merge_to_the_one_machine_manifest() {
    if let Some(why) = slurm_unready() {
        return util::missing("slurm", &why);
    }
    let d = planned_tree();
    let dir = d.path();
    let wrap = format!("{} hash --plan plan -a sha256", sh_quote(env!("CARGO_BIN_EXE_fixity")));
    let out = sbatch_array(dir, &wrap);
    assert!(
        out.status.success(),
        "sbatch --wait: {:?}\n{}{}",
        out.status,
        text(&out.stderr),
        slurm_logs(dir)
    );
    all_done(dir);
    let want = one_machine(dir);
    let (merged, root) = merge(dir, true);
    assert!(merged == want, "the merged manifest (-o) differs from one machine's");
    let (merged, root_again) = merge(dir, false);
    assert!(merged == want, "the merged manifest (stdout) differs from one machine's");
    assert_eq!(root, root_again, "one root digest, with -o or without");
}

#[test]
fn slurm_array_verifies_a_catalog_part_by_part() {
    if let Some(why) = slurm_unready() {
        return util::missing("slurm", &why);
    }
    let d = planned_tree();
    let dir = d.path();
    let out = run(dir, ["scan", "-q", "tree"]);
    ok("scan", &out);
    // One file rots after the scan: same size, same mtime, other bytes.
    let victim = std::fs::read_dir(dir.join("tree/d1"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name().unwrap().as_bytes().starts_with(b"f")
                && std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > 0)
        })
        .expect("a file");
    let mtime = std::fs::metadata(&victim).unwrap().modified().unwrap();
    let mut data = std::fs::read(&victim).unwrap();
    data[0] ^= 1;
    std::fs::write(&victim, &data).unwrap();
    std::fs::File::options().write(true).open(&victim).unwrap().set_modified(mtime).unwrap();
    let wrap = format!("{} verify --plan plan", sh_quote(env!("CARGO_BIN_EXE_fixity")));
    let out = sbatch_array(dir, &wrap);
    let logs = slurm_logs(dir);
    assert!(!out.status.success(), "the part with the finding fails the array:\n{logs}");
    // Reported once, by the part that owns it; every part ran as a verify of its files.
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    let reports = logs.lines().filter(|l| l.starts_with("CORRUPT") && l.contains(&name)).count();
    assert_eq!(reports, 1, "{logs}");
    for i in 0..PARTS {
        assert!(logs.contains(&format!("part {i} of {PARTS}")), "{logs}");
    }
    // The catalog holds the finding: a plain verify reports it too.
    let out = run(dir, ["verify", "-q", "tree"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains(&name), "{}", text(&out.stdout));
}

#[test]
fn indexed_pods_in_any_order_merge_to_the_one_machine_manifest() {
    let d = planned_tree();
    let dir = d.path();
    // Pods start in any order; the last index has not run yet.
    for i in ["2", "0", "3"] {
        ok(&format!("JOB_COMPLETION_INDEX={i}"), &as_pod(dir, i));
    }
    let (code, states) = status(dir);
    assert_eq!(states, ["done", "missing", "done", "done"], "--status says part 1 is missing");
    assert_eq!(code, Some(1), "--status exits 1 while a part is missing");
    let early = run(dir, ["merge", "plan", "-o", "merged.sha256"]);
    assert_eq!(early.status.code(), Some(2), "merge refuses while part 1 is missing");
    let why = text(&early.stderr);
    assert!(why.contains("part-1 missing"), "merge names part 1: {why}");
    assert!(!why.contains("part-0") && !why.contains("part-2"), "and only part 1: {why}");
    assert!(!dir.join("merged.sha256").exists(), "a refused merge writes nothing");

    ok("JOB_COMPLETION_INDEX=1", &as_pod(dir, "1"));
    all_done(dir);
    let (first, root) = merge(dir, false);
    let want = one_machine(dir);
    assert!(first == want, "merged manifest differs from one machine's");

    // A pod retried after it succeeded (a node lost after the write) changes nothing.
    ok("JOB_COMPLETION_INDEX=0 again", &as_pod(dir, "0"));
    all_done(dir);
    let (again, root_again) = merge(dir, true);
    assert!(again == want, "merge after a re-run part differs from one machine's");
    assert_eq!(root_again, root, "the root digest is the same after a re-run part");

    // The root is over the sorted records: the same for the tree in one part.
    ok("plan in one part", &run(dir, ["plan", "tree", "--parts", "1", "-o", "whole"]));
    ok("the one part", &run(dir, ["hash", "--plan", "whole", "--part", "0", "-a", "sha256"]));
    let whole = run(dir, ["merge", "whole"]);
    ok("merge whole", &whole);
    assert!(whole.stdout == want, "one part merges to the one-machine manifest too");
    let said = text(&whole.stderr);
    assert!(said.contains(&format!("root {root}")), "the same root in one part: {said}");
}

#[test]
fn a_failed_part_is_mended_by_running_its_index_again() {
    let d = planned_tree();
    let dir = d.path();
    let lost = dir.join("tree/with space.txt");
    let (data, mtime) = (std::fs::read(&lost).unwrap(), lost.metadata().unwrap().modified());
    std::fs::remove_file(&lost).unwrap();
    let codes: Vec<_> = (0..PARTS).map(|i| as_pod(dir, &i.to_string()).status.code()).collect();
    let failed: Vec<_> = (0..PARTS).filter(|&i| codes[i] != Some(0)).collect();
    assert_eq!(failed.len(), 1, "one part holds the lost file: exit codes {codes:?}");
    let bad = failed[0];
    assert_eq!(codes[bad], Some(1), "a file not read: exit 1");
    let (code, states) = status(dir);
    assert_eq!(states[bad], "failed", "--status: {states:?}");
    assert_eq!(code, Some(1), "--status exits 1 with a failed part");
    let out = run(dir, ["merge", "plan"]);
    assert_eq!(out.status.code(), Some(1), "a failed part merges as a run with a lost file");
    assert!(text(&out.stderr).contains("with space.txt"), "{}", text(&out.stderr));

    // Put back as it was planned, and run that index alone again.
    std::fs::write(&lost, &data).unwrap();
    std::fs::File::options().write(true).open(&lost).unwrap().set_modified(mtime.unwrap()).unwrap();
    ok("the failed index again", &as_pod(dir, &bad.to_string()));
    all_done(dir);
    let (merged, _) = merge(dir, true);
    assert!(merged == one_machine(dir), "the mended merge is the one-machine manifest");
}

#[test]
fn the_part_index_comes_from_the_flag_then_slurm_then_kubernetes() {
    let d = planned_tree();
    let dir = d.path();
    let hash = || {
        let mut c = fixity(dir);
        c.args(["hash", "--plan", "plan", "-a", "sha256"])
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("JOB_COMPLETION_INDEX");
        c
    };

    let none = hash().output().unwrap();
    assert_eq!(none.status.code(), Some(2), "no index given: exit 2");
    let why = text(&none.stderr);
    for source in ["--part", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"] {
        assert!(why.contains(source), "the error names {source}: {why}");
    }

    let too_far = PARTS.to_string();
    for (flag, env) in [
        (Some(too_far.as_str()), None),
        (None, Some(("SLURM_ARRAY_TASK_ID", too_far.as_str()))),
        (None, Some(("JOB_COMPLETION_INDEX", too_far.as_str()))),
        (None, Some(("JOB_COMPLETION_INDEX", "-1"))),
    ] {
        let mut c = hash();
        if let Some(part) = flag {
            c.args(["--part", part]);
        }
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag:?} {env:?}: out of range, exit 2");
        assert!(!out.stderr.is_empty(), "{flag:?} {env:?}: says why");
    }
    assert!(!dir.join(format!("plan/part-{PARTS}")).exists(), "no part past the last");

    // --part wins over both variables; SLURM_ARRAY_TASK_ID over JOB_COMPLETION_INDEX.
    let out = hash()
        .args(["--part", "2"])
        .env("SLURM_ARRAY_TASK_ID", "9")
        .env("JOB_COMPLETION_INDEX", "9")
        .output()
        .unwrap();
    ok("--part 2 with both variables out of range", &out);
    assert!(dir.join("plan/part-2").exists(), "--part 2 wrote part 2");
    let out = hash().env("SLURM_ARRAY_TASK_ID", "1").env("JOB_COMPLETION_INDEX", "9").output();
    ok("SLURM_ARRAY_TASK_ID=1 with JOB_COMPLETION_INDEX=9", &out.unwrap());
    assert!(dir.join("plan/part-1").exists(), "SLURM_ARRAY_TASK_ID=1 wrote part 1");
    for i in 0..PARTS {
        let written = dir.join(format!("plan/part-{i}")).exists();
        assert_eq!(written, i == 1 || i == 2, "only parts 1 and 2 are written (part {i})");
    }
}

// --- The example Indexed Job (docs/kubernetes-indexed-job.yaml) ------------------------------

/// The words a container runs: `command` and `args`, a `sh -c` script split at blanks
/// and semicolons.
fn words(container: &Yaml) -> Vec<String> {
    let argv = [&container["command"], &container["args"]];
    let strings = argv.into_iter().filter_map(Yaml::as_vec).flatten().filter_map(Yaml::as_str);
    strings
        .flat_map(|s| s.split(|c: char| c.is_whitespace() || c == ';'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The word after `fixity SUB` ... `FLAG` in `w`, e.g. the plan directory of
/// `fixity hash --plan DIR`.
fn flag_after(w: &[String], sub: &str, flag: &str) -> Option<String> {
    let start = w.windows(2).position(|p| p[0] == "fixity" && p[1] == sub)?;
    let rest = &w[start + 2..];
    let end = rest.iter().position(|x| x == "fixity").unwrap_or(rest.len());
    let at = rest[..end].iter().position(|x| x == flag)?;
    rest.get(at + 1).cloned()
}

/// The one container of a Job's pod.
fn container(job: &Yaml) -> &Yaml {
    let cs = job["spec"]["template"]["spec"]["containers"].as_vec().expect("containers");
    assert_eq!(cs.len(), 1, "one container per pod");
    &cs[0]
}

/// The claim behind the volume mounted in a Job's container, its mount path and the
/// container's working directory (which must lie inside the mount).
fn shared_volume(job: &Yaml) -> (String, String, String) {
    let c = container(job);
    let pod = &job["spec"]["template"]["spec"];
    let mounts = c["volumeMounts"].as_vec().expect("the container mounts a volume");
    let workdir = c["workingDir"].as_str().expect("a workingDir (the plan's cwd)").to_owned();
    for m in mounts {
        let at = m["mountPath"].as_str().expect("mountPath").trim_end_matches('/').to_owned();
        if workdir != at && !workdir.starts_with(&format!("{at}/")) {
            continue;
        }
        let volumes = pod["volumes"].as_vec().expect("volumes");
        let v = volumes.iter().find(|v| v["name"] == m["name"]).expect("the mounted volume");
        let claim = v["persistentVolumeClaim"]["claimName"].as_str();
        let claim = claim.expect("the volume is a PersistentVolumeClaim, shared by all pods");
        return (claim.to_owned(), at, workdir);
    }
    panic!("the workingDir {workdir} is on a mounted volume");
}

#[test]
fn the_kubernetes_example_is_an_indexed_job_over_the_plans_parts() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/kubernetes-indexed-job.yaml");
    let source = std::fs::read_to_string(&path).expect("docs/kubernetes-indexed-job.yaml");
    let docs = YamlLoader::load_from_str(&source).expect("the example is valid YAML");
    assert!(docs.iter().all(|d| d["kind"].as_str() == Some("Job")), "every document is a Job");
    let runs = |sub: &str| -> &Yaml {
        let mut found = docs
            .iter()
            .filter(|d| words(container(d)).windows(2).any(|w| w[0] == "fixity" && w[1] == sub));
        let job = found.next().unwrap_or_else(|| panic!("a Job runs fixity {sub}"));
        assert!(found.next().is_none(), "one Job runs fixity {sub}");
        job
    };
    let (planner, hasher, merger) = (runs("plan"), runs("hash"), runs("merge"));

    // The parts: an Indexed Job with one completion per part of the plan.
    let spec = &hasher["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let plan_words = words(container(planner));
    let parts = flag_after(&plan_words, "plan", "--parts").expect("the plan declares --parts");
    let parts: i64 = parts.parse().expect("--parts is a number");
    assert_eq!(spec["completions"].as_i64(), Some(parts), "completions = the plan's --parts");
    let parallelism = spec["parallelism"].as_i64().expect("parallelism is set");
    assert!((1..=parts).contains(&parallelism), "1 <= parallelism <= completions");

    // Each pod hashes the part of its index: `fixity hash --plan DIR`, the index from
    // JOB_COMPLETION_INDEX (so no --part), in the directory the plan was made in.
    let hash_words = words(container(hasher));
    let plan_dir = flag_after(&hash_words, "hash", "--plan").expect("fixity hash --plan DIR");
    assert!(flag_after(&hash_words, "hash", "--part").is_none(), "the index is the pod's");
    assert_eq!(flag_after(&plan_words, "plan", "-o"), Some(plan_dir.clone()), "the same plan");
    let merge_at = words(container(merger))
        .windows(3)
        .any(|w| w[..2] == ["fixity", "merge"] && w[2] == plan_dir);
    assert!(merge_at, "the merge Job runs fixity merge {plan_dir}");

    // The tree and the plan are on one shared volume, seen at the same place by all.
    let volume = shared_volume(hasher);
    assert_eq!(shared_volume(planner), volume, "plan and parts share the volume and cwd");
    assert_eq!(shared_volume(merger), volume, "merge and parts share the volume and cwd");

    // A failed index is run again.
    let restart = hasher["spec"]["template"]["spec"]["restartPolicy"].as_str();
    match spec["backoffLimitPerIndex"].as_i64() {
        Some(n) => {
            assert!(n >= 1, "backoffLimitPerIndex lets a failed index run again");
            assert_eq!(restart, Some("Never"), "backoffLimitPerIndex needs restartPolicy Never");
        }
        None => {
            assert!(spec["backoffLimit"].as_i64().is_some_and(|n| n >= 1), "backoffLimit >= 1");
            assert!(matches!(restart, Some("Never" | "OnFailure")), "restartPolicy is set");
        }
    }
}
