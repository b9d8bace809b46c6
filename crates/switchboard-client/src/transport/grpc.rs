//! The gRPC binding (A2A 1.0, service `lf.a2a.v1.A2AService`) on tonic.
//!
//! The client above works in 1.0 JSON; this transport decodes the params
//! into the canonical request, converts it to the prost message
//! (`switchboard_proto::convert`), makes the RPC, and turns the prost answer
//! back into canonical JSON. Each request carries the metadata
//! `a2a-version: 1.0`, plus the client's extra headers and `a2a-extensions`
//! as metadata. The `tenant` travels in the request message, as the proto
//! defines it.
//!
//! The interface URL is a gRPC target: `host:port` (the form the spec uses
//! for gRPC interfaces) or `http://host:port`. TLS (`https://`) is not built
//! in and is refused at build time rather than failing later.
//!
//! Errors: a status that carries a `google.rpc.ErrorInfo` of domain
//! `a2a-protocol.org` becomes the matching [`A2AError`] (by its `reason`,
//! with the ErrorInfo metadata restoring ids); any other status is a
//! transport error. Stream items are numbered from the response metadata
//! `first-event-id` (consecutive within a stream), like SSE ids.

use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use switchboard_proto::v1 as pb;
use switchboard_proto::v1::a2a_service_client::A2aServiceClient;
use switchboard_protocol::card::BINDING_GRPC;
use switchboard_protocol::error::{ERROR_DOMAIN, ERROR_INFO_TYPE};
use switchboard_protocol::jsonrpc::methods;
use switchboard_protocol::{
    A2AError, AgentCard, AgentInterface, CancelTaskRequest, GetExtendedAgentCardRequest,
    GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse,
    SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use tokio::sync::OnceCell;
use tonic::transport::{Channel, Endpoint};
use tonic_types::StatusExt;

use super::{Http, RawEvent, RawStream, Transport, TransportFactory, is_v1};
use crate::error::ClientError;

pub(crate) const FACTORY: TransportFactory = TransportFactory {
    binding: BINDING_GRPC,
    supports_version: is_v1,
    build,
};

/// The response metadata key with the sequence number of a stream's first item.
pub(crate) const FIRST_EVENT_ID: &str = "first-event-id";

fn build(iface: &AgentInterface, http: &Http) -> Result<Box<dyn Transport>, ClientError> {
    Ok(Box::new(GrpcTransport::new(&iface.url, http.clone())?))
}

/// gRPC, A2A 1.0.
#[derive(Debug)]
pub(crate) struct GrpcTransport {
    /// The target as given (`host:port`).
    target: String,
    endpoint: Endpoint,
    /// Connected on first use: building a client must not need a runtime.
    channel: OnceCell<Channel>,
    http: Http,
}

impl GrpcTransport {
    pub(crate) fn new(target: &str, http: Http) -> Result<Self, ClientError> {
        let target = target.trim();
        let uri = match target.split_once("://") {
            Some(("http", _)) => target.to_string(),
            Some(("https", _)) => {
                return Err(ClientError::Config(format!(
                    "gRPC over TLS ({target}) is not supported by this client"
                )));
            }
            Some((scheme, _)) if !scheme.contains(['.', ':']) => {
                return Err(ClientError::Config(format!(
                    "gRPC target {target:?} has an unknown scheme"
                )));
            }
            _ => format!("http://{target}"),
        };
        let mut endpoint = Endpoint::from_shared(uri)
            .map_err(|e| ClientError::Config(format!("invalid gRPC target {target:?}: {e}")))?
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true);
        if let Some(t) = http.timeout {
            endpoint = endpoint.connect_timeout(t);
        }
        Ok(GrpcTransport {
            target: target.to_string(),
            endpoint,
            channel: OnceCell::new(),
            http,
        })
    }

    async fn client(&self) -> Result<A2aServiceClient<Channel>, ClientError> {
        Ok(A2aServiceClient::new(self.channel().await?)
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX))
    }

    /// The connection, made on first use (shared with the 0.3 transport).
    pub(crate) async fn channel(&self) -> Result<Channel, ClientError> {
        let channel = self
            .channel
            .get_or_try_init(|| async {
                self.endpoint
                    .connect()
                    .await
                    .map_err(|e| ClientError::Transport {
                        message: format!(
                            "connecting to {}: {}",
                            self.target,
                            crate::error::flatten_chain(&e)
                        ),
                        timeout: false,
                    })
            })
            .await?
            .clone();
        Ok(channel)
    }

    /// Wraps a message with the service parameters as metadata.
    fn request<T>(&self, body: T) -> tonic::Request<T> {
        self.request_as(body, "1.0")
    }

    /// [`Self::request`] naming protocol `version` in `a2a-version`.
    pub(crate) fn request_as<T>(&self, body: T, version: &'static str) -> tonic::Request<T> {
        let mut req = tonic::Request::new(body);
        let meta = req.metadata_mut();
        meta.insert(
            "a2a-version",
            tonic::metadata::MetadataValue::from_static(version),
        );
        for (name, value) in &self.http.headers {
            if let Ok(v) = tonic::metadata::MetadataValue::try_from(value.as_bytes())
                && let Ok(k) = tonic::metadata::MetadataKey::from_bytes(name.as_str().as_bytes())
            {
                meta.append(k, v);
            }
        }
        req
    }

    /// Runs `fut` within the client's timeout.
    pub(crate) async fn timed<T>(
        &self,
        method: &'static str,
        fut: impl Future<Output = Result<T, tonic::Status>>,
    ) -> Result<T, ClientError> {
        match self.http.timeout {
            Some(t) => tokio::time::timeout(t, fut)
                .await
                .map_err(|_| ClientError::timeout(method, t))?,
            None => fut.await,
        }
        .map_err(|s| from_status(&s))
    }

    async fn call_inner(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut c = self.client().await?;
        match method {
            methods::SEND_MESSAGE => {
                let req: SendMessageRequest = params_of(method, params)?;
                let r = self
                    .timed(method, c.send_message(self.request((&req).into())))
                    .await?;
                raw(&SendMessageResponse::try_from(r.into_inner()).map_err(decode)?)
            }
            methods::GET_TASK => {
                let req: GetTaskRequest = params_of(method, params)?;
                let r = self
                    .timed(method, c.get_task(self.request((&req).into())))
                    .await?;
                raw(&Task::try_from(r.into_inner()).map_err(decode)?)
            }
            methods::LIST_TASKS => {
                let req: ListTasksRequest = params_of(method, params)?;
                let r = self
                    .timed(method, c.list_tasks(self.request((&req).into())))
                    .await?;
                raw(&ListTasksResponse::try_from(r.into_inner()).map_err(decode)?)
            }
            methods::CANCEL_TASK => {
                let req: CancelTaskRequest = params_of(method, params)?;
                let r = self
                    .timed(method, c.cancel_task(self.request((&req).into())))
                    .await?;
                raw(&Task::try_from(r.into_inner()).map_err(decode)?)
            }
            methods::CREATE_PUSH_CONFIG => {
                let req: TaskPushNotificationConfig = params_of(method, params)?;
                let r = self
                    .timed(
                        method,
                        c.create_task_push_notification_config(self.request((&req).into())),
                    )
                    .await?;
                raw(&TaskPushNotificationConfig::from(r.into_inner()))
            }
            methods::GET_PUSH_CONFIG => {
                let req: TaskPushNotificationConfigRef = params_of(method, params)?;
                let msg: pb::GetTaskPushNotificationConfigRequest = (&req).into();
                let r = self
                    .timed(
                        method,
                        c.get_task_push_notification_config(self.request(msg)),
                    )
                    .await?;
                raw(&TaskPushNotificationConfig::from(r.into_inner()))
            }
            methods::LIST_PUSH_CONFIGS => {
                let req: ListTaskPushNotificationConfigsRequest = params_of(method, params)?;
                let r = self
                    .timed(
                        method,
                        c.list_task_push_notification_configs(self.request((&req).into())),
                    )
                    .await?;
                raw(&ListTaskPushNotificationConfigsResponse::from(
                    r.into_inner(),
                ))
            }
            methods::DELETE_PUSH_CONFIG => {
                let req: TaskPushNotificationConfigRef = params_of(method, params)?;
                let msg: pb::DeleteTaskPushNotificationConfigRequest = (&req).into();
                self.timed(
                    method,
                    c.delete_task_push_notification_config(self.request(msg)),
                )
                .await?;
                raw(&Value::Null)
            }
            methods::GET_EXTENDED_AGENT_CARD => {
                let req: GetExtendedAgentCardRequest = params_of(method, params)?;
                let r = self
                    .timed(
                        method,
                        c.get_extended_agent_card(self.request((&req).into())),
                    )
                    .await?;
                raw(&AgentCard::try_from(r.into_inner()).map_err(decode)?)
            }
            other => Err(ClientError::Config(format!(
                "{other} is not a unary gRPC method"
            ))),
        }
    }

    async fn stream_inner(
        &self,
        method: &'static str,
        params: Value,
        after: Option<u64>,
    ) -> Result<RawStream, ClientError> {
        let mut c = self.client().await?;
        let resp = match method {
            methods::SEND_STREAMING_MESSAGE => {
                let req: SendMessageRequest = params_of(method, params)?;
                self.timed(
                    method,
                    c.send_streaming_message(self.request((&req).into())),
                )
                .await?
            }
            methods::SUBSCRIBE_TO_TASK => {
                let req: SubscribeToTaskRequest = params_of(method, params)?;
                let mut request = self.request((&req).into());
                if let Some(after) = after {
                    // The server's resume key, like SSE's Last-Event-ID.
                    request.metadata_mut().insert(
                        super::LAST_EVENT_ID,
                        tonic::metadata::MetadataValue::from(after),
                    );
                }
                self.timed(method, c.subscribe_to_task(request)).await?
            }
            other => {
                return Err(ClientError::Config(format!(
                    "{other} is not a streaming gRPC method"
                )));
            }
        };
        let first: Option<u64> = resp
            .metadata()
            .get(FIRST_EVENT_ID)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        let items = resp.into_inner().enumerate().map(move |(k, item)| {
            let item = item.map_err(|s| from_status(&s))?;
            let event = StreamResponse::try_from(item).map_err(decode)?;
            Ok(RawEvent {
                seq: first.map(|f| f + k as u64),
                result: raw(&event)?,
            })
        });
        Ok(items.boxed())
    }
}

