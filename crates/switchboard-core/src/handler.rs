//! [`RequestHandler`]: the eleven A2A operations, binding-independent.
//!
//! Every binding (JSON-RPC, REST, gRPC, any protocol version) decodes its
//! wire form into the canonical types and calls one method here with the
//! caller's [`CallContext`]. All protocol rules live here, once: id
//! generation and matching, terminal-task immutability, blocking vs
//! `returnImmediately`, `historyLength`, ListTasks paging, capability checks.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use switchboard_protocol::requests::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use switchboard_protocol::{
    A2AError, AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Operation, PartContent, Role, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef, TaskState, TaskStatus,
};
use switchboard_telemetry::metrics::METRICS;
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::Cluster;
use crate::context::{CallContext, media_type_matches};
use crate::events::{EmitError, Outcome, RunEnv, TaskEvents};
use crate::executor::{ABANDONED_RUN, AgentExecutor, RequestContext};
use crate::limits::{Counter, Quotas, Slot};
use crate::push::{
    ConfigQuery, DestinationCheck, PushConfig, PushConfigLimits, PushStore, PutConfig,
    validate_config,
};
use crate::runtime::{BusEvent, Change, EventStream, Registry, TaskRuntime, terminal_error};
use crate::store::{ListCursor, Retention, StoreError, TaskQuery, TaskStore};
use crate::visibility::ExtensionFilter;
use crate::{InMemoryStore, LoggedEvent};
use switchboard_protocol::progress::ProgressLimits;

/// Tunables of the engine.
#[derive(Debug, Clone)]
pub struct HandlerConfig {
    /// How long a follow-up message waits for the previous run of an
    /// interrupted task to return before it is refused.
    pub previous_run_grace: Duration,
    /// With a [`Cluster`]: how often this replica looks for
    /// tasks whose replica died (expired leases) and fails them.
    pub orphan_sweep_interval: Duration,
    /// Which finished tasks the store keeps (default: all). When set, the
    /// handler purges the rest every `retention_interval`.
    pub retention: Retention,
    /// How often retention runs.
    pub retention_interval: Duration,
    /// What one request may send and get back by default ([`crate::limits`]).
    pub limits: crate::Limits,
    /// What one principal may hold at once, and the most one answer may
    /// carry ([`crate::Quotas`]).
    pub quotas: crate::Quotas,
}

impl Default for HandlerConfig {
    fn default() -> Self {
        HandlerConfig {
            previous_run_grace: Duration::from_secs(10),
            orphan_sweep_interval: Duration::from_secs(2),
            retention: Retention::default(),
            retention_interval: Duration::from_secs(60),
            limits: crate::Limits::default(),
            quotas: crate::Quotas::default(),
        }
    }
}

/// The engine. Cheap to clone; all clones share state.
#[derive(Clone)]
pub struct RequestHandler {
    inner: Arc<Inner>,
}

struct Inner {
    executor: Arc<dyn AgentExecutor>,
    store: Arc<dyn TaskStore>,
    card: AgentCard,
    registry: Arc<Registry>,
    env: Arc<RunEnv>,
    /// Media types the card accepts / produces (defaults plus every skill's),
    /// computed once instead of on every SendMessage.
    input_modes: Vec<String>,
    output_modes: Vec<String>,
    config: HandlerConfig,
    shutdown: CancellationToken,
    runs: TaskTracker,
    /// Push notifications, when enabled: at build time
    /// ([`RequestHandlerBuilder::push`]) or once afterwards
    /// ([`RequestHandler::enable_push`]).
    push: std::sync::OnceLock<PushSetup>,
    /// Stops the replica duties (see [`crate::cluster`]) when the handler goes.
    background: CancellationToken,
    /// The extended agent card as configured
    /// ([`RequestHandlerBuilder::extended_card`]), if any.
    extended_card: Option<AgentCard>,
    /// The extended card as served: completed from the served public card
    /// ([`RequestHandler::complete_extended_card`]) once a server exposes it.
    served_extended_card: std::sync::OnceLock<AgentCard>,
    /// Runs in progress per (tenant, principal), for
    /// [`crate::Quotas::max_active_tasks_per_principal`].
    active_runs: Arc<Counter>,
    /// The replica set this handler is one of, which also counts
    /// `active_runs` across replicas (see [`crate::cluster`]).
    cluster: Option<Arc<dyn Cluster>>,
    /// The prefix (namespace and [`NAMESPACE_SEPARATOR`]) of every tenant
    /// this handler stores (see [`RequestHandlerBuilder::namespace`]).
    namespace: Option<String>,
    /// Open SubscribeToTask streams per (tenant, task), for
    /// [`crate::Quotas::max_subscribers_per_task`].
    subscribers: Arc<Counter>,
    /// Whether the runs a previous process abandoned are failed
    /// ([`RequestHandlerBuilder::recover_abandoned`]).
    recover_abandoned: bool,
    /// How many abandoned runs were failed, once that is done
    /// ([`RequestHandler::recover_abandoned`]).
    recovered: tokio::sync::OnceCell<usize>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.background.cancel();
    }
}

/// The task store keeps no push configs (it does not implement
/// [`PushStore`]), so push notifications cannot be enabled on it.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the task store does not keep push notification configs, so push cannot be enabled")]
pub struct PushUnavailable;

/// Where push configs live and how they are checked.
#[derive(Debug, Clone)]
struct PushSetup {
    store: Arc<dyn PushStore>,
    limits: PushConfigLimits,
    /// What a webhook's host resolves to and the host's own addresses,
    /// checked at creation (see [`DestinationCheck`]); without it, only
    /// what the URL itself shows.
    destinations: Option<Arc<dyn DestinationCheck>>,
}

impl PushSetup {
    /// The [`DestinationCheck`] of a config that passed [`validate_config`]
    /// (so its URL parses and has a host): InvalidParams on `field`.
    async fn check_destination(
        &self,
        cfg: &TaskPushNotificationConfig,
        field: &str,
    ) -> Result<(), A2AError> {
        let Some(check) = &self.destinations else {
            return Ok(());
        };
        let host = url::Url::parse(cfg.url.trim())
            .ok()
            .and_then(|u| u.host_str().map(str::to_string));
        let Some(host) = host else {
            return Ok(());
        };
        if !self.limits.ssrf_guard || self.limits.is_allowed_host(&host) {
            return Ok(());
        }
        check
            .check(&host)
            .await
            .map_err(|e| A2AError::invalid_field(field, e.to_string()))
    }
}

impl std::fmt::Debug for RequestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHandler")
            .field("agent", &self.inner.card.name)
            .field("store", &self.inner.store)
            .finish()
    }
}

/// What [`RequestHandlerBuilder::store`] takes: a [`TaskStore`], or an
/// `Arc` of one.
pub trait IntoTaskStore {
    /// The store, shared.
    fn into_task_store(self) -> Arc<dyn TaskStore>;
}

impl<S: TaskStore> IntoTaskStore for S {
    fn into_task_store(self) -> Arc<dyn TaskStore> {
        Arc::new(self)
    }
}

// The same object, not a wrapper: a push store must be the task store
// itself (`build` compares the two).
impl<S: TaskStore> IntoTaskStore for Arc<S> {
    fn into_task_store(self) -> Arc<dyn TaskStore> {
        self
    }
}

impl IntoTaskStore for Arc<dyn TaskStore> {
    fn into_task_store(self) -> Arc<dyn TaskStore> {
        self
    }
}

/// Builds a [`RequestHandler`].
#[derive(Debug)]
pub struct RequestHandlerBuilder {
    executor: Arc<dyn AgentExecutor>,
    card: AgentCard,
    store: Option<Arc<dyn TaskStore>>,
    config: HandlerConfig,
    push: Option<PushSetup>,
    cluster: Option<Arc<dyn Cluster>>,
    extended_card: Option<AgentCard>,
    recover_abandoned: bool,
    namespace: Option<String>,
}

/// Separates an agent's namespace from the tenant a caller names, in the
/// tenant a namespaced handler stores (see
/// [`RequestHandlerBuilder::namespace`]). No caller may name a tenant
/// containing it.
pub const NAMESPACE_SEPARATOR: char = '\u{1f}';

