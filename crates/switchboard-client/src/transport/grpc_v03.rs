//! The gRPC binding of A2A 0.3 (service `a2a.v1.A2AService`), chosen for a
//! card interface `GRPC` with `protocolVersion` 0.3.
//!
//! Connection, metadata, timeouts and error decoding are those of the 1.0
//! gRPC transport ([`super::grpc::GrpcTransport`], which this wraps); only
//! the messages differ. Typed like the 1.0 transport, with no JSON on the
//! way: the canonical request the client hands over is converted with
//! `switchboard_proto::convert03` (resource names `tasks/{id}`, parts under
//! `content`, …) and the 0.3 answer back to the canonical one; what 0.3 cannot say
//! is lost as documented there and in `switchboard_protocol::v03` (no
//! tenant, no ListTasks). Requests carry `a2a-version: 0.3`.
//!
//! The extended card is the 0.3 `GetAgentCard`; the 0.3 card's interfaces
//! come back as 0.3 interfaces.

use switchboard_proto::convert03 as c03;
use switchboard_proto::v03 as pb;
use switchboard_proto::v03::a2a_service_client::A2aServiceClient;
use switchboard_protocol::{A2AError, A2aRequest, A2aResponse, AgentInterface};
use tonic::transport::Channel;

use super::grpc::{GrpcTransport, decode, event_stream, resumed, wrong_kind};
use super::v03::is_v03;
use super::{ClientFuture, Http, Transport, TransportFactory};
use crate::client::EventStream;
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

    /// One unary operation: the 0.3 RPC its request maps to, and the
    /// canonical answer of the 0.3 response.
    async fn unary(&self, request: A2aRequest) -> Result<A2aResponse, ClientError> {
        let mut c = self.client().await?;
        let op = request.operation();
        let (t, name) = (&self.inner, op.name());
        Ok(match request {
            A2aRequest::SendMessage(req) => {
                let msg = self.request(c03::send_request_to_proto(&req));
                let r = t.timed(name, c.send_message(msg)).await?.into_inner();
                A2aResponse::SendMessage(c03::send_response_from_proto(r).map_err(decode)?)
            }
            A2aRequest::GetTask(req) => {
                let msg = self.request(pb::GetTaskRequest {
                    name: task_name(&req.id),
                    history_length: req.history_length.unwrap_or(0),
                });
                let task = t.timed(name, c.get_task(msg)).await?.into_inner();
                A2aResponse::GetTask(c03::task_from_proto(task).map_err(decode)?)
            }
            A2aRequest::CancelTask(req) => {
                let msg = self.request(pb::CancelTaskRequest {
                    name: task_name(&req.id),
                });
                let task = t.timed(name, c.cancel_task(msg)).await?.into_inner();
                A2aResponse::CancelTask(c03::task_from_proto(task).map_err(decode)?)
            }
            A2aRequest::CreateTaskPushNotificationConfig(req) => {
                let msg = self.request(c03::create_push_config_to_proto(&req));
                let call = c.create_task_push_notification_config(msg);
                let config = t.timed(name, call).await?.into_inner();
                let config = c03::push_config_from_proto(config).map_err(decode)?;
                A2aResponse::CreateTaskPushNotificationConfig(config)
            }
            A2aRequest::GetTaskPushNotificationConfig(req) => {
                let msg = self.request(pb::GetTaskPushNotificationConfigRequest {
                    name: c03::config_name_of(&req.task_id, &req.id),
                });
                let call = c.get_task_push_notification_config(msg);
                let config = t.timed(name, call).await?.into_inner();
                A2aResponse::GetTaskPushNotificationConfig(
                    c03::push_config_from_proto(config).map_err(decode)?,
                )
            }
            A2aRequest::ListTaskPushNotificationConfigs(req) => {
                let msg = self.request(pb::ListTaskPushNotificationConfigRequest {
                    parent: task_name(&req.task_id),
                    page_size: req.page_size.unwrap_or(0),
                    page_token: req.page_token.unwrap_or_default(),
                });
                let call = c.list_task_push_notification_config(msg);
                let page = t.timed(name, call).await?.into_inner();
                A2aResponse::ListTaskPushNotificationConfigs(
                    switchboard_protocol::ListTaskPushNotificationConfigsResponse {
                        configs: page
                            .configs
                            .into_iter()
                            .map(c03::push_config_from_proto)
                            .collect::<Result<_, _>>()
                            .map_err(decode)?,
                        next_page_token: page.next_page_token,
                    },
                )
            }
            A2aRequest::DeleteTaskPushNotificationConfig(req) => {
                let msg = self.request(pb::DeleteTaskPushNotificationConfigRequest {
                    name: c03::config_name_of(&req.task_id, &req.id),
                });
                let call = c.delete_task_push_notification_config(msg);
                t.timed(name, call).await?;
                A2aResponse::DeleteTaskPushNotificationConfig(())
            }
            A2aRequest::GetExtendedAgentCard(_) => {
                let msg = self.request(pb::GetAgentCardRequest {});
                let card = t.timed(name, c.get_agent_card(msg)).await?.into_inner();
                A2aResponse::GetExtendedAgentCard(c03::card_from_proto(card).map_err(decode)?)
            }
            A2aRequest::ListTasks(_) => {
                return Err(ClientError::Protocol(A2AError::UnsupportedOperation(
                    format!("{name} does not exist in A2A 0.3"),
                )));
            }
            A2aRequest::SendStreamingMessage(_) | A2aRequest::SubscribeToTask(_) => {
                return Err(wrong_kind(op, false));
            }
        })
    }

    /// One streaming operation, resumed after `after` (subscriptions only).
    async fn server_stream(
        &self,
        request: A2aRequest,
        after: Option<u64>,
    ) -> Result<EventStream, ClientError> {
        let mut c = self.client().await?;
        let op = request.operation();
        let (t, name) = (&self.inner, op.name());
        let resp = match request {
            A2aRequest::SendStreamingMessage(req) => {
                let msg = self.request(c03::send_request_to_proto(&req));
                t.timed(name, c.send_streaming_message(msg)).await?
            }
            A2aRequest::SubscribeToTask(req) => {
                let msg = self.request(pb::TaskSubscriptionRequest {
                    name: task_name(&req.id),
                });
                t.timed(name, c.task_subscription(resumed(msg, after)))
                    .await?
            }
            _ => return Err(wrong_kind(op, true)),
        };
        Ok(event_stream(resp, c03::stream_from_proto))
    }
}

impl Transport for Grpc03 {
    fn endpoint(&self) -> &str {
        self.inner.endpoint()
    }

    fn call(&self, request: A2aRequest) -> ClientFuture<'_, A2aResponse> {
        Box::pin(self.unary(request))
    }

    fn stream(&self, request: A2aRequest, after: Option<u64>) -> ClientFuture<'_, EventStream> {
        Box::pin(self.server_stream(request, after))
    }
}
