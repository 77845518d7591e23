//! PN² with its second-level searches as jobs, many in flight at once: the master's side
//! of job-level proof-number search (Wu, Lin et al., Connect6 on a desktop grid).
//!
//! The first-level tree hands out its most-proving leaf as a job (a bounded df-pn search
//! from it), then marks the leaf in flight by giving it virtual numbers so that the next
//! selection goes elsewhere (`Virtual`): both just below infinity, the numbers of a leaf
//! nobody should choose, neither to prove nor to disprove (as nelhage/ultimattt's PN-DFPN
//! steers selection away from dispatched leaves; `pn::iterate_pair` is the two-job case), or
//! its own numbers doubled each time selection reaches it again (a virtual loss). When
//! selection can only reach leaves in flight, no job is handed out until an answer comes
//! back. An answer gives the leaf its real numbers back and its
//! children, as `pn::expand_by_dfpn` would have. Answers may come in any order; one for a
//! leaf not in flight (a duplicate, or one from before a restart) changes nothing.
//!
//! Who runs the jobs is not this module's business: threads of this process, or workers on
//! other machines. `run_job` is what each of them does.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::INFINITE;
use crate::Init;
use crate::dfpn::{DfPn, Entry};
use crate::pn::{PnTree, Work, attach_searched};
use fanorona_rules::Board;
use fanorona_rules::position::{Color, Position};

/// A leaf's second-level search, to be run anywhere.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// The first-level leaf it expands (the master's node number).
    pub leaf: u32,
    pub position: Position,
    /// The positions before it, oldest first: the game, then the leaf's ancestors.
    pub history: Vec<Position>,
    /// Nodes the search may create.
    pub budget: u64,
}

/// What a job found: the numbers it left each successor of its position (in `successors`
/// order) and the work it did.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub leaf: u32,
    pub position: Position,
    pub entries: Vec<Entry>,
    pub work: Work,
}

/// Whether an answer was taken into the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    Taken,
    /// Its leaf is not in flight (answered already, or handed out before a restart).
    Stale,
}

/// How a leaf in flight is marked so that selection goes elsewhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Virtual {
    /// Both numbers just below infinity: nobody chooses it, and an ancestor whose number is
    /// a sum over it looks hopeless on that side until the answer comes (nelhage/ultimattt's
    /// PN-DFPN steers so).
    Excluded,
    /// Both numbers doubled, and doubled again each time selection still reaches it, up to
    /// `MOST_DOUBLINGS` times (the "virtual loss" of parallel tree searches): the leaf looks
    /// worse without hiding the rest of its ancestors' work. The default: in virtual time
    /// (`cluster simulate`) it decided the 5x9 start's "Black wins?" 3.8 times sooner than
    /// `Excluded` with 128 workers, and with no more nodes than one worker.
    #[default]
    Inflated,
}

impl Virtual {
    /// Its name, as `FromStr` reads it.
    pub fn name(self) -> &'static str {
        match self {
            Virtual::Excluded => "excluded",
            Virtual::Inflated => "inflated",
        }
    }
}

impl std::str::FromStr for Virtual {
    type Err = String;

    fn from_str(s: &str) -> Result<Virtual, String> {
        match s {
            "excluded" => Ok(Virtual::Excluded),
            "inflated" => Ok(Virtual::Inflated),
            _ => Err(format!(
                "'{s}': a leaf in flight is \"excluded\" or \"inflated\""
            )),
        }
    }
}

/// Numbers of an excluded leaf in flight.
const EXCLUDED: (u64, u64) = (INFINITE - 1, INFINITE - 1);

/// How often an inflated leaf's numbers are doubled before selection gives up on it.
const MOST_DOUBLINGS: u32 = 20;

/// A leaf in flight: its real numbers, those it shows meanwhile, and how often they were
/// doubled.
#[derive(Clone, Copy, Debug)]
struct Mark {
    real: (u64, u64),
    shown: (u64, u64),
    doublings: u32,
}

impl Mark {
    fn new(real: (u64, u64), policy: Virtual) -> Mark {
        let mut m = Mark {
            real,
            shown: EXCLUDED,
            doublings: 0,
        };
        if policy == Virtual::Inflated {
            m.double();
        }
        m
    }