impl std::fmt::Debug for dyn AgentExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentExecutor")
    }
}

impl RequestHandlerBuilder {
    /// Uses `store` (default: a fresh [`InMemoryStore`]): a store itself,
    /// or an `Arc` of one (e.g. `Arc<dyn TaskStore>`, shared with
    /// something else, such as a push worker).
    pub fn store(mut self, store: impl IntoTaskStore) -> Self {
        self.store = Some(store.into_task_store());
        self
    }

    /// Sets tunables.
    pub fn config(mut self, config: HandlerConfig) -> Self {
        self.config = config;
        self
    }

    /// Enables push notifications: configs live in `store`, which must be
    /// the same object as the task store (its commits queue the
    /// notifications), and are checked against `limits`. Deliveries are made
    /// by a worker over the same store (crate `switchboard-push`). Without
    /// this, every push operation answers PushNotificationNotSupported.
    /// Configs are checked by what their URL shows; `A2aServer::push`
    /// (crate `switchboard-server`) also resolves their hosts and refuses
    /// the server's own addresses ([`RequestHandler::enable_push`]).
    pub fn push(mut self, store: Arc<dyn PushStore>, limits: PushConfigLimits) -> Self {
        self.push = Some(PushSetup {
            store,
            limits,
            destinations: None,
        });
        self
    }

    /// Runs this handler as one of several replicas sharing its store
    /// (which must be the store `cluster` watches): tasks running elsewhere
    /// can be streamed, read and cancelled here, and orphans of dead replicas
    /// are failed. See [`crate::cluster`]. Must be called within a Tokio
    /// runtime's context, like `build`.
    pub fn cluster(mut self, cluster: Arc<dyn Cluster>) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// Offers `card` as the extended agent card: what GetExtendedAgentCard
    /// returns to authenticated callers (anonymous ones get an
    /// authentication error), e.g. the public card plus skills only
    /// customers may see. The public card then declares
    /// `capabilities.extendedAgentCard: true`. Members left empty
    /// (interfaces, security schemes and requirements) are filled from the
    /// public card as served (see [`RequestHandler::complete_extended_card`]).
    pub fn extended_card(mut self, card: AgentCard) -> Self {
        self.extended_card = Some(card);
        self
    }

    /// Keeps this agent's tasks apart from other agents' in a shared store:
    /// every tenant it stores and looks up is prefixed with `namespace` and
    /// [`NAMESPACE_SEPARATOR`], so a task id (or context) of another agent
    /// is not found here, and a follow-up can never run this agent on
    /// another agent's task. Callers still name plain tenants and see them
    /// in answers. Several agents on one store (each mounted with its own
    /// handler, `A2aServer::mount`) need distinct namespaces; the root
    /// agent needs none. Quotas per principal count per namespace.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(format!("{}{NAMESPACE_SEPARATOR}", namespace.into()));
        self
    }

    /// Whether the handler fails, at start-up, the runs a previous process
    /// left unfinished in its store (default `true`).
    ///
    /// A run lives in the process that executes it. When that process dies
    /// (killed, crashed, the machine lost), its tasks stay submitted or
    /// working in a durable store, and nothing would ever finish them: a
    /// caller polling sees "working" forever, and SubscribeToTask never
    /// ends. So the store reports the runs it found unfinished when it was
    /// opened ([`TaskStore::take_abandoned_runs`]: the SQLite store does),
    /// and the handler fails each with a status message saying its run was
    /// lost, which ends every stream on it — unless its agent takes the task
    /// back ([`AgentExecutor::resumes`]), when the run starts again in
    /// [`AgentExecutor::resume`]. This starts when the handler is
    /// built (within a Tokio runtime) and is complete before
    /// `A2aServer::serve` accepts its first connection; see
    /// [`RequestHandler::recover_abandoned`].
    ///
    /// Turn it off to leave those tasks as they are, e.g. to inspect a
    /// crashed server's tasks through a handler before deciding, or when an
    /// agent resumes its own runs from the store. PostgreSQL replicas do
    /// not depend on it: with a [`cluster`](Self::cluster), a dead
    /// replica's runs are failed by the survivors once its leases run out.
    pub fn recover_abandoned(mut self, on: bool) -> Self {
        self.recover_abandoned = on;
        self
    }

    /// Builds the handler.
    pub fn build(mut self) -> RequestHandler {
        if self.extended_card.is_some() {
            self.card.capabilities.extended_agent_card = Some(true);
        }
        let store = self.store.unwrap_or_else(|| Arc::new(InMemoryStore::new()));
        let card = &self.card;
        let input_modes = all_modes(
            &card.default_input_modes,
            card.skills.iter().map(|s| &s.input_modes),
        );
        let output_modes = all_modes(
            &card.default_output_modes,
            card.skills.iter().map(|s| &s.output_modes),
        );
        if let Some(p) = &self.push
            && !std::ptr::addr_eq(Arc::as_ptr(&p.store), Arc::as_ptr(&store))
        {
            // Only the task store's commits queue notifications; a separate
            // push store would accept configs and never deliver.
            tracing::warn!(
                "push notifications are enabled with a push store that is not the task store; nothing will be delivered"
            );
        }
        let registry = Arc::new(Registry::new(self.cluster.is_some()));
        let background = CancellationToken::new();
        if !self.config.retention.keeps_everything() {
            spawn_retention(
                store.clone(),
                self.config.retention,
                self.config.retention_interval,
                background.clone(),
            );
        }
        if let Some(cluster) = self.cluster.clone() {
            crate::cluster::spawn_duties(
                cluster,
                store.clone(),
                registry.clone(),
                self.config.orphan_sweep_interval,
                background.clone(),
            );
        }
        let env = Arc::new(RunEnv {
            store: store.clone(),
            registry: registry.clone(),
            progress_limits: ProgressLimits::from_card(&self.card).unwrap_or_default(),
            max_id_bytes: self.config.limits.max_id_bytes,
        });
        let handler = RequestHandler {
            inner: Arc::new(Inner {
                executor: self.executor,
                store,
                card: self.card,
                registry,
                env,
                input_modes,
                output_modes,
                config: self.config,
                shutdown: CancellationToken::new(),
                runs: TaskTracker::new(),
                push: self.push.map(std::sync::OnceLock::from).unwrap_or_default(),
                background,
                extended_card: self.extended_card,
                served_extended_card: std::sync::OnceLock::new(),
                active_runs: Arc::default(),
                cluster: self.cluster,
                subscribers: Arc::default(),
                recover_abandoned: self.recover_abandoned,
                recovered: tokio::sync::OnceCell::new(),
                namespace: self.namespace,
            }),
        };
        if handler.inner.recover_abandoned
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            // Without a runtime here, the first call of `recover_abandoned`
            // (which `A2aServer::serve` makes) does it.
            let recovering = handler.clone();
            rt.spawn(async move {
                recovering.recover_abandoned().await;
            });
        }
        handler
    }
}

/// Purges what `retention` no longer keeps, every `every`, until `stop`.
fn spawn_retention(
    store: Arc<dyn TaskStore>,
    retention: Retention,
    every: Duration,
    stop: CancellationToken,
) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        tracing::error!("retention was configured outside a Tokio runtime; nothing will be purged");
        return;
    };
    rt.spawn(async move {
        let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            match store.purge(&retention, chrono::Utc::now()).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(purged = n, "retention deleted finished tasks"),
                Err(e) => tracing::warn!(error = %e, "retention failed; trying again later"),
            }
        }
    });
}

fn internal(e: StoreError) -> A2AError {
    A2AError::from(e)
}

fn emit_to_a2a(e: EmitError) -> A2AError {
    match e {
        EmitError::TaskTerminal { task_id, state } => A2AError::TaskNotCancelable {
            task_id,
            state: state.as_str().to_string(),
        },
        EmitError::Store(s) => A2AError::from(s),
        other => A2AError::Internal(other.to_string()),
    }
}

