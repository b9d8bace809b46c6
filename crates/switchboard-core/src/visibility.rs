//! Extension data is shown only to callers that activated the extension.
//!
//! Agents write extension payloads into `metadata` under the extension's URI
//! (task-progress does, for example). A task's events are shared by every
//! caller, so the engine removes, on the way out, the metadata keys of every
//! extension the agent declares but *this* caller did not activate with
//! `A2A-Extensions`. Keys of undeclared extensions are left alone: they are
//! the agent's own business.

use switchboard_protocol::{AgentCard, Message, Metadata, StreamResponse, Task};

use crate::context::CallContext;

/// The metadata keys one caller must not see.
#[derive(Debug, Clone, Default)]
pub struct ExtensionFilter {
    hidden: Vec<String>,
}

impl ExtensionFilter {
    /// Declared extensions minus the ones `call` activated.
    pub fn for_call(card: &AgentCard, call: &CallContext) -> Self {
        let hidden = card
            .capabilities
            .extensions
            .iter()
            .map(|e| e.uri.clone())
            .filter(|uri| !call.activated_extensions.contains(uri))
            .collect();
        ExtensionFilter { hidden }
    }

    /// A filter that removes exactly these metadata keys.
    pub fn hiding(keys: Vec<String>) -> Self {
        ExtensionFilter { hidden: keys }
    }

    /// The metadata keys this filter removes.
    pub fn hidden_keys(&self) -> &[String] {
        &self.hidden
    }

    /// `true` when nothing needs removing.
    pub fn is_noop(&self) -> bool {
        self.hidden.is_empty()
    }

    fn strip(&self, md: &mut Option<Metadata>) {
        if let Some(map) = md {
            for key in &self.hidden {
                map.remove(key);
            }
            if map.is_empty() {
                *md = None;
            }
        }
    }

    /// Removes hidden keys from a direct message.
    pub fn event_message(&self, m: &mut Message) {
        self.message(m);
    }

    fn message(&self, m: &mut Message) {
        self.strip(&mut m.metadata);
    }

    /// Removes hidden keys from a task and everything in it.
    pub fn task(&self, t: &mut Task) {
        if self.is_noop() {
            return;
        }
        self.strip(&mut t.metadata);
        if let Some(m) = &mut t.status.message {
            self.message(m);
        }
        for m in t.history.iter_mut().flatten() {
            self.message(m);
        }
        for a in t.artifacts.iter_mut().flatten() {
            self.strip(&mut a.metadata);
        }
    }

    /// Removes hidden keys from one stream item.
    pub fn event(&self, ev: &mut StreamResponse) {
        if self.is_noop() {
            return;
        }
        match ev {
            StreamResponse::Task(t) => self.task(t),
            StreamResponse::Message(m) => self.message(m),
            StreamResponse::StatusUpdate(u) => {
                self.strip(&mut u.metadata);
                if let Some(m) = &mut u.status.message {
                    self.message(m);
                }
            }
            StreamResponse::ArtifactUpdate(u) => {
                self.strip(&mut u.metadata);
                self.strip(&mut u.artifact.metadata);
            }
            _ => {}
        }
    }
}
