//! The gRPC binding of A2A 0.3 (service `a2a.v1.A2AService`), chosen for a
//! card interface `GRPC` with `protocolVersion` 0.3.
//!
//! Connection, metadata, timeouts and error decoding are those of the 1.0
//! gRPC transport ([`super::grpc::GrpcTransport`], which this wraps); only
//! the messages differ. The 1.0 request the client hands over is converted
//! with `switchboard_proto::convert03` (resource names `tasks/{id}`, parts
//! under `content`, …) and the 0.3 answer back to 1.0; what 0.3 cannot say
//! is lost as documented there and in `switchboard_protocol::v03` (no
//! tenant, no ListTasks). Requests carry `a2a-version: 0.3`.
//!
//! The extended card is the 0.3 `GetAgentCard`; the 0.3 card's interfaces
//! come back as 0.3 interfaces.

use futures::StreamExt;
use serde_json::Value;
use serde_json::value::RawValue;
use switchboard_proto::convert03 as c03;
use switchboard_proto::v03 as pb;
use switchboard_proto::v03::a2a_service_client::A2aServiceClient;
use switchboard_protocol::jsonrpc::methods;
use switchboard_protocol::{
    A2AError, AgentInterface, CancelTaskRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};
use tonic::transport::Channel;

use super::grpc::{GrpcTransport, decode, first_event_id, params_of, raw};
use super::v03::is_v03;
use super::{Http, JsonTransport, RawEvent, RawStream, Transport, TransportFactory};
use crate::error::ClientError;

pub(crate) const FACTORY: TransportFactory = TransportFactory {
    binding: switchboard_protocol::card::BINDING_GRPC,
    supports_version: is_v03,
    build,
};

const VERSION: &str = "0.3";

fn build(iface: &AgentInterface, http: &Http) -> Result<Box<dyn Transport>, ClientError> {
    Ok(Box::new(Grpc03 {
        inner: GrpcTransport::new(&iface.url, http.clone())?,
    }))
}

/// gRPC, A2A 0.3.
#[derive(Debug)]
pub(crate) struct Grpc03 {
    inner: GrpcTransport,
}

fn task_name(id: &str) -> String {
    format!("tasks/{id}")
}

impl Grpc03 {
    async fn client(&self) -> Result<A2aServiceClient<Channel>, ClientError> {
        Ok(A2aServiceClient::new(self.inner.channel().await?)
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX))
    }

    fn request<T>(&self, body: T) -> tonic::Request<T> {
        self.inner.request_as(body, VERSION)
    }
}

impl JsonTransport for Grpc03 {
    fn url(&self) -> &str {
        self.inner.endpoint()
    }