impl RequestHandler {
    /// Starts building a handler for `executor`, described by `card`.
    pub fn builder(executor: impl AgentExecutor, card: AgentCard) -> RequestHandlerBuilder {
        RequestHandlerBuilder {
            executor: Arc::new(executor),
            card,
            store: None,
            config: HandlerConfig::default(),
            push: None,
            cluster: None,
            extended_card: None,
            recover_abandoned: true,
            namespace: None,
        }
    }

    /// `true` when push notifications are enabled (see
    /// [`RequestHandlerBuilder::push`]); the card's
    /// `capabilities.pushNotifications` should say so.
    pub fn push_enabled(&self) -> bool {
        self.inner.push.get().is_some()
    }

    /// Enables push notifications on a handler built without them, keeping
    /// configs in the task store (whose commits queue the notifications),
    /// checked against `limits` and, when given, `destinations` (the
    /// webhook host resolved, the server's own addresses refused; see
    /// [`DestinationCheck`]). What `A2aServer::push` (crate
    /// `switchboard-server`) uses, so that one call there wires everything;
    /// call it before serving. Returns the push store, for the delivery
    /// worker. When push is already enabled this keeps the existing setup
    /// and returns its store.
    pub fn enable_push(
        &self,
        limits: PushConfigLimits,
        destinations: Option<Arc<dyn DestinationCheck>>,
    ) -> Result<Arc<dyn PushStore>, PushUnavailable> {
        if let Some(p) = self.inner.push.get() {
            return Ok(p.store.clone());
        }
        let store = self
            .inner
            .store
            .clone()
            .push_store()
            .ok_or(PushUnavailable)?;
        let setup = self.inner.push.get_or_init(|| PushSetup {
            store,
            limits,
            destinations,
        });
        Ok(setup.store.clone())
    }

    /// The push store, when push notifications are enabled.
    pub fn push_store(&self) -> Option<&Arc<dyn PushStore>> {
        self.inner.push.get().map(|p| &p.store)
    }

