//! A position drawn as text: the board's lines (diagonals only between strong points),
//! the pieces, coordinates and the side to move.

use crate::position::Position;

/// The board with its lines, `W`, `B` and `.` on the points, row numbers on the left and
/// column letters below, then the side to move.
pub fn draw(pos: &Position) -> String {
    let b = pos.board();
    let mut out = String::new();
    for row in (0..b.rows()).rev() {
        out.push_str(&format!("{:>2}  ", row + 1));
        for col in 0..b.cols() {
            let bit = 1u64 << b.point(col, row);
            out.push(if pos.white() & bit != 0 {
                'W'
            } else if pos.black() & bit != 0 {
                'B'
            } else {
                '.'
            });
            if col + 1 < b.cols() {
                out.push_str("---");
            }
        }
        out.push('\n');
        if row > 0 {
            // Lines to the row below; a cell's diagonal joins its two strong corners:
            // '/' when its lower-left corner (col, row-1) is strong, else '\'.
            out.push_str("    ");
            for col in 0..b.cols() {
                out.push('|');
                if col + 1 < b.cols() {
                    out.push_str(if (col + row - 1) % 2 == 0 {
                        " / "
                    } else {
                        " \\ "
                    });
                }
            }
            out.push('\n');
        }
    }
    out.push_str("    ");
    for col in 0..b.cols() {
        out.push((b'a' + col as u8) as char);
        if col + 1 < b.cols() {
            out.push_str("   ");
        }
    }
    out.push('\n');
    out.push_str(&format!(
        "{} to move\n",
        capitalised(pos.side_to_move().name())
    ));
    out
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_3x3_start_is_drawn_with_its_diagonals() {
        let p: Position = "BBB/B.W/WWW w".parse().unwrap();
        let expect = concat!(
            " 3  B---B---B\n",
            "    | \\ | / |\n",
            " 2  B---.---W\n",
            "    | / | \\ |\n",
            " 1  W---W---W\n",
            "    a   b   c\n",
            "White to move\n",
        );
        assert_eq!(draw(&p), expect);
    }
}
