//! # switchboard-core
//!
//! The engine behind every switchboard binding. An agent author implements
//! [`AgentExecutor`]; a binding calls [`RequestHandler`]; a store implements
//! [`TaskStore`]. Nothing here knows about HTTP, JSON-RPC or gRPC.
//!
//! ## The path of one message
//! 1. A binding decodes a request into canonical types and calls, say,
//!    [`RequestHandler::send_message`] with the caller's [`CallContext`].
//! 2. The handler applies the protocol rules (ids, terminal tasks,
//!    capabilities), then runs the executor with a [`TaskEvents`] handle.
//! 3. Each emission goes through the task's state machine, is committed to
//!    the store with the next sequence number, and only then is published
//!    to waiting callers and subscribers.
//! 4. Streams read the live bus and fall back to the store's event log when
//!    they fall behind, so every subscriber sees the same events in the same
//!    order, none missing and none twice.
//!
//! ## Writing an agent
//! ```
//! use switchboard_core::{agent_fn, RequestHandler};
//! use switchboard_protocol::AgentCard;
//!
//! let agent = agent_fn(|ctx, events| async move {
//!     events.working("counting words").await?;
//!     let words = ctx.text().split_whitespace().count();
//!     events.artifact_text("count", words.to_string()).await?;
//!     Ok(())
//! });
//! let handler = RequestHandler::builder(agent, AgentCard::new("counter", "Counts words", "1.0")).build();
//! # let _ = handler;
//! ```

/// `Box::pin($future)`, with the future built in its heap allocation.
///
/// `Box::pin(f)` takes `f` by value: the future is first made on the stack
/// and then copied into the box, all of it. An operation's future is many
/// kilobytes (the engine's and the agent's state machines, inline), though
/// before its first poll only its arguments are set, so that copy was the
/// largest single cost of a unary call. `Box::write` into a fresh
/// allocation, with the call written as its argument, lets the optimizer
/// construct the future in place. It must stay a macro: a function taking
/// the future as a parameter would receive it by value, copied.
#[doc(hidden)]
#[macro_export]
macro_rules! pin_in_place {
    ($future:expr) => {{
        let boxed: ::std::boxed::Box<_> =
            ::std::boxed::Box::write(::std::boxed::Box::new_uninit(), $future);
        ::std::boxed::Box::into_pin(boxed)
    }};
}

pub mod blocking;
pub mod cluster;
pub mod context;
mod dispatch;
pub mod events;
pub mod executor;
pub mod handler;
pub mod limits;
pub mod memory;
pub mod progress;
pub mod push;
mod runtime;
pub mod store;
pub mod visibility;

/// Re-exported so agents can `#[switchboard_core::async_trait]` without another dependency.
pub use async_trait::async_trait;
pub use blocking::{BlockingError, BlockingRun, Cancelled};
pub use cluster::{Announcement, Appended, Cluster};
pub use context::{ANONYMOUS, CallContext};
pub use dispatch::Answer;
pub use events::{ArtifactWriter, EmitError, EventBatch, TaskEvents};
pub use executor::{AgentExecutor, BoxError, FnAgent, RequestContext, agent_fn};
pub use handler::{
    HandlerConfig, IntoTaskStore, PushUnavailable, RequestHandler, RequestHandlerBuilder,
};
pub use limits::{Limits, Quotas};
pub use memory::InMemoryStore;
pub use progress::{ProgressEmitter, ProgressError, Tracker};
pub use push::{ConfigQuery, PushConfig, PushConfigLimits, PushStore, Requeue};
pub use runtime::EventStream;
pub use store::{
    EventQuery, ListCursor, LoggedEvent, Retention, StoreError, StoredEvent, TaskPage, TaskQuery,
    TaskRecord, TaskStore,
};

/// The maps of live tasks, by (tenant, task id), hashed with foldhash
/// instead of std's SipHash: a task request looks its task up three to five
/// times, and SipHash of two strings costs ~360 instructions a time (~2 % of
/// a memory-store task request, bench/RESULTS.md session 21). foldhash is
/// seeded per process; its keys here are ids this server assigned, which a
/// caller cannot pick to collide. (The quota [`limits::Counter`] keeps
/// SipHash: it counts by the hash alone, so the hash must not be aimable.)
pub(crate) type TaskMap<V> =
    std::collections::HashMap<runtime::TaskKey, V, foldhash::fast::RandomState>;

#[cfg(test)]
mod tests;
