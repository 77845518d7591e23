//! `Moves`, `Curve`, `RoteStats` and `RoteExport`: what a session's trees and curve hold,
//! and what the rote store does.

use std::collections::BTreeMap;

use super::{Apply, Refusal, Service};
use crate::answers::{CurvePoint, MovesAt, RoteRow, RoteStats};
use crate::protocol::{Curve, Moves, RoteExport, RoteStatsOf};
use fanorona_session::moves::{Extras, moves_below};

impl Apply for Moves {
    fn apply(self, service: &Service) -> Result<MovesAt, Refusal> {
        let extras = Extras {
            heaviest: self.heaviest,
            pieces: self.pieces,
            transpositions: self.transpositions,
        };
        let below = moves_below(&service.sessions, self.id, &self.line, extras)?;
        Ok(MovesAt {
            id: self.id,
            line: self.line,
            position: below.position,
            questions: below.questions,
        })
    }
}

impl Apply for Curve {
    fn apply(self, service: &Service) -> Result<Vec<CurvePoint>, Refusal> {
        let rec = service.sessions.get(self.id)?;
        let points = match &self.since {
            Some(since) => service.sessions.curve_since(self.id, since)?,
            None => service.sessions.curve(self.id)?,
        };
        // A point of a question the record does not hold is left out (a damaged store).
        Ok(points
            .iter()
            .filter_map(|(g, p)| {
                Some(CurvePoint {
                    goal: rec.goals.get(*g as usize)?.attacker,
                    iteration: p.iteration,
                    nodes: p.nodes,
                    seconds: p.seconds,
                    root_pn: p.pn,
                    root_dpn: p.dn,
                })
            })
            .collect())
    }
}

impl Apply for RoteStatsOf {
    fn apply(self, service: &Service) -> Result<RoteStats, Refusal> {
        let entries = service.sessions.rote(None)?;
        let mut boards = BTreeMap::<String, u64>::new();
        for (k, _) in &entries {
            *boards.entry(k.pos.board().to_string()).or_default() += 1;
        }
        let count = |f: &dyn Fn(&fanorona_search::rote::RoteEntry) -> bool| {
            entries.iter().filter(|(_, e)| f(e)).count() as u64
        };
        let proven = count(&|e| e.proven);
        let (hits, nodes) = service.sessions.list()?.iter().fold((0, 0), |(h, n), r| {
            let (nodes, _, hits) = r.totals();
            (h + hits, n + nodes)
        });
        Ok(RoteStats {
            entries: entries.len() as u64,
            attacker_wins: proven,
            attacker_does_not_win: entries.len() as u64 - proven,
            with_best_move: count(&|e| e.best_move.is_some()),
            boards,
            hits,
            hit_rate: hits as f64 / nodes.max(1) as f64,
        })
    }
}

impl Apply for RoteExport {
    fn apply(self, service: &Service) -> Result<Vec<RoteRow>, Refusal> {
        Ok(service
            .sessions
            .rote(None)?
            .iter()
            .map(|(k, e)| RoteRow::new(k, e))
            .collect())
    }
}