    /// Whether `node` still shows this mark (not decided since).
    fn shown_on(&self, node: &crate::pn::Node) -> bool {
        (node.pn, node.dn) == self.shown
    }

    fn double(&mut self) {
        self.doublings += 1;
        let up = |x: u64| x.saturating_mul(1 << self.doublings).clamp(1, INFINITE - 2);
        self.shown = (up(self.real.0), up(self.real.1));
    }
}

/// The leaves in flight and their real numbers.
#[derive(Default, Debug)]
pub struct InFlight {
    real: HashMap<u32, Mark>,
    policy: Virtual,
}

impl InFlight {
    /// Leaves in flight marked by `policy`.
    pub fn new(policy: Virtual) -> InFlight {
        InFlight {
            real: HashMap::new(),
            policy,
        }
    }

    pub fn len(&self) -> usize {
        self.real.len()
    }

    pub fn is_empty(&self) -> bool {
        self.real.is_empty()
    }

    /// The leaves in flight that still show their mark (not decided since), with it.
    fn still_marked(&self, tree: &PnTree<'_>) -> Vec<(usize, Mark)> {
        self.real
            .iter()
            .map(|(&n, &m)| (n as usize, m))
            .filter(|&(n, m)| m.shown_on(&tree.nodes[n]))
            .collect()
    }

    /// The next job: the most-proving leaf not in flight, marked in flight. `None` when the
    /// tree is decided or selection only reaches leaves in flight. A leaf the rote store
    /// decides is decided here, without a job, and the choice goes on; such leaves are added
    /// to `decided` (a checkpoint must write them).
    pub fn next_job(&mut self, tree: &mut PnTree<'_>, decided: &mut Vec<usize>) -> Option<Job> {
        loop {
            if tree.decided() {
                return None;
            }
            let n = tree.select_most_proving();
            if let Some(mark) = self.real.get_mut(&(n as u32)) {
                // Reached again: an excluded leaf ends the choice; an inflated one looks
                // worse again, up to a point.
                if self.policy == Virtual::Excluded || mark.doublings >= MOST_DOUBLINGS {
                    return None;
                }
                mark.double();
                (tree.nodes[n].pn, tree.nodes[n].dn) = mark.shown;
                tree.update_ancestors(n);
                continue;
            }
            if tree.decide_by_rote(n) {
                tree.update_ancestors(n);
                tree.stats.iterations += 1;
                decided.push(n);
                continue;
            }
            let (position, history, budget) = tree.second_level_start(n);
            let node = &mut tree.nodes[n];
            let mark = Mark::new((node.pn, node.dn), self.policy);
            self.real.insert(n as u32, mark);
            (node.pn, node.dn) = mark.shown;
            tree.update_ancestors(n);
            return Some(Job {
                leaf: n as u32,
                position,
                history,
                budget,
            });
        }
    }

    /// Takes `answer` into the tree: its leaf gets its real numbers back and its children.
    pub fn apply(&mut self, tree: &mut PnTree<'_>, answer: &Answer) -> Applied {
        let n = answer.leaf as usize;
        let fits = tree
            .nodes
            .get(n)
            .is_some_and(|node| node.pos == answer.position && !node.expanded);
        if !fits {
            return Applied::Stale;
        }
        let Some(mark) = self.real.remove(&answer.leaf) else {
            return Applied::Stale;
        };
        if !mark.shown_on(&tree.nodes[n]) {
            // Decided meanwhile (another search proved the position, the rote store said
            // so): that stands.
            return Applied::Stale;
        }
        (tree.nodes[n].pn, tree.nodes[n].dn) = mark.real;
        attach_searched(tree, n, &answer.position, &answer.entries, answer.work);
        tree.update_ancestors(n);
        tree.stats.iterations += 1;
        Applied::Taken
    }

