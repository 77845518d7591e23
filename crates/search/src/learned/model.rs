//! The value model: one hidden layer of rectified units over `features::INPUTS`, three
//! outputs (the side to move wins, draws, loses), and its weights file.
//!
//! The file: `FNLW`, the format version, the board (rows, columns), the inputs and hidden
//! units it was made for, the seed and samples it was trained with, the weights (f32, little
//! endian; the first layer unit by unit, then the output layer with its biases), and a CRC32
//! of all before it.

use thiserror::Error;

use super::features::{CLASSES, DENSE, INPUTS, Regions};
use fanorona_rules::geometry::points;
use fanorona_rules::movegen::capturing_pieces;
use fanorona_rules::{Board, Position};

/// The weights file's version: a file of another is refused, never misread.
pub const FORMAT: u32 = 1;
const MAGIC: &[u8; 4] = b"FNLW";
/// Hidden units.
pub const HIDDEN: usize = 16;
/// Win, draw, loss for the side to move.
pub const OUTPUTS: usize = 3;
const WEIGHTS: usize = HIDDEN * INPUTS + OUTPUTS * (HIDDEN + 1);
const HEADER: usize = 4 + 4 + 2 + 4 + 4 + 8 + 8;

/// The command that makes a weights file, for the errors that need one.
pub const LEARN_COMMAND: &str = "fanorona learn --db DIR --board 5x9 --out FILE";

#[derive(Debug, Error)]
pub enum WeightsError {
    #[error(
        "{0}: not a weights file (it does not start with FNLW); make one with `{LEARN_COMMAND}`"
    )]
    NotWeights(String),
    #[error(
        "{0}: weights of format {1}, this program reads {FORMAT}; make them again with `{LEARN_COMMAND}`"
    )]
    Format(String, u32),
    #[error("{0}: damaged (its checksum does not match); make it again with `{LEARN_COMMAND}`")]
    Damaged(String),
    #[error(
        "{0}: made for {1} inputs and {2} hidden units, this program has {INPUTS} and {HIDDEN}; make it again with `{LEARN_COMMAND}`"
    )]
    Shape(String, u32, u32),
    #[error(
        "{0}: holds weights that are not numbers (NaN or infinite); make it again with `{LEARN_COMMAND}`"
    )]
    NotFinite(String),
    #[error("{0}: cannot be read ({1}); make weights with `{LEARN_COMMAND}`")]
    Unreadable(String, String),
    #[error(
        "{0}: weights for {1}, not {2} (nor its transpose); make weights for {2} with `fanorona learn --db DIR --board {2} --out FILE`"
    )]
    OtherBoard(String, Board, Board),
}

/// A trained model, ready to evaluate positions of its board (and of its transpose).
#[derive(Clone, Debug)]
pub struct Model {
    pub board: Board,
    pub seed: u64,
    pub samples: u64,
    /// First layer: `HIDDEN` rows of `INPUTS` (the first input is 1: its column is the bias).
    pub w1: Vec<f32>,
    /// Output layer: `OUTPUTS` rows of `HIDDEN` weights and a bias.
    pub w2: Vec<f32>,
    regions: Regions,
    fast: Fast,
}

/// The first layer laid out for evaluation: a column of hidden units for each dense input,
/// and for each point the column of its group's share for either side, so that a position
/// costs a sum over its pieces rather than a product over every group.
#[derive(Clone, Debug)]
struct Fast {
    dense: [[f32; HIDDEN]; DENSE],
    ours: Vec<[f32; HIDDEN]>,
    theirs: Vec<[f32; HIDDEN]>,
}

impl Fast {
    fn new(w1: &[f32], regions: &Regions) -> Fast {
        let column = |i: usize| std::array::from_fn(|h| w1[h * INPUTS + i]);
        Fast {
            dense: std::array::from_fn(column),
            ours: regions
                .class_of
                .iter()
                .map(|&c| column(DENSE + c as usize))
                .collect(),
            theirs: regions
                .class_of
                .iter()
                .map(|&c| column(DENSE + CLASSES + c as usize))
                .collect(),
        }
    }
}

impl Model {
    /// A model of `board` with the weights given (`w1`, then `w2`).
    pub fn new(board: Board, seed: u64, samples: u64, w1: Vec<f32>, w2: Vec<f32>) -> Model {
        assert_eq!(w1.len(), HIDDEN * INPUTS);
        assert_eq!(w2.len(), OUTPUTS * (HIDDEN + 1));
        let regions = Regions::new(board);
        Model {
            board,
            seed,
            samples,
            fast: Fast::new(&w1, &regions),
            w1,
            w2,
            regions,
        }
    }

    /// The same weights read for `board`: the model's own or its transpose.
    pub fn for_board(&self, board: Board) -> Option<Model> {
        (board == self.board || board == self.board.transposed()).then(|| {
            Model::new(
                board,
                self.seed,
                self.samples,
                self.w1.clone(),
                self.w2.clone(),
            )
        })
    }

    pub fn regions(&self) -> &Regions {
        &self.regions
    }

