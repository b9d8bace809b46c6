//! The memory budget: one cap on the bytes every connection together holds
//! in request bodies being read and answers not yet written.
//!
//! Per-connection limits bound what one client holds, but not what all of
//! them hold together: 50 clients each sending a 10 MB body, or 60 HTTP/2
//! streams whose reader never opens its flow-control window, each keep
//! megabytes alive for as long as they like. Multiplied by the connection
//! caps that is gigabytes. `MemoryBudget` is the process's (one per
//! serving listener) ceiling on those bytes
//! ([`ConnectionLimits::max_buffered_bytes`](crate::ConnectionLimits::max_buffered_bytes)):
//!
//! - a request body *charges* twice its bytes as they arrive, before the
//!   binding buffers them (`BODY_CHARGE_FACTOR`: the bytes, and the
//!   request a binding decodes from them, which holds their text once
//!   more), and keeps them charged until the request's answer is made (when
//!   the bytes, and what was decoded from them, are gone);
//! - an answer charges its bytes from when it is serialized until the
//!   protocol has written them to the socket: the charge travels inside the
//!   [`Bytes`] handed to hyper or h2 (`Charge::attach`), so it is given
//!   back exactly when the last slice of them is dropped, written or not.
//!
//! A charge that would pass the cap is refused, never waited for: the
//! request is answered "unavailable, retry later" (HTTP 503 with
//! `Retry-After`, gRPC UNAVAILABLE) instead of being buffered, so the bytes
//! held stay under the cap whatever clients do. What is refused is the
//! request that would need more; what is already held finishes. Clients
//! that stop reading give their bytes back after the write timeout, which
//! resets their stream or closes their connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;

/// What a request body's byte costs the budget: itself, and its copy in the
/// request the binding decodes (a message's text, a data part) while both
/// are alive. Charged for the bytes alone, large bodies held about twice
/// what the budget counted.
pub(crate) const BODY_CHARGE_FACTOR: usize = 2;

/// The cap and what is charged against it (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    /// The most bytes charged at once; 0: no budget (nothing is counted).
    cap: usize,
    used: AtomicUsize,
}

impl MemoryBudget {
    pub(crate) fn new(cap: usize) -> Arc<Self> {
        Arc::new(MemoryBudget {
            cap,
            used: AtomicUsize::new(0),
        })
    }

    /// Whether bytes are counted at all.
    pub(crate) fn is_on(&self) -> bool {
        self.cap > 0
    }

    /// Takes `n` bytes if they fit under the cap; `false` (nothing taken)
    /// when they do not. Always succeeds without a cap.
    pub(crate) fn take(&self, n: usize) -> bool {
        if self.cap == 0 || n == 0 {
            return true;
        }
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|&after| after <= self.cap)
            })
            .is_ok()
    }

    /// Gives back `n` bytes taken with [`take`](Self::take).
    pub(crate) fn give_back(&self, n: usize) {
        if self.cap > 0 && n > 0 {
            self.used.fetch_sub(n, Ordering::AcqRel);
        }
    }

    /// `n` bytes as a [`Charge`] that gives them back when dropped; `None`
    /// when they do not fit.
    pub(crate) fn charge(self: &Arc<Self>, n: usize) -> Option<Charge> {
        self.take(n).then(|| Charge {
            budget: self.clone(),
            bytes: n,
        })
    }

    /// The bytes charged now.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

/// Bytes charged to a [`MemoryBudget`], given back on drop.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<MemoryBudget>,
    bytes: usize,
}

impl Charge {
    /// The bytes this charge holds.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Splits off up to `n` bytes of this charge as a charge of their own.
    pub(crate) fn split(&mut self, n: usize) -> Charge {
        let n = n.min(self.bytes);
        self.bytes -= n;
        Charge {
            budget: self.budget.clone(),
            bytes: n,
        }
    }

    /// `data` carrying this charge: the charge is given back when the last
    /// slice of the returned bytes is dropped (after the protocol wrote it,
    /// or dropped it with the connection), not when the caller lets go.
    pub(crate) fn attach(self, data: Bytes) -> Bytes {
        if self.bytes == 0 {
            return data;
        }
        Bytes::from_owner(Charged {
            data,
            _charge: self,
        })
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.give_back(self.bytes);
    }
}

/// Bytes and the charge that pays for them (see [`Charge::attach`]).
struct Charged {
    data: Bytes,
    _charge: Charge,
}

impl AsRef<[u8]> for Charged {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_fit_under_the_cap_and_come_back_when_dropped() {
        let budget = MemoryBudget::new(100);
        let a = budget.charge(60);
        assert!(a.is_some());
        assert!(budget.charge(41).is_none(), "60 + 41 is over 100");
        let b = budget.charge(40);
        assert!(b.is_some());
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 40);
        drop(b);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn attached_charges_live_as_long_as_the_bytes() {
        let budget = MemoryBudget::new(1000);
        let Some(mut charge) = budget.charge(10) else {
            panic!("10 bytes fit");
        };
        let part = charge.split(4);
        assert_eq!((part.bytes(), charge.bytes()), (4, 6));
        let mut data = part.attach(Bytes::from_static(b"abcd"));
        let head = data.split_to(2);
        drop(charge);
        assert_eq!(budget.used(), 4);
        drop(data);
        assert_eq!(budget.used(), 4, "a slice still holds the bytes");
        assert_eq!(&head[..], b"ab");
        drop(head);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn without_a_cap_nothing_is_counted() {
        let budget = MemoryBudget::new(0);
        assert!(!budget.is_on());
        assert!(budget.take(usize::MAX));
        budget.give_back(usize::MAX);
        assert_eq!(budget.used(), 0);
    }
}
