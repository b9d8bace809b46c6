//! [`RemoteBackend`]: the bridge in front of an agent elsewhere, through
//! [`switchboard_client::A2AClient`] (feature `remote`, default). Without
//! it the bridge serves the hosted agent only ([`crate::HostedAgent`]) and
//! does not depend on the client.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use http::request::Parts;
use switchboard_client::{A2AClient, ClientError};
use switchboard_protocol::{SendMessageRequest, SendMessageResponse, Task};

use crate::BridgeError;
use crate::backend::{A2aEvent, A2aStream, Backend, BackendFactory, agent_error, context_tasks};
use crate::owner::{Caller, Owner};

/// What a client error means to a run.
pub fn client_error(error: ClientError) -> BridgeError {
    match error {
        ClientError::Protocol(e) => agent_error(e),
        ClientError::TooLarge { message } => BridgeError::RequestTooLarge(message),
        ClientError::Transport { message, .. } => BridgeError::AgentUnavailable(message),
        ClientError::OAuth(message) => BridgeError::AgentUnavailable(format!("OAuth2: {message}")),
        ClientError::Http {
            status: 502..=504, ..
        } => BridgeError::AgentUnavailable(error.to_string()),
        other => BridgeError::AgentProtocol(other.to_string()),
    }
}

/// An agent reached through [`A2AClient`].
#[derive(Debug, Clone)]
pub struct RemoteBackend {
    client: A2AClient,
    /// Clients that also request an extension set, made on first use
    /// (a gRPC client opens a connection of its own: one per set, not per call).
    with_extensions: Arc<Mutex<HashMap<Vec<String>, A2AClient>>>,
    /// The caller this backend's runs are scoped to (set by the factory).
    owner: Option<Owner>,
}

impl RemoteBackend {
    /// A backend that sends every operation through `client`.
    pub fn new(client: A2AClient) -> Self {
        RemoteBackend {
            client,
            with_extensions: Arc::default(),
            owner: None,
        }
    }

    /// This backend, its runs scoped to the caller `principal`.
    pub fn for_caller(&self, principal: &str) -> Self {
        RemoteBackend {
            owner: Some(Owner::of(principal)),
            ..self.clone()
        }
    }

    /// The client of a call that requests `extensions`.
    fn client_for(&self, extensions: &[String]) -> Result<A2AClient, BridgeError> {
        if extensions.is_empty() {
            return Ok(self.client.clone());
        }
        // A poisoned cache only lost an entry that is made again.
        let mut cache = self
            .with_extensions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(client) = cache.get(extensions) {
            return Ok(client.clone());
        }
        let client = self
            .client
            .with_extensions(extensions.iter().cloned())
            .map_err(client_error)?;
        cache.insert(extensions.to_vec(), client.clone());
        Ok(client)
    }
}

fn remote_stream(stream: switchboard_client::EventStream) -> A2aStream {
    stream
        .map_ok(|item| A2aEvent {
            seq: item.seq,
            event: item.event,
        })
        .map_err(client_error)
        .boxed()
}

#[async_trait]
impl Backend for RemoteBackend {
    async fn send_message(
        &self,
        request: SendMessageRequest,
        extensions: &[String],
    ) -> Result<SendMessageResponse, BridgeError> {
        let client = self.client_for(extensions)?;
        client.send_message(request).await.map_err(client_error)
    }

    async fn send_streaming_message(
        &self,
        request: SendMessageRequest,
        extensions: &[String],
    ) -> Result<A2aStream, BridgeError> {
        let client = self.client_for(extensions)?;
        let stream = client
            .send_streaming_message(request)
            .await
            .map_err(client_error)?;
        Ok(remote_stream(stream))
    }

    async fn get_task(&self, task_id: &str) -> Result<Task, BridgeError> {
        self.client.get_task(task_id).await.map_err(client_error)
    }

    async fn subscribe_to_task(&self, task_id: &str) -> Result<A2aStream, BridgeError> {
        let stream = self
            .client
            .subscribe_to_task(task_id)
            .await
            .map_err(client_error)?;
        Ok(remote_stream(stream))
    }

    async fn cancel_task(&self, task_id: &str) -> Result<Task, BridgeError> {
        self.client.cancel_task(task_id).await.map_err(client_error)
    }

    async fn list_tasks(&self, context_id: &str) -> Result<Vec<Task>, BridgeError> {
        let page = self
            .client
            .list_tasks(context_tasks(context_id))
            .await
            .map_err(client_error)?;
        Ok(page.tasks)
    }

    fn owner(&self) -> Option<&Owner> {
        self.owner.as_ref()
    }
}

/// Every request of a remote agent shares its client; each is scoped to
/// the [`Caller`] in the request's extensions (the anonymous principal's
/// when there is none).
#[async_trait]
impl BackendFactory for RemoteBackend {
    async fn backend(&self, head: &Parts) -> Result<Arc<dyn Backend>, BridgeError> {
        let principal = head
            .extensions
            .get::<Caller>()
            .map_or(switchboard_core::ANONYMOUS, |c| c.0.as_str());
        Ok(Arc::new(self.for_caller(principal)))
    }
}
