//! The solution tree of a decided PN tree (`extract`), with the subtrees PN²'s second level
//! dropped solved again, or left as leaves taken as given (`extract_kept`); and a search
//! whose solution is extracted and checked in one call (`solve_and_check`).

use crate::leaf::LeafEval;
use crate::pn::PnTree;
use crate::proof::{CheckError, ProofNode, SolutionTree, check};
use crate::{Algorithm, Goal, Limits, Outcome};
use fanorona_rules::position::Position;
use fanorona_tables::Database;

/// Extracts the solution tree of a decided PN tree. Nodes decided without their subtree
/// (PN²'s second level keeps only the children) are solved again by PN to fill it in.
pub fn extract(tree: &PnTree<'_>, leaf: LeafEval<'_>) -> Option<SolutionTree> {
    extract_with(tree, leaf, false)
}

/// The part of the solution the tree kept: nodes the rote store decided, and nodes a PN²
/// second-level search decided without keeping their subtree, stay leaves taken as given
/// (`from_rote`, `from_second_level`) instead of being solved again. Checking it is cheap;
/// a session's certificate re-solves those leaves and checks everything.
pub fn extract_kept(tree: &PnTree<'_>, leaf: LeafEval<'_>) -> Option<SolutionTree> {
    extract_with(tree, leaf, true)
}

fn extract_with(tree: &PnTree<'_>, leaf: LeafEval<'_>, kept: bool) -> Option<SolutionTree> {
    let proves = match tree.outcome() {
        Outcome::Proven => true,
        Outcome::Disproven => false,
        Outcome::Unknown => return None,
    };
    let mut out = SolutionTree {
        goal: tree.goal,
        proves,
        nodes: Vec::new(),
    };
    copy(tree, 0, leaf, kept, &mut out);
    Some(out)
}

/// Copies node `n` of `tree` (decided as `out.proves` says) into `out`; returns its index.
fn copy(
    tree: &PnTree<'_>,
    n: usize,
    leaf: LeafEval<'_>,
    kept: bool,
    out: &mut SolutionTree,
) -> usize {
    let node = tree.nodes[n];
    let index = out.nodes.len();
    let open = !node.repetition && node.leaf == crate::Leaf::Open && !node.expanded;
    out.nodes.push(ProofNode {
        pos: node.pos,
        children: Vec::new(),
        from_rote: kept && open && node.rote,
        from_second_level: kept && open && !node.rote,
    });
    if node.repetition || node.leaf != crate::Leaf::Open || (kept && open) {
        return index;
    }
    if !node.expanded {
        // Decided by a second-level search whose subtree was dropped: solve it again.
        let mut history = tree.path(n);
        history.pop();
        let mut sub = PnTree::new(node.pos, tree.goal, leaf, history);
        while !sub.decided() {
            let m = sub.select_most_proving();
            sub.expand(m);
            sub.update_ancestors(m);
        }
        let sub_tree = extract(&sub, leaf).expect("a decided tree has a solution");
        let offset = out.nodes.len() - 1;
        // Graft: the sub-tree's root is this node.
        out.nodes[index].children = sub_tree.nodes[0]
            .children
            .iter()
            .map(|&c| c + offset)
            .collect();
        for node in sub_tree.nodes.into_iter().skip(1) {
            out.nodes.push(ProofNode {
                pos: node.pos,
                children: node.children.iter().map(|&c| c + offset).collect(),
                from_rote: false,
                from_second_level: false,
            });
        }
        return index;
    }
    let children = node.first as usize..(node.first + node.count) as usize;
    let wanted = |c: usize| {
        if out.proves {
            tree.nodes[c].proven()
        } else {
            tree.nodes[c].disproven()
        }
    };
    // One move where the side that needs a single good move is to move, all moves otherwise.
    let one = tree.is_or(n) == out.proves;
    let picked: Vec<usize> = if one {
        children.clone().find(|&c| wanted(c)).into_iter().collect()
    } else {
        children.collect()
    };
    let mut indices = Vec::new();
    for c in picked {
        indices.push(copy(tree, c, leaf, kept, out));
    }
    out.nodes[index].children = indices;
    index
}

/// Solves `root` for `goal` with PN or PN², extracts the solution tree and checks it.
/// Returns the outcome and the solution tree's size, or the check's complaint.
pub fn solve_and_check(
    root: &Position,
    goal: Goal,
    db: Option<&Database>,
    algorithm: Algorithm,
) -> Result<(Outcome, usize), CheckError> {
    let leaf = LeafEval::new(db);
    let (tree, _) = crate::pn::search(root, goal, leaf, algorithm, Limits::none(), |_| {});
    let solution = extract(&tree, leaf).expect("an unlimited search decides");
    check(&solution, db)?;
    Ok((tree.outcome(), solution.len()))
}