    /// The agent card as configured (bindings add their interfaces).
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The store in use.
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.inner.store
    }

    /// Resolves which requested extensions apply (those the card declares)
    /// and refuses calls that do not activate a required extension.
    pub fn activate_extensions(&self, call: &mut CallContext) -> Result<(), A2AError> {
        let declared = &self.inner.card.capabilities.extensions;
        call.activated_extensions = call
            .requested_extensions
            .iter()
            .filter(|uri| declared.iter().any(|d| &d.uri == *uri))
            .cloned()
            .collect();
        if let Some(missing) = declared
            .iter()
            .find(|d| d.required && !call.requested_extensions.iter().any(|r| r == &d.uri))
        {
            return Err(A2AError::ExtensionSupportRequired(missing.uri.clone()));
        }
        Ok(())
    }

    /// Fails tasks whose runs were lost, e.g. the `(tenant, task id)`s a
    /// single-process store found submitted or working when the server
    /// started: their agent died with the previous process, and a task must
    /// not stay "working" forever. Each gets a `FAILED` status whose message
    /// is `why`; tasks that finished meanwhile are left alone. Returns how
    /// many were failed.
    pub async fn fail_abandoned(&self, tasks: &[(String, String)], why: &str) -> usize {
        let (mut failed, mut errors, mut last_error) = (0, 0_usize, None);
        for (tenant, task_id) in tasks {
            match crate::cluster::fail_abandoned(
                &self.inner.store,
                &self.inner.registry,
                tenant,
                task_id,
                why,
            )
            .await
            {
                Ok(()) => failed += 1,
                Err(e) => {
                    errors += 1;
                    last_error = Some(format!("task {task_id}: {e}"));
                }
            }
        }
        // One line for all of them (the caller logs the count failed).
        if let Some(last_error) = last_error {
            tracing::error!(errors, %last_error, "could not fail some abandoned tasks");
        }
        failed
    }

    /// Settles the runs a previous process left unfinished in the store
    /// (see [`RequestHandlerBuilder::recover_abandoned`]) and returns how
    /// many: each is resumed when the agent [`resumes`](AgentExecutor::resumes)
    /// it (a run started again, as a follow-up's would be), else failed.
    /// Only this handler's own tasks are taken: those of its namespace, or,
    /// without one, those of no namespace (agents sharing the store take
    /// theirs; [`RequestHandler::fail_unclaimed_abandoned`] fails what no
    /// agent took). Done once per handler: `build` starts it, and every call
    /// waits for that one pass to end, so a server that awaits this before
    /// accepting connections never shows an abandoned task as still
    /// working without a run. Returns 0 when recovery is turned off or the
    /// store found nothing.
    pub async fn recover_abandoned(&self) -> usize {
        *self
            .inner
            .recovered
            .get_or_init(|| async {
                if !self.inner.recover_abandoned {
                    return 0;
                }
                let namespace = self.inner.namespace.as_deref();
                let abandoned = self
                    .inner
                    .store
                    .take_abandoned_runs_where(&|tenant| match namespace {
                        Some(prefix) => tenant.starts_with(prefix),
                        None => !tenant.contains(NAMESPACE_SEPARATOR),
                    });
                if abandoned.is_empty() {
                    return 0;
                }
                let (mut resumed, mut to_fail) = (0, Vec::new());
                for (tenant, task_id) in abandoned {
                    match self.resume_abandoned(&tenant, &task_id).await {
                        Ok(true) => resumed += 1,
                        Ok(false) => to_fail.push((tenant, task_id)),
                        Err(e) => {
                            tracing::warn!(%task_id, error = %e, "could not resume an abandoned task; failing it");
                            to_fail.push((tenant, task_id));
                        }
                    }
                }
                let failed = self.fail_abandoned(&to_fail, ABANDONED_RUN).await;
                if failed > 0 {
                    tracing::warn!(
                        failed,
                        "failed tasks the previous server process left running"
                    );
                }
                if resumed > 0 {
                    tracing::info!(
                        resumed,
                        "resumed tasks the previous server process left running"
                    );
                }
                failed + resumed
            })
            .await
    }

    /// Fails the abandoned runs no handler took (see
    /// [`RequestHandler::recover_abandoned`]): those of a namespace no agent
    /// serves any more. A server calls this on its root handler once every
    /// handler sharing the store has recovered its own. Nothing when this
    /// handler's recovery is off.
    pub async fn fail_unclaimed_abandoned(&self) -> usize {
        if !self.inner.recover_abandoned {
            return 0;
        }
        let left = self.inner.store.take_abandoned_runs();
        if left.is_empty() {
            return 0;
        }
        let failed = self.fail_abandoned(&left, ABANDONED_RUN).await;
        tracing::warn!(
            failed,
            "failed tasks the previous server process left running for agents no longer served"
        );
        failed
    }

    /// Starts the agent's [`resume`](AgentExecutor::resume) of an abandoned
    /// task if it [`resumes`](AgentExecutor::resumes) it: `Ok(true)`. `Ok(false)`:
    /// the agent does not, or the task is gone, finished or running
    /// meanwhile (nothing to resume; failing it then changes nothing).
    async fn resume_abandoned(&self, tenant: &str, task_id: &str) -> Result<bool, StoreError> {
        let key = (tenant.to_string(), task_id.to_string());
        let runtime = match self.inner.registry.get(&key) {
            Some(rt) => rt,
            None => match self.inner.store.load(tenant, task_id).await? {
                Some(record) => TaskRuntime::loaded(
                    record,
                    self.inner.store.clone(),
                    self.inner.registry.clone(),
                ),
                None => return Ok(false),
            },
        };
        let task = runtime.snapshot().await;
        if runtime.is_running()
            || task.status.state.is_terminal()
            || !self.inner.executor.resumes(&task)
        {
            return Ok(false);
        }
        // What the lost run was handling: the last message in the history.
        let message = task
            .history
            .as_ref()
            .and_then(|h| h.last())
            .cloned()
            .unwrap_or_else(|| {
                let mut m = Message::user_text("");
                m.task_id = Some(task.id.clone());
                m.context_id = Some(task.context_id.clone());
                m
            });
        let mut call = CallContext::anonymous().with_tenant(tenant);
        call.principal.clone_from(&runtime.owner);
        // Admitted when it started; counted again, never refused.
        let Some(slot) = self
            .inner
            .active_runs
            .try_acquire((&call.tenant, &call.principal, call.client), usize::MAX)
        else {
            return Ok(false);
        };
        let cancel = self.inner.shutdown.child_token();
        runtime.begin_run(cancel.clone());
        let events = TaskEvents::for_task(
            runtime.clone(),
            task.context_id.clone(),
            self.inner.env.clone(),
            cancel,
        );
        let ctx = RequestContext {
            message,
            task_id: task_id.to_string(),
            context_id: task.context_id.clone(),
            task: Some(task),
            configuration: None,
            metadata: None,
            call,
            streaming: false,
        };
        // Dropped undriven: it goes on on its own tokio task.
        drop(self.run_as(ctx, events, slot, RunKind::Resume));
        Ok(true)
    }

    /// Stops every run (their `TaskEvents` report cancellation) and waits up
    /// to `grace` for them to settle.
    pub async fn shutdown(&self, grace: Duration) {
        self.inner.shutdown.cancel();
        self.inner.runs.close();
        let _ = tokio::time::timeout(grace, self.inner.runs.wait()).await;
    }

    // ---- SendMessage / SendStreamingMessage -------------------------------

    /// SendMessage: returns the task (after it finishes or is interrupted,
    /// unless `returnImmediately`) or the agent's direct message.
    pub async fn send_message(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::SendMessage);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let blocking = req.is_blocking();
        let history_length = validate_history_length(req.history_length())?;
        let (outcome, mut run) = self.start(call, req, false).await?;
        match outcome {
            Outcome::Message(mut m) => {
                self.filter(call).event_message(&mut m);
                Ok(SendMessageResponse::Message(m))
            }
            Outcome::Error(e) => Err(e),
            Outcome::Task {
                runtime,
                mut snapshot,
                rx,
                ..
            } => {
                if blocking && !settled(snapshot.status.state) {
                    // Keep driving the agent here while we wait: a quick
                    // agent finishes without ever being spawned. If this
                    // call is dropped, `run` hands the agent to a task.
                    tokio::select! {
                        _ = wait_settled(&runtime, rx) => {}
                        _ = run.drive() => {}
                    }
                    // Hand the rest of the run (if any) to its own task
                    // before taking the task's lock: a run frozen here may
                    // already own the lock's next turn (the lock is fair),
                    // and waiting for it would wait forever.
                    drop(run);
                    snapshot = runtime.snapshot().await;
                }
                snapshot.limit_history(history_length);
                self.filter(call).task(&mut snapshot);
                Ok(SendMessageResponse::Task(snapshot))
            }
        }
    }

    /// SendStreamingMessage: a stream that starts with the task (or is one
    /// message) and ends when the task finishes or needs input.
    pub async fn send_streaming_message(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
    ) -> Result<EventStream, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::SendStreamingMessage);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        self.require_streaming()?;
        let history_length = validate_history_length(req.history_length())?;
        // Dropping `run` right away moves the agent onto its own task: the
        // stream is consumed after this call returns.
        let (outcome, _run) = self.start(call, req, true).await?;
        match outcome {
            Outcome::Message(m) => {
                let item = LoggedEvent {
                    seq: 0,
                    event: StreamResponse::Message(m),
                };
                Ok(self.filtered(
                    call,
                    Box::pin(futures::stream::once(async move { Ok(item) })),
                ))
            }
            Outcome::Error(e) => Err(e),
            Outcome::Task {
                runtime,
                mut snapshot,
                seq,
                rx,
            } => {
                snapshot.limit_history(history_length);
                Ok(self.filtered(call, runtime.stream(Some(snapshot), seq, seq, rx)))
            }
        }
    }

    /// `call` in this handler's namespace (see
    /// [`RequestHandlerBuilder::namespace`]): its tenant prefixed. Each
    /// operation scopes the caller's context once, at its top (no operation
    /// passes a scoped one to another). A tenant naming the separator is
    /// refused, so no caller reaches into a namespace.
    fn scoped<'c>(&self, call: &'c CallContext) -> Result<Cow<'c, CallContext>, A2AError> {
        if call.tenant.contains(NAMESPACE_SEPARATOR) {
            return Err(A2AError::invalid_field(
                "tenant",
                "contains a reserved character (U+001F, which separates agent namespaces)",
            ));
        }
        match &self.inner.namespace {
            None => Ok(Cow::Borrowed(call)),
            Some(prefix) => {
                let mut scoped = call.clone();
                scoped.tenant = format!("{prefix}{}", call.tenant);
                Ok(Cow::Owned(scoped))
            }
        }
    }

    /// A stored push config as callers see it: the tenant they named.
    fn wire(&self, mut config: PushConfig) -> switchboard_protocol::TaskPushNotificationConfig {
        if let Some(prefix) = &self.inner.namespace
            && let Some(tenant) = config.tenant.strip_prefix(prefix.as_str())
        {
            config.tenant = tenant.to_string();
        }
        config.to_wire()
    }

    /// What this caller may not see of extension data.
    fn filter(&self, call: &CallContext) -> ExtensionFilter {
        ExtensionFilter::for_call(&self.inner.card, call)
    }

    /// Applies the caller's extension filter to every item of a stream.
    fn filtered(&self, call: &CallContext, stream: EventStream) -> EventStream {
        use futures::StreamExt as _;
        let filter = self.filter(call);
        if filter.is_noop() {
            return stream;
        }
        Box::pin(stream.map(move |item| {
            item.map(|mut ev| {
                filter.event(&mut ev.event);
                ev
            })
        }))
    }

    fn require_streaming(&self) -> Result<(), A2AError> {
        if self.inner.card.supports_streaming() {
            Ok(())
        } else {
            Err(A2AError::UnsupportedOperation(
                "streaming is not supported by this agent".into(),
            ))
        }
    }

    fn check_message(&self, msg: &Message) -> Result<(), A2AError> {
        self.inner.config.limits.check_message(msg)?;
        if msg.message_id.trim().is_empty() {
            return Err(A2AError::invalid_field(
                "message.messageId",
                "is required and must not be empty",
            ));
        }
        if msg.parts.is_empty() {
            return Err(A2AError::invalid_field(
                "message.parts",
                "must contain at least one part",
            ));
        }
        if msg.role != Role::User {
            return Err(A2AError::invalid_field(
                "message.role",
                "must be ROLE_USER for messages sent to an agent",
            ));
        }
        let accepted = &self.inner.input_modes;
        for (i, part) in msg.parts.iter().enumerate() {
            let media_type = match (&part.media_type, &part.content) {
                (Some(mt), _) => mt.as_str(),
                // Text without a declared type is text/plain; other parts
                // without one are not checked.
                (None, PartContent::Text(_)) => "text/plain",
                (None, _) => continue,
            };
            if !accepted.is_empty() && !accepted.iter().any(|p| media_type_matches(p, media_type)) {
                return Err(A2AError::ContentTypeNotSupported(format!(
                    "message.parts[{i}] has media type {media_type}; this agent accepts {}",
                    accepted.join(", ")
                )));
            }
        }
        Ok(())
    }

    fn check_output_modes(&self, req: &SendMessageRequest) -> Result<(), A2AError> {
        let Some(cfg) = &req.configuration else {
            return Ok(());
        };
        if cfg.accepted_output_modes.is_empty() {
            return Ok(());
        }
        let produced = &self.inner.output_modes;
        let overlap = produced.is_empty()
            || cfg.accepted_output_modes.iter().any(|a| {
                produced
                    .iter()
                    .any(|p| media_type_matches(a, p) || media_type_matches(p, a))
            });
        if overlap {
            Ok(())
        } else {
            Err(A2AError::ContentTypeNotSupported(format!(
                "acceptedOutputModes {} share nothing with what this agent produces ({})",
                cfg.accepted_output_modes.join(", "),
                produced.join(", ")
            )))
        }
    }

    /// Validates, finds or prepares the task, starts the executor and waits
    /// for the first emission's verdict.
    async fn start(
        &self,
        call: &CallContext,
        req: SendMessageRequest,
        streaming: bool,
    ) -> Result<(Outcome, Run), A2AError> {
        self.check_message(&req.message)?;
        self.inner
            .config
            .limits
            .check_metadata("metadata", req.metadata.as_ref())?;
        self.check_output_modes(&req)?;
        let slot = self.run_slot(call).await?;
        let inline_push = match req
            .configuration
            .as_ref()
            .and_then(|c| c.task_push_notification_config.clone())
        {
            None => None,
            Some(cfg) => {
                let push = self.push_setup()?;
                validate_config(
                    &cfg,
                    &push.limits,
                    "configuration.taskPushNotificationConfig",
                )?;
                push.check_destination(&cfg, "configuration.taskPushNotificationConfig.url")
                    .await?;
                if let Some(id) = &cfg.id {
                    self.inner
                        .config
                        .limits
                        .check_id("configuration.taskPushNotificationConfig.id", id)?;
                }
                Some(cfg)
            }
        };
        let SendMessageRequest {
            mut message,
            configuration,
            metadata,
            ..
        } = req;
        let cancel = self.inner.shutdown.child_token();

        if let Some(task_id) = message.task_id.clone() {
            // A follow-up on an existing task.
            let runtime = self.runtime(call, &task_id).await?;
            let current = runtime.snapshot().await;
            if let Some(ctx) = &message.context_id
                && ctx != &current.context_id
            {
                return Err(A2AError::invalid_field(
                    "message.contextId",
                    format!(
                        "{ctx} does not match the context {} of task {task_id}",
                        current.context_id
                    ),
                ));
            }
            if current.status.state.is_terminal() {
                return Err(terminal_error(&current));
            }
            if runtime.is_running() {
                if !current.status.state.is_interrupted() {
                    return Err(A2AError::UnsupportedOperation(format!(
                        "task {task_id} is {} and still being worked on; it accepts new messages when it is input-required or auth-required",
                        current.status.state.label()
                    )));
                }
                // The run that asked for input is returning; let it finish.
                if tokio::time::timeout(self.inner.config.previous_run_grace, runtime.wait_idle())
                    .await
                    .is_err()
                {
                    return Err(A2AError::UnsupportedOperation(format!(
                        "task {task_id} is still busy with its previous message"
                    )));
                }
            }
            if let Some(cfg) = inline_push {
                // Registered before the task resumes, so the resume event is
                // the first one delivered to it.
                self.store_push_config(call, &task_id, cfg).await?;
            }
            message.context_id = Some(current.context_id.clone());
            runtime.begin_run(cancel.clone());
            let before = current;
            if let Err(e) = runtime.accept_follow_up(message.clone()).await {
                runtime.end_run();
                return Err(e);
            }
            let (snapshot, seq, rx) = runtime.subscribe().await;
            let events = TaskEvents::for_task(
                runtime.clone(),
                before.context_id.clone(),
                self.inner.env.clone(),
                cancel,
            );
            let ctx = RequestContext {
                message,
                task: Some(before.clone()),
                task_id,
                context_id: before.context_id,
                configuration,
                metadata,
                call: call.clone(),
                streaming,
            };
            let run = self.run(ctx, events, slot);
            return Ok((
                Outcome::Task {
                    runtime,
                    snapshot,
                    seq,
                    rx,
                },
                run,
            ));
        }

        // A new task (or a direct reply): ids are ours to assign.
        let context_id = message
            .context_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let task_id = uuid::Uuid::now_v7().to_string();
        message.context_id = Some(context_id.clone());
        message.task_id = Some(task_id.clone());
        // An inline config is stored before the task exists (its id is ours
        // and fresh), so the commit that creates the task already queues the
        // first notification. If no task comes of it, it is removed below.
        let inline_config = match inline_push {
            Some(cfg) => {
                let stored = self.store_push_config(call, &task_id, cfg).await?;
                Some((task_id.clone(), stored.id))
            }
            None => None,
        };
        let (tx, rx) = oneshot::channel();
        let events = TaskEvents::pending(
            task_id.clone(),
            context_id.clone(),
            call.tenant.clone(),
            call.principal.clone(),
            self.inner.env.clone(),
            cancel,
            message.clone(),
            tx,
        );
        let ctx = RequestContext {
            message,
            task: None,
            task_id,
            context_id,
            configuration,
            metadata,
            call: call.clone(),
            streaming,
        };
        let mut run = self.run(ctx, events, slot);
        let mut rx = rx;
        // The first emission decides the outcome; until then the agent runs
        // right here, with no task spawned for it.
        let outcome = tokio::select! {
            biased;
            o = &mut rx => o,
            _ = run.drive() => rx.await,
        };
        let outcome = outcome
            .map_err(|_| A2AError::Internal("the agent run ended without an outcome".into()));
        if let (Some((task_id, id)), Ok(Outcome::Message(_) | Outcome::Error(_)) | Err(_)) =
            (&inline_config, &outcome)
            && let Some(push) = self.inner.push.get()
        {
            // A direct reply or a refusal: no task, so no config either.
            if let Err(e) = push.store.delete_config(&call.tenant, task_id, id).await {
                tracing::warn!(error = %e, task_id = %task_id, "removing an unused inline push config failed");
            }
        }
        Ok((outcome?, run))
    }

    /// A place in the concurrent-task quota of `call`'s caller: counted in
    /// this process and, with a cluster, across every replica.
    async fn run_slot(&self, call: &CallContext) -> Result<Slot, A2AError> {
        let quota = self.inner.config.quotas.max_active_tasks_per_principal;
        let full = || {
            A2AError::ResourceExhausted(format!(
                "concurrent tasks: {quota} of this caller's tasks are being worked on; wait for one to finish or cancel one"
            ))
        };
        let slot = self
            .inner
            .active_runs
            .try_acquire((&call.tenant, &call.principal, call.client), quota)
            .ok_or_else(full)?;
        let shared = self.inner.config.quotas.share_active_tasks && quota != usize::MAX;
        let Some(cluster) = self.inner.cluster.as_ref().filter(|_| shared) else {
            return Ok(slot);
        };
        let key = crate::cluster::run_quota_key(&call.tenant, &call.principal, call.client);
        match cluster.acquire_run(&key, quota).await {
            Ok(true) => Ok(slot.with_shared(crate::cluster::SharedPlace {
                cluster: cluster.clone(),
                key,
            })),
            Ok(false) => Err(full()),
            Err(e) => {
                // The store is failing, and so will the task's first commit;
                // this replica's own count still bounds the caller.
                tracing::warn!(error = %e, "the shared concurrent-task count could not be reached; counting on this replica only");
                Ok(slot)
            }
        }
    }

    /// One execution of the agent, not yet started; see [`Run`]. It holds
    /// its caller's `slot` of the concurrent-task quota until it ends.
    fn run(&self, ctx: RequestContext, events: TaskEvents, slot: Slot) -> Run {
        self.run_as(ctx, events, slot, RunKind::Execute)
    }

    /// [`RequestHandler::run`] of `kind`.
    fn run_as(&self, ctx: RequestContext, events: TaskEvents, slot: Slot, kind: RunKind) -> Run {
        let span = switchboard_telemetry::trace::agent_span(&ctx.task_id, &ctx.context_id);
        // Built in its box: the run's future holds the agent's state, and
        // `Box::pin` would make it on the stack and copy it over.
        let run: RunFuture = crate::pin_in_place!(run_agent(
            self.inner.executor.clone(),
            ctx,
            events,
            slot,
            kind
        ));
        // The run is the request span's child, wherever it goes on running;
        // without a tracing pipeline the span is none and needs no wrapper.
        let run = if span.is_none() {
            run
        } else {
            Box::pin(tracing::Instrument::instrument(run, span))
        };
        Run::new(&self.inner.runs, run)
    }

    /// With other replicas writing, makes sure a runtime that is not running
    /// its task here has every commit another replica made.
    async fn catch_up_if_shared(&self, runtime: &TaskRuntime) -> Result<(), A2AError> {
        if self.inner.registry.shared && !runtime.is_running() {
            runtime.catch_up(None).await.map_err(internal)?;
        }
        Ok(())
    }

    /// Finds a task's live runtime or loads it, scoped to the caller.
    async fn runtime(
        &self,
        call: &CallContext,
        task_id: &str,
    ) -> Result<Arc<TaskRuntime>, A2AError> {
        self.runtime_scoped(call, task_id, false).await
    }

    /// [`RequestHandler::runtime`], where `manage` lets an administrator
    /// reach another principal's task (GetTask, CancelTask).
    async fn runtime_scoped(
        &self,
        call: &CallContext,
        task_id: &str,
        manage: bool,
    ) -> Result<Arc<TaskRuntime>, A2AError> {
        let visible = |owner: &str| {
            if manage {
                call.may_manage(owner)
            } else {
                owner == call.principal
            }
        };
        let key = (call.tenant.clone(), task_id.to_string());
        if let Some(rt) = self.inner.registry.get(&key) {
            return if visible(&rt.owner) {
                Ok(rt)
            } else {
                Err(A2AError::TaskNotFound(task_id.into()))
            };
        }
        let record = self
            .inner
            .store
            .load(&call.tenant, task_id)
            .await
            .map_err(internal)?;
        match record {
            Some(r) if visible(&r.owner) => Ok(TaskRuntime::loaded(
                r,
                self.inner.store.clone(),
                self.inner.registry.clone(),
            )),
            _ => Err(A2AError::TaskNotFound(task_id.into())),
        }
    }

    // ---- GetTask / ListTasks ---------------------------------------------

    /// GetTask.
    pub async fn get_task(
        &self,
        call: &CallContext,
        req: GetTaskRequest,
    ) -> Result<Task, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::GetTask);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let limits = &self.inner.config.limits;
        let history_length = limits.history_length(validate_history_length(req.history_length)?);
        if req.id.is_empty() {
            return Err(A2AError::invalid_field("id", "is required"));
        }
        limits.check_id("id", &req.id)?;
        let mut task = match self
            .inner
            .registry
            .get(&(call.tenant.clone(), req.id.clone()))
        {
            // With other replicas writing, only a task running here is sure
            // to be current in memory; otherwise the store is the truth.
            Some(rt)
                if call.may_manage(&rt.owner)
                    && (!self.inner.registry.shared || rt.is_running()) =>
            {
                rt.snapshot().await
            }
            Some(rt) if !call.may_manage(&rt.owner) => {
                return Err(A2AError::TaskNotFound(req.id));
            }
            _ => match self
                .inner
                .store
                .load(&call.tenant, &req.id)
                .await
                .map_err(internal)?
            {
                Some(r) if call.may_manage(&r.owner) => r.task,
                _ => return Err(A2AError::TaskNotFound(req.id)),
            },
        };
        task.limit_history(history_length);
        self.filter(call).task(&mut task);
        Quotas::fit_task(&mut task, self.inner.config.quotas.max_response_bytes)?;
        Ok(task)
    }

    /// ListTasks: the caller's tasks (an administrator's: every task of
    /// its tenant), most recently updated first.
    pub async fn list_tasks(
        &self,
        call: &CallContext,
        req: ListTasksRequest,
    ) -> Result<ListTasksResponse, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::ListTasks);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let limits = &self.inner.config.limits;
        let history_length = limits.history_length(validate_history_length(req.history_length)?);
        if let Some(id) = &req.context_id {
            limits.check_id("contextId", id)?;
        }
        let page_size = check_page_size(req.page_size.unwrap_or(DEFAULT_PAGE_SIZE))?;
        let after = decode_page_token(req.page_token.as_deref(), |s| {
            let (micros, id) = s.split_once(':')?;
            Some(ListCursor {
                status_micros: micros.parse().ok()?,
                task_id: id.to_string(),
            })
        })?;
        let query = TaskQuery {
            tenant: call.tenant.clone(),
            owner: call.principal.clone(),
            all_owners: call.admin,
            context_id: req.context_id.filter(|c| !c.is_empty()),
            // UNSPECIFIED (and the JS SDK's `UNRECOGNIZED`) means "no filter".
            state: req.status.filter(|s| *s != TaskState::Unspecified),
            status_after: req.status_timestamp_after,
            limit: page_size as usize,
            after,
        };
        let page = self.inner.store.list(&query).await.map_err(internal)?;
        let include_artifacts = req.include_artifacts.unwrap_or(false);
        let filter = self.filter(call);
        // The response budget: the page ends early at the first task that
        // does not fit, and its token continues from there.
        let budget = self.inner.config.quotas.max_response_bytes;
        let (mut used, mut next, mut tasks) = (0_usize, page.next, Vec::new());
        let mut last_cursor = None;
        for r in page.records {
            let cursor = ListCursor {
                status_micros: crate::store::to_micros(r.status_time()),
                task_id: r.task.id.clone(),
            };
            let mut t = r.task;
            if !include_artifacts {
                t.artifacts = None;
            }
            t.limit_history(history_length);
            filter.task(&mut t);
            if tasks.is_empty() {
                used = Quotas::fit_task(&mut t, budget)?;
            } else {
                let size = crate::limits::json_len(&t) + 1;
                if used.saturating_add(size) > budget {
                    next = last_cursor;
                    break;
                }
                used += size;
            }
            tasks.push(t);
            last_cursor = Some(cursor);
        }
        Ok(ListTasksResponse {
            tasks,
            next_page_token: next.map(|c| encode_cursor(&c)).unwrap_or_default(),
            page_size,
            total_size: i32::try_from(page.total).unwrap_or(i32::MAX),
        })
    }

    // ---- CancelTask / SubscribeToTask ----------------------------------

    /// CancelTask: moves the task to `CANCELED` and signals its run.
    pub async fn cancel_task(
        &self,
        call: &CallContext,
        req: CancelTaskRequest,
    ) -> Result<Task, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::CancelTask);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        if req.id.is_empty() {
            return Err(A2AError::invalid_field("id", "is required"));
        }
        let runtime = self.runtime_scoped(call, &req.id, true).await?;
        self.catch_up_if_shared(&runtime).await?;
        let current = runtime.snapshot().await;
        if current.status.state.is_terminal() {
            return Err(A2AError::TaskNotCancelable {
                task_id: current.id,
                state: current.status.state.as_str().to_string(),
            });
        }
        let status = TaskStatus::new(TaskState::Canceled)
            .with_message(Message::agent_text("canceled at the client's request"));
        runtime
            .apply(Change::status(status, req.metadata))
            .await
            .map_err(emit_to_a2a)?;
        runtime.cancel_run();
        let mut task = runtime.snapshot().await;
        self.filter(call).task(&mut task);
        Ok(task)
    }

    /// SubscribeToTask: the task now, then every update until it finishes;
    /// or, for a caller resuming a stream ([`CallContext::resume_after`]),
    /// what came after the last event it saw
    /// ([`RequestHandler::resubscribe_to_task`]).
    pub async fn subscribe_to_task(
        &self,
        call: &CallContext,
        req: SubscribeToTaskRequest,
    ) -> Result<EventStream, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::SubscribeToTask);
        if let Some(after) = call.resume_after {
            return self.resubscribe_to_task(call, req, after).await;
        }
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let OpenSubscription {
            runtime,
            slot,
            snapshot,
            seq,
            rx,
        } = self.open_subscription(call, &req.id).await?;
        if snapshot.status.state.is_terminal() {
            return Err(A2AError::UnsupportedOperation(format!(
                "task {} is {}; subscriptions are only possible to unfinished tasks (use GetTask)",
                snapshot.id,
                snapshot.status.state.label()
            )));
        }
        Ok(holding(
            slot,
            self.filtered(call, runtime.stream(Some(snapshot), seq, seq, rx)),
        ))
    }

    /// What both kinds of subscription start from: the caller's task, a
    /// place among its subscribers, and its state at the moment the bus
    /// receiver was taken (so nothing after `seq` is missed).
    async fn open_subscription(
        &self,
        call: &CallContext,
        task_id: &str,
    ) -> Result<OpenSubscription, A2AError> {
        self.require_streaming()?;
        if task_id.is_empty() {
            return Err(A2AError::invalid_field("id", "is required"));
        }
        let runtime = self.runtime(call, task_id).await?;
        let slot = self.subscriber_slot(call, task_id)?;
        self.catch_up_if_shared(&runtime).await?;
        let (snapshot, seq, rx) = runtime.subscribe().await;
        Ok(OpenSubscription {
            runtime,
            slot,
            snapshot,
            seq,
            rx,
        })
    }

    /// A place among the task's subscribers, or ResourceExhausted.
    fn subscriber_slot(&self, call: &CallContext, task_id: &str) -> Result<Slot, A2AError> {
        let max = self.inner.config.quotas.max_subscribers_per_task;
        self.inner
            .subscribers
            .try_acquire((&call.tenant, task_id), max)
            .ok_or_else(|| {
                A2AError::ResourceExhausted(format!(
                    "subscribers: task {task_id} already has {max} open subscriptions, the most one task may have"
                ))
            })
    }

    /// SubscribeToTask resumed after event `after` (the SSE `Last-Event-ID`
    /// a client saw last): replays the task's log past that point, then
    /// follows it live, with no gap and no duplicate. Unlike a fresh
    /// subscription it does not start with the task snapshot, and it works on
    /// a finished task too (it replays what is left and ends).
    pub async fn resubscribe_to_task(
        &self,
        call: &CallContext,
        req: SubscribeToTaskRequest,
        after: u64,
    ) -> Result<EventStream, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::SubscribeToTask);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let OpenSubscription {
            runtime,
            slot,
            snapshot,
            seq,
            rx,
        } = self.open_subscription(call, &req.id).await?;
        if after > seq {
            return Err(A2AError::invalid_field(
                "Last-Event-ID",
                format!(
                    "event {after} does not exist yet; task {} is at event {seq}",
                    req.id
                ),
            ));
        }
        if after == seq && snapshot.status.state.is_terminal() {
            // The caller saw the end already: nothing left to replay.
            return Ok(Box::pin(futures::stream::empty()));
        }
        Ok(holding(
            slot,
            self.filtered(call, runtime.stream(None, after, seq, rx)),
        ))
    }

    // ---- Push notification configs and the extended card -----------------

    fn push_setup(&self) -> Result<&PushSetup, A2AError> {
        self.inner
            .push
            .get()
            .ok_or(A2AError::PushNotificationNotSupported)
    }

    /// Succeeds when the caller may see the task (same rule as GetTask:
    /// another tenant's or principal's task does not exist for them).
    async fn check_task_access(&self, call: &CallContext, task_id: &str) -> Result<(), A2AError> {
        if task_id.is_empty() {
            return Err(A2AError::invalid_field("taskId", "is required"));
        }
        if let Some(rt) = self
            .inner
            .registry
            .get(&(call.tenant.clone(), task_id.to_string()))
        {
            return if rt.owner == call.principal {
                Ok(())
            } else {
                Err(A2AError::TaskNotFound(task_id.into()))
            };
        }
        match self
            .inner
            .store
            .load(&call.tenant, task_id)
            .await
            .map_err(internal)?
        {
            Some(r) if r.owner == call.principal => Ok(()),
            _ => Err(A2AError::TaskNotFound(task_id.into())),
        }
    }

    /// Stores an already validated config for `task_id`, assigning an id
    /// when the client gave none, within the per-task limit.
    async fn store_push_config(
        &self,
        call: &CallContext,
        task_id: &str,
        cfg: TaskPushNotificationConfig,
    ) -> Result<PushConfig, A2AError> {
        let push = self.push_setup()?;
        let id = cfg
            .id
            .filter(|id| !id.trim().is_empty())
            .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let stored = PushConfig {
            tenant: call.tenant.clone(),
            task_id: task_id.to_string(),
            id,
            url: cfg.url.trim().to_string(),
            token: cfg.token,
            authentication: cfg
                .authentication
                .map(|a| switchboard_protocol::AuthenticationInfo {
                    scheme: a.scheme.trim().to_string(),
                    credentials: a.credentials,
                }),
            // The binding that took the call decided what its webhooks get.
            payload_kind: call.push_payload,
            // The webhook sees extension data only if its creator activated it.
            hidden_metadata_keys: self.filter(call).hidden_keys().to_vec(),
        };
        let max = push.limits.max_configs_per_task;
        match push
            .store
            .put_config(&stored, max)
            .await
            .map_err(internal)?
        {
            PutConfig::LimitReached => Err(A2AError::invalid_params(format!(
                "task {task_id} already has {max} push notification configs, the most one task may have; delete one first, or give an existing config's id to replace it"
            ))),
            PutConfig::Created | PutConfig::Replaced => Ok(stored),
        }
    }

    /// CreateTaskPushNotificationConfig: registers a webhook for a task
    /// (replacing the config with the same id, if any). The id is assigned
    /// by the server when missing.
    pub async fn create_push_config(
        &self,
        call: &CallContext,
        req: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::CreateTaskPushNotificationConfig);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let push = self.push_setup()?;
        let task_id = req.task_id.clone().unwrap_or_default();
        if task_id.is_empty() {
            return Err(A2AError::invalid_field("taskId", "is required"));
        }
        validate_config(&req, &push.limits, "")?;
        push.check_destination(&req, "url").await?;
        if let Some(id) = &req.id {
            self.inner.config.limits.check_id("id", id)?;
        }
        self.check_task_access(call, &task_id).await?;
        Ok(self.wire(self.store_push_config(call, &task_id, req).await?))
    }

    /// GetTaskPushNotificationConfig: a missing config is TaskNotFound, as
    /// the spec says.
    pub async fn get_push_config(
        &self,
        call: &CallContext,
        req: TaskPushNotificationConfigRef,
    ) -> Result<TaskPushNotificationConfig, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::GetTaskPushNotificationConfig);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let push = self.push_setup()?;
        if req.id.is_empty() {
            return Err(A2AError::invalid_field("id", "is required"));
        }
        self.check_task_access(call, &req.task_id).await?;
        match push
            .store
            .get_config(&call.tenant, &req.task_id, &req.id)
            .await
            .map_err(internal)?
        {
            Some(c) => Ok(self.wire(c)),
            // The error's string is the task id: it becomes
            // `ErrorInfo.metadata.taskId` on every binding.
            None => Err(A2AError::TaskNotFound(req.task_id)),
        }
    }

    /// ListTaskPushNotificationConfigs: a task's configs in creation order,
    /// paged (`pageSize` 1..=100, default 100).
    pub async fn list_push_configs(
        &self,
        call: &CallContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::ListTaskPushNotificationConfigs);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let push = self.push_setup()?;
        let page_size = match req.page_size {
            // proto3: 0 is "not set".
            None | Some(0) => MAX_PAGE_SIZE,
            Some(n) => check_page_size(n)?,
        };
        let after = decode_page_token(req.page_token.as_deref(), |s| {
            s.strip_prefix("c:")?.parse().ok()
        })?;
        self.check_task_access(call, &req.task_id).await?;
        let page = push
            .store
            .list_configs(ConfigQuery {
                tenant: &call.tenant,
                task_id: &req.task_id,
                after,
                limit: page_size as usize,
            })
            .await
            .map_err(internal)?;
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: page.configs.into_iter().map(|c| self.wire(c)).collect(),
            next_page_token: page
                .next
                .map(|n| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("c:{n}")))
                .unwrap_or_default(),
        })
    }

    /// DeleteTaskPushNotificationConfig: idempotent; nothing is sent to the
    /// webhook afterwards.
    pub async fn delete_push_config(
        &self,
        call: &CallContext,
        req: TaskPushNotificationConfigRef,
    ) -> Result<(), A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::DeleteTaskPushNotificationConfig);
        let scoped = self.scoped(call)?;
        let call = &*scoped;
        let push = self.push_setup()?;
        if req.id.is_empty() {
            return Err(A2AError::invalid_field("id", "is required"));
        }
        self.check_task_access(call, &req.task_id).await?;
        push.store
            .delete_config(&call.tenant, &req.task_id, &req.id)
            .await
            .map_err(internal)?;
        Ok(())
    }

    /// Completes the configured extended card from the public card as a
    /// server serves it (`served`, with its interfaces and security): the
    /// extended card's empty interfaces, security schemes and requirements
    /// are taken from it, and its capabilities say what the server does.
    /// Servers call this when they build their routes; the first call
    /// decides. Without it the extended card is returned as configured.
    pub fn complete_extended_card(&self, served: &AgentCard) {
        let Some(configured) = &self.inner.extended_card else {
            return;
        };
        let mut card = configured.clone();
        if card.supported_interfaces.is_empty() {
            card.supported_interfaces
                .clone_from(&served.supported_interfaces);
        }
        if card.security_schemes.is_empty() {
            card.security_schemes.clone_from(&served.security_schemes);
        }
        if card.security_requirements.is_empty() {
            card.security_requirements
                .clone_from(&served.security_requirements);
        }
        card.capabilities.push_notifications = served.capabilities.push_notifications;
        card.capabilities.extended_agent_card = Some(true);
        let _ = self.inner.served_extended_card.set(card);
    }

    /// GetExtendedAgentCard: the extended card
    /// ([`RequestHandlerBuilder::extended_card`]) for an authenticated
    /// caller; Unauthenticated for the anonymous principal (the spec asks
    /// for authentication with a scheme of the public card); when none is
    /// configured, ExtendedAgentCardNotConfigured if the card declares one,
    /// else UnsupportedOperation.
    pub async fn get_extended_agent_card(
        &self,
        call: &CallContext,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard, A2AError> {
        switchboard_telemetry::probe::note_operation(Operation::GetExtendedAgentCard);
        let Some(configured) = &self.inner.extended_card else {
            return if self.inner.card.capabilities.extended_agent_card == Some(true) {
                Err(A2AError::ExtendedAgentCardNotConfigured)
            } else {
                Err(A2AError::UnsupportedOperation(
                    "this agent does not offer an extended agent card".into(),
                ))
            };
        };
        if call.principal == crate::context::ANONYMOUS {
            return Err(A2AError::Unauthenticated(
                "the extended agent card is shown to authenticated callers only".into(),
            ));
        }
        Ok(self
            .inner
            .served_extended_card
            .get()
            .unwrap_or(configured)
            .clone())
    }
}

