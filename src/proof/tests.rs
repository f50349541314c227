use super::*;

fn leaf<'a>(path: &'a [u8], digest: &'a [u8]) -> Leaf<'a> {
    Leaf { path, size: 5, mtime_ns: 1_000, digest, standing: Standing::None }
}

fn root_of(algo: &str, leaves: &[Leaf<'_>]) -> (Hash, u64) {
    let mut h = RootHasher::new(algo);
    for l in leaves {
        h.add(l);
    }
    h.finish()
}

#[test]
fn changing_any_field_of_a_record_changes_the_root() {
    let d = [7u8; 32];
    let base = leaf(b"a/b", &d);
    let (root, files) = root_of("sha256", &[base]);
    assert_eq!(files, 1);
    let other_digest = [8u8; 32];
    let variants = [
        Leaf { path: b"a/c", ..base },
        Leaf { size: 6, ..base },
        Leaf { mtime_ns: 1_001, ..base },
        Leaf { digest: &other_digest, ..base },
        Leaf { digest: &d[..31], ..base },
        Leaf { standing: Standing::Corrupt, ..base },
        Leaf { standing: Standing::Unreadable, ..base },
        Leaf { standing: Standing::Missing, ..base },
        Leaf { standing: Standing::Changed, ..base },
    ];
    for v in variants {
        assert_ne!(root_of("sha256", &[v]).0, root, "{v:?}");
    }
    assert_ne!(root_of("blake3", &[base]).0, root, "the algorithm is committed to");
    assert_ne!(root_of("sha256", &[]).0, root);
    assert_eq!(root_of("sha256", &[base]).0, root, "the same records give the same root");
}

#[test]
fn path_boundaries_cannot_be_shifted_between_records() {
    // Bytes moved from one record's path (or digest) to the next cannot give the same
    // stream: every variable field is preceded by its length.
    let (d1, d2) = ([1u8; 4], [2u8; 4]);
    let one = root_of("sha256", &[leaf(b"ab", &d1), leaf(b"c", &d2)]).0;
    let two = root_of("sha256", &[leaf(b"a", &d1), leaf(b"bc", &d2)]).0;
    assert_ne!(one, two);
    let joined = [1u8, 1, 1, 1, 2, 2, 2, 2];
    let three = root_of("sha256", &[leaf(b"ab", &joined[..3]), leaf(b"c", &joined[3..])]).0;
    assert_ne!(one, three);
    // One record cannot pass for two.
    let single = root_of("sha256", &[leaf(b"abc", &d1)]).0;
    assert_ne!(single, root_of("sha256", &[leaf(b"a", &d1), leaf(b"bc", &d1)]).0);
}

fn id() -> Identity {
    Identity { host: "h1".into(), tree: b"/srv/data".to_vec() }
}

#[test]
fn each_head_commits_to_the_identity_and_every_field() {
    let first = Entry::next(&id(), None, 3, 1_000, ([1; 32], 10));
    assert_eq!((first.seq, first.prev), (1, GENESIS));
    let second = Entry::next(&id(), Some(&first), 4, 2_000, ([1; 32], 10));
    assert_eq!((second.seq, second.prev), (2, first.head));
    assert_ne!(first.head, second.head, "same root, another place in the chain");
    let head = second.head;
    let other = |f: fn(&mut Entry)| {
        let mut e = second.clone();
        f(&mut e);
        e.compute_head(&id())
    };
    assert_ne!(other(|e| e.seq = 3), head);
    assert_ne!(other(|e| e.at += 1), head);
    assert_ne!(other(|e| e.files += 1), head);
    assert_ne!(other(|e| e.root[31] ^= 1), head);
    assert_ne!(other(|e| e.prev[0] ^= 1), head);
    assert_eq!(other(|e| e.run = 99), head, "the run's id is kept, not committed to");
    let moved = Identity { host: "h2".into(), ..id() };
    assert_ne!(second.compute_head(&moved), head);
    let split = Identity { host: "h1/srv".into(), tree: b"/data".to_vec() };
    assert_ne!(second.compute_head(&split), head, "host and tree cannot trade bytes");
}

fn chain_of(n: u64) -> Vec<Link> {
    let mut links: Vec<Link> = Vec::new();
    for i in 0..n {
        let last = links.last().map(|l| &l.entry);
        let entry = Entry::next(&id(), last, i as i64 + 10, 1_000 * i as i64, ([i as u8; 32], i));
        links.push(Link { entry, run_kept: true });
    }
    links
}

fn breaks(links: &[Link], kept: Option<&Statement>) -> Vec<Break> {
    let ident = id();
    let mut out = Vec::new();
    let mut chain = Chain::new(&ident, kept, &mut out);
    for l in links {
        chain.feed(l, &mut out);
    }
    chain.finish(&mut out);
    out
}

#[test]
fn an_honest_chain_passes_with_any_head_it_gave() {
    let links = chain_of(4);
    assert_eq!(breaks(&links, None), vec![]);
    for l in &links {
        let st = Statement::of(&id(), &l.entry);
        assert_eq!(breaks(&links, Some(&st)), vec![], "head {}", l.entry.seq);
    }
}

#[test]
fn a_chain_breaks_where_it_was_changed() {
    let links = chain_of(4);
    let kept = Statement::of(&id(), &links[3].entry);
    // A run deleted: a gap, or (the last one) a head past the end.
    let mut cut = links.clone();
    cut.remove(1);
    assert_eq!(breaks(&cut, None), vec![Break::Gap { after: 1, next: 3 }]);
    assert_eq!(breaks(&links[..3], Some(&kept)), vec![Break::Beyond { seq: 4, last: 3 }]);
    // An entry edited without its head, and one re-chained with new heads.
    let mut edited = links.clone();
    edited[1].entry.root[0] ^= 1;
    assert_eq!(breaks(&edited, None), vec![Break::Head { seq: 2 }]);
    let mut rewritten = links[..1].to_vec();
    for i in 1..4u64 {
        let last = rewritten.last().map(|l| &l.entry);
        let root = if i == 2 { [0xee; 32] } else { links[i as usize].entry.root };
        let e = Entry::next(&id(), last, 10 + i as i64, 1_000 * i as i64, (root, i));
        rewritten.push(Link { entry: e, run_kept: true });
    }
    assert_eq!(breaks(&rewritten, None), vec![], "a rewritten chain is whole in itself");
    let got = breaks(&rewritten, Some(&kept));
    assert_eq!(got, vec![Break::Differs { seq: 4, fields: vec!["head", "prev"] }]);
    // A prev that is not the previous head, and a run no longer recorded.
    let mut relinked = links.clone();
    relinked[2].entry.prev = [9; 32];
    relinked[2].entry.head = relinked[2].entry.compute_head(&id());
    assert!(breaks(&relinked, None).contains(&Break::Prev { seq: 3 }));
    let mut gone = links.clone();
    gone[0].run_kept = false;
    assert_eq!(breaks(&gone, None), vec![Break::RunGone { seq: 1, run: 10 }]);
}

#[test]
fn a_statement_reads_back_and_a_forged_one_is_told() {
    let links = chain_of(3);
    let st = Statement::of(&id(), &links[2].entry);
    let text = st.render();
    assert!(text.starts_with("fixity-proof 1\nhost h1\ntree /srv/data\nseq 3\n"), "{text}");
    assert_eq!(Statement::parse(&text).unwrap(), st);
    assert!(st.consistent());
    // An edited root: the statement no longer gives its head, and differs from the chain.
    let forged_text = text.replace(&hex(&st.root), &hex(&[0xab; 32]));
    let forged = Statement::parse(&forged_text).unwrap();
    assert!(!forged.consistent());
    let got = breaks(&links, Some(&forged));
    assert_eq!(
        got,
        vec![Break::Forged { seq: 3 }, Break::Differs { seq: 3, fields: vec!["root"] }]
    );
    // Another tree's head.
    let other = Statement { host: "h2".into(), ..st.clone() };
    assert!(breaks(&links, Some(&other)).contains(&Break::OtherTree));
    // A SQLite catalog's statement names no tree.
    let plain = Statement::of(&Identity::default(), &links[0].entry);
    assert!(plain.render().starts_with("fixity-proof 1\nseq 1\n"));
    assert_eq!(Statement::parse(&plain.render()).unwrap(), plain);
    for bad in ["", "fixity-proof 2\n", "fixity-proof 1\nseq 1\n", "fixity-proof 1\nsize 3\n"] {
        assert!(Statement::parse(bad).is_err(), "{bad:?}");
    }
    assert!(Statement::parse(&format!("{text}seq 4\n")).is_err(), "a field twice");
}

#[test]
fn odd_tree_names_survive_the_statement() {
    for tree in [&b"/srv/My Files/ "[..], b"/a%b\nc", b"/caf\xc3\xa9", b"/bad\xff\xfe"] {
        let st = Statement::of(
            &Identity { host: "h".into(), tree: tree.to_vec() },
            &chain_of(1)[0].entry,
        );
        let text = st.render();
        assert_eq!(text.lines().count(), 9, "{text}");
        assert_eq!(Statement::parse(&text).unwrap().tree, tree);
    }
}

#[test]
fn leaves_encoded_elsewhere_hash_to_the_same_root() {
    let (d, long) = ([7u8; 32], [9u8; 300]);
    let leaves = [
        leaf(b"a", &d),
        Leaf { path: b"b\n\xff", size: 0, mtime_ns: -5, digest: &[], standing: Standing::Missing },
        Leaf { path: b"", size: u64::MAX, mtime_ns: 1, digest: &long, standing: Standing::Corrupt },
    ];
    let whole = root_of("blake3", &leaves);
    for split in 0..=leaves.len() {
        let mut h = RootHasher::new("blake3");
        leaves[..split].iter().for_each(|l| h.add(l));
        let mut bytes = Vec::new();
        leaves[split..].iter().for_each(|l| l.encode(&mut bytes));
        h.add_encoded(&bytes, (leaves.len() - split) as u64);
        assert_eq!(h.finish(), whole, "split at {split}");
    }
}
