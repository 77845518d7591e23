//! The five boards of Table 4 solved without databases (3x3, 3x5, 5x3, 3x7, 7x3: White wins),
//! by PN and PN², each proof extracted and re-verified by the independent checker.

use fanorona::search::Algorithm;
use fanorona::search::dfpn::DfPn;
use fanorona::search::proof::check;
use fanorona::search::solution::solve_and_check;
use fanorona::search::{Goal, LeafEval, Limits, Outcome, Value, game_value, pn};
use fanorona::{Board, Color, Position};

/// (board, winner, database pieces the paper used, nodes its PN search created), from
/// tests/data/table4-boards.tsv.
fn table4() -> Vec<(Board, String, u32, u64)> {
    include_str!("../data/table4-boards.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("board"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].parse().unwrap(),
                f[1].to_string(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_small_boards_are_white_wins_with_checked_proofs() {
    let mut solved = 0;
    for (board, winner, db_pieces, paper_nodes) in table4() {
        if db_pieces != 0 {
            continue;
        }
        assert_eq!(winner, "White", "{board}");
        let pos = Position::initial(board);
        for algorithm in [Algorithm::Pn, Algorithm::Pn2] {
            let (outcome, size) = solve_and_check(
                &pos,
                Goal {
                    attacker: Color::White,
                },
                None,
                algorithm,
            )
            .unwrap();
            assert_eq!(outcome, Outcome::Proven, "{board} {algorithm:?}");
            assert!(size > 1);
        }
        // df-pn with its transposition table: the same answer, a checked proof, fewer nodes.
        let mut dfpn = DfPn::new(
            Goal {
                attacker: Color::White,
            },
            LeafEval::rules_only(),
            Limits::none(),
            1 << 20,
        );
        let root = dfpn.search(&pos, |_| {});
        assert_eq!(root.pn, 0, "{board} df-pn");
        let proof = dfpn
            .solution(&pos)
            .expect("a decided root has a solution tree");
        check(&proof, None).unwrap();
        assert!(
            dfpn.stats.nodes <= paper_nodes,
            "{board} df-pn: {} nodes",
            dfpn.stats.nodes
        );
        eprintln!(
            "{board}: df-pn {} nodes, proof of {} nodes",
            dfpn.stats.nodes,
            proof.len()
        );
        let solution = game_value(&pos, |goal| {
            pn::solve(
                &pos,
                goal,
                LeafEval::rules_only(),
                Algorithm::Pn,
                Limits::none(),
                |_| {},
            )
        });
        assert_eq!(solution.value, Some(Value::Win(Color::White)), "{board}");
        let best = solution.best_move().expect("a winning move");
        // Fewer nodes than the paper's PN search created.
        assert!(
            solution.nodes() <= paper_nodes,
            "{board}: {} nodes",
            solution.nodes()
        );
        eprintln!(
            "{board}: white wins with {}, {} nodes (paper {paper_nodes})",
            best.notation(board),
            solution.nodes()
        );
        solved += 1;
    }
    assert_eq!(solved, 5);
}

#[test]
fn the_checker_rejects_tampered_solution_trees() {
    use fanorona::search::proof::SolutionTree;
    use fanorona::search::solution::extract;
    let pos = Position::initial("3x5".parse().unwrap());
    let goal = Goal {
        attacker: Color::White,
    };
    let (tree, _) = pn::search(
        &pos,
        goal,
        LeafEval::rules_only(),
        Algorithm::Pn,
        Limits::none(),
        |_| {},
    );
    let good: SolutionTree = extract(&tree, LeafEval::rules_only()).unwrap();
    check(&good, None).unwrap();
    // An "every move" node (Black to move) with one move left out.
    let all = (0..good.len())
        .find(|&i| {
            good.nodes[i].pos.side_to_move() == Color::Black && good.nodes[i].children.len() > 1
        })
        .unwrap();
    let mut t = good.clone();
    t.nodes[all].children.pop();
    assert!(check(&t, None).is_err());
    // The same move listed twice instead of another.
    let mut t = good.clone();
    let first = t.nodes[all].children[0];
    let last = t.nodes[all].children.len() - 1;
    t.nodes[all].children[last] = first;
    assert!(check(&t, None).is_err());
    // A single move (White to move) replaced by a position that is not a successor.
    let one = (0..good.len())
        .find(|&i| {
            good.nodes[i].pos.side_to_move() == Color::White && !good.nodes[i].children.is_empty()
        })
        .unwrap();
    let mut t = good.clone();
    let c = t.nodes[one].children[0];
    t.nodes[c].pos = t.nodes[c].pos.with_side(Color::White);
    assert!(check(&t, None).is_err());
    // A leaf that the rules do not decide: cut the tree below the root's move.
    let mut t = good.clone();
    let c = t.nodes[0].children[0];
    t.nodes[c].children.clear();
    assert!(check(&t, None).is_err());
    // A proof claimed as a disproof.
    let mut t = good.clone();
    t.proves = false;
    assert!(check(&t, None).is_err());
}