impl Transport for GrpcTransport {
    fn endpoint(&self) -> &str {
        &self.target
    }

    fn call(
        &self,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'_, Result<Box<RawValue>, ClientError>> {
        self.call_inner(method, params).boxed()
    }

    fn stream(
        &self,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'_, Result<RawStream, ClientError>> {
        self.stream_inner(method, params, None).boxed()
    }

    fn resubscribe(
        &self,
        params: Value,
        after: u64,
    ) -> BoxFuture<'_, Result<RawStream, ClientError>> {
        self.stream_inner(methods::SUBSCRIBE_TO_TASK, params, Some(after))
            .boxed()
    }
}

pub(crate) fn params_of<T: DeserializeOwned>(
    method: &str,
    params: Value,
) -> Result<T, ClientError> {
    serde_json::from_value(params)
        .map_err(|e| ClientError::Config(format!("{method} params are not valid: {e}")))
}

pub(crate) fn raw<T: Serialize>(value: &T) -> Result<Box<RawValue>, ClientError> {
    serde_json::value::to_raw_value(value).map_err(|e| ClientError::Decode(e.to_string()))
}

pub(crate) fn decode(e: switchboard_proto::ConvertError) -> ClientError {
    ClientError::Decode(e.to_string())
}

/// A gRPC status as a client error: an A2A error when it carries an A2A
/// `ErrorInfo`, a transport error otherwise.
pub(crate) fn from_status(status: &tonic::Status) -> ClientError {
    let info = status.get_details_error_info();
    if let Some(info) = info.filter(|i| i.domain == ERROR_DOMAIN)
        && let Some(code) = A2AError::code_for_reason(&info.reason)
    {
        let data = json!([{
            "@type": ERROR_INFO_TYPE,
            "reason": info.reason,
            "domain": info.domain,
            "metadata": info.metadata,
        }]);
        return ClientError::Protocol(A2AError::from_wire(
            code,
            status.message().to_string(),
            Some(&data),
        ));
    }
    ClientError::Transport {
        message: format!("gRPC status {:?}: {}", status.code(), status.message()),
        timeout: status.code() == tonic::Code::DeadlineExceeded,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_reason_has_a_code_that_round_trips() {
        for e in [
            A2AError::Parse("x".into()),
            A2AError::InvalidRequest("x".into()),
            A2AError::MethodNotFound("m".into()),
            A2AError::invalid_params("x"),
            A2AError::Internal("x".into()),
            A2AError::TaskNotFound("t".into()),
            A2AError::PushNotificationNotSupported,
            A2AError::UnsupportedOperation("x".into()),
            A2AError::ContentTypeNotSupported("x".into()),
            A2AError::InvalidAgentResponse("x".into()),
            A2AError::ExtendedAgentCardNotConfigured,
            A2AError::ExtensionSupportRequired("u".into()),
            A2AError::VersionNotSupported("0.3".into()),
            A2AError::Unauthenticated("x".into()),
            A2AError::PermissionDenied("x".into()),
        ] {
            assert_eq!(
                A2AError::code_for_reason(e.reason()),
                Some(e.code()),
                "{e:?}"
            );
        }
    }

    #[test]
    fn targets() {
        let http = Http {
            client: reqwest::Client::new(),
            headers: Default::default(),
            timeout: None,
        };
        assert!(GrpcTransport::new("127.0.0.1:9", http.clone()).is_ok());
        assert!(GrpcTransport::new("http://localhost:9", http.clone()).is_ok());
        assert!(GrpcTransport::new("https://localhost:9", http.clone()).is_err());
        assert!(GrpcTransport::new("ftp://localhost:9", http).is_err());
    }
}
