//! The certificate directory read in the background: from `serve`'s start, and again when
//! asked for after `FRESH` (only new or changed files are checked again). Readers never
//! wait for a check: they get the index as far as it has got, and the progress.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::certificates::{Index, Progress};

/// How long a reading of the directory stands before a request starts another.
const FRESH: Duration = Duration::from_secs(5);

pub struct Checking {
    dir: PathBuf,
    db_dir: PathBuf,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// The index as far as the last reading has got.
    index: Mutex<Arc<Index>>,
    /// The reading under way, if one is.
    progress: Mutex<Option<Progress>>,
    /// When the last reading began.
    began: Mutex<Option<Instant>>,
    running: AtomicBool,
    /// A reading has ended: a later one that checks nothing new is not worth a word.
    read_once: AtomicBool,
}

impl Checking {
    pub fn new(dir: PathBuf, db_dir: PathBuf) -> Checking {
        Checking {
            dir,
            db_dir,
            shared: Arc::new(Shared::default()),
        }
    }

    /// Starts a reading on a thread of its own, unless one runs or the last began less
    /// than `FRESH` ago.
    pub fn refresh(&self) {
        let sh = &self.shared;
        {
            let began = sh.began.lock().expect("began lock");
            if began.is_some_and(|b| b.elapsed() < FRESH) {
                return;
            }
        }
        if sh.running.swap(true, Ordering::AcqRel) {
            return;
        }
        *sh.began.lock().expect("began lock") = Some(Instant::now());
        // Under way from now: a reader never sees "nothing to check" before it began.
        *sh.progress.lock().expect("progress lock") = Some(Progress::default());
        let (dir, db_dir, sh) = (self.dir.clone(), self.db_dir.clone(), self.shared.clone());
        std::thread::spawn(move || {
            // However the reading ends (a panic too), it is no longer under way.
            let _over = Over(sh.clone());
            let before = sh.index.lock().expect("index lock").clone();
            let mut publish = |index: &Index, p: &Progress| {
                *sh.index.lock().expect("index lock") = Arc::new(index.clone());
                *sh.progress.lock().expect("progress lock") = Some(p.clone());
            };
            let index = Index::load(&dir, &db_dir, Some(&before), &mut publish);
            *sh.index.lock().expect("index lock") = Arc::new(index.clone());
            // Each refusal said once.
            for (file, why) in &index.refused {
                if !before.refused.iter().any(|(f, _)| f == file) {
                    tracing::warn!("certificate {file} not used: {why}");
                }
            }
        });
    }

    /// The checked certificates as far as they are read (a reading started if the last is
    /// old): never waits for a check.
    pub fn index(&self) -> Arc<Index> {
        self.refresh();
        self.shared.index.lock().expect("index lock").clone()
    }

    /// The reading under way, while it checks a file (or, the first time, before it has
    /// listed the directory): the file being checked and how far the directory is.
    pub fn progress(&self) -> Option<Progress> {
        let p = self
            .shared
            .progress
            .lock()
            .expect("progress lock")
            .clone()?;
        (p.file.is_some() || !self.shared.read_once.load(Ordering::Acquire)).then_some(p)
    }
}

/// Marks the reading over when dropped, a panic's unwinding included: no reading is shown
/// under way for ever, and the next one can start.
struct Over(Arc<Shared>);

impl Drop for Over {
    fn drop(&mut self) {
        if let Ok(mut p) = self.0.progress.lock() {
            *p = None;
        }
        self.0.read_once.store(true, Ordering::Release);
        self.0.running.store(false, Ordering::Release);
    }
}
