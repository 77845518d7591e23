//! The positions a certificate decides, each with what it says of it: at every inner node of
//! a proof the attacker wins, at every inner node of a disproof it does not. A measure, for
//! an evaluation trained below the tables, of how it carries over to the positions above
//! them that searches met and decided.

use std::ops::RangeInclusive;
use std::path::Path;

use fanorona_check::explore::{Ending, Tree};
use fanorona_check::stitch::StitchError;
use fanorona_rules::{Color, Move, Position};

/// A position of a certificate and its verdict there.
#[derive(Clone, Debug)]
pub struct Decided {
    pub position: Position,
    pub attacker: Color,
    /// The attacker wins from here (a proof's node), or does not (a disproof's).
    pub attacker_wins: bool,
}

/// The inner nodes of the certificate at `path` whose positions hold a number of pieces in
/// `pieces`, each once however often the tree reaches it. A disproof's node may owe its
/// verdict to a repetition on its path: such verdicts hold for that path, and are counted as
/// they are written.
pub fn decided_positions(
    path: &Path,
    pieces: RangeInclusive<u32>,
) -> Result<Vec<Decided>, StitchError> {
    let tree = Tree::open(path)?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut stack = vec![(0u32, tree.root)];
    while let Some((node, pos)) = stack.pop() {
        if !matches!(tree.ending(node), Ending::Inner { .. }) {
            continue;
        }
        if pieces.contains(&pos.piece_count()) && seen.insert(pos) {
            out.push(Decided {
                position: pos,
                attacker: tree.attacker,
                attacker_wins: tree.proven,
            });
        }
        for child in tree.children(node) {
            // The certificate was checked when it was written; a move that does not parse
            // here is a damaged file, which `fanorona verify` names.
            let mv = Move::parse(&pos, tree.mv(child)).map_err(|e| StitchError::Bad {
                path: path.to_path_buf(),
                line: u64::from(child) + 2,
                reason: e.to_string(),
            })?;
            stack.push((child, mv.apply(&pos)));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disproofs_inner_nodes_each_once_with_its_verdict() {
        // The published 5x7 "Black wins?" disproof (the start is a draw).
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/certificates/5x7-start.black-wins.cert.gz");
        let all = decided_positions(&path, 0..=35).unwrap();
        let start = Position::initial("5x7".parse().unwrap());
        assert_eq!(all[0].position, start, "the root first");
        assert!(
            all.iter()
                .all(|d| d.attacker == Color::Black && !d.attacker_wins)
        );
        let distinct: std::collections::HashSet<Position> =
            all.iter().map(|d| d.position).collect();
        assert_eq!(distinct.len(), all.len(), "each position once");
        let few = decided_positions(&path, 10..=12).unwrap();
        assert!(
            few.iter()
                .all(|d| (10..=12).contains(&d.position.piece_count()))
        );
        assert_eq!(
            few.len(),
            all.iter()
                .filter(|d| (10..=12).contains(&d.position.piece_count()))
                .count()
        );
    }
}
