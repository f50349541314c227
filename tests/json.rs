//! Every JSON output is checked against its schema in docs/json/ (JSON Schema draft
//! 2020-12, validated by Python's `jsonschema`): real output of the real binary, over a
//! tree that makes each kind of object appear (a non-UTF-8 name, a corrupt, a moved and a
//! missing file, a malformed manifest line, a bag with a problem).

use crate::util::{self, fixity, tempdir, write};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const VALIDATE: &str = r#"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
text = open(sys.argv[3]).read()
docs = [json.loads(l) for l in text.splitlines() if l.strip()] if sys.argv[2] == "lines" else [json.loads(text)]
errors = [f"object {i}: {e.message} at {list(e.absolute_path)}" for i, d in enumerate(docs) for e in validator.iter_errors(d)]
print("\n".join(errors[:20]) if errors else len(docs))
sys.exit(1 if errors or not docs else 0)
"#;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json")
}

/// Checks `output` (JSON lines, or one document) against docs/json/NAME.schema.json.
fn validate(name: &str, lines: bool, output: &[u8], scratch: &Path) {
    let file = scratch.join(format!("{name}.out"));
    std::fs::write(&file, output).unwrap();
    let out = Command::new("python3")
        .args(["-c", VALIDATE])
        .arg(schema_dir().join(format!("{name}.schema.json")))
        .arg(if lines { "lines" } else { "doc" })
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(output)
    );
}

fn run(dir: &Path, args: &[&str]) -> Vec<u8> {
    fixity(dir).args(args).output().unwrap().stdout
}

fn rot(p: &Path, data: &[u8]) {
    let before = std::fs::metadata(p).unwrap().modified().unwrap();
    std::fs::write(p, data).unwrap();
    std::fs::File::options().write(true).open(p).unwrap().set_modified(before).unwrap();
}

fn jsonschema_missing() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        util::missing("python3 jsonschema", "not installed (pip install jsonschema)");
    }
    !ok
}

