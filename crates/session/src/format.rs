//! The store's identity: its format version, who created it, which rules it holds; and the
//! upgrade of older formats by the steps listed in `migrations/`.

use crate::store::{Store, Table, Write};
use crate::{SessionError, codec};

/// The format this build writes. Its layout is described in `migrations/0001-initial.md`
/// and the changes since in `migrations/0002-session-threads.md`,
/// `migrations/0003-rkyv-nodes.md`, `migrations/0004-node-patches.md` and
/// `migrations/0005-record-files.md`.
pub const FORMAT: u32 = 5;

/// The rules the stored values were found under. Every store holds this string and is
/// compared with it byte for byte, so it stays as first written (the path in it is where the
/// rules were kept then); the rules it names are stated in `docs/RULES.md`.
pub const RULES: &str = "fanorona-1 (../shared/RULES.md: repetition is a draw on its path)";

/// An upgrade from format `from` to `from + 1`: the writes that make it, applied in one
/// batch with the new format record.
pub struct Migration {
    pub from: u32,
    pub describe: &'static str,
    pub run: fn(&dyn Store) -> Result<Vec<Write>, SessionError>,
}

/// Every upgrade step, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        from: 1,
        describe: "session records gain threads, rote_leaves and the pn2-dfpn algorithm",
        run: sessions_rewritten,
    },
    Migration {
        from: 2,
        describe: "first-level node chunks become rkyv archives",
        run: nodes_archived,
    },
    Migration {
        from: 3,
        describe: "checkpoints patch the nodes they change instead of rewriting their chunks",
        run: patches_allowed,
    },
    Migration {
        from: 4,
        describe: "node chunks and patches move to files of their own beside sled",
        run: trees_to_files,
    },
];

/// Format 4 to 5: every node chunk and patch written again, unchanged; the store keeps each
/// in a record file of its own (`record_files`), sled a pointer to it.
fn trees_to_files(store: &dyn Store) -> Result<Vec<Write>, SessionError> {
    let mut writes = Vec::new();
    for table in [Table::Nodes, Table::Patches] {
        store.scan(table, &[], &mut |k, v| {
            writes.push(Write::put(table, k.to_vec(), v.to_vec()))
        })?;
    }
    Ok(writes)
}

/// Format 3 to 4: nothing to rewrite. Format 3 chunks read as stamped by no checkpoint;
/// the new format record keeps older programs, which would not apply patches, away.
fn patches_allowed(_: &dyn Store) -> Result<Vec<Write>, SessionError> {
    Ok(Vec::new())
}

/// Format 2 to 3: every node chunk read in the fixed-width layout (its board from its
/// session's root) and written again as an rkyv archive.
fn nodes_archived(store: &dyn Store) -> Result<Vec<Write>, SessionError> {
    let mut boards = std::collections::HashMap::new();
    let mut bad: Option<SessionError> = None;
    store.scan(
        Table::Sessions,
        &[],
        &mut |k, v| match codec::decode_session(v)
            .map(|r| r.root.parse::<fanorona_rules::Position>())
        {
            Ok(Ok(root)) => {
                boards.insert(k.to_vec(), root.board());
            }
            Ok(Err(e)) => {
                bad = Some(SessionError::Damaged(format!("a session's root: {e}")));
            }
            Err(e) => bad = Some(e.into()),
        },
    )?;
    let mut writes = Vec::new();
    let mut nodes = Vec::with_capacity(codec::CHUNK);
    store.scan(Table::Nodes, &[], &mut |k, v| {
        if bad.is_some() {
            return;
        }
        let Some(&board) = k.get(..8).and_then(|id| boards.get(id)) else {
            bad = Some(SessionError::Damaged("node chunks of no session".into()));
            return;
        };
        nodes.clear();
        match codec::decode_chunk_v1(v, board, &mut nodes) {
            Ok(()) => writes.push(Write::put(
                Table::Nodes,
                k.to_vec(),
                codec::encode_chunk(&nodes, 0),
            )),
            Err(e) => bad = Some(e.into()),
        }
    })?;
    match bad {
        Some(e) => Err(e),
        None => Ok(writes),
    }
}

