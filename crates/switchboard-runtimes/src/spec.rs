//! An agent described by a table of settings: an `[[agents]]` table of
//! `switchboard serve`'s config file turned into a runnable agent.
//!
//! ```toml
//! [[agents]]
//! name = "support"                 # the card's name
//! path = "/support"                # card at /support/.well-known/agent-card.json
//! runtime = "exec"                 # demo, echo, echo-message, echo-task, relay, exec, proxy or llm
//! description = "Answers support questions"
//! command = "python3"              # exec: the runtime's own keys
//! args = ["-u", "agents/support.py"]
//! mode = "lines"
//! max_concurrent = 8
//! [[agents.skills]]
//! id = "faq"
//! name = "FAQ"
//! description = "Looks up the FAQ"
//! tags = ["support"]
//! ```
//!
//! An `llm` agent (a model behind an OpenAI-compatible endpoint; its keys
//! are [`LlmConfig`]'s):
//!
//! ```toml
//! [[agents]]
//! name = "assistant"
//! path = "/assistant"
//! runtime = "llm"
//! base_url = "http://127.0.0.1:8000/v1"
//! model = "smollm2"
//! api_key_env = "OPENAI_API_KEY"    # the variable's name; its value is never shown
//! system_prompt = "You are terse."
//! temperature = 0
//! tools = [{ a2a = "http://127.0.0.1:8081" }]   # other A2A agents as tools
//! mcp = [{ url = "http://127.0.0.1:8090/mcp" }]  # MCP servers' tools (or `command`, stdio)
//! ```
//!
//! The keys `name`, `path`, `runtime`, `description`, `version`, `skills`,
//! `auth` and `limits` are every agent's; the rest belong to its runtime
//! (exec: [`ExecConfig`], proxy: [`ProxyConfig`], llm: [`LlmConfig`]) and an
//! unknown one is an error naming the table ([`parse`]). Every agent shares
//! its server's store; its card, runtime and concurrency are its own, and
//! so are its authentication and limits when it has them:
//!
//! ```toml
//! [agents.auth]                     # instead of the server's [auth]: the same keys
//! api_key_hashes = ["sha256:9f86…=support-team"]
//! allow_anonymous = false
//! [agents.limits]                   # over the server's limits
//! max_concurrent_tasks = 4          # per caller (max_active_tasks_per_principal)
//! rate_per_second = 5
//! rate_burst = 10
//! ```
//!
//! An agent with an `auth` table lets in only whom it names (its card
//! advertises its schemes, [`AuthSettings`]); without one it lets in whom
//! the server does. A server mounts each with `A2aServer::mount` (gRPC
//! reaches the root agent only).
//!
//! A proxy agent reads its remote's card when it is built
//! ([`AgentSpec::build`]: an unreachable remote is an error naming the
//! agent), and its card is the remote's rewritten: `description`, `version`
//! and `skills` given here replace the remote's.
//!
//! ```toml
//! [[agents]]
//! name = "weather"
//! path = "/weather"
//! runtime = "proxy"
//! url = "https://weather.example.com"   # the remote agent (or its card URL)
//! token_env = "WEATHER_TOKEN"           # its credential, from the environment
//! header = ["X-Team: support"]          # plain headers (never a credential)
//! timeout = 120                         # longest silence from the remote, seconds
//! ```
//!
//! From a table to a running agent:
//!
//! ```
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_runtimes::spec;
//! let table: toml::Table = r#"
//!     name = "echo"
//!     path = "/echo"
//!     runtime = "echo"
//! "#.parse()?;
//! let specs = spec::parse(&[table])?;
//! let (agent, card) = specs[0].build().await?;
//! assert_eq!(card.name, "echo");
//! # let _ = agent; Ok(()) }
//! ```

use std::sync::Arc;

use serde::Deserialize;
use switchboard_auth::settings::{AuthSettings, SettingsError};
use switchboard_core::AgentExecutor;
use switchboard_protocol::{AgentCard, AgentSkill};
use switchboard_server::settings::LimitsSettings;

use crate::exec::{ExecAgent, ExecConfig};
use crate::llm::{LlmAgent, LlmConfig};
use crate::proxy::{ProxyAgent, ProxyConfig};

/// The runtimes a table may name.
pub const RUNTIMES: &[&str] = &[
    "demo",
    "echo",
    "echo-message",
    "echo-task",
    "relay",
    "exec",
    "proxy",
    "llm",
];

/// First path segments a hosting server answers itself besides the A2A
/// routes (probes, metrics, AG-UI, CopilotKit): no agent may be mounted there.
pub const RESERVED_PATHS: &[&str] = &["healthz", "readyz", "metrics", "agui", "api"];

