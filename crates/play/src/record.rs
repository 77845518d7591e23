//! Game records: a header of tags, then the moves in the paper's notation, numbered in
//! pairs, and the result.
//!
//! ```text
//! [Board "3x3"]
//! [Start "BBB/B.W/WWW w"]
//! [White "perfect"]
//! [Black "human"]
//! [Result "1-0"]
//! [Termination "no moves"]
//!
//! 1. c1-b2A a3-a2 2. b2-b3A 1-0
//! ```

use thiserror::Error;

use crate::game::{End, Game};
use fanorona_rules::position::Position;

#[derive(Debug, Error, PartialEq, Eq)]
#[error("line {line}: {message}")]
pub struct RecordError {
    pub line: usize,
    pub message: String,
}

/// The record of `game` with `tags` (Board, Start, MoveCap, Result and Termination are
/// written from the game itself).
pub fn write(game: &Game, tags: &[(String, String)]) -> String {
    let start = game.start();
    let mut out = format!("[Board \"{}\"]\n[Start \"{}\"]\n", start.board(), start);
    if let Some(cap) = game.max_plies {
        out.push_str(&format!("[MoveCap \"{cap}\"]\n"));
    }
    for (k, v) in tags {
        if !matches!(
            k.as_str(),
            "Board" | "Start" | "MoveCap" | "Result" | "Termination"
        ) {
            out.push_str(&format!("[{k} \"{}\"]\n", v.replace('"', "'")));
        }
    }
    let end = game.end();
    out.push_str(&format!("[Result \"{}\"]\n", end.map_or("*", End::result)));
    if let Some(e) = end {
        out.push_str(&format!("[Termination \"{}\"]\n", e.termination()));
    }
    out.push('\n');
    let board = start.board();
    let black_first = start.side_to_move() == fanorona_rules::Color::Black;
    let mut line = String::new();
    for (i, m) in game.moves().iter().enumerate() {
        let ply = i + usize::from(black_first);
        if ply % 2 == 0 {
            line.push_str(&format!("{}. ", ply / 2 + 1));
        } else if i == 0 {
            line.push_str(&format!("{}... ", ply / 2 + 1));
        }
        line.push_str(&m.notation(board));
        line.push(' ');
        if line.len() > 80 {
            out.push_str(line.trim_end());
            out.push('\n');
            line.clear();
        }
    }
    line.push_str(end.map_or("*", End::result));
    out.push_str(&line);
    out.push('\n');
    out
}

