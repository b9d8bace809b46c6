//! The gRPC binding of A2A 0.3: service `a2a.v1.A2AService`, beside the 1.0
//! service `lf.a2a.v1.A2AService` on the same port.
//!
//! gRPC routes by path (`/a2a.v1.A2AService/GetTask` is not
//! `/lf.a2a.v1.A2AService/GetTask`), so both services sit in one tonic
//! router and a request reaches the one its client was generated from. Each
//! 0.3 method converts the prost request to the canonical 1.0 request
//! (`switchboard_proto::convert03`), calls the same [`RequestHandler`]
//! method every other binding calls, and converts the answer back:
//!
//! | 0.3 method | handler | notes |
//! |---|---|---|
//! | SendMessage / SendStreamingMessage | send_message / send_streaming_message | no configuration blocks; a configuration without `blocking` does not; status updates carry `final` |
//! | GetTask | get_task | `name` = `tasks/{id}`; `history_length` 0 = unset |
//! | CancelTask | cancel_task | |
//! | TaskSubscription | subscribe_to_task (resubscribe with `last-event-id`) | |
//! | Create/Get/List/DeleteTaskPushNotificationConfig | the push config operations | names `tasks/{id}/pushNotificationConfigs/{cid}`; Get with an empty `cid` = the task's first config |
//! | GetAgentCard | get_extended_agent_card for an authenticated caller when the card declares an extended card | else the served card in 0.3 form (`url` + `preferred_transport` + `additional_interfaces`) |
//!
//! Service parameters and errors are those of the 1.0 service
//! ([`crate::grpc`]): `a2a-extensions` in and echoed out, `first-event-id`
//! on streams and `last-event-id` to resume, and every [`A2AError`] as the
//! status of the server's [`ErrorTable`] with a `google.rpc.ErrorInfo`. A
//! malformed resource name or a missing required field is InvalidParams
//! naming the field. Version: a call without `a2a-version` (as 0.3 clients
//! send it) or with 0.3 is served; one that asks for 1.x is refused with
//! VersionNotSupported, since this service answers in 0.3. 0.3 has no tenant:
//! calls act in the default tenant.

use switchboard_core::push::PayloadKind;
use switchboard_core::{CallContext, EventStream, RequestHandler};
use switchboard_proto::ConvertError;
use switchboard_proto::convert03 as c03;
use switchboard_proto::v03 as pb;
use switchboard_proto::v03::a2a_service_server::{A2aService, A2aServiceServer};
use switchboard_protocol::{
    A2AError, AgentCard, CancelTaskRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, SubscribeToTaskRequest, TaskPushNotificationConfigRef,
};
use tonic::{Request, Response, Status};

use crate::errors::ErrorTable;
use crate::gate::Gate;
use crate::grpc::{WireStream, invalid, reply, status_of, stream_response};
use crate::params::{ProtocolVersion, explicit_version, last_event_id};

/// The service: the handler, the error table and the served card. Cloned
/// per unary call (`grpc_frame`), so everything in it is cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct GrpcV03 {
    handler: RequestHandler,
    gate: Gate,
    table: ErrorTable,
    card: std::sync::Arc<pb::AgentCard>,
}

impl GrpcV03 {
    pub(crate) fn new(
        handler: RequestHandler,
        gate: Gate,
        table: ErrorTable,
        card: &AgentCard,
    ) -> Self {
        GrpcV03 {
            handler,
            gate,
            table,
            card: std::sync::Arc::new(c03::card_to_proto(card)),
        }
    }

    pub(crate) fn table(&self) -> ErrorTable {
        self.table
    }
}

/// The 0.3 tonic server (used for the streaming methods), accepting
/// messages up to `max_bytes`.
pub(crate) fn service(svc: GrpcV03, max_bytes: usize) -> A2aServiceServer<GrpcV03> {
    A2aServiceServer::new(svc)
        .max_decoding_message_size(max_bytes)
        .max_encoding_message_size(usize::MAX)
}

type ItemStream = WireStream<pb::StreamResponse>;