/// One execution of the agent (its `execute` plus the engine's settling),
/// driven first by the request that started it and handed to its own tokio
/// task when that request stops driving it (returns, streams, or is
/// dropped because the client went away). Quick agents — a direct reply, a
/// task that completes at once — thus finish without a spawn, and a slow
/// one is never lost with its caller. The run counts towards the handler's
/// `TaskTracker` from the start, so shutdown waits for it either way.
pub(crate) struct Run {
    fut: Option<RunFuture>,
    tracker: TaskTracker,
    _token: tokio_util::task::task_tracker::TaskTrackerToken,
}

/// A run's future, boxed (see [`RequestHandler::run`]).
type RunFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Which of the agent's methods a [`Run`] calls.
#[derive(Debug, Clone, Copy)]
enum RunKind {
    /// [`AgentExecutor::execute`]: a message arrived.
    Execute,
    /// [`AgentExecutor::resume`]: a previous process abandoned the run.
    Resume,
}

/// The agent's execution and the engine's settling of it: the body of a
/// [`Run`]. `slot` is held until it ends.
async fn run_agent(
    executor: Arc<dyn AgentExecutor>,
    ctx: RequestContext,
    events: TaskEvents,
    slot: Slot,
    kind: RunKind,
) {
    use futures::FutureExt as _;
    let _slot = slot;
    METRICS.agent_runs.inc();
    let _running = METRICS.running_agents.track();
    // The agent's own future, not the `Arc`'s around it. `execute` is
    // called inside the caught future: an agent's synchronous part (an
    // `agent_fn` closure before its `async` block) may panic too.
    let agent_events = events.clone();
    let run = std::panic::AssertUnwindSafe(async move {
        match kind {
            RunKind::Execute => executor.as_ref().execute(ctx, agent_events).await,
            RunKind::Resume => executor.as_ref().resume(ctx, agent_events).await,
        }
    })
    .catch_unwind();
    let result = match run.await {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(task_id = %events.task_id(), panic = %what, "agent panicked");
            Err(format!("the agent panicked: {what}").into())
        }
    };
    events.finish(result).await;
}

