//! What a signed push notification carries besides its body: the contract
//! between the server that sends it (`switchboard-push`) and the receiver
//! that checks it (`switchboard-client`'s `push` module).
//!
//! A notification is a POST whose body is the event (or, for configs made
//! over A2A 0.3, the task snapshot). Two headers ride with it:
//! [`TOKEN_HEADER`] echoes the config's token when it has one, and
//! [`SIGNATURE_HEADER`] holds an ES256 JWT whose claims are
//! [`NotificationClaims`]: they bind the token to the exact body bytes
//! (`body_sha256`), to one webhook (`aud`), to a short window (`iat`/`exp`)
//! and to one attempt (`jti`), and say which event of which task it is
//! (`task_id`, `seq`, `config_id`). `jti` is per attempt, so a receiver that
//! wants exactly-once processing dedupes on `(task_id, seq)`.

use serde::{Deserialize, Serialize};

/// The header carrying the signature JWT.
pub const SIGNATURE_HEADER: &str = "X-A2A-Notification-Signature";
/// The header carrying the config's token, if it has one (as a2a-python
/// sends it).
pub const TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// The claims of a notification's signature JWT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationClaims {
    /// The server's public URL.
    pub iss: String,
    /// The webhook URL the notification was sent to.
    pub aud: String,
    /// Issued at (Unix seconds).
    pub iat: i64,
    /// Expires at (Unix seconds); a few minutes after `iat`.
    pub exp: i64,
    /// Unique per delivery attempt (see the module docs).
    pub jti: String,
    /// The task the event belongs to.
    pub task_id: String,
    /// The event's position in the task's log (dedupe and order key).
    pub seq: u64,
    /// The push config the notification was sent for.
    pub config_id: String,
    /// base64url (no padding) SHA-256 of the exact body bytes.
    pub body_sha256: String,
}
