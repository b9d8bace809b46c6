//! A bounded memory of bearer tokens whose signature and claims already
//! verified, so a client that sends the same JWT on every request pays the
//! signature check once instead of once per request.
//!
//! An entry is keyed by the SHA-256 of the whole token (the token itself is
//! not kept) and holds the caller's [`Identity`] plus the token's `exp` and
//! `nbf`. It is only ever written after a token passed every check, so a
//! bad token is never remembered as good; it is checked again on every hit:
//!
//! - `exp` and `nbf` against the clock, with the same leeway as the full
//!   check, so a remembered token stops working when it expires;
//! - its age: an entry lives at most [`VerifiedTokens::max_age`] whatever the
//!   token's `exp` says;
//! - the key set's generation: a JWKS that changed (a key rotated out,
//!   or any other edit) makes every entry remembered under an earlier set
//!   dead, so a token signed by a retired key is refused as soon as the new
//!   set is fetched.
//!
//! The map holds at most `capacity` entries; past that the oldest insertion
//! is evicted, so a flood of distinct valid tokens costs a bounded amount
//! of memory (and each of them a full check), never more.

use std::collections::{HashMap, VecDeque};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use sha2::{Digest, Sha256};
use switchboard_server::Identity;

/// The SHA-256 of a token: its key in [`VerifiedTokens`].
pub(crate) type TokenDigest = [u8; 32];

/// The key of `token` in [`VerifiedTokens`].
pub(crate) fn digest(token: &str) -> TokenDigest {
    Sha256::digest(token.as_bytes()).into()
}

/// A verified token's facts, as [`VerifiedTokens::remember`] takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verified {
    /// The caller the token names.
    pub identity: Identity,
    /// The token's `exp` (seconds since the Unix epoch).
    pub exp: u64,
    /// The token's `nbf`, if it has one.
    pub nbf: Option<u64>,
}

#[derive(Debug)]
struct Entry {
    verified: Verified,
    /// When the entry stops being used whatever `exp` says (Unix seconds).
    until: u64,
    /// The key set generation the token was verified under.
    generation: u64,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<TokenDigest, Entry>,
    /// Digests in insertion order, for eviction. May name digests that were
    /// dropped from `entries` since (dead or replaced); never longer than
    /// the capacity, and every key of `entries` is in it.
    order: VecDeque<TokenDigest>,
}

/// Tokens that verified recently (see the module docs).
///
/// Behind a read-write lock: a request with a remembered token only reads,
/// so the worker threads look up side by side and never queue behind one
/// another (a thread descheduled while holding a plain mutex would stall
/// every other request); only a miss that verified, or a dead entry, writes.
#[derive(Debug)]
pub(crate) struct VerifiedTokens {
    inner: RwLock<Inner>,
    capacity: usize,
    max_age: Duration,
    leeway: u64,
}

impl VerifiedTokens {
    /// At most `capacity` tokens, each kept at most `max_age`; `exp` and
    /// `nbf` are checked with `leeway` like the full check does.
    pub(crate) fn new(capacity: usize, max_age: Duration, leeway: Duration) -> Self {
        VerifiedTokens {
            inner: RwLock::default(),
            capacity,
            max_age,
            leeway: leeway.as_secs(),
        }
    }

    // The map holds no invariant a panicking holder could break halfway
    // (every write is one insert or remove), so a poisoned lock is fine.
    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The identity of the token with `digest`, if it verified under the
    /// key set `generation` and is still valid at `now` (Unix seconds).
    /// A dead entry found on the way is dropped.
    pub(crate) fn get(&self, digest: &TokenDigest, generation: u64, now: u64) -> Option<Identity> {
        {
            let inner = self.read();
            let entry = inner.entries.get(digest)?;
            if self.live(entry, generation, now) {
                return Some(entry.verified.identity.clone());
            }
        }
        // Dead: drop it, unless another request replaced it meanwhile.
        let mut inner = self.write();
        if inner
            .entries
            .get(digest)
            .is_some_and(|e| !self.live(e, generation, now))
        {
            inner.entries.remove(digest);
        }
        None
    }

    fn live(&self, entry: &Entry, generation: u64, now: u64) -> bool {
        let v = &entry.verified;
        entry.generation == generation
            && now < entry.until
            && now <= v.exp.saturating_add(self.leeway)
            && v.nbf
                .is_none_or(|nbf| nbf <= now.saturating_add(self.leeway))
    }