    async fn call_json(
        &self,
        method: &'static str,
        params: Value,
    ) -> Result<Box<RawValue>, ClientError> {
        let mut c = self.client().await?;
        let t = &self.inner;
        match method {
            methods::SEND_MESSAGE => {
                let req: SendMessageRequest = params_of(method, params)?;
                let msg = c03::send_request_to_proto(&req);
                let r = t.timed(method, c.send_message(self.request(msg))).await?;
                raw(&c03::send_response_from_proto(r.into_inner()).map_err(decode)?)
            }
            methods::GET_TASK => {
                let req: GetTaskRequest = params_of(method, params)?;
                let msg = pb::GetTaskRequest {
                    name: task_name(&req.id),
                    history_length: req.history_length.unwrap_or(0),
                };
                let r = t.timed(method, c.get_task(self.request(msg))).await?;
                raw(&c03::task_from_proto(r.into_inner()).map_err(decode)?)
            }
            methods::CANCEL_TASK => {
                let req: CancelTaskRequest = params_of(method, params)?;
                let msg = pb::CancelTaskRequest {
                    name: task_name(&req.id),
                };
                let r = t.timed(method, c.cancel_task(self.request(msg))).await?;
                raw(&c03::task_from_proto(r.into_inner()).map_err(decode)?)
            }
            methods::CREATE_PUSH_CONFIG => {
                let req: TaskPushNotificationConfig = params_of(method, params)?;
                let msg = c03::create_push_config_to_proto(&req);
                let r = t
                    .timed(
                        method,
                        c.create_task_push_notification_config(self.request(msg)),
                    )
                    .await?;
                raw(&c03::push_config_from_proto(r.into_inner()).map_err(decode)?)
            }
            methods::GET_PUSH_CONFIG => {
                let req: TaskPushNotificationConfigRef = params_of(method, params)?;
                let msg = pb::GetTaskPushNotificationConfigRequest {
                    name: c03::config_name_of(&req.task_id, &req.id),
                };
                let r = t
                    .timed(
                        method,
                        c.get_task_push_notification_config(self.request(msg)),
                    )
                    .await?;
                raw(&c03::push_config_from_proto(r.into_inner()).map_err(decode)?)
            }
            methods::LIST_PUSH_CONFIGS => {
                let req: ListTaskPushNotificationConfigsRequest = params_of(method, params)?;
                let msg = pb::ListTaskPushNotificationConfigRequest {
                    parent: task_name(&req.task_id),
                    page_size: req.page_size.unwrap_or(0),
                    page_token: req.page_token.unwrap_or_default(),
                };
                let r = t
                    .timed(
                        method,
                        c.list_task_push_notification_config(self.request(msg)),
                    )
                    .await?
                    .into_inner();
                raw(&ListTaskPushNotificationConfigsResponse {
                    configs: r
                        .configs
                        .into_iter()
                        .map(c03::push_config_from_proto)
                        .collect::<Result<_, _>>()
                        .map_err(decode)?,
                    next_page_token: r.next_page_token,
                })
            }
            methods::DELETE_PUSH_CONFIG => {
                let req: TaskPushNotificationConfigRef = params_of(method, params)?;
                let msg = pb::DeleteTaskPushNotificationConfigRequest {
                    name: c03::config_name_of(&req.task_id, &req.id),
                };
                t.timed(
                    method,
                    c.delete_task_push_notification_config(self.request(msg)),
                )
                .await?;
                raw(&Value::Null)
            }
            methods::GET_EXTENDED_AGENT_CARD => {
                let r = t
                    .timed(
                        method,
                        c.get_agent_card(self.request(pb::GetAgentCardRequest {})),
                    )
                    .await?;
                raw(&c03::card_from_proto(r.into_inner()).map_err(decode)?)
            }
            methods::LIST_TASKS => Err(ClientError::Protocol(A2AError::UnsupportedOperation(
                format!("{method} does not exist in A2A 0.3"),
            ))),
            other => Err(ClientError::Config(format!(
                "{other} is not a unary gRPC method"
            ))),
        }
    }

    async fn stream_json(
        &self,
        method: &'static str,
        params: Value,
        after: Option<u64>,
    ) -> Result<RawStream, ClientError> {
        let mut c = self.client().await?;
        let t = &self.inner;
        let resp = match method {
            methods::SEND_STREAMING_MESSAGE => {
                let req: SendMessageRequest = params_of(method, params)?;
                let msg = c03::send_request_to_proto(&req);
                t.timed(method, c.send_streaming_message(self.request(msg)))
                    .await?
            }
            methods::SUBSCRIBE_TO_TASK => {
                let req: SubscribeToTaskRequest = params_of(method, params)?;
                let mut request = self.request(pb::TaskSubscriptionRequest {
                    name: task_name(&req.id),
                });
                if let Some(after) = after {
                    request.metadata_mut().insert(
                        super::LAST_EVENT_ID,
                        tonic::metadata::MetadataValue::from(after),
                    );
                }
                t.timed(method, c.task_subscription(request)).await?
            }
            other => {
                return Err(ClientError::Config(format!(
                    "{other} is not a streaming gRPC method"
                )));
            }
        };
        let first = first_event_id(&resp);
        let items = resp.into_inner().enumerate().map(move |(k, item)| {
            let item = item.map_err(|s| super::grpc::from_status(&s))?;
            let event = c03::stream_from_proto(item).map_err(decode)?;
            Ok(RawEvent {
                seq: first.map(|f| f + k as u64),
                result: raw(&event)?,
            })
        });
        Ok(items.boxed())
    }
}