    /// The outputs' logits for inputs `x`; `hidden` gets the hidden layer's values.
    #[inline]
    pub fn logits(&self, x: &[f32; INPUTS], hidden: &mut [f32; HIDDEN]) -> [f32; OUTPUTS] {
        for (h, row) in hidden.iter_mut().zip(self.w1.chunks_exact(INPUTS)) {
            *h = dot(row, x).max(0.0);
        }
        self.output(hidden)
    }

    /// The output layer's logits for the hidden layer's values.
    #[inline]
    fn output(&self, hidden: &[f32; HIDDEN]) -> [f32; OUTPUTS] {
        let mut out = [0.0; OUTPUTS];
        for (o, row) in out.iter_mut().zip(self.w2.chunks_exact(HIDDEN + 1)) {
            *o = row[HIDDEN] + dot(&row[..HIDDEN], hidden);
        }
        out
    }

    /// Win, draw and loss for the side to move of `pos` (on the model's board), `moves` its
    /// move count; they sum to 1. The same as `logits` of `Regions::inputs`, summed in
    /// another order.
    pub fn predict(&self, pos: &Position, moves: u64) -> [f32; OUTPUTS] {
        self.predict_counted(pos, moves, capturing_pieces(pos))
    }

    /// `predict` given the side to move's capturing pieces as well, which the search's move
    /// count has found (`count_moves_and_capturers`).
    #[inline]
    pub fn predict_counted(&self, pos: &Position, moves: u64, capturers: u64) -> [f32; OUTPUTS] {
        let mut x = [0.0; DENSE];
        let (ru, rt) = self.regions.dense(pos, moves, capturers, &mut x);
        let f = &self.fast;
        let mut hidden = [0.0f32; HIDDEN];
        for (x, column) in x.iter().zip(&f.dense) {
            if *x != 0.0 {
                add_scaled(&mut hidden, column, *x);
            }
        }
        add_scaled(&mut hidden, &sum_rows(pos.us(), &f.ours), ru);
        add_scaled(&mut hidden, &sum_rows(pos.them(), &f.theirs), rt);
        hidden.iter_mut().for_each(|h| *h = h.max(0.0));
        softmax(self.output(&hidden))
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEADER + 4 * WEIGHTS + 4);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&FORMAT.to_le_bytes());
        b.push(self.board.rows() as u8);
        b.push(self.board.cols() as u8);
        b.extend_from_slice(&(INPUTS as u32).to_le_bytes());
        b.extend_from_slice(&(HIDDEN as u32).to_le_bytes());
        b.extend_from_slice(&self.seed.to_le_bytes());
        b.extend_from_slice(&self.samples.to_le_bytes());
        for w in self.w1.iter().chain(&self.w2) {
            b.extend_from_slice(&w.to_le_bytes());
        }
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }

    /// Reads the weights file at `path` for a search on `board` (its own board or the
    /// transpose), every fault named with the file and the command that makes weights.
    pub fn load(path: &std::path::Path, board: Board) -> Result<Model, WeightsError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| WeightsError::Unreadable(name.clone(), e.to_string()))?;
        Model::from_bytes_for(&name, &bytes, board)
    }

    /// `from_bytes`, read for a search on `board` (the weights' own board or its
    /// transpose).
    pub fn from_bytes_for(name: &str, b: &[u8], board: Board) -> Result<Model, WeightsError> {
        let model = Model::from_bytes(name, b)?;
        model
            .for_board(board)
            .ok_or_else(|| WeightsError::OtherBoard(name.to_string(), model.board, board))
    }

    /// Reads a weights file's bytes (`name` names it in errors).
    pub fn from_bytes(name: &str, b: &[u8]) -> Result<Model, WeightsError> {
        let name = name.to_string();
        if b.len() < 8 || &b[..4] != MAGIC {
            return Err(WeightsError::NotWeights(name));
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let format = u32_at(4);
        if format != FORMAT {
            return Err(WeightsError::Format(name, format));
        }
        if b.len() < HEADER + 4 {
            return Err(WeightsError::Damaged(name));
        }
        let (body, crc) = b.split_at(b.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(WeightsError::Damaged(name));
        }
        let (inputs, hidden) = (u32_at(10), u32_at(14));
        if inputs as usize != INPUTS || hidden as usize != HIDDEN {
            return Err(WeightsError::Shape(name, inputs, hidden));
        }
        if body.len() != HEADER + 4 * WEIGHTS {
            return Err(WeightsError::Damaged(name));
        }
        let board = Board::new(b[8] as usize, b[9] as usize)
            .map_err(|_| WeightsError::Damaged(name.clone()))?;
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let w: Vec<f32> = body[HEADER..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        if w.iter().any(|x| !x.is_finite()) {
            return Err(WeightsError::NotFinite(name));
        }
        let (w1, w2) = w.split_at(HIDDEN * INPUTS);
        Ok(Model::new(
            board,
            u64_at(18),
            u64_at(26),
            w1.to_vec(),
            w2.to_vec(),
        ))
    }
}

/// The sum of `table`'s rows at the points of `set`, added in the points' order lane by
/// lane. Four lanes at a time in four named sums, which the compiler keeps in registers
/// (one sum of 16 it kept in memory, storing and loading it at every point).
#[inline]
fn sum_rows(set: u64, table: &[[f32; HIDDEN]]) -> [f32; HIDDEN] {
    const _: () = assert!(HIDDEN == 16);
    let add = |a: &mut [f32; 4], b: &[f32]| {
        for (x, y) in a.iter_mut().zip(b) {
            *x += y;
        }
    };
    let (mut a, mut b, mut c, mut d) = ([0.0f32; 4], [0.0f32; 4], [0.0f32; 4], [0.0f32; 4]);
    for p in points(set) {
        let row = &table[p as usize];
        add(&mut a, &row[..4]);
        add(&mut b, &row[4..8]);
        add(&mut c, &row[8..12]);
        add(&mut d, &row[12..]);
    }
    let mut out = [0.0f32; HIDDEN];
    for (i, part) in [a, b, c, d].iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(part);
    }
    out
}