    /// Remembers a token that has just passed every check under key set
    /// `generation`, at `now` (Unix seconds).
    pub(crate) fn remember(
        &self,
        digest: TokenDigest,
        verified: Verified,
        generation: u64,
        now: u64,
    ) {
        if self.capacity == 0 {
            return;
        }
        let until = now.saturating_add(self.max_age.as_secs());
        let entry = Entry {
            verified,
            until,
            generation,
        };
        let mut inner = self.write();
        if let Some(present) = inner.entries.get_mut(&digest) {
            // Already in `order`: no second place in the queue.
            *present = entry;
            return;
        }
        // Make room first, so the new entry is never the one evicted. (A
        // stale place of a dropped digest may evict its later entry early:
        // a miss, never a wrong hit.)
        while inner.order.len() >= self.capacity {
            if let Some(oldest) = inner.order.pop_front() {
                inner.entries.remove(&oldest);
            }
        }
        inner.entries.insert(digest, entry);
        inner.order.push_back(digest);
    }

    /// How many tokens are remembered now (dead ones not yet dropped
    /// included).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.read().entries.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const NOW: u64 = 1_800_000_000;

    fn verified(sub: &str, exp: u64, nbf: Option<u64>) -> Verified {
        Verified {
            identity: Identity::new(format!("jwt:iss#{sub}")),
            exp,
            nbf,
        }
    }

    fn cache(capacity: usize) -> VerifiedTokens {
        VerifiedTokens::new(capacity, Duration::from_secs(300), Duration::from_secs(30))
    }

    #[test]
    fn a_remembered_token_is_found_by_its_digest_only() {
        let c = cache(10);
        c.remember(digest("a.b.c"), verified("alice", NOW + 3600, None), 1, NOW);
        assert_eq!(
            c.get(&digest("a.b.c"), 1, NOW + 1),
            Some(Identity::new("jwt:iss#alice"))
        );
        assert_eq!(c.get(&digest("a.b.d"), 1, NOW + 1), None);
    }

    #[test]
    fn an_entry_ends_when_the_token_expires_with_the_leeway() {
        let c = cache(10);
        let exp = NOW + 100;
        c.remember(digest("t"), verified("alice", exp, None), 1, NOW);
        assert!(c.get(&digest("t"), 1, exp).is_some());
        assert!(
            c.get(&digest("t"), 1, exp + 30).is_some(),
            "within the leeway"
        );
        assert_eq!(c.get(&digest("t"), 1, exp + 31), None, "expired");
        assert_eq!(c.len(), 0, "the dead entry is dropped");
    }

    #[test]
    fn an_entry_is_not_used_before_nbf() {
        // The full check lets a token through up to `leeway` before its
        // nbf; a clock that then steps back must not make the cache more
        // lenient than that.
        let c = cache(10);
        c.remember(
            digest("t"),
            verified("alice", NOW + 3600, Some(NOW)),
            1,
            NOW,
        );
        assert!(c.get(&digest("t"), 1, NOW - 30).is_some());
        assert_eq!(c.get(&digest("t"), 1, NOW - 31), None);
    }

    #[test]
    fn an_entry_lives_at_most_max_age_whatever_exp_says() {
        let c = cache(10);
        c.remember(digest("t"), verified("alice", NOW + 86_400, None), 1, NOW);
        assert!(c.get(&digest("t"), 1, NOW + 299).is_some());
        assert_eq!(c.get(&digest("t"), 1, NOW + 300), None);
    }

    #[test]
    fn a_new_key_set_generation_makes_every_entry_dead() {
        let c = cache(10);
        c.remember(digest("t"), verified("alice", NOW + 3600, None), 1, NOW);
        assert_eq!(c.get(&digest("t"), 2, NOW), None);
        assert_eq!(c.len(), 0);
        assert_eq!(c.get(&digest("t"), 1, NOW), None, "gone, not just hidden");
    }

    #[test]
    fn the_cache_is_bounded_and_evicts_the_oldest() {
        let c = cache(3);
        for i in 0..1000 {
            c.remember(
                digest(&format!("t{i}")),
                verified(&format!("u{i}"), NOW + 3600, None),
                1,
                NOW,
            );
            assert!(c.len() <= 3);
            assert!(c.read().order.len() <= 3);
        }
        assert_eq!(c.get(&digest("t996"), 1, NOW), None, "evicted");
        for i in 997..1000 {
            assert!(c.get(&digest(&format!("t{i}")), 1, NOW).is_some(), "t{i}");
        }
        // Remembering a token again does not take a second place.
        c.remember(digest("t999"), verified("u999", NOW + 3600, None), 1, NOW);
        assert_eq!(c.read().order.len(), 3);
        assert!(c.get(&digest("t997"), 1, NOW).is_some());
    }

    #[test]
    fn a_zero_capacity_remembers_nothing() {
        let c = cache(0);
        c.remember(digest("t"), verified("alice", NOW + 3600, None), 1, NOW);
        assert_eq!(c.get(&digest("t"), 1, NOW), None);
    }
}
