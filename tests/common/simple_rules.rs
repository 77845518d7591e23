//! A deliberately simple, separately written model of the rules (docs/RULES.md), for
//! cross-checking the fast generator. It shares no code with the library: a grid of
//! characters, directions as (column, row) steps, moves built step by step as notation
//! strings.

#![allow(dead_code)]

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Grid {
    pub rows: usize,
    pub cols: usize,
    /// cells[row][col], row 0 at the bottom (White's side).
    pub cells: Vec<Vec<char>>,
    /// 'W' or 'B'.
    pub to_move: char,
}

/// A capturing step: destination, direction, 'A' or 'W', and the board after it.
type Step = ((i32, i32), (i32, i32), char, Grid);

const DIRS: [(i32, i32); 8] = [
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
];

impl Grid {
    pub fn parse(text: &str) -> Grid {
        let (rows_text, side) = text.split_once(' ').expect("rows and side");
        let mut cells: Vec<Vec<char>> = rows_text.split('/').map(|r| r.chars().collect()).collect();
        cells.reverse();
        Grid {
            rows: cells.len(),
            cols: cells[0].len(),
            cells,
            to_move: if side == "w" { 'W' } else { 'B' },
        }
    }

    pub fn text(&self) -> String {
        let rows: Vec<String> = self
            .cells
            .iter()
            .rev()
            .map(|r| r.iter().collect())
            .collect();
        format!(
            "{} {}",
            rows.join("/"),
            if self.to_move == 'W' { "w" } else { "b" }
        )
    }

    fn enemy(&self) -> char {
        if self.to_move == 'W' { 'B' } else { 'W' }
    }

    fn on_board(&self, c: i32, r: i32) -> bool {
        c >= 0 && r >= 0 && (c as usize) < self.cols && (r as usize) < self.rows
    }

    fn at(&self, c: i32, r: i32) -> char {
        self.cells[r as usize][c as usize]
    }

    /// Whether a line joins (c, r) and its neighbour in direction (dc, dr).
    fn line(&self, c: i32, r: i32, dc: i32, dr: i32) -> bool {
        let diagonal = dc != 0 && dr != 0;
        self.on_board(c + dc, r + dr) && (!diagonal || (c + r) % 2 == 0)
    }

    fn name(c: i32, r: i32) -> String {
        format!("{}{}", (b'a' + c as u8) as char, r + 1)
    }

    /// Removes the enemy pieces from (c, r) onwards in direction (dc, dr) while they are enemies.
    fn remove_line(&mut self, mut c: i32, mut r: i32, dc: i32, dr: i32) {
        let enemy = self.enemy();
        while self.on_board(c, r) && self.at(c, r) == enemy {
            self.cells[r as usize][c as usize] = '.';
            c += dc;
            r += dr;
        }
    }

    /// Capturing steps from (c, r): (destination, direction, kind 'A'/'W', board after).
    fn capture_steps(&self, c: i32, r: i32) -> Vec<Step> {
        let mut out = Vec::new();
        let enemy = self.enemy();
        for (dc, dr) in DIRS {
            if !self.line(c, r, dc, dr) || self.at(c + dc, r + dr) != '.' {
                continue;
            }
            let (nc, nr) = (c + dc, r + dr);
            if self.on_board(nc + dc, nr + dr) && self.at(nc + dc, nr + dr) == enemy {
                let mut g = self.clone();
                g.cells[r as usize][c as usize] = '.';
                g.cells[nr as usize][nc as usize] = self.to_move;
                g.remove_line(nc + dc, nr + dr, dc, dr);
                out.push(((nc, nr), (dc, dr), 'A', g));
            }
            if self.on_board(c - dc, r - dr) && self.at(c - dc, r - dr) == enemy {
                let mut g = self.clone();
                g.cells[r as usize][c as usize] = '.';
                g.cells[nr as usize][nc as usize] = self.to_move;
                g.remove_line(c - dc, r - dr, -dc, -dr);
                out.push(((nc, nr), (dc, dr), 'W', g));
            }
        }
        out
    }

    /// Every legal move as (notation, position after with the opponent to move).
    pub fn moves(&self) -> Vec<(String, Grid)> {
        let mut out = Vec::new();
        for r in 0..self.rows as i32 {
            for c in 0..self.cols as i32 {
                if self.at(c, r) != self.to_move {
                    continue;
                }
                let start = Grid::name(c, r);
                self.chains(c, r, None, &mut vec![(c, r)], &start, &mut out);
            }
        }
        // Capture is compulsory: paika only when no chain was found.
        if out.is_empty() {
            for r in 0..self.rows as i32 {
                for c in 0..self.cols as i32 {
                    if self.at(c, r) != self.to_move {
                        continue;
                    }
                    for (dc, dr) in DIRS {
                        if self.line(c, r, dc, dr) && self.at(c + dc, r + dr) == '.' {
                            let mut g = self.clone();
                            g.cells[r as usize][c as usize] = '.';
                            g.cells[(r + dr) as usize][(c + dc) as usize] = self.to_move;
                            out.push((
                                format!("{}-{}", Grid::name(c, r), Grid::name(c + dc, r + dr)),
                                g,
                            ));
                        }
                    }
                }
            }
        }
        for (_, g) in &mut out {
            g.to_move = self.enemy();
        }
        out
    }

    fn chains(
        &self,
        c: i32,
        r: i32,
        last: Option<(i32, i32)>,
        visited: &mut Vec<(i32, i32)>,
        notation: &str,
        out: &mut Vec<(String, Grid)>,
    ) {
        for ((nc, nr), dir, kind, g) in self.capture_steps(c, r) {
            if Some(dir) == last || visited.contains(&(nc, nr)) {
                continue;
            }
            let text = format!("{notation}-{}{kind}", Grid::name(nc, nr));
            out.push((text.clone(), g.clone()));
            visited.push((nc, nr));
            g.chains(nc, nr, Some(dir), visited, &text, out);
            visited.pop();
        }
    }

    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        self.moves().iter().map(|(_, g)| g.perft(depth - 1)).sum()
    }
}