/// Every agent's own keys; the rest of its table is its runtime's.
const COMMON_KEYS: &[&str] = &[
    "name",
    "path",
    "runtime",
    "description",
    "version",
    "skills",
    "auth",
    "limits",
];

/// One agent's table, checked.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The card's name.
    pub name: String,
    /// Where it is mounted (normalized: `/support`).
    pub path: String,
    /// What runs it.
    pub runtime: Runtime,
    /// The card's description (default: the runtime's).
    pub description: Option<String>,
    /// The card's version (default: the runtime's).
    pub version: Option<String>,
    /// The card's skills (default: the runtime's).
    pub skills: Option<Vec<AgentSkill>>,
    /// Who may call it (default: whom the server lets in).
    pub auth: Option<AuthSettings>,
    /// Its own limits over the server's.
    pub limits: Option<AgentLimits>,
    /// The table as written.
    table: toml::Table,
}

/// What runs an agent.
#[derive(Debug, Clone)]
pub enum Runtime {
    /// A built-in agent ([`crate::builtin::by_name`]; `echo` is `echo-message`).
    Builtin(String),
    /// A program ([`ExecAgent`]).
    Exec(Box<ExecConfig>),
    /// A remote A2A agent ([`ProxyAgent`]).
    Proxy(Box<ProxyConfig>),
    /// A model behind an OpenAI-compatible endpoint ([`LlmAgent`]).
    Llm(Box<LlmConfig>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Common {
    name: String,
    path: String,
    runtime: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    skills: Option<Vec<AgentSkill>>,
    #[serde(default)]
    auth: Option<AuthSettings>,
    #[serde(default)]
    limits: Option<AgentLimits>,
}

/// An agent's own limits (`[agents.limits]`): each one set replaces the
/// server's for this agent; the rest are the server's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentLimits {
    /// Tasks one caller may have running on this agent at once.
    #[serde(alias = "max_concurrent_tasks")]
    pub max_active_tasks_per_principal: Option<usize>,
    /// Streams open on one task of this agent.
    pub max_subscribers_per_task: Option<usize>,
    /// Requests per second per caller to this agent (its own buckets).
    pub rate_per_second: Option<f64>,
    /// The burst of `rate_per_second`.
    pub rate_burst: Option<u32>,
}

impl AgentLimits {
    /// The server's limits with this agent's over them.
    pub fn over(&self, server: &LimitsSettings) -> LimitsSettings {
        let mut limits = server.clone();
        let set = |mine: Option<usize>, theirs: &mut Option<usize>| {
            if mine.is_some() {
                *theirs = mine;
            }
        };
        set(
            self.max_active_tasks_per_principal,
            &mut limits.max_active_tasks_per_principal,
        );
        set(
            self.max_subscribers_per_task,
            &mut limits.max_subscribers_per_task,
        );
        if self.rate_per_second.is_some() {
            limits.rate_per_second = self.rate_per_second;
        }
        if self.rate_burst.is_some() {
            limits.rate_burst = self.rate_burst;
        }
        limits
    }

    fn validate(&self) -> Result<(), TableError> {
        if self.rate_per_second.is_some_and(|r| r.is_nan() || r <= 0.0) {
            return Err(TableError::Limits(
                "`limits.rate_per_second` must be above 0 (leave it out to keep the server's rate)",
            ));
        }
        if self.max_active_tasks_per_principal == Some(0) {
            return Err(TableError::Limits(
                "`limits.max_active_tasks_per_principal` is 0: the agent could never run",
            ));
        }
        Ok(())
    }
}

/// Why a list of tables is refused; each names the table by its place
/// (`[[agents]] #2 ("b")`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// One table is wrong.
    #[error("{label}")]
    Table {
        /// Which table.
        label: String,
        /// What is wrong with it.
        #[source]
        source: TableError,
    },
    /// Two tables give one name.
    #[error("{label}: the name {name:?} is taken by {other}")]
    NameTaken {
        /// The later table.
        label: String,
        /// The name.
        name: String,
        /// The table that has it first.
        other: String,
    },
    /// Two tables' paths start with the same segment.
    #[error(
        "{label}: path {path} clashes with {other} at {other_path} (agents need different first path segments)"
    )]
    PathClash {
        /// The later table.
        label: String,
        /// Its path.
        path: String,
        /// The table that has it first.
        other: String,
        /// That table's path.
        other_path: String,
    },
}

