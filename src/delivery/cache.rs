//! The fragment cache: the current snapshot, swapped atomically, and the one thread that keeps
//! it fresh.
//!
//! Freshness, from fastest to slowest: a write through this instance's management API reloads
//! its organisation before the write is answered; other instances hear the database's
//! `NOTIFY agentcard_cache` (sent by triggers, whatever path wrote); and every refresh period
//! the versions are compared, so a lost notification costs at most one period. While the
//! database is down the last snapshot keeps serving.

use crate::background::{Background, Stop};
use crate::db::snapshot::{self as rows, Scope};
use crate::delivery::snapshot::Snapshot;
use crate::failure_log::FailureLog;
use parking_lot::{Mutex, RwLock};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// More changed organisations than this at once: one full load is cheaper.
const MAX_ORGS_PER_REFRESH: usize = 64;
/// Pause before reconnecting after the database went away.
const RECONNECT_BACKOFF: Duration = Duration::from_secs(1);
/// The refresher listens for notifications this long at a time, then looks whether it is to
/// stop: a connection's wait cannot be woken from another thread.
const LISTEN_SLICE: Duration = Duration::from_millis(100);

pub struct FragmentCache {
    /// The snapshot and its generation, changed together.
    current: RwLock<Current>,
    /// The generation in `current`, readable without the lock.
    generation: AtomicU64,
    /// Serialises reloads, so two updates never race and drop each other's changes.
    reloading: Mutex<()>,
    /// Replaced snapshots that worker threads may still hold: the last reference is dropped
    /// here, by `reap` on a background thread, since freeing a whole snapshot takes long
    /// enough to stall the requests of the worker that would otherwise do it.
    retired: Mutex<Vec<Arc<Snapshot>>>,
    /// For the operator metrics; written by reloads and checks, never by a request.
    freshness: Mutex<Freshness>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Freshness {
    /// When the whole snapshot was last known to match the database: the start of the last
    /// full load or version check that succeeded.
    checked: Option<Instant>,
    /// How long the last build took, loading its rows included.
    last_build: Duration,
}

/// The state of the snapshot served, for the operator metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheState {
    pub generation: u64,
    /// Since the whole snapshot was last known to match the database.
    pub age: Duration,
    pub last_build: Duration,
}

/// A snapshot with its generation: a number no other snapshot of any cache in the process
/// has, so that a thread's copy is known current by comparing numbers. Generation 0 is the
/// "nothing loaded yet" of every cache.
#[derive(Clone, Default)]
struct Current {
    generation: u64,
    snapshot: Option<Arc<Snapshot>>,
}

/// Generations handed out so far, over every cache of the process.
static GENERATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The snapshot this thread served from last. Serving from it costs one load of an atomic
    /// that changes only at a reload; taking the lock and a reference every request would
    /// make both worker threads write the same two counters, and each such write moves a cache line
    /// from one core to the other.
    static SERVED: RefCell<Current> = RefCell::default();
}

impl FragmentCache {
    pub fn new() -> Arc<FragmentCache> {
        Arc::new(FragmentCache {
            current: RwLock::new(Current::default()),
            generation: AtomicU64::new(0),
            reloading: Mutex::new(()),
            retired: Mutex::new(Vec::new()),
            freshness: Mutex::new(Freshness::default()),
        })
    }

    /// The snapshot to serve from; `None` until the first load.
    pub fn current(&self) -> Option<Arc<Snapshot>> {
        self.current.read().snapshot.clone()
    }

    /// Runs `serve` on the current snapshot (`None` until the first load), through the
    /// calling thread's copy. `serve` must not yield a coroutine: the copy belongs to the
    /// thread. A thread keeps the snapshot it served from last alive until its next call.
    pub fn with_current<R>(&self, serve: impl FnOnce(Option<&Snapshot>) -> R) -> R {
        let generation = self.generation.load(Ordering::Acquire);
        SERVED.with(|served| {
            let mut served = served.borrow_mut();
            if served.generation != generation {
                *served = self.current.read().clone();
            }
            serve(served.snapshot.as_deref())
        })
    }

    pub fn is_loaded(&self) -> bool {
        self.current.read().snapshot.is_some()
    }

    /// The snapshot's generation, age and build time; `None` until the first load.
    pub fn state(&self) -> Option<CacheState> {
        let freshness = *self.freshness.lock();
        let checked = freshness.checked?;
        Some(CacheState {
            generation: self.generation.load(Ordering::Acquire),
            age: checked.elapsed(),
            last_build: freshness.last_build,
        })
    }

    /// Makes `snapshot`, built since `started`, the one served, under a new generation.
    fn install(&self, snapshot: Snapshot, started: Instant) {
        self.freshness.lock().last_build = started.elapsed();
        let generation = GENERATIONS.fetch_add(1, Ordering::Relaxed) + 1;
        let replaced = {
            let mut current = self.current.write();
            let replaced = current.snapshot.replace(Arc::new(snapshot));
            current.generation = generation;
            self.generation.store(generation, Ordering::Release);
            replaced
        };
        self.retired.lock().extend(replaced);
        self.reap();
    }

    /// Frees the replaced snapshots no thread serves from any more.
    fn reap(&self) {
        self.retired
            .lock()
            .retain(|snapshot| Arc::strong_count(snapshot) > 1);
    }

