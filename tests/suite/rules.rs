//! One hand-made position per rule of docs/RULES.md, with every legal move listed.

use fanorona::movegen::{has_capture, is_lost};
use fanorona::{Move, MoveError, Position, legal_moves};

fn pos(s: &str) -> Position {
    s.parse().unwrap()
}

/// The legal moves in notation, sorted.
fn moves(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = legal_moves(p)
        .iter()
        .map(|m| m.notation(p.board()))
        .collect();
    v.sort();
    v
}

/// The points a move captures, sorted by name.
fn captured(p: &Position, text: &str) -> Vec<String> {
    let m = Move::parse(p, text).unwrap();
    let b = p.board();
    let mut v: Vec<String> = fanorona::geometry::points(m.captured())
        .map(|q| b.point_name(q))
        .collect();
    v.sort();
    v
}

#[test]
fn approach_captures_the_piece_beyond_the_destination() {
    let p = pos("...../...../..B../...../..W.. w");
    assert_eq!(moves(&p), ["c1-c2A"]);
    assert_eq!(captured(&p, "c1-c2A"), ["c3"]);
}

#[test]
fn withdrawal_captures_the_line_behind_the_start() {
    let p = pos("...../..B../..B../..W../..... w");
    assert_eq!(moves(&p), ["c2-c1W"]);
    assert_eq!(captured(&p, "c2-c1W"), ["c3", "c4"]);
}

#[test]
fn a_step_that_can_approach_and_withdraw_is_two_moves() {
    let p = pos("..B../...../..W../..B../..... w");
    assert_eq!(moves(&p), ["c3-c4A", "c3-c4W"]);
    assert_eq!(captured(&p, "c3-c4A"), ["c5"]);
    assert_eq!(captured(&p, "c3-c4W"), ["c2"]);
    let a = Move::parse(&p, "c3-c4A").unwrap().apply(&p);
    let w = Move::parse(&p, "c3-c4W").unwrap().apply(&p);
    assert_ne!(a, w);
}

#[test]
fn the_captured_line_stops_at_an_empty_point_an_own_piece_or_the_edge() {
    let empty = pos("........./........./........./........./W.BB.B... w");
    assert_eq!(moves(&empty), ["a1-b1A"]);
    assert_eq!(captured(&empty, "a1-b1A"), ["c1", "d1"]);
    let own = pos("........./........./........./........./W.BBWB... w");
    assert_eq!(captured(&own, "a1-b1A"), ["c1", "d1"]);
    let edge = pos("........./........./........./........./W.BBBBBBB w");
    assert_eq!(
        captured(&edge, "a1-b1A"),
        ["c1", "d1", "e1", "f1", "g1", "h1", "i1"]
    );
}

#[test]
fn a_chain_may_not_step_twice_in_the_same_direction() {
    // b1-c1W captures a1; going on east to d1 would approach e1, but repeats the direction
    // (the paper's f4-e4W-d4A).
    let p = pos("........./........./........./........./BW..B.... w");
    assert_eq!(moves(&p), ["b1-c1W"]);
    assert_eq!(
        Move::parse(&p, "b1-c1W-d1A"),
        Err(MoveError::SameDirection { step: 2 })
    );
}

#[test]
fn a_chain_may_not_return_to_a_point_it_occupied_its_start_included() {
    // From d4 the piece could approach f2 by stepping back to e3, its start; from e4 it could
    // withdraw from e5 by stepping back to e3 (the paper's f4-e4W-e3A-f4W).
    let p = pos("....B..../..B....../....W..../.....B.../......... w");
    assert_eq!(
        moves(&p),
        [
            "e3-d4W",
            "e3-d4W-c3W",
            "e3-d4W-c3W-c2W",
            "e3-d4W-e4W",
            "e3-e4A",
            "e3-e4A-d4A"
        ]
    );
    assert_eq!(
        Move::parse(&p, "e3-e4A-d4A-e3A"),
        Err(MoveError::Revisit {
            step: 3,
            point: "e3".into()
        })
    );
    assert_eq!(
        Move::parse(&p, "e3-d4W-e4W-e3W"),
        Err(MoveError::Revisit {
            step: 3,
            point: "e3".into()
        })
    );
}

#[test]
fn a_chain_may_not_return_to_a_point_it_passed() {
    // After c1-c2A-b2W the piece could withdraw from a2 by stepping back to c2, a point it
    // occupied (a reverse step, which the direction rule alone would allow).
    let p = pos("...../...../..B../B..B./..W.. w");
    assert_eq!(
        Move::parse(&p, "c1-c2A-b2W-c2W"),
        Err(MoveError::Revisit {
            step: 3,
            point: "c2".into()
        })
    );
    assert!(moves(&p).contains(&"c1-c2A-b2W".to_string()));
    assert!(!moves(&p).iter().any(|m| m.starts_with("c1-c2A-b2W-")));
}

#[test]
fn a_chain_may_stop_after_any_capture() {
    let p = pos("..B/.../WBW w");
    assert_eq!(moves(&p), ["a1-b2A", "a1-b2A-b3W", "c1-c2A"]);
    assert_eq!(captured(&p, "a1-b2A"), ["c3"]);
    assert_eq!(captured(&p, "a1-b2A-b3W"), ["b1", "c3"]);
}

#[test]
fn capture_is_compulsory() {
    // a1 and c1 could make paika moves, but a capture exists.
    let p = pos("..B/.../WBW w");
    assert!(has_capture(&p));
    assert!(
        moves(&p)
            .iter()
            .all(|m| m.ends_with('A') || m.ends_with('W'))
    );
    assert!(matches!(
        Move::parse(&p, "a1-a2"),
        Err(MoveError::CaptureCompulsory { .. })
    ));
}

#[test]
fn paika_only_when_no_capture_exists() {
    let p = pos("........./........./........./.B.B...../W.W...... w");
    assert!(!has_capture(&p));
    assert_eq!(moves(&p), ["a1-a2", "a1-b1", "c1-b1", "c1-c2", "c1-d1"]);
    assert_eq!(
        Move::parse(&p, "a1-a2-a3"),
        Err(MoveError::ChainedPaika { step: 2 })
    );
}

#[test]
fn a_side_with_no_move_or_no_pieces_has_lost() {
    let blocked = pos("..B/BB./WB. w");
    assert!(moves(&blocked).is_empty());
    assert!(is_lost(&blocked));
    let none = pos("BBB/.../... w");
    assert!(moves(&none).is_empty());
    assert!(is_lost(&none));
    assert!(!is_lost(&blocked.with_side(fanorona::Color::Black)));
}

#[test]
fn diagonal_steps_only_from_strong_points() {
    let weak = pos("........./........./........./........./.W....... w");
    assert_eq!(moves(&weak), ["b1-a1", "b1-b2", "b1-c1"]);
    assert_eq!(
        Move::parse(&weak, "b1-a2"),
        Err(MoveError::DiagonalFromWeak {
            step: 1,
            from: "b1".into(),
            to: "a2".into()
        })
    );
    let strong = pos("........./........./........./........./..W...... w");
    assert_eq!(
        moves(&strong),
        ["c1-b1", "c1-b2", "c1-c2", "c1-d1", "c1-d2"]
    );
}

#[test]
fn nothing_to_approach_is_named() {
    let p = pos("..B/.../WBW w");
    assert_eq!(
        Move::parse(&p, "c1-c2A-b2A"),
        Err(MoveError::NothingToApproach {
            step: 2,
            beyond: "a2".into()
        })
    );
}