/// Reads a record back: the game replayed (every move checked), and its tags.
pub fn parse(text: &str) -> Result<(Game, Vec<(String, String)>), RecordError> {
    let err = |line: usize, message: String| RecordError { line, message };
    let mut tags = Vec::new();
    let mut body = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with('[') {
            let inner = line
                .strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
                .ok_or_else(|| err(i + 1, format!("a tag must be [Key \"value\"]: {line}")))?;
            let (key, value) = inner
                .split_once(' ')
                .ok_or_else(|| err(i + 1, format!("a tag must be [Key \"value\"]: {line}")))?;
            let value = value
                .trim()
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .ok_or_else(|| err(i + 1, format!("the tag's value must be quoted: {line}")))?;
            tags.push((key.to_string(), value.to_string(), i + 1));
        } else if !line.is_empty() {
            body.push((i + 1, line));
        }
    }
    let tag = |k: &str| tags.iter().find(|(key, _, _)| key == k);
    let board = match tag("Board") {
        Some((_, b, line)) => Some(
            b.parse::<fanorona_rules::geometry::Board>()
                .map_err(|e| err(*line, format!("Board: {e}")))?,
        ),
        None => None,
    };
    let start: Position = match (tag("Start"), board) {
        (Some((_, s, line)), _) => s.parse().map_err(|e| err(*line, format!("Start: {e}")))?,
        (None, Some(b)) => Position::initial(b),
        (None, None) => return Err(err(1, "no Board or Start tag".into())),
    };
    // Both given: they must name one board.
    if let (Some(b), Some((_, _, line))) = (board, tag("Start"))
        && start.board() != b
    {
        return Err(err(
            *line,
            format!("Start is a {} position, but Board says {b}", start.board()),
        ));
    }
    let cap = match tag("MoveCap") {
        Some((_, c, line)) => Some(
            c.parse::<usize>()
                .map_err(|_| err(*line, format!("MoveCap: '{c}' is not a number of plies")))?,
        ),
        None => None,
    };
    let mut game = Game::new(start, cap);
    let mut result = None;
    for (line, text) in body {
        for token in text.split_whitespace() {
            if token.ends_with('.') && token.trim_end_matches('.').parse::<u32>().is_ok() {
                continue;
            }
            if matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*") {
                result = Some((token, line));
                continue;
            }
            if result.is_some() {
                return Err(err(line, format!("'{token}' after the result")));
            }
            game.play_text(token)
                .map_err(|e| err(line, format!("move {} '{token}': {e}", game.plies() + 1)))?;
        }
    }
    if tag("Termination").is_some_and(|(_, t, _)| t == "resignation") {
        game.resign();
    }
    // The result must be the game's, and the Result tag must say the same.
    if let Some((_, r, line)) = tag("Result") {
        let played = game.end().map_or("*", End::result);
        if r != played {
            return Err(err(
                *line,
                format!("Result says {r}, but the moves give {played}"),
            ));
        }
    }
    if let Some((r, line)) = result {
        let played = game.end().map_or("*", End::result);
        if r != played {
            return Err(err(
                line,
                format!("the result says {r}, but the moves give {played}"),
            ));
        }
    }
    Ok((game, tags.into_iter().map(|(k, v, _)| (k, v)).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_the_same_game() {
        let mut g = Game::new(Position::initial("5x5".parse().unwrap()), Some(50));
        for _ in 0..3 {
            let m = fanorona_rules::legal_moves(g.position())[0];
            g.play(&m).unwrap();
        }
        let names: Vec<String> = g
            .moves()
            .iter()
            .map(|m| m.notation(g.start().board()))
            .collect();
        let text = write(&g, &[("White".into(), "perfect".into())]);
        assert!(text.contains("[White \"perfect\"]\n"), "{text}");
        assert!(
            text.contains(&format!("1. {} {} 2. {}", names[0], names[1], names[2])),
            "{text}"
        );
        let (back, tags) = parse(&text).unwrap();
        assert_eq!(back.moves(), g.moves());
        assert_eq!(back.end(), g.end());
        assert!(tags.iter().any(|(k, v)| k == "White" && v == "perfect"));
        // An illegal move is named with its line and number.
        let bad = text.replace(&format!(" {} ", names[1]), " a1-a5 ");
        let e = parse(&bad).unwrap_err();
        assert!(e.message.starts_with("move 2 'a1-a5'"), "{e}");
        assert_eq!(
            e.line,
            text.lines().position(|l| l.starts_with("1.")).unwrap() + 1
        );
        assert!(parse("[Board 3x3]\n").is_err());
        // Tags that contradict the game are refused with their line: a board that is no
        // board, a Board other than the Start's, a Result the moves do not give.
        let tagged = |from: &str, to: &str| {
            assert!(text.contains(from), "{text}");
            parse(&text.replacen(from, to, 1)).unwrap_err()
        };
        let e = tagged("[Board \"5x5\"]", "[Board \"banana\"]");
        assert!(e.message.starts_with("Board:") && e.line == 1, "{e}");
        let e = tagged("[Board \"5x5\"]", "[Board \"3x3\"]");
        assert!(
            e.message.contains("but Board says 3x3") && e.line == 2,
            "{e}"
        );
        let e = tagged("[Result \"*\"]", "[Result \"1-0\"]");
        assert!(e.message.contains("Result says 1-0"), "{e}");
    }
}