    /// Runs `f` on the tree with every leaf in flight back at its real numbers (what a
    /// checkpoint must save: a restart hands those leaves out again), then marks them again.
    /// A leaf decided meanwhile (the rote store adopted) keeps its value.
    pub fn with_real_numbers<R>(
        &self,
        tree: &mut PnTree<'_>,
        f: impl FnOnce(&PnTree<'_>) -> R,
    ) -> R {
        let marked = self.still_marked(tree);
        for &(n, m) in &marked {
            (tree.nodes[n].pn, tree.nodes[n].dn) = m.real;
            tree.update_ancestors(n);
        }
        let r = f(tree);
        for &(n, m) in &marked {
            (tree.nodes[n].pn, tree.nodes[n].dn) = m.shown;
            tree.update_ancestors(n);
        }
        r
    }

    /// Gives every leaf in flight its real numbers back and forgets them: their answers, if
    /// any come, are stale (the jobs' runner went away, or the search stops).
    pub fn abandon(&mut self, tree: &mut PnTree<'_>) {
        for (n, m) in self.still_marked(tree) {
            (tree.nodes[n].pn, tree.nodes[n].dn) = m.real;
            tree.update_ancestors(n);
        }
        self.real.clear();
    }

    /// One step through `dispatch`: jobs handed out up to its width, then at most one answer
    /// taken (waiting about a second). The leaves it changed (decided by the rote store,
    /// answered) are added to `changed`. False when nothing is in flight to wait for (the
    /// tree is decided).
    pub fn step(
        &mut self,
        tree: &mut PnTree<'_>,
        dispatch: &mut dyn Dispatch,
        changed: &mut Vec<usize>,
    ) -> Result<bool, DispatchError> {
        while self.len() < dispatch.width() {
            let Some(job) = self.next_job(tree, changed) else {
                break;
            };
            dispatch.send(&job)?;
        }
        if self.is_empty() {
            return Ok(false);
        }
        if let Some(answer) = dispatch.receive()? {
            match self.apply(tree, &answer) {
                Applied::Taken => changed.push(answer.leaf as usize),
                Applied::Stale => dispatch.stale(),
            }
        }
        Ok(true)
    }
}

#[derive(Debug, Error)]
#[error("{0}")]
pub struct DispatchError(pub String);

/// Somewhere else to run one question's jobs (workers on other machines): the session's
/// search hands jobs out through it and takes the answers back.
pub trait Dispatch {
    /// Jobs to keep in flight.
    fn width(&self) -> usize;
    fn send(&mut self, job: &Job) -> Result<(), DispatchError>;
    /// The next answer to a job sent through this dispatch, waiting at most about a second
    /// (`None` then); answers of other runs, garbled or repeated ones are counted, not
    /// returned.
    fn receive(&mut self) -> Result<Option<Answer>, DispatchError>;
    /// The answer last received was stale in the tree.
    fn stale(&mut self);
    /// What it has seen, for `session status`.
    fn view(&self) -> JobsView;
    /// The question is decided or stops: jobs not yet taken are withdrawn.
    fn close(&mut self);
}

/// Makes a `Dispatch` for each question a session searches.
pub trait Dispatcher: Send + Sync {
    /// Where the jobs go, in words (an address).
    fn place(&self) -> String;
    /// How long to search here after a fault before trying again.
    fn retry(&self) -> std::time::Duration;
    /// A dispatch for question `attacker` of session `session`, its leaves valued with
    /// `init` over the tables `tables` if any.
    fn open(
        &self,
        session: u64,
        attacker: Color,
        init: Init,
        tables: Option<TablesUsed>,
    ) -> Result<Box<dyn Dispatch>, DispatchError>;
}

/// The endgame tables a question's leaves read: a worker must hold the same.
#[derive(Clone, Debug, PartialEq)]
pub struct TablesUsed {
    pub board: Board,
    pub pieces: usize,
    /// Their manifest's fingerprint (`egdb::manifest::fingerprint`), if they have one.
    pub fingerprint: Option<String>,
}

impl TablesUsed {
    /// The tables `db` holds.
    pub fn of(db: &fanorona_tables::Database, board: Board) -> TablesUsed {
        let pieces = db.max_pieces();
        TablesUsed {
            board,
            pieces,
            fingerprint: db.fingerprint(pieces),
        }
    }
}

/// One question's jobs as its dispatch saw them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobsView {
    /// The question's side.
    pub goal: String,
    /// Where the jobs go.
    pub place: String,
    /// Whether jobs go there now (else they run here until it answers again).
    pub connected: bool,
    /// Why they do not.
    pub problem: Option<String>,
    pub in_flight: u64,
    /// Jobs sent and answers taken.
    pub sent: u64,
    pub answered: u64,
    /// Answers taken from a job's second delivery or later (its first worker went quiet).
    pub redelivered: u64,
    /// Answers for a job not in flight (run twice, or sent before a restart).
    pub stale: u64,
    /// Answers that did not decode: set aside.
    pub garbled: u64,
    /// Jobs sent again, unanswered so long they were taken for lost.
    #[serde(default)]
    pub resent: u64,
    pub workers: Vec<WorkerView>,
}