impl Run {
    fn new(tracker: &TaskTracker, fut: RunFuture) -> Self {
        Run {
            fut: Some(fut),
            tracker: tracker.clone(),
            _token: tracker.token(),
        }
    }

    /// Polls the run to completion.
    ///
    /// Cancel safety: dropping this future leaves the run where it was; it
    /// continues on the next `drive` or on its own task once `self` drops.
    async fn drive(&mut self) {
        if let Some(fut) = self.fut.as_mut() {
            fut.await;
            self.fut = None;
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(fut) = self.fut.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    self.tracker.spawn_on(fut, &handle);
                }
                // No runtime (process teardown): nothing can run it anyway.
                Err(_) => tracing::warn!("an agent run was dropped at runtime shutdown"),
            }
        }
    }
}

/// The card's default media types followed by every skill's, without repeats.
fn all_modes<'a>(
    defaults: &'a [String],
    skills: impl Iterator<Item = &'a Vec<String>>,
) -> Vec<String> {
    let mut modes: Vec<String> = Vec::new();
    for m in defaults.iter().chain(skills.flatten()) {
        if !modes.contains(m) {
            modes.push(m.clone());
        }
    }
    modes
}

/// A subscription just opened ([`RequestHandler::open_subscription`]): the
/// task's snapshot at event `seq`, and the bus receiver taken at that point.
struct OpenSubscription {
    runtime: Arc<TaskRuntime>,
    slot: Slot,
    snapshot: Task,
    seq: u64,
    rx: broadcast::Receiver<BusEvent>,
}

