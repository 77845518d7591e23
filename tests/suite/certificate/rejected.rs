//! Certificates the checker refuses: every kind of tampering rejected at its line, a wrong
//! table value, unreadable files refused as such, tables named but absent.

use super::*;

#[test]
fn tampered_certificates_are_rejected_at_their_line() {
    let root = Position::initial("3x7".parse::<Board>().unwrap()).to_string();
    let (proof, _) = certificate(&root, Color::White, "dfpn", None);
    let ls = lines(&proof);
    check(&proof, None).unwrap();

    // An illegal move: a node's move replaced by one the position does not have.
    let i = find(&ls, |l| depth(l) == 2);
    let mut t = ls.clone();
    let f: Vec<&str> = ls[i].split(' ').collect();
    t[i] = format!("{} a1-a2 {}", f[0], f[2..].join(" "));
    expect_wrong(
        &(t.join("\n") + "\n"),
        None,
        i as u64 + 1,
        "is not a legal move",
    );

    // A missing answer: a leaf below an answering (Black to move) node removed.
    let leaf = find(&ls, |l| {
        let d = depth(l);
        d.is_multiple_of(2) && d > 0 && tag(l) != "i"
    });
    let parent = (1..leaf)
        .rev()
        .find(|&j| depth(&ls[j]) < depth(&ls[leaf]))
        .unwrap();
    let mut t = ls.clone();
    t.remove(leaf);
    expect_wrong(
        &(t.join("\n") + "\n"),
        None,
        parent as u64 + 1,
        "is not answered",
    );

    // A false terminal: an inner node declared lost.
    let i = find(&ls, |l| depth(l) == 3 && tag(l) == "i");
    expect_wrong(
        &as_leaf(&ls, i, "t"),
        None,
        i as u64 + 1,
        "has pieces and a legal move",
    );

    // A repetition in a proof.
    expect_wrong(
        &as_leaf(&ls, i, "r 0"),
        None,
        i as u64 + 1,
        "repetition leaf in a proof",
    );

    // A forward shared leaf.
    expect_wrong(
        &as_leaf(&ls, i, "s 999999"),
        None,
        i as u64 + 1,
        "must name an earlier node",
    );

    // A wrong claim: the same tree as a disproof of White's win.
    let wrong_claim = proof.replacen("\"proven\"", "\"disproven\"", 1);
    let t = find(&ls, |l| tag(l) == "t");
    expect_wrong(&wrong_claim, None, t as u64 + 1, "against the claim");

    // A repetition of a non-ancestor, in a disproof: a leaf pointing at an earlier node
    // that is not on its path.
    let (disproof, _) = certificate(DRAWN_3X5, Color::White, "dfpn", None);
    let ls = lines(&disproof);
    check(&disproof, None).unwrap();
    let r = find(&ls, |l| tag(l) == "r");
    let k: u64 = ls[r].split(' ').nth(3).unwrap().parse().unwrap();
    // Node k's ancestors are on the path; a sibling subtree's node is not.
    let sibling = (2..r)
        .find(|&j| depth(&ls[j]) >= depth(&ls[k as usize + 1]) && !is_ancestor(&ls, j, r))
        .expect("a non-ancestor before the repetition");
    let mut t = ls.clone();
    let f: Vec<&str> = ls[r].split(' ').collect();
    t[r] = format!("{} {} r {}", f[0], f[1], sibling - 1);
    expect_wrong(
        &(t.join("\n") + "\n"),
        None,
        r as u64 + 1,
        "is not an ancestor",
    );
}

#[test]
fn a_wrong_table_value_is_rejected() {
    let dir = tables();
    let db = Database::new(dir.path(), "3x5".parse().unwrap());
    let root = Position::initial("3x5".parse::<Board>().unwrap()).to_string();
    let (proof, _) = certificate(&root, Color::White, "dfpn", Some(&db));
    let ls = lines(&proof);
    let i = find(&ls, |l| tag(l) == "d");
    let mut t = ls.clone();
    let flipped = match ls[i].rsplit(' ').next().unwrap() {
        "w" => "l",
        _ => "w",
    };
    let f: Vec<&str> = ls[i].split(' ').collect();
    t[i] = format!("{} {} d {flipped}", f[0], f[1]);
    expect_wrong(
        &(t.join("\n") + "\n"),
        Some(dir.path()),
        i as u64 + 1,
        "the tables hold",
    );
    // A header naming fewer pieces than a leaf has.
    let fewer = proof.replacen("\"pieces\":4", "\"pieces\":2", 1);
    expect_wrong(&fewer, Some(dir.path()), i as u64 + 1, "hold at most 2");
}