/// A worker as its answers describe it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerView {
    pub name: String,
    pub host: String,
    pub threads: usize,
    pub jobs: u64,
    pub nodes: u64,
    /// Seconds its jobs took, summed.
    pub seconds: f64,
    /// When its last answer came (seconds since the epoch).
    pub last_heard: u64,
}

impl WorkerView {
    /// Nodes a second while it ran this question's jobs.
    pub fn nodes_per_second(&self) -> f64 {
        self.nodes as f64 / self.seconds.max(1e-9)
    }
}

/// Decides `tree` with its jobs run through `dispatch`, up to its width in flight. Returns
/// the jobs still in flight when it was decided (withdrawn by `close`, their work lost).
pub fn solve_by_dispatch(
    tree: &mut PnTree<'_>,
    dispatch: &mut dyn Dispatch,
    policy: Virtual,
) -> Result<u64, DispatchError> {
    let mut flight = InFlight::new(policy);
    let mut changed = Vec::new();
    while !tree.decided() && flight.step(tree, dispatch, &mut changed)? {
        changed.clear();
    }
    let abandoned = flight.len() as u64;
    flight.abandon(tree);
    dispatch.close();
    Ok(abandoned)
}

/// Runs `job` with the df-pn table `dfpn` (kept warm from job to job).
pub fn run_job(dfpn: &mut DfPn<'_>, job: &Job) -> Answer {
    let before = dfpn.stats;
    let entries = dfpn.second_level(&job.position, &job.history, job.budget);
    Answer {
        leaf: job.leaf,
        position: job.position,
        entries,
        work: Work::between(before, dfpn.stats),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pn::{DFPN_SECOND_LEVEL_TABLE, search};
    use crate::{Algorithm, Goal, LeafEval, Limits, Outcome};
    use fanorona_rules::{Board, Color};

    /// A small deterministic shuffle (xorshift), so the tests run the same everywhere.
    struct Shuffle(u64);
    impl Shuffle {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// `root`'s question solved with up to `width` jobs in flight, answered in a shuffled
    /// order, every answer delivered twice (the second must change nothing).
    fn solve_by_jobs(
        root: Position,
        goal: Goal,
        width: usize,
        seed: u64,
        policy: Virtual,
    ) -> (Outcome, usize) {
        let leaf = LeafEval::rules_only();
        let mut tree = PnTree::new(root, goal, leaf, Vec::new());
        let mut dfpn = DfPn::new(goal, leaf, Limits::none(), DFPN_SECOND_LEVEL_TABLE / 64);
        let mut flight = InFlight::new(policy);
        let mut pending: Vec<Job> = Vec::new();
        let mut shuffle = Shuffle(seed);
        let mut answered: Vec<Answer> = Vec::new();
        let mut most = 0;
        while !tree.decided() {
            while flight.len() < width {
                match flight.next_job(&mut tree, &mut Vec::new()) {
                    Some(job) => pending.push(job),
                    None => break,
                }
            }
            most = most.max(pending.len());
            if pending.is_empty() {
                assert!(tree.decided(), "nothing in flight and nothing to hand out");
                break;
            }
            let job = pending.swap_remove(shuffle.below(pending.len()));
            let answer = run_job(&mut dfpn, &job);
            assert_eq!(flight.apply(&mut tree, &answer), Applied::Taken);
            // An old answer again: ignored.
            if !answered.is_empty() {
                let old = &answered[shuffle.below(answered.len())];
                let nodes = tree.nodes.len();
                assert_eq!(flight.apply(&mut tree, old), Applied::Stale);
                assert_eq!(tree.nodes.len(), nodes);
            }
            answered.push(answer);
            assert_eq!(flight.len(), pending.len());
        }
        (tree.outcome(), most)
    }

    #[test]
    fn jobs_in_flight_answered_in_any_order_decide_as_the_plain_search() {
        for (board, attacker) in [
            ("3x5", Color::White),
            ("3x5", Color::Black),
            ("3x7", Color::White),
            ("3x7", Color::Black),
            ("5x3", Color::Black),
            ("3x9", Color::White),
            ("3x9", Color::Black),
        ] {
            let root = Position::initial(board.parse::<Board>().unwrap());
            let goal = Goal { attacker };
            let (tree, _) = search(
                &root,
                goal,
                LeafEval::rules_only(),
                Algorithm::Pn2DfPn,
                Limits::none(),
                |_| {},
            );
            let plain = tree.outcome();
            for (width, seed, policy) in [
                (1, 1, Virtual::Excluded),
                (3, 7, Virtual::Excluded),
                (8, 99, Virtual::Excluded),
                (3, 5, Virtual::Inflated),
                (8, 41, Virtual::Inflated),
            ] {
                let (outcome, most) = solve_by_jobs(root, goal, width, seed, policy);
                assert_eq!(
                    outcome, plain,
                    "{board} {attacker:?} with {width} jobs in flight, {policy:?}"
                );
                // The jobs really were in flight together.
                assert!(most <= width && (width == 1 || most > 1), "{board}: {most}");
            }
        }
    }

    #[test]
    fn a_checkpoint_sees_the_real_numbers_of_leaves_in_flight() {
        for policy in [Virtual::Excluded, Virtual::Inflated] {
            let root = Position::initial("3x7".parse::<Board>().unwrap());
            let goal = Goal {
                attacker: Color::White,
            };
            let leaf = LeafEval::rules_only();
            let mut tree = PnTree::new(root, goal, leaf, Vec::new());
            tree.expand(0);
            tree.update_ancestors(0);
            let before: Vec<(u64, u64)> = tree.nodes.iter().map(|n| (n.pn, n.dn)).collect();
            let mut flight = InFlight::new(policy);
            let jobs: Vec<Job> = (0..3)
                .filter_map(|_| flight.next_job(&mut tree, &mut Vec::new()))
                .collect();
            assert_eq!(jobs.len(), 3, "{policy:?}");
            // Three different leaves, each with virtual numbers now.
            let mut leaves: Vec<u32> = jobs.iter().map(|j| j.leaf).collect();
            leaves.sort();
            leaves.dedup();
            assert_eq!(leaves.len(), 3, "{policy:?}");
            assert_ne!(tree.root().pn, before[0].0, "{policy:?}");
            let seen = flight.with_real_numbers(&mut tree, |t| {
                t.nodes.iter().map(|n| (n.pn, n.dn)).collect::<Vec<_>>()
            });
            assert_eq!(seen, before, "{policy:?}");
            for j in &jobs {
                let n = j.leaf as usize;
                let (real, shown) = (before[n], (tree.nodes[n].pn, tree.nodes[n].dn));
                match policy {
                    Virtual::Excluded => assert_eq!(shown, EXCLUDED),
                    // Doubled at least once, and by the same power of two on both sides.
                    Virtual::Inflated => {
                        let k = (shown.0 / real.0).trailing_zeros();
                        assert!(k >= 1, "{real:?} shown as {shown:?}");
                        assert_eq!(shown, (real.0 << k, real.1 << k));
                    }
                }
            }
            // Given up, every leaf has its real numbers again.
            flight.abandon(&mut tree);
            let after: Vec<(u64, u64)> = tree.nodes.iter().map(|n| (n.pn, n.dn)).collect();
            assert_eq!(after, before, "{policy:?}");
            assert!(flight.is_empty());
        }
    }
}