/// `stream`, holding `slot` until it is dropped.
fn holding(slot: Slot, stream: EventStream) -> EventStream {
    use futures::StreamExt as _;
    Box::pin(stream.map(move |item| {
        let _held = &slot;
        item
    }))
}

/// Terminal or interrupted: where a blocking SendMessage returns.
fn settled(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

async fn wait_settled(runtime: &TaskRuntime, mut rx: broadcast::Receiver<BusEvent>) {
    loop {
        // Cancel safety: both branches only read; dropping either loses nothing
        // because the snapshot is re-read after the loop.
        tokio::select! {
            ev = rx.recv() => match ev {
                Ok(ev) => if ev.event.state().is_some_and(settled) { return },
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    if settled(runtime.state().await) { return }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = runtime.wait_idle() => return,
        }
    }
}

fn validate_history_length(h: Option<i32>) -> Result<Option<i32>, A2AError> {
    match h {
        Some(n) if n < 0 => Err(A2AError::invalid_field(
            "historyLength",
            format!("must not be negative, got {n}"),
        )),
        other => Ok(other),
    }
}

fn encode_cursor(c: &ListCursor) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{}:{}", c.status_micros, c.task_id))
}

/// A requested page size, if it is within 1..=[`MAX_PAGE_SIZE`].
fn check_page_size(page_size: i32) -> Result<i32, A2AError> {
    if (1..=MAX_PAGE_SIZE).contains(&page_size) {
        Ok(page_size)
    } else {
        Err(A2AError::invalid_field(
            "pageSize",
            format!("must be between 1 and {MAX_PAGE_SIZE}, got {page_size}"),
        ))
    }
}

/// The position a page token this server issued stands for (`None`: no
/// token, the first page). `parse` reads the decoded text; a token that
/// is not base64, not UTF-8 or not understood by `parse` is refused.
fn decode_page_token<T>(
    token: Option<&str>,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<Option<T>, A2AError> {
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let bad = || A2AError::invalid_field("pageToken", "is not a token this server issued");
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let text = String::from_utf8(raw).map_err(|_| bad())?;
    parse(&text).map(Some).ok_or_else(bad)
}