#[test]
fn unreadable_certificates_are_refused_as_such() {
    let (proof, _) = certificate("BBB/B.W/WWW w", Color::White, "pn", None);
    unreadable(b"", None, "empty");
    unreadable(b"not json\n0 - t\n", None, "not a certificate header");
    unreadable(
        proof
            .replacen("\"version\":1", "\"version\":2", 1)
            .as_bytes(),
        None,
        "format version 2",
    );
    let cut = &proof.as_bytes()[..proof.len() - 3];
    unreadable(cut, None, "cut short");
    let header_only = proof.lines().next().unwrap().to_string() + "\n";
    unreadable(header_only.as_bytes(), None, "no node lines");
    // A line without end (a hostile file, /dev/zero) is refused at a bound, not read whole.
    let endless = header_only.clone() + "0 - i\n" + &"1".repeat(10 << 20);
    unreadable(endless.as_bytes(), None, "a line longer than 65536 bytes");
    unreadable(&vec![0u8; 10 << 20], None, "a line longer than 65536 bytes");
    unreadable(
        proof.replacen("0 - i", "0 - q", 1).as_bytes(),
        None,
        "unknown tag",
    );
    // Tables of another board than the root's.
    let dir = tables();
    let db = Database::new(dir.path(), "3x5".parse().unwrap());
    let root = Position::initial("3x5".parse::<Board>().unwrap()).to_string();
    let (with_tables, _) = certificate(&root, Color::White, "dfpn", Some(&db));
    unreadable(
        with_tables
            .replacen("\"board\":\"3x5\"", "\"board\":\"5x7\"", 1)
            .as_bytes(),
        Some(dir.path()),
        "names tables of 5x7",
    );
}

#[test]
fn structural_tampering_is_rejected_at_its_line() {
    let root = Position::initial("3x7".parse::<Board>().unwrap()).to_string();
    let (proof, _) = certificate(&root, Color::White, "dfpn", None);
    let ls = lines(&proof);
    let text = |t: &[String]| t.join("\n") + "\n";

    // An answer written twice: a node's line repeated after its own subtree.
    let i = find(&ls, |l| depth(l) > 0 && tag(l) != "i");
    let mut t = ls.clone();
    t.insert(i + 1, ls[i].clone());
    expect_wrong(&text(&t), None, i as u64 + 2, "appears twice");

    // A shared leaf naming an ancestor (node 1, the first move).
    let deep = find(&ls, |l| depth(l) == 3 && tag(l) == "i");
    expect_wrong(
        &as_leaf(&ls, deep, "s 1"),
        None,
        deep as u64 + 1,
        "is an ancestor",
    );

    // A second root, and a depth that jumps.
    let mut t = ls.clone();
    t.push("0 - t".to_string());
    expect_wrong(&text(&t), None, t.len() as u64, "a second root");
    let mut t = ls.clone();
    let f: Vec<&str> = ls[i].split(' ').collect();
    t[i] = format!("{} {} {}", depth(&ls[i]) + 1, f[1], f[2..].join(" "));
    expect_wrong(&text(&t), None, i as u64 + 1, "a child is one deeper");

    // A table leaf under a header whose "tables" is null: the certificate is wrong.
    let mut t = ls.clone();
    let f: Vec<&str> = ls[deep].split(' ').collect();
    t[deep] = format!("{} {} d w", f[0], f[1]);
    let end = (deep + 1..t.len())
        .find(|&j| depth(&t[j]) <= depth(&ls[deep]))
        .unwrap_or(t.len());
    t.drain(deep + 1..end);
    expect_wrong(&text(&t), None, deep as u64 + 1, "\"tables\" is null");
}

#[test]
fn tables_named_but_absent_matter_only_at_a_table_leaf() {
    // A 3x3 proof has no table leaf; a header naming tables that are not at hand is fine.
    let (proof, _) = certificate("BBB/B.W/WWW w", Color::White, "pn", None);
    let named = proof.replacen(
        "\"tables\":null",
        "\"tables\":{\"board\":\"3x3\",\"pieces\":4}",
        1,
    );
    let empty = tempfile::tempdir().unwrap();
    check(&named, Some(empty.path())).unwrap();
    check(&named, None).unwrap();
}
