//! A search in memory whose answer is checked: one question searched by df-pn, PN or PN²,
//! its solution tree re-verified by the independent check, and its certificate written
//! (and checked) where one is asked for. `fanorona solve`'s in-memory runs are this, a
//! question at a time; a session's runs are the runner's.

use std::path::Path;

use serde_json::json;

use crate::write::{Solved, WriteError, Written};
use crate::{Made, Terms, make, path_for};
use fanorona_rules::position::Position;
use fanorona_search::dfpn::DfPn;
use fanorona_search::pn::{self, PnTree};
use fanorona_search::proof::check;
use fanorona_search::solution::extract;
use fanorona_search::{
    Algorithm, CurvePoint, Goal, LeafEval, Limits, Outcome, SearchResult, SecondLevel, census,
};
use fanorona_tables::Database;

/// How a question is searched.
#[derive(Clone, Copy, Debug)]
pub struct SearchSettings {
    pub algo: Algorithm,
    pub limits: Limits,
    /// df-pn only: a repetition counts as the attacker's win (`--repetition attacker`).
    pub repetition_wins: bool,
    /// PN²'s second-level bound (`None`: the tree's default).
    pub second_level: Option<SecondLevel>,
    /// Entries of each second-level df-pn table (0: the default).
    pub second_level_table: usize,
    /// Entries of df-pn's own table.
    pub dfpn_table: usize,
}

/// Where a question's certificate goes: its prefix, and the tables' directory it names.
#[derive(Clone, Copy, Debug)]
pub struct CertificateTo<'p> {
    pub prefix: &'p Path,
    pub db_dir: Option<&'p Path>,
}

/// One question searched, its proof extracted and re-checked (`verified`: whether it held,
/// `None` when undecided), and its certificate if one was asked for and it was decided.
pub struct Checked {
    pub result: SearchResult,
    pub verified: Option<bool>,
    pub certificate: Option<Result<Made, CertificateFailed>>,
}

/// A certificate that could not be written, with its path.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct CertificateFailed {
    pub path: String,
    #[source]
    pub source: WriteError,
}

/// The header keys a certificate of an in-memory search adds: the search that decided it.
pub fn search_extra(
    algo: Algorithm,
    result: &SearchResult,
) -> serde_json::Map<String, serde_json::Value> {
    crate::header_extra(
        json!({"algorithm": algo.name(), "nodes": result.stats.nodes, "seconds": result.stats.seconds}),
    )
}

/// Writes (and checks) the certificate of `solved` under `to`; `written` sees its progress.
pub fn write_certificate(
    to: CertificateTo<'_>,
    solved: Solved<'_, '_>,
    extra: serde_json::Map<String, serde_json::Value>,
    written: &mut dyn FnMut(&Path, &Written),
) -> Result<Made, CertificateFailed> {
    let path = path_for(to.prefix, solved.goal);
    make(
        to.prefix,
        solved,
        extra,
        to.db_dir,
        Terms::default(),
        &mut |w| written(&path, w),
    )
    .map_err(|source| CertificateFailed {
        path: path.display().to_string(),
        source,
    })
}

/// Searches question `goal` at `pos` as `settings` say, checks its answer, and writes its
/// certificate under `to` if given and the question is decided. `progress` sees the curve's
/// points, `written` the certificate's progress.
#[allow(clippy::too_many_arguments)]
pub fn search_checked(
    pos: &Position,
    goal: Goal,
    leaf: LeafEval<'_>,
    settings: &SearchSettings,
    db: Option<&Database>,
    to: Option<CertificateTo<'_>>,
    progress: &mut dyn FnMut(&CurvePoint),
    written: &mut dyn FnMut(&Path, &Written),
) -> Checked {
    if settings.algo == Algorithm::DfPn {
        let mut search = DfPn::new(goal, leaf, settings.limits, settings.dfpn_table);
        search.repetition_wins = settings.repetition_wins;
        let result = search.result(pos, |p| progress(p));
        // The check and the certificate create positions of their own, not the search's.
        let (verified, certificate) = census::set_aside(|| {
            // The independent check: the solution tree, re-verified from the rules and tables.
            let verified = (result.outcome != Outcome::Unknown)
                .then(|| search.solution(pos).is_some_and(|t| check(&t, db).is_ok()));
            let certificate = to.filter(|_| result.outcome != Outcome::Unknown).map(|to| {
                let solved = Solved {
                    root: *pos,
                    goal,
                    proves: result.outcome == Outcome::Proven,
                    db,
                    tree: None,
                    dfpn: Some(&mut search),
                };
                write_certificate(to, solved, search_extra(settings.algo, &result), written)
            });
            (verified, certificate)
        });
        return Checked {
            result,
            verified,
            certificate,
        };
    }
    let mut tree = PnTree::new(*pos, goal, leaf, Vec::new());
    if let Some(bound) = settings.second_level {
        tree.second_level = bound;
    }
    if settings.second_level_table > 0 {
        tree.second_level_table = settings.second_level_table;
    }
    let curve = pn::run(&mut tree, settings.algo, settings.limits, |p| progress(p));
    let result = tree.result(curve);
    // The check and the certificate create positions of their own, not the search's.
    let (verified, certificate) = census::set_aside(|| {
        // The independent check: the solution tree, re-verified from the rules and tables.
        let verified = (tree.outcome() != Outcome::Unknown).then(|| {
            extract(&tree, leaf)
                .map(|t| check(&t, db).is_ok())
                .unwrap_or(false)
        });
        let certificate = to.filter(|_| tree.decided()).map(|to| {
            let solved = Solved {
                root: *pos,
                goal,
                proves: tree.outcome() == Outcome::Proven,
                db,
                tree: Some(&tree),
                dfpn: None,
            };
            write_certificate(to, solved, search_extra(settings.algo, &result), written)
        });
        (verified, certificate)
    });
    Checked {
        result,
        verified,
        certificate,
    }
}