impl GrpcV03 {
    /// Reads the service parameters (version, then extensions, as the
    /// other bindings check them) and builds the call in the default tenant.
    fn call<T>(&self, req: &Request<T>) -> Result<CallContext, Status> {
        let headers: &http::HeaderMap = req.metadata().as_ref();
        match explicit_version(headers, None) {
            Ok(None | Some(ProtocolVersion::V0_3)) => {}
            Ok(Some(ProtocolVersion::V1_0)) => {
                let raw = headers
                    .get("a2a-version")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("1.0");
                return Err(self.status(&A2AError::VersionNotSupported(raw.to_string())));
            }
            Err(e) => return Err(self.status(&e)),
        }
        // A 0.3 call: push configs it creates are notified with the task
        // (sent as the 0.3 `Task`), as on the 0.3 JSON-RPC and REST edges.
        let mut call = self
            .gate
            .call_context(crate::grpc::identity(req)?, headers)
            .map_err(|e| self.status(&e))?
            .with_push_payload(PayloadKind::TaskSnapshot);
        call.resume_after = last_event_id(headers).map_err(|e| self.status(&e))?;
        Ok(call)
    }

    fn status(&self, err: &A2AError) -> Status {
        status_of(self.table, err)
    }

    fn bad(&self, e: switchboard_proto::ConvertError) -> Status {
        self.status(&invalid(e))
    }

    /// The handler's answer `out` on the wire: `to_wire` of it, or its
    /// error as this service's status.
    fn answer<T, B>(
        &self,
        call: &CallContext,
        out: Result<T, A2AError>,
        to_wire: impl FnOnce(&T) -> B,
    ) -> Result<Response<B>, Status> {
        match out {
            Ok(out) => Ok(reply(call, to_wire(&out))),
            Err(e) => Err(self.status(&e)),
        }
    }

    /// A handler stream as a 0.3 gRPC stream (with `first-event-id`).
    async fn stream(
        &self,
        call: &CallContext,
        events: Result<EventStream, A2AError>,
    ) -> Result<Response<ItemStream>, Status> {
        let events = events.map_err(|e| self.status(&e))?;
        stream_response(self.table, call, events, |ev| c03::stream_to_proto(&ev)).await
    }

    /// The task's first push config (0.3 "get" without a config id).
    async fn first_config(
        &self,
        call: &CallContext,
        task_id: String,
    ) -> Result<switchboard_protocol::TaskPushNotificationConfig, A2AError> {
        let page = self
            .handler
            .list_push_configs(
                call,
                ListTaskPushNotificationConfigsRequest {
                    tenant: None,
                    task_id: task_id.clone(),
                    page_size: Some(1),
                    page_token: None,
                },
            )
            .await?;
        page.configs.into_iter().next().ok_or_else(|| {
            A2AError::invalid_params(format!("task {task_id} has no push notification config"))
        })
    }
}

fn push_ref(task_id: String, id: String) -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef {
        tenant: None,
        task_id,
        id,
    }
}

/// `GetTask` in canonical form (proto3 int32: a `history_length` of 0 is
/// "not set").
fn get_task_request(r: pb::GetTaskRequest) -> Result<GetTaskRequest, ConvertError> {
    Ok(GetTaskRequest {
        tenant: None,
        id: c03::task_name(&r.name, "name")?,
        history_length: (r.history_length != 0).then_some(r.history_length),
    })
}

fn cancel_task_request(r: pb::CancelTaskRequest) -> Result<CancelTaskRequest, ConvertError> {
    let id = c03::task_name(&r.name, "name")?;
    Ok(CancelTaskRequest {
        tenant: None,
        id,
        metadata: None,
    })
}

fn subscribe_request(
    r: pb::TaskSubscriptionRequest,
) -> Result<SubscribeToTaskRequest, ConvertError> {
    let id = c03::task_name(&r.name, "name")?;
    Ok(SubscribeToTaskRequest { tenant: None, id })
}

/// `ListTaskPushNotificationConfig` in canonical form (0 and "" are "not set").
fn list_configs_request(
    r: pb::ListTaskPushNotificationConfigRequest,
) -> Result<ListTaskPushNotificationConfigsRequest, ConvertError> {
    Ok(ListTaskPushNotificationConfigsRequest {
        tenant: None,
        task_id: c03::task_name(&r.parent, "parent")?,
        page_size: (r.page_size != 0).then_some(r.page_size),
        page_token: (!r.page_token.is_empty()).then_some(r.page_token),
    })
}

fn list_configs_to_proto(
    page: &ListTaskPushNotificationConfigsResponse,
) -> pb::ListTaskPushNotificationConfigResponse {
    pb::ListTaskPushNotificationConfigResponse {
        configs: page.configs.iter().map(c03::push_config_to_proto).collect(),
        next_page_token: page.next_page_token.clone(),
    }
}

