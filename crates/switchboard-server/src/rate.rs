//! Request rate per principal: a token bucket for each caller.
//!
//! Connection limits ([`crate::limits`]) bound what one *address* may hold;
//! a principal with valid credentials can still send requests as fast as
//! the server answers them, from many addresses. [`RequestRate`] gives every
//! principal a bucket of `burst` tokens refilled at `per_second`; each A2A
//! call takes one in the gate, after authentication (so the principal is
//! known) and before anything else about the call is read. An empty bucket
//! is [`A2AError::ResourceExhausted`]: HTTP 429 with `Retry-After` on
//! JSON-RPC and REST, RESOURCE_EXHAUSTED on gRPC. Other principals are not
//! affected. Anonymous callers share one principal, so one would starve the
//! rest: each client address (an IPv6 one by its /64, see
//! [`crate::gate::client_key`]) has its own bucket instead.
//!
//! Buckets live in memory, per server process. Their number is bounded: when
//! [`MAX_BUCKETS`] principals have one, full buckets (those that would
//! allow a whole burst anyway) are dropped first, then the oldest.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

use switchboard_protocol::A2AError;

/// Most principals with a bucket at once (see the [module docs](self)).
pub const MAX_BUCKETS: usize = 100_000;

/// How many requests one principal may make: `burst` at once, refilled at
/// `per_second`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestRate {
    /// Tokens added per second.
    pub per_second: f64,
    /// Bucket size: requests that may come at once after a quiet period.
    pub burst: u32,
}

impl Default for RequestRate {
    /// 50 requests per second, bursts of 200: far above what an agent
    /// client needs, far below what exhausts a server.
    fn default() -> Self {
        RequestRate {
            per_second: 50.0,
            burst: 200,
        }
    }
}

impl RequestRate {
    /// Seconds a refused caller should wait for one token (`Retry-After`,
    /// whole seconds, at least 1).
    pub fn retry_after_secs(&self) -> u64 {
        if self.per_second <= 0.0 {
            return 3600;
        }
        // Whole seconds, rounded up; a rate below one an hour says an hour.
        (1.0 / self.per_second).ceil().clamp(1.0, 3600.0) as u64
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// The buckets of every principal (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct RateLimiter {
    rate: RequestRate,
    /// By principal, and client address for anonymous callers.
    buckets: Mutex<HashMap<(String, Option<IpAddr>), Bucket>>,
}

impl RateLimiter {
    pub(crate) fn new(rate: RequestRate) -> Self {
        RateLimiter {
            rate,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn rate(&self) -> RequestRate {
        self.rate
    }

    /// Takes one token of the bucket of `principal` (at `client`, for the
    /// anonymous principal) at `now`, or refuses.
    pub(crate) fn take(
        &self,
        principal: &str,
        client: Option<IpAddr>,
        now: Instant,
    ) -> Result<(), A2AError> {
        let key = (principal.to_string(), client);
        let burst = f64::from(self.rate.burst.max(1));
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(&key) {
            self.evict(&mut buckets, now, burst);
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: burst,
            last: now,
        });
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.rate.per_second).min(burst);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(A2AError::ResourceExhausted(format!(
                "request rate: at most {} requests per second (bursts of {}) per caller; retry after {} s",
                self.rate.per_second,
                self.rate.burst,
                self.rate.retry_after_secs()
            )))
        }
    }

    /// Makes room: drops buckets that have refilled, else the oldest half.
    fn evict(
        &self,
        buckets: &mut HashMap<(String, Option<IpAddr>), Bucket>,
        now: Instant,
        burst: f64,
    ) {
        let per_second = self.rate.per_second;
        buckets.retain(|_, b| {
            b.tokens + now.saturating_duration_since(b.last).as_secs_f64() * per_second < burst
        });
        if buckets.len() >= MAX_BUCKETS {
            let mut ages: Vec<Instant> = buckets.values().map(|b| b.last).collect();
            ages.sort_unstable();
            let cut = ages[ages.len() / 2];
            buckets.retain(|_, b| b.last > cut);
        }
    }
}

/// The `Retry-After` header of a refusal under `rate`.
pub(crate) fn retry_after_header(rate: &RequestRate) -> (&'static str, String) {
    ("retry-after", rate.retry_after_secs().to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_the_rate() {
        let limiter = RateLimiter::new(RequestRate {
            per_second: 2.0,
            burst: 3,
        });
        let t0 = Instant::now();
        for _ in 0..3 {
            limiter.take("alice", None, t0).unwrap();
        }
        let err = limiter.take("alice", None, t0).unwrap_err();
        assert!(matches!(err, A2AError::ResourceExhausted(_)), "{err:?}");
        // Others keep their own bucket.
        limiter.take("bob", None, t0).unwrap();
        // Half a second at 2/s is one token.
        limiter
            .take("alice", None, t0 + Duration::from_millis(500))
            .unwrap();
        assert!(
            limiter
                .take("alice", None, t0 + Duration::from_millis(500))
                .is_err()
        );
        assert_eq!(limiter.rate().retry_after_secs(), 1);

        // Anonymous callers: a bucket per client address.
        let (a, b) = (Some([127, 0, 0, 2].into()), Some([127, 0, 0, 3].into()));
        for _ in 0..3 {
            limiter.take("anonymous", a, t0).unwrap();
        }
        assert!(limiter.take("anonymous", a, t0).is_err());
        limiter.take("anonymous", b, t0).unwrap();
        assert_eq!(
            RequestRate {
                per_second: 0.1,
                burst: 1
            }
            .retry_after_secs(),
            10
        );
    }
}