/// What is wrong with one table.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// A common key is missing, unknown or of the wrong type.
    #[error("{0}")]
    Keys(String),
    /// `name` is empty.
    #[error("`name` is empty")]
    EmptyName,
    /// `path` cannot be mounted.
    #[error("`path`: {0}")]
    Path(String),
    /// `path` is one the hosting server answers itself.
    #[error("`path`: {path} is reserved: serve answers /{first} itself")]
    Reserved {
        /// The path.
        path: String,
        /// Its first segment.
        first: String,
    },
    /// The runtime's own keys are wrong.
    #[error("runtime {runtime}: {message}")]
    Runtime {
        /// Which runtime.
        runtime: &'static str,
        /// What its settings said.
        message: String,
    },
    /// A built-in runtime given a key (they take none).
    #[error("unknown key `{key}` for runtime {runtime} (it takes none of its own)")]
    BuiltinKey {
        /// The key.
        key: String,
        /// The runtime.
        runtime: String,
    },
    /// A runtime no one knows.
    #[error("unknown runtime {0:?} (runtimes: {runtimes})", runtimes = RUNTIMES.join(", "))]
    UnknownRuntime(String),
    /// `limits` is wrong.
    #[error("{0}")]
    Limits(&'static str),
    /// `auth` is wrong.
    #[error("`auth`")]
    Auth(#[source] SettingsError),
}

/// Why [`AgentSpec::build`] could not make the agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A built-in name not known.
    #[error(transparent)]
    Builtin(#[from] crate::builtin::UnknownAgent),
    /// The runtime refused (a program not found, a remote unreachable, a
    /// key's variable unset).
    #[error("agent {name:?}")]
    Agent {
        /// The agent's name.
        name: String,
        /// What the runtime said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The agents of a list of tables, each checked, with distinct names and
/// distinct first path segments.
pub fn parse(tables: &[toml::Table]) -> Result<Vec<AgentSpec>, SpecError> {
    let mut specs: Vec<AgentSpec> = Vec::new();
    for (i, table) in tables.iter().enumerate() {
        let label = label(i, table);
        let spec = AgentSpec::from_table(table).map_err(|source| SpecError::Table {
            label: label.clone(),
            source,
        })?;
        if let Some(j) = specs.iter().position(|s| s.name == spec.name) {
            return Err(SpecError::NameTaken {
                label,
                name: spec.name,
                other: label_of(j, &specs[j]),
            });
        }
        let first = first_segment(&spec.path);
        if let Some(j) = specs.iter().position(|s| first_segment(&s.path) == first) {
            return Err(SpecError::PathClash {
                label,
                path: spec.path,
                other: label_of(j, &specs[j]),
                other_path: specs[j].path.clone(),
            });
        }
        specs.push(spec);
    }
    Ok(specs)
}

fn label(i: usize, table: &toml::Table) -> String {
    match table.get("name").and_then(toml::Value::as_str) {
        Some(name) => format!("[[agents]] #{} ({name:?})", i + 1),
        None => format!("[[agents]] #{}", i + 1),
    }
}

fn label_of(i: usize, spec: &AgentSpec) -> String {
    format!("[[agents]] #{} ({:?})", i + 1, spec.name)
}

fn first_segment(path: &str) -> &str {
    path.trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default()
}

/// A runtime's settings from the rest of its table, validated.
fn runtime_config<T: serde::de::DeserializeOwned, E: std::fmt::Display>(
    runtime: &'static str,
    rest: toml::Table,
    validate: impl FnOnce(&T) -> Result<(), E>,
) -> Result<Box<T>, TableError> {
    let bad = |message: String| TableError::Runtime { runtime, message };
    let config =
        T::deserialize(toml::Value::Table(rest)).map_err(|e| bad(e.to_string().trim().into()))?;
    validate(&config).map_err(|e| bad(e.to_string()))?;
    Ok(Box::new(config))
}

impl AgentSpec {
    /// One table, checked (its runtime's keys, `limits`, `auth`).
    pub fn from_table(table: &toml::Table) -> Result<AgentSpec, TableError> {
        let (common, rest): (toml::Table, toml::Table) = table
            .clone()
            .into_iter()
            .partition(|(k, _)| COMMON_KEYS.contains(&k.as_str()));
        let common = Common::deserialize(toml::Value::Table(common))
            .map_err(|e| TableError::Keys(e.to_string().trim().into()))?;
        if common.name.trim().is_empty() {
            return Err(TableError::EmptyName);
        }
        let path = switchboard_server::mount::normalize(&common.path)
            .map_err(|e| TableError::Path(e.to_string()))?;
        let first = first_segment(&path);
        if RESERVED_PATHS.contains(&first) {
            return Err(TableError::Reserved {
                first: first.to_owned(),
                path,
            });
        }
        let runtime = match common.runtime.as_str() {
            "exec" => Runtime::Exec(runtime_config("exec", rest, ExecConfig::validate)?),
            "proxy" => Runtime::Proxy(runtime_config("proxy", rest, ProxyConfig::validate)?),
            "llm" => Runtime::Llm(runtime_config("llm", rest, LlmConfig::validate)?),
            builtin if RUNTIMES.contains(&builtin) => {
                if let Some(key) = rest.keys().next() {
                    return Err(TableError::BuiltinKey {
                        key: key.clone(),
                        runtime: builtin.to_owned(),
                    });
                }
                Runtime::Builtin(if builtin == "echo" {
                    "echo-message".into()
                } else {
                    builtin.into()
                })
            }
            other => return Err(TableError::UnknownRuntime(other.to_owned())),
        };
        if let Some(limits) = &common.limits {
            limits.validate()?;
        }
        if let Some(auth) = &common.auth {
            switchboard_auth::settings::schemes(auth).map_err(TableError::Auth)?;
        }
        Ok(AgentSpec {
            auth: common.auth,
            limits: common.limits,
            name: common.name,
            path,
            runtime,
            description: common.description,
            version: common.version,
            skills: common.skills,
            table: table.clone(),
        })
    }

    /// The table as written (two specs from one table are the same agent).
    pub fn table(&self) -> &toml::Table {
        &self.table
    }

    /// The table with the values of secret-looking `env` variables (those
    /// `is_secret` says are) replaced by `***`, for showing.
    pub fn masked_table(&self, is_secret: impl Fn(&str) -> bool) -> toml::Table {
        let mut table = self.table.clone();
        if let Some(toml::Value::Table(env)) = table.get_mut("env") {
            for (key, value) in env.iter_mut() {
                if is_secret(key) {
                    *value = toml::Value::String("***".into());
                }
            }
        }
        table
    }

    /// The agent and its card (interfaces are the server's to fill in).
    /// A proxy reads its remote's card here.
    pub async fn build(&self) -> Result<(Arc<dyn AgentExecutor>, AgentCard), BuildError> {
        let failed = |source: Box<dyn std::error::Error + Send + Sync>| BuildError::Agent {
            name: self.name.clone(),
            source,
        };
        let (agent, mut card): (Arc<dyn AgentExecutor>, AgentCard) = match &self.runtime {
            Runtime::Builtin(name) => crate::builtin::by_name(name)?,
            Runtime::Exec(config) => {
                let agent = ExecAgent::new((**config).clone()).map_err(|e| failed(e.into()))?;
                let card = agent.card(&self.name, format!("runs {}", config.command));
                (Arc::new(agent), card)
            }
            Runtime::Proxy(config) => {
                let agent = ProxyAgent::connect(self.name.clone(), (**config).clone())
                    .await
                    .map_err(failed)?;
                let card = agent.card();
                (Arc::new(agent), card)
            }
            Runtime::Llm(config) => {
                let agent = LlmAgent::new((**config).clone()).map_err(|e| failed(e.into()))?;
                let card = agent.card(&self.name, format!("answers with {}", config.model));
                (Arc::new(agent), card)
            }
        };
        card.name = self.name.clone();
        if let Some(description) = &self.description {
            card.description = description.clone();
        }
        if let Some(version) = &self.version {
            card.version = version.clone();
        }
        if let Some(skills) = &self.skills {
            card.skills = skills.clone();
        }
        Ok((agent, card))
    }
}

/// A changed list of agents applied to the ones serving (a reload): each
/// spec whose table is unchanged keeps what is serving it (its tasks, runs
/// and streams carry on), and every new or changed one is built with
/// `build`. What was dropped is simply not in the result. The first build
/// that fails stops the reload, naming the agent.
pub async fn reload<T, E, F, Fut>(
    specs: Vec<AgentSpec>,
    serving: &[(AgentSpec, T)],
    build: F,
) -> Result<Vec<(AgentSpec, T)>, ReloadError<E>>
where
    T: Clone,
    F: Fn(AgentSpec) -> Fut,
    Fut: std::future::Future<Output = Result<(AgentSpec, T), E>>,
{
    let mut next = Vec::with_capacity(specs.len());
    for spec in specs {
        match serving.iter().find(|(s, _)| s.table == spec.table) {
            Some(kept) => next.push(kept.clone()),
            None => {
                let agent = format!("agent {:?} at {}", spec.name, spec.path);
                next.push(
                    build(spec)
                        .await
                        .map_err(|source| ReloadError { agent, source })?,
                );
            }
        }
    }
    Ok(next)
}

/// An agent [`reload`] could not build.
#[derive(Debug, thiserror::Error)]
#[error("{agent}")]
pub struct ReloadError<E> {
    /// Which agent (`agent "support" at /support`).
    pub agent: String,
    /// Why.
    #[source]
    pub source: E,
}

#[cfg(test)]
mod tests;