    /// Loads every organisation.
    pub fn reload_all(&self, db: &mut postgres::Client) -> Result<(), postgres::Error> {
        let _guard = self.reloading.lock();
        let started = Instant::now();
        let (rows, versions) = rows::load(db, Scope::All)?;
        let snapshot = Snapshot::build(rows, &versions);
        log::info!(
            "fragment cache loaded: {} organisations, {} keys in {:?}",
            snapshot.orgs.len(),
            snapshot.keys.len(),
            started.elapsed()
        );
        self.install(snapshot, started);
        self.freshness.lock().checked = Some(started);
        Ok(())
    }

    /// After a write of `org_id` (through `/v1` or the console), before it is answered: this
    /// instance's next `/fragment` call sees it. Failing that, the refresher catches up.
    pub fn reload_org_after_write(&self, db: &mut postgres::Client, org_id: &str) {
        if let Err(error) = self.reload_org(db, org_id) {
            log::warn!("fragment cache not reloaded after a write of {org_id}: {error}");
        }
    }

    /// Reloads one organisation (after its writes); a full load if none has happened yet.
    /// Nothing to do when the snapshot already holds the organisation's current version: the
    /// refresher, woken by the write's notification, often gets there first.
    pub fn reload_org(
        &self,
        db: &mut postgres::Client,
        org_id: &str,
    ) -> Result<(), postgres::Error> {
        let Some(current) = self.current() else {
            return self.reload_all(db);
        };
        let _guard = self.reloading.lock();
        let started = Instant::now();
        let latest = self.current().unwrap_or(current);
        let loaded = latest.org_versions.get(org_id).copied();
        if loaded.is_some() && rows::org_version(db, org_id)? == loaded {
            return Ok(());
        }
        let (rows, versions) = rows::load(db, Scope::Org(org_id))?;
        let snapshot = latest.with_org(org_id, rows, &versions);
        self.install(snapshot, started);
        Ok(())
    }

    /// Compares versions with the database and reloads what changed.
    pub fn refresh_changed(&self, db: &mut postgres::Client) -> Result<(), postgres::Error> {
        let started = Instant::now();
        self.reload_changed(db)?;
        let mut freshness = self.freshness.lock();
        freshness.checked = freshness.checked.max(Some(started));
        Ok(())
    }

    fn reload_changed(&self, db: &mut postgres::Client) -> Result<(), postgres::Error> {
        let Some(current) = self.current() else {
            return self.reload_all(db);
        };
        let versions = rows::versions(db)?;
        if versions.platform != current.platform_version {
            return self.reload_all(db);
        }
        let changed: Vec<&String> = versions
            .orgs
            .iter()
            .filter(|(id, version)| current.org_versions.get(id.as_str()) != Some(version))
            .map(|(id, _)| id)
            .collect();
        let removed = current
            .orgs
            .keys()
            .any(|id| !versions.orgs.contains_key(&**id));
        if removed || changed.len() > MAX_ORGS_PER_REFRESH {
            return self.reload_all(db);
        }
        for org_id in changed {
            self.reload_org(db, org_id)?;
        }
        Ok(())
    }

    /// Starts the refresher thread: it listens for notifications and, every `period`, checks
    /// versions; it reconnects by itself when the database comes back. It stops with the
    /// handle.
    pub fn start_refresher(self: &Arc<Self>, database_url: String, period: Duration) -> Background {
        let cache = Arc::clone(self);
        Background::spawn("fragment-cache", move |stop| {
            let outage =
                FailureLog::new("the fragment cache's refresh (serving the last snapshot)");
            loop {
                match cache.follow(&database_url, period, &outage, &stop) {
                    Ok(()) => return,
                    Err(error) => outage.failed(&crate::db::describe(&error)),
                }
                if stop.wait(RECONNECT_BACKOFF) {
                    return;
                }
            }
        })
    }

    /// One connection's life: listen, refresh at the first change notified or at the end of
    /// the period, whichever comes first, until an error or the stop (`Ok`).
    fn follow(
        &self,
        database_url: &str,
        period: Duration,
        outage: &FailureLog,
        stop: &Stop,
    ) -> Result<(), postgres::Error> {
        let mut db = crate::db::connect(database_url)?;
        rows::listen_for_changes(&mut db)?;
        self.refresh_changed(&mut db)?;
        outage.succeeded();
        let mut refreshed = Instant::now();
        while !stop.has_come() {
            let changed = rows::wait_for_changes(&mut db, LISTEN_SLICE.min(period))?;
            if changed || refreshed.elapsed() >= period {
                self.refresh_changed(&mut db)?;
                self.reap();
                refreshed = Instant::now();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(platform_version: i64) -> Snapshot {
        Snapshot {
            platform_version,
            ..Snapshot::default()
        }
    }

    fn served_version(cache: &FragmentCache) -> Option<i64> {
        cache.with_current(|snapshot| snapshot.map(|s| s.platform_version))
    }

    #[test]
    fn a_thread_serves_each_new_snapshot_and_the_replaced_ones_are_freed_off_its_path() {
        let cache = FragmentCache::new();
        let other = FragmentCache::new();
        assert_eq!(served_version(&cache), None);
        cache.install(snapshot(1), Instant::now());
        other.install(snapshot(7), Instant::now());
        assert_eq!(served_version(&other), Some(7));
        assert_eq!(
            served_version(&cache),
            Some(1),
            "each cache its own snapshot"
        );
        cache.install(snapshot(2), Instant::now());
        // This thread still holds snapshot 1, so it is retired, not freed.
        assert_eq!(cache.retired.lock().len(), 1);
        assert_eq!(served_version(&cache), Some(2));
        cache.reap();
        assert!(cache.retired.lock().is_empty());
        assert_eq!(served_version(&cache), Some(2));
    }
}
