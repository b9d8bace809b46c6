//! Whose tasks and contexts a bridged run may touch.
//!
//! A remote agent sees every call of the bridge as one caller: the
//! bridge's own credential. It cannot be told "act as alice" (an arbitrary
//! A2A agent has no way to trust such a claim), so the agent cannot scope
//! tasks to the bridge's callers; the bridge has to. It does so without
//! any state of its own, so that a restarted bridge and every replica of
//! it agree: **the owner is written into the context id.**
//!
//! - Every context a run starts is minted by the bridge (A2A lets a client
//!   name the context of a new message) as
//!   `sbb-<owner tag>.<uuid>`, where the owner tag is the first 16 bytes of
//!   SHA-256 of the caller's principal (`key:…`, `jwt:ISS#sub`, the
//!   anonymous principal when the bridge admits everyone), in hex.
//! - A run that names a context (`forwardedProps.a2a.contextId`) must name
//!   one of the caller's: else [`BridgeError::UnknownContext`]. A context
//!   read back from the client's state (`/view/contextId`) that is not the
//!   caller's is ignored: the run starts a new context with the history
//!   the client sent.
//! - A run that names a task — by `taskId`, by an interrupt id, by the
//!   client's `view.pendingInterrupts` — reads it first (`GetTask`, which
//!   every such run already does); a task whose context is not the
//!   caller's is answered exactly as a task the agent does not have
//!   (`TaskNotFound`), so a caller learns nothing of another's tasks.
//!
//! A task is in the context its first message named, for good: the agent
//! keeps the owner (in its store, across its own restarts), the bridge
//! only reads it. The tag is a hash, not a secret: knowing alice's tag
//! does not help bob, because the check compares a context with the
//! tag of the *caller*, which the bridge computes from the credential it
//! verified. A task made at the agent by other means (not through the
//! bridge) is nobody's at the bridge.
//!
//! The hosted agent (`serve`'s own `/agui`) needs none of this: it is
//! called with the caller's own identity, and the engine scopes tasks to
//! their owner itself (its [`crate::Backend::owner`] is `None`).

use sha2::{Digest, Sha256};

use crate::BridgeError;

/// The prefix of the context ids the bridge mints.
pub const CONTEXT_PREFIX: &str = "sbb-";

/// The bytes of SHA-256 kept in an owner tag (as hex: twice as many
/// characters).
const TAG_BYTES: usize = 16;

/// A caller of the bridge, as the contexts it owns are tagged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// `sbb-<tag>.`: the start of each of its context ids.
    prefix: String,
}

impl Owner {
    /// The owner of the runs of `principal`.
    pub fn of(principal: &str) -> Owner {
        let digest = Sha256::digest(principal.as_bytes());
        let mut prefix = String::with_capacity(CONTEXT_PREFIX.len() + 2 * TAG_BYTES + 1);
        prefix.push_str(CONTEXT_PREFIX);
        push_hex(&mut prefix, &digest[..TAG_BYTES]);
        prefix.push('.');
        Owner { prefix }
    }

    /// A fresh context id of this owner.
    pub fn new_context_id(&self) -> String {
        format!("{}{}", self.prefix, uuid::Uuid::now_v7().simple())
    }

    /// The context of the conversation this owner's client names
    /// `thread` (a CopilotKit `threadId`): the same id on every request of
    /// the same owner and thread, so a later request finds the thread's
    /// tasks with no state at the bridge, and a different one for every
    /// other owner. `sbb-<tag>.t<hash of the thread>`, which no minted id
    /// (a UUID in hex) can equal.
    pub fn thread_context_id(&self, thread: &str) -> String {
        let digest = Sha256::digest(thread.as_bytes());
        let mut id = String::with_capacity(self.prefix.len() + 1 + 2 * TAG_BYTES);
        id.push_str(&self.prefix);
        id.push('t');
        push_hex(&mut id, &digest[..TAG_BYTES]);
        id
    }

    /// Whether `context_id` is one of this owner's.
    pub fn owns(&self, context_id: &str) -> bool {
        context_id.len() > self.prefix.len() && context_id.starts_with(&self.prefix)
    }

    /// `Ok` when the named context is this owner's.
    pub fn check_context(&self, context_id: &str) -> Result<(), BridgeError> {
        if self.owns(context_id) {
            Ok(())
        } else {
            Err(BridgeError::UnknownContext(context_id.to_owned()))
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_hex(out: &mut String, bytes: &[u8]) {
    for byte in bytes {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
}

/// The principal of the caller of one request, put in the request's
/// extensions by whatever authenticated it (`switchboard bridge`'s
/// authentication layer); a `RemoteBackend` scopes the request's
/// runs to it. A request without one is the anonymous caller's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_owns_the_contexts_it_mints_and_no_other() {
        let alice = Owner::of("key:alice");
        let bob = Owner::of("key:bob");
        let context = alice.new_context_id();
        assert!(context.starts_with("sbb-"), "{context}");
        assert!(alice.owns(&context));
        assert!(!bob.owns(&context));
        assert!(alice.check_context(&context).is_ok());
        assert_eq!(
            bob.check_context(&context).map_err(|e| e.code()),
            Err("bridge:unknown_context")
        );
        // Deterministic: a restarted bridge or a replica agrees.
        assert!(Owner::of("key:alice").owns(&context));
        for foreign in ["", "sbb-", "ctx-1", &alice.prefix] {
            assert!(!alice.owns(foreign), "{foreign:?}");
        }
        assert_ne!(alice.new_context_id(), context);
    }

    #[test]
    fn a_thread_is_one_context_per_owner() {
        let alice = Owner::of("key:alice");
        let bob = Owner::of("key:bob");
        let thread = alice.thread_context_id("thread-1");
        assert_eq!(thread, Owner::of("key:alice").thread_context_id("thread-1"));
        assert!(alice.owns(&thread));
        assert!(bob.owns(&bob.thread_context_id("thread-1")));
        assert_ne!(bob.thread_context_id("thread-1"), thread);
        assert!(!bob.owns(&thread));
        assert_ne!(alice.thread_context_id("thread-2"), thread);
    }
}