/// Format 1 to 2: every session record read (the new fields take their defaults: one
/// thread, no rote leaves) and written again whole, so no record of format 2 lacks them.
fn sessions_rewritten(store: &dyn Store) -> Result<Vec<Write>, SessionError> {
    let mut writes = Vec::new();
    let mut bad = None;
    store.scan(
        Table::Sessions,
        &[],
        &mut |k, v| match codec::decode_session(v) {
            Ok(r) => writes.push(Write::put(
                Table::Sessions,
                k.to_vec(),
                codec::encode_session(&r),
            )),
            Err(e) => bad = Some(e),
        },
    )?;
    match bad {
        Some(e) => Err(e.into()),
        None => Ok(writes),
    }
}

/// Checks a store's identity, writing it into a new store and upgrading an older one.
/// `created` says the store was made before (its directory's marker exists): then a
/// missing identity means damage, not a new store, and nothing is written.
pub fn open_checked(store: &dyn Store, created: bool) -> Result<(), SessionError> {
    let format = match store.get(Table::Meta, b"format")? {
        None if created => {
            return Err(SessionError::Damaged(
                "its format record is gone (the files were damaged or replaced); `fanorona store restore BACKUP` puts a backup in its place (the daemon restores the newest of its own by itself when it starts), or move it aside".into(),
            ));
        }
        None => {
            let mut any = false;
            for t in Table::ALL {
                store.scan(t, &[], &mut |_, _| any = true)?;
            }
            if any {
                return Err(SessionError::Foreign(
                    "it has records but no format version".into(),
                ));
            }
            store.apply(&[
                Write::put(
                    Table::Meta,
                    b"format".to_vec(),
                    FORMAT.to_be_bytes().to_vec(),
                ),
                Write::put(
                    Table::Meta,
                    b"created_by".to_vec(),
                    fanorona_rules::version::producer().into_bytes(),
                ),
                Write::put(Table::Meta, b"rules".to_vec(), RULES.as_bytes().to_vec()),
            ])?;
            return Ok(());
        }
        Some(bytes) => match <[u8; 4]>::try_from(bytes.as_slice()) {
            Ok(b) => u32::from_be_bytes(b),
            Err(_) => {
                return Err(SessionError::Foreign(format!(
                    "its format record has {} bytes",
                    bytes.len()
                )));
            }
        },
    };
    if format > FORMAT {
        return Err(SessionError::Newer {
            found: format,
            known: FORMAT,
        });
    }
    let mut at = format;
    while at < FORMAT {
        let step = MIGRATIONS
            .iter()
            .find(|m| m.from == at)
            .ok_or(SessionError::NoMigration { from: at })?;
        let mut writes = (step.run)(store)?;
        at += 1;
        writes.push(Write::put(
            Table::Meta,
            b"format".to_vec(),
            at.to_be_bytes().to_vec(),
        ));
        store.apply(&writes)?;
        tracing::info!("session store upgraded to format {at}: {}", step.describe);
    }
    if let Some(rules) = store.get(Table::Meta, b"rules")?
        && rules != RULES.as_bytes()
    {
        return Err(SessionError::Foreign(format!(
            "its values were found under other rules: {}",
            String::from_utf8_lossy(&rules)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemStore;

    #[test]
    fn new_stores_are_stamped_and_newer_or_foreign_ones_refused() {
        let s = MemStore::new();
        open_checked(&s, false).unwrap();
        open_checked(&s, true).unwrap();
        assert_eq!(
            s.get(Table::Meta, b"format").unwrap().unwrap(),
            FORMAT.to_be_bytes()
        );

        let newer = MemStore::new();
        newer
            .apply(&[Write::put(
                Table::Meta,
                b"format".to_vec(),
                99u32.to_be_bytes().to_vec(),
            )])
            .unwrap();
        let e = open_checked(&newer, true).unwrap_err().to_string();
        assert!(e.contains("99") && e.contains("newer"), "{e}");

        let foreign = MemStore::new();
        foreign
            .apply(&[Write::put(Table::Sessions, b"x".to_vec(), b"y".to_vec())])
            .unwrap();
        assert!(matches!(
            open_checked(&foreign, false),
            Err(SessionError::Foreign(_))
        ));

        assert!(matches!(
            open_checked(&MemStore::new(), true),
            Err(SessionError::Damaged(_))
        ));

        let other_rules = MemStore::new();
        open_checked(&other_rules, false).unwrap();
        other_rules
            .apply(&[Write::put(
                Table::Meta,
                b"rules".to_vec(),
                b"checkers".to_vec(),
            )])
            .unwrap();
        assert!(matches!(
            open_checked(&other_rules, true),
            Err(SessionError::Foreign(_))
        ));
    }
}