#[test]
fn every_json_output_matches_its_schema() {
    if jsonschema_missing() {
        return;
    }
    let d = tempdir();
    let p = d.path();
    let scratch = tempdir();
    let s = scratch.path();
    write(p, "t/a", b"alpha");
    write(p, "t/sub/b", b"beta");
    write(p, "t/old/c", b"gamma, a file that moves");
    write(p, "t/gone", b"delta");
    let odd: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(b"t/n\xffame");
    std::fs::write(p.join(odd), b"odd").unwrap();
    let mut used = BTreeSet::new();
    let mut check = |name: &'static str, lines: bool, out: Vec<u8>| {
        validate(name, lines, &out, s);
        used.insert(name);
    };

    let mut hashed = run(p, &["hash", "--json", "-a", "sha256,md5", "-r", "t"]);
    hashed.extend(run(p, &["hash", "--json", "-a", "sha256", "t/nope"]));
    assert!(String::from_utf8_lossy(&hashed).contains("\"error\""));
    check("hash", true, hashed);

    let mut manifest = run(p, &["hash", "-a", "sha256", "-r", "t"]);
    manifest.extend_from_slice(
        b"not a line\n0000000000000000000000000000000000000000000000000000000000000000  t/gone2\n",
    );
    std::fs::write(p.join("m.sha256"), &manifest).unwrap();
    check("check", true, run(p, &["check", "--json", "m.sha256"]));
    std::fs::write(p.join("known.hd"), run(p, &["hash", "--format", "hashdeep", "-r", "t"]))
        .unwrap();

    check("scrub", true, run(p, &["scan", "--json", "t"]));
    rot(&p.join("t/a"), b"ALPHA");
    std::fs::remove_file(p.join("t/gone")).unwrap();
    std::fs::create_dir(p.join("t/new")).unwrap();
    std::fs::rename(p.join("t/old/c"), p.join("t/new/c")).unwrap();
    let verified = run(p, &["verify", "--json", "t"]);
    let text = String::from_utf8_lossy(&verified).into_owned();
    for field in ["\"recorded_digest\"", "\"moved_from\"", "\"missing\"", "\"summary\""] {
        assert!(text.contains(field), "{field} in {text}");
    }
    check("scrub", true, verified);
    check("audit", true, run(p, &["check", "--audit", "--json", "-k", "known.hd", "t"]));
    check("status", false, run(p, &["status", "--json", "--max-age", "1d", "t"]));

    // Tamper evidence: a tree's head, and an audit against a forged copy of it that also
    // finds a file (with a name that is not UTF-8) changed without its record.
    write(p, "pp/x", b"x");
    let odd_pp: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(b"pp/n\xffame");
    std::fs::write(p.join(odd_pp), b"odd").unwrap();
    run(p, &["scan", "pp"]);
    check("proof", false, run(p, &["status", "--proof", "--json", "pp"]));
    let head = String::from_utf8(run(p, &["status", "--proof", "pp"])).unwrap();
    let root = head.lines().find_map(|l| l.strip_prefix("root ")).unwrap().to_string();
    let other = format!("{}{}", if root.starts_with('0') { "1" } else { "0" }, &root[1..]);
    std::fs::write(s.join("forged.txt"), head.replace(&root, &other)).unwrap();
    rot(&p.join(odd_pp), b"ODD");
    let forged = s.join("forged.txt");
    let audited = run(p, &["audit-proof", "--json", "pp", "--head", forged.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&audited).into_owned();
    for kind in ["\"forged_head\"", "\"differs\"", "\"file\""] {
        assert!(text.contains(kind), "{kind} in {text}");
    }
    check("audit-proof", false, audited);

    // Recovery sets and repairs. t/a is corrupt and t/gone missing: both are left out of
    // the sets (findings), and no set can repair them; t/sub/b, protected, rots and is
    // repaired; the verify after it finds a set's volume damaged and re-makes it.
    let mut repaired = run(p, &["protect", "--json", "t"]);
    rot(&p.join("t/sub/b"), b"BETA");
    run(p, &["verify", "-q", "t"]);
    repaired.extend(run(p, &["protect", "--json", "-v", "t"]));
    repaired.extend(run(p, &["repair", "--json", "t"]));
    let text = String::from_utf8_lossy(&repaired).into_owned();
    for field in ["\"left_out\"", "\"set_made\"", "\"repaired\"", "\"unrepaired\"", "\"summary\""] {
        assert!(text.contains(field), "{field} in {text}");
    }
    check("repair", true, repaired);
    let par2 = p.join("t/.fixity/par2");
    let vol = std::fs::read_dir(&par2)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|v| v.to_string_lossy().contains(".vol"))
        .expect("a volume");
    std::fs::write(&vol, b"damaged").unwrap();
    let verified = run(p, &["verify", "--json", "t"]);
    assert!(String::from_utf8_lossy(&verified).contains("\"set_damaged\""));
    check("scrub", true, verified);

    // An import of a manifest with a line that escapes the tree and a file it lacks.
    write(p, "imp/x", b"x");
    write(p, "imp/y", b"y");
    let mut sums = run(p, &["hash", "-a", "sha256", "imp/x"]);
    sums.extend_from_slice(
        b"0000000000000000000000000000000000000000000000000000000000000000  ../out\n",
    );
    let sums = String::from_utf8(sums).unwrap().replace("imp/", "");
    std::fs::write(p.join("imp.sha256"), sums).unwrap();
    let imported =
        run(p, &["import", "imp", "--from", "manifest", "--source", "imp.sha256", "-v", "--json"]);
    assert!(
        String::from_utf8_lossy(&imported).contains("\"escapes\""),
        "{}",
        String::from_utf8_lossy(&imported)
    );
    check("import", true, imported);
    check("report", false, run(p, &["report", "--json", "t"]));
    check("algorithms", true, run(p, &["algorithms", "--json"]));

    // dups: a group with a link and a name that is not UTF-8, files left out (changed
    // since the scan, corrupt) and one that cannot be looked at (a symbolic link loop
    // where a recorded file was).
    for f in ["x1", "x2", "chg", "rot", "loop"] {
        write(p, format!("dd/{f}"), b"same content");
    }
    let odd: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(b"dd/n\xffame");
    std::fs::write(p.join(odd), b"same content").unwrap();
    std::fs::hard_link(p.join("dd/x1"), p.join("dd/x1-link")).unwrap();
    run(p, &["scan", "-q", "dd"]);
    rot(&p.join("dd/rot"), b"SAME CONTENT");
    run(p, &["verify", "-q", "dd"]);
    std::fs::write(p.join("dd/chg"), b"changed").unwrap();
    std::fs::remove_file(p.join("dd/loop")).unwrap();
    std::os::unix::fs::symlink("loop", p.join("dd/loop")).unwrap();
    let dups = run(p, &["dups", "--json", "dd"]);
    let text = String::from_utf8_lossy(&dups).into_owned();
    for field in [
        "\"left_out\":\"changed\"",
        "\"left_out\":\"corrupt\"",
        "\"error\"",
        "\"links\":[",
        "\"path_hex\"",
        "\"summary\"",
    ] {
        assert!(text.contains(field), "{field} in {text}");
    }
    check("dups", true, dups);

    // verify --remote: an object of each finding, a name that is not UTF-8 (missing: no
    // key can hold it); then status keeps the comparison.
    let remote_server = crate::remote::server();
    if let Some(srv) = remote_server {
        for f in ["same", "differs", "unproven", "local-only"] {
            write(p, format!("rr/{f}"), f.as_bytes());
        }
        std::fs::write(
            p.join(std::os::unix::ffi::OsStrExt::from_bytes(b"rr/n\xffame".as_slice())
                as &std::ffi::OsStr),
            b"x",
        )
        .unwrap();
        run(p, &["scan", "-q", "rr"]);
        let b = crate::remote::bucket("json");
        let put = |k: &str, data: &str, sse: bool| {
            let mut o =
                serde_json::json!({ "key": format!("copy/{k}"), "how": "put", "data": data });
            if sse {
                o["sse"] = "aws:kms".into();
            }
            o
        };
        let objects = serde_json::json!([
            put("same", "same", false),
            put("differs", "DIFFERS", false),
            put("unproven", "unproven", true),
            put("extra", "extra", false),
        ]);
        crate::remote::upload(srv.proxy, &b, &objects);
        let url = format!("s3://{b}/copy");
        let endpoint = format!("http://127.0.0.1:{}", srv.proxy);
        let out = crate::remote::aws(p)
            .args(["verify", "rr", "--json", "--remote", &url, "--endpoint", &endpoint])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        for field in ["\"differs\"", "\"unprovable\"", "\"extra\"", "\"path_hex\"", "\"summary\""] {
            assert!(text.contains(field), "{field} in {text}");
        }
        check("remote", true, out.stdout);
        check("status", false, run(p, &["status", "--json", "rr"]));
    }

    write(p, "bagged/x", b"payload");
    assert!(fixity(p).args(["bag", "create", "bagged"]).output().unwrap().status.success());
    write(p, "bagged/data/extra", b"not in the manifest");
    let bag = run(p, &["bag", "check", "--json", "bagged"]);
    assert!(String::from_utf8_lossy(&bag).contains("\"valid\":false"));
    check("bag-check", true, bag);

    write(p, "planned/f1", b"1");
    write(p, "planned/f2", b"22");
    assert!(
        fixity(p)
            .args(["plan", "planned", "--parts", "2", "-o", "plan"])
            .output()
            .unwrap()
            .status
            .success()
    );
    assert!(
        fixity(p)
            .args(["hash", "--plan", "plan", "--part", "0"])
            .output()
            .unwrap()
            .status
            .success()
    );
    check("merge-status", false, run(p, &["merge", "plan", "--status", "--json"]));

    let algos = [
        "bench",
        "algorithms",
        "-a",
        "crc32,blake3",
        "--sizes",
        "1K",
        "--runs",
        "1",
        "--format",
        "json",
    ];
    check("bench-algorithms", false, run(p, &algos));
    check(
        "bench-tree",
        false,
        run(p, &["bench", "tree", "planned", "-a", "crc32", "--runs", "1", "--format", "json"]),
    );

    match util::pg::database() {
        Some(db) => {
            let url = db.url.as_str();
            assert!(
                fixity(p)
                    .args(["scan", "-q", "planned", "--catalog", url])
                    .output()
                    .unwrap()
                    .status
                    .success()
            );
            check("fleet", false, run(p, &["status", "--json", "--catalog", url]));
        }
        None => {
            // pg::database() has said why (and failed the test in CI).
            used.insert("fleet");
        }
    }

    if remote_server.is_none() {
        // remote::server() has said why (and failed the test in CI).
        used.insert("remote");
    }
    // fixity serve's API over the same tree (its findings, a name that is not UTF-8), and
    // an action (started as an API client starts one) once it ended.
    {
        let server = util::serve::Server::start(p, &["t"], &[]);
        validate("serve-fleet", false, &server.get("/api/fleet", &[]).body, s);
        let tree = server.get("/api/tree/0", &[]);
        assert!(tree.text().contains("\"findings_page\""), "{}", tree.text());
        validate("serve-tree", false, &tree.body, s);
        for file in ["a", "n%FFame", "no/such/file"] {
            let page = server.get(&format!("/api/tree/0/file?p={file}"), &[]);
            validate("serve-file", false, &page.body, s);
        }
        let token = server.get("/tree/0", &[]).csrf().expect("an action form");
        let accept = [("accept", "application/json")];
        let r = server.post("/tree/0/action", &accept, &[("csrf", &token), ("kind", "verify")]);
        assert_eq!((r.status, r.json()["action"].as_u64()), (202, Some(1)), "{}", r.text());
        let done = server.wait_json("/api/actions/1", &[], 60, |a| !a["finished"].is_null());
        validate("serve-action", false, done.to_string().as_bytes(), s);
        validate("serve-action", false, &server.get("/api/actions", &[]).body, s);
        used.extend(["serve-fleet", "serve-tree", "serve-file", "serve-action"]);
    }

    // Every schema is used, and docs/json.md lists each one.
    let guide = std::fs::read_to_string(schema_dir().join("../json.md")).unwrap();
    for entry in std::fs::read_dir(schema_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let stem = name.strip_suffix(".schema.json").expect("only schemas in docs/json");
        assert!(used.contains(stem), "{name} is checked against real output");
        assert!(guide.contains(&format!("json/{name}")), "docs/json.md lists {name}");
    }
}