/// Emits the service impl. The methods that only translate are one row
/// each: `rpc(0.3 request) -> 0.3 answer = handler(from_wire, to_wire)`
/// (streams: `rpc(0.3 request) as StreamType = handler(from_wire)`) reads
/// the service parameters, converts the request with `from_wire` (a
/// conversion error is InvalidParams naming the field), calls the
/// [`RequestHandler`] method `handler` and writes its answer with `to_wire`.
/// Methods with logic of their own follow the rows as written.
macro_rules! v03_service {
    (
        unary { $($rpc:ident($req:ty) -> $resp:ty = $handler:ident($from:path, $to:path);)* }
        stream { $($srpc:ident($sreq:ty) as $stream:ident = $shandler:ident($sfrom:path);)* }
        $($own:tt)*
    ) => {
        #[tonic::async_trait]
        impl A2aService for GrpcV03 {
            $(
                async fn $rpc(&self, request: Request<$req>) -> Result<Response<$resp>, Status> {
                    let call = self.call(&request)?;
                    let req = $from(request.into_inner()).map_err(|e| self.bad(e))?;
                    let out = self.handler.$handler(&call, req).await;
                    self.answer(&call, out, $to)
                }
            )*
            $(
                type $stream = ItemStream;

                async fn $srpc(&self, request: Request<$sreq>) -> Result<Response<ItemStream>, Status> {
                    let call = self.call(&request)?;
                    let req = $sfrom(request.into_inner()).map_err(|e| self.bad(e))?;
                    let events = self.handler.$shandler(&call, req).await;
                    self.stream(&call, events).await
                }
            )*
            $($own)*
        }
    };
}

v03_service! {
    unary {
        send_message(pb::SendMessageRequest) -> pb::SendMessageResponse =
            send_message(c03::send_request_from_proto, c03::send_response_to_proto);
        get_task(pb::GetTaskRequest) -> pb::Task = get_task(get_task_request, c03::task_to_proto);
        cancel_task(pb::CancelTaskRequest) -> pb::Task =
            cancel_task(cancel_task_request, c03::task_to_proto);
        create_task_push_notification_config(pb::CreateTaskPushNotificationConfigRequest)
            -> pb::TaskPushNotificationConfig =
            create_push_config(c03::create_push_config_from_proto, c03::push_config_to_proto);
        list_task_push_notification_config(pb::ListTaskPushNotificationConfigRequest)
            -> pb::ListTaskPushNotificationConfigResponse =
            list_push_configs(list_configs_request, list_configs_to_proto);
    }
    stream {
        send_streaming_message(pb::SendMessageRequest) as SendStreamingMessageStream =
            send_streaming_message(c03::send_request_from_proto);
        task_subscription(pb::TaskSubscriptionRequest) as TaskSubscriptionStream =
            subscribe_to_task(subscribe_request);
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let call = self.call(&request)?;
        let (task_id, cid) =
            c03::config_name(&request.get_ref().name, "name").map_err(|e| self.bad(e))?;
        let out = if cid.is_empty() {
            self.first_config(&call, task_id).await
        } else {
            self.handler
                .get_push_config(&call, push_ref(task_id, cid))
                .await
        };
        self.answer(&call, out, c03::push_config_to_proto)
    }

    async fn get_agent_card(
        &self,
        request: Request<pb::GetAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        let call = self.call(&request)?;
        // 0.3's one card method is also how 0.3 clients read the public
        // card, so only an authenticated caller of an agent that offers an
        // extended card gets that one.
        if self.handler.card().capabilities.extended_agent_card == Some(true)
            && call.principal != switchboard_core::context::ANONYMOUS
        {
            let card = self
                .handler
                .get_extended_agent_card(&call, Default::default())
                .await
                .map_err(|e| self.status(&e))?;
            return Ok(reply(&call, c03::card_to_proto(&card)));
        }
        Ok(reply(&call, pb::AgentCard::clone(&self.card)))
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<()>, Status> {
        let call = self.call(&request)?;
        let (task_id, cid) =
            c03::config_name(&request.get_ref().name, "name").map_err(|e| self.bad(e))?;
        if cid.is_empty() {
            return Err(self.status(&A2AError::invalid_field(
                "name",
                "names no push notification config",
            )));
        }
        let out = self
            .handler
            .delete_push_config(&call, push_ref(task_id, cid))
            .await;
        self.answer(&call, out, |()| ())
    }
}