/// `acc += column * x`, lane by lane.
#[inline]
fn add_scaled(acc: &mut [f32; HIDDEN], column: &[f32; HIDDEN], x: f32) {
    for (a, c) in acc.iter_mut().zip(column) {
        *a += c * x;
    }
}

/// A dot product in eight independent sums, so that the compiler can use vector lanes (one
/// running sum is a chain of dependent additions, several times slower).
#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// Probabilities from logits.
#[inline]
pub fn softmax(z: [f32; OUTPUTS]) -> [f32; OUTPUTS] {
    let m = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e = z.map(|v| (v - m).exp());
    let s: f32 = e.iter().sum();
    e.map(|v| v / s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        let w1 = (0..HIDDEN * INPUTS)
            .map(|i| ((i * 37 % 11) as f32 - 5.0) / 10.0)
            .collect();
        let w2 = (0..OUTPUTS * (HIDDEN + 1))
            .map(|i| ((i * 13 % 7) as f32 - 3.0) / 5.0)
            .collect();
        Model::new("5x9".parse().unwrap(), 7, 1000, w1, w2)
    }

    #[test]
    fn weights_round_trip_and_every_damage_is_named() {
        let m = model();
        let bytes = m.to_bytes();
        let back = Model::from_bytes("w", &bytes).unwrap();
        assert_eq!(
            (back.w1, back.w2, back.seed, back.samples),
            (m.w1.clone(), m.w2.clone(), 7, 1000)
        );
        let mut flipped = bytes.clone();
        flipped[HEADER + 5] ^= 1;
        assert!(matches!(
            Model::from_bytes("w", &flipped),
            Err(WeightsError::Damaged(_))
        ));
        assert!(matches!(
            Model::from_bytes("w", &bytes[..bytes.len() - 9]),
            Err(WeightsError::Damaged(_))
        ));
        assert!(matches!(
            Model::from_bytes("w", b"PNG....."),
            Err(WeightsError::NotWeights(_))
        ));
        let mut other = bytes.clone();
        other[4] = 9;
        assert!(matches!(
            Model::from_bytes("w", &other),
            Err(WeightsError::Format(_, 9))
        ));
        let mut nan = model();
        nan.w2[3] = f32::NAN;
        assert!(matches!(
            Model::from_bytes("w", &nan.to_bytes()),
            Err(WeightsError::NotFinite(_))
        ));
        let e = Model::from_bytes("w.fnlw", &flipped)
            .unwrap_err()
            .to_string();
        assert!(e.contains("w.fnlw") && e.contains("fanorona learn"), "{e}");
    }

    #[test]
    fn the_fast_evaluation_is_the_layers_product() {
        let m = model();
        let board: Board = "5x9".parse().unwrap();
        let mut pos = Position::initial(board);
        let mut moves = Vec::new();
        for i in 0..300usize {
            fanorona_rules::movegen::successors_into(&pos, &mut moves);
            if moves.is_empty() {
                pos = Position::initial(board);
                continue;
            }
            pos = moves[(i * 7) % moves.len()];
            let mut x = [0.0; INPUTS];
            m.regions().inputs(&pos, 6, &mut x);
            let slow = softmax(m.logits(&x, &mut [0.0; HIDDEN]));
            let fast = m.predict(&pos, 6);
            for (a, b) in slow.iter().zip(fast) {
                assert!((a - b).abs() < 1e-5, "{pos}: {slow:?} {fast:?}");
            }
        }
    }

    #[test]
    fn a_model_reads_its_transpose_alike_and_no_other_board() {
        let m = model();
        let pos: Position = "BBBBBBBBB/BBBBBBBBB/BWB.BWBWW/WWWWWWWWW/WWWWWWWWW w"
            .parse()
            .unwrap();
        let t = m.for_board(pos.board().transposed()).unwrap();
        let (a, b) = (m.predict(&pos, 5), t.predict(&pos.transposed(), 5));
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-6, "{a:?} {b:?}");
        }
        assert!((a.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(m.for_board("5x5".parse().unwrap()).is_none());
    }
}
