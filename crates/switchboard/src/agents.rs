//! `[[agents]]`: more agents on one `serve`, each under a path prefix.
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
//! are [`switchboard_runtimes::llm::LlmConfig`]'s):
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
//! The keys `name`, `path`, `runtime`, `description`, `version`,
//! `skills`, `auth` and `limits` are every agent's; the rest belong to its runtime (exec:
//! [`switchboard_runtimes::exec::ExecConfig`], proxy:
//! [`switchboard_runtimes::proxy::ProxyConfig`], llm:
//! [`switchboard_runtimes::llm::LlmConfig`]) and an unknown one is an
//! error naming the table. `--agent` stays the agent at `/`. Every agent
//! shares the server's store; its card, runtime and concurrency are its
//! own, and so are its authentication and limits when it has them:
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
//! advertises its schemes); without one it lets in whom the server does. The server mounts them with
//! [`switchboard_server::A2aServer::mount`] (gRPC reaches the root agent only).
//!
//! A proxy agent reads its remote's card when the server starts (an
//! unreachable remote stops the start, naming the table), and its card is
//! the remote's rewritten: `description`, `version` and `skills` given here
//! replace the remote's.
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

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde::Deserialize;
use switchboard_core::AgentExecutor;
use switchboard_protocol::{AgentCard, AgentSkill};
use switchboard_runtimes::exec::{ExecAgent, ExecConfig};
use switchboard_runtimes::llm::{LlmAgent, LlmConfig};
use switchboard_runtimes::proxy::{ProxyAgent, ProxyConfig};

use crate::limits_args::LimitsArgs;
use switchboard_auth::settings::AuthSettings as AuthArgs;

/// The file's name for the list.
pub const LIST: &str = "agents";

/// The runtimes an `[[agents]]` table may name.
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

/// First path segments `serve` answers itself besides the A2A routes
/// (probes, metrics, AG-UI, CopilotKit): no agent may be mounted there.
const SERVE_PATHS: &[&str] = &["healthz", "readyz", "metrics", "agui", "api"];

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

/// One `[[agents]]` table, checked.
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
    pub auth: Option<AuthArgs>,
    /// Its own limits over the server's.
    pub limits: Option<AgentLimits>,
    /// The table as written (for `config check`).
    table: toml::Table,
}

/// What runs an agent.
#[derive(Debug, Clone)]
pub enum Runtime {
    /// A built-in agent of `--agent`'s (`echo` is `echo-message`).
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
    auth: Option<AuthArgs>,
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
    pub fn over(&self, server: &LimitsArgs) -> LimitsArgs {
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

    fn validate(&self) -> anyhow::Result<()> {
        if self.rate_per_second.is_some_and(|r| r.is_nan() || r <= 0.0) {
            bail!(
                "`limits.rate_per_second` must be above 0 (leave it out to keep the server's rate)"
            );
        }
        if self.max_active_tasks_per_principal == Some(0) {
            bail!("`limits.max_active_tasks_per_principal` is 0: the agent could never run");
        }
        Ok(())
    }
}

/// The agents of the config file's lists (only `[[agents]]` is one).
pub fn parse(lists: &BTreeMap<String, Vec<toml::Table>>) -> anyhow::Result<Vec<AgentSpec>> {
    if let Some(other) = lists.keys().find(|k| *k != LIST) {
        bail!("unknown list `[[{other}]]` (the config file's only list is `[[{LIST}]]`)");
    }
    let Some(tables) = lists.get(LIST) else {
        return Ok(Vec::new());
    };
    let mut specs: Vec<AgentSpec> = Vec::new();
    for (i, table) in tables.iter().enumerate() {
        let label = label(i, table);
        let spec = parse_one(table).with_context(|| label.clone())?;
        if let Some(j) = specs.iter().position(|s| s.name == spec.name) {
            bail!(
                "{label}: the name {:?} is taken by {}",
                spec.name,
                label_of(j, &specs[j])
            );
        }
        let first = first_segment(&spec.path);
        if let Some(j) = specs.iter().position(|s| first_segment(&s.path) == first) {
            bail!(
                "{label}: path {} clashes with {} at {} (agents need different first path segments)",
                spec.path,
                label_of(j, &specs[j]),
                specs[j].path
            );
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

fn parse_one(table: &toml::Table) -> anyhow::Result<AgentSpec> {
    let (common, rest): (toml::Table, toml::Table) = table
        .clone()
        .into_iter()
        .partition(|(k, _)| COMMON_KEYS.contains(&k.as_str()));
    let common = Common::deserialize(toml::Value::Table(common))
        .map_err(|e| anyhow::anyhow!("{}", e.to_string().trim()))?;
    if common.name.trim().is_empty() {
        bail!("`name` is empty");
    }
    let path = switchboard_server::mount::normalize(&common.path)
        .map_err(|e| anyhow::anyhow!("`path`: {e}"))?;
    let first = first_segment(&path);
    if SERVE_PATHS.contains(&first) {
        bail!("`path`: {path} is reserved: serve answers /{first} itself");
    }
    let runtime = match common.runtime.as_str() {
        "exec" => {
            let config = ExecConfig::deserialize(toml::Value::Table(rest))
                .map_err(|e| anyhow::anyhow!("runtime exec: {}", e.to_string().trim()))?;
            config
                .validate()
                .map_err(|e| anyhow::anyhow!("runtime exec: {e}"))?;
            Runtime::Exec(Box::new(config))
        }
        "proxy" => {
            let config = ProxyConfig::deserialize(toml::Value::Table(rest))
                .map_err(|e| anyhow::anyhow!("runtime proxy: {}", e.to_string().trim()))?;
            config
                .validate()
                .map_err(|e| anyhow::anyhow!("runtime proxy: {e}"))?;
            Runtime::Proxy(Box::new(config))
        }
        "llm" => {
            let config = LlmConfig::deserialize(toml::Value::Table(rest))
                .map_err(|e| anyhow::anyhow!("runtime llm: {}", e.to_string().trim()))?;
            config
                .validate()
                .map_err(|e| anyhow::anyhow!("runtime llm: {e}"))?;
            Runtime::Llm(Box::new(config))
        }
        builtin if RUNTIMES.contains(&builtin) => {
            if let Some(key) = rest.keys().next() {
                bail!("unknown key `{key}` for runtime {builtin} (it takes none of its own)");
            }
            Runtime::Builtin(if builtin == "echo" {
                "echo-message".into()
            } else {
                builtin.into()
            })
        }
        other => bail!(
            "unknown runtime {other:?} (runtimes: {})",
            RUNTIMES.join(", ")
        ),
    };
    if let Some(limits) = &common.limits {
        limits.validate()?;
    }
    if let Some(auth) = &common.auth {
        switchboard_auth::settings::schemes(auth).context("`auth`")?;
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

impl AgentSpec {
    /// The agent and its card (interfaces are the server's to fill in).
    /// A proxy reads its remote's card here.
    pub async fn build(&self) -> anyhow::Result<(Arc<dyn AgentExecutor>, AgentCard)> {
        let (agent, mut card): (Arc<dyn AgentExecutor>, AgentCard) = match &self.runtime {
            Runtime::Builtin(name) => crate::serve::agent(name)?,
            Runtime::Exec(config) => {
                let agent = ExecAgent::new((**config).clone())
                    .with_context(|| format!("agent {:?}", self.name))?;
                let card = agent.card(&self.name, format!("runs {}", config.command));
                (Arc::new(agent), card)
            }
            Runtime::Proxy(config) => {
                let agent = ProxyAgent::connect(self.name.clone(), (**config).clone())
                    .await
                    .map_err(|e| anyhow::anyhow!("agent {:?}: {e}", self.name))?;
                let card = agent.card();
                (Arc::new(agent), card)
            }
            Runtime::Llm(config) => {
                let agent = LlmAgent::new((**config).clone())
                    .with_context(|| format!("agent {:?}", self.name))?;
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

/// The config file's agents again (SIGHUP): the whole file is read and
/// checked as at start (a mistake anywhere refuses it), then each agent
/// whose table is unchanged is kept as it is serving (its tasks, runs and
/// streams carry on), and every new or changed one is built with `build`.
/// What was dropped is simply not in the result (see
/// [`switchboard_server::mount`] for what happens to its running tasks).
/// Settings other than `[[agents]]` are not reloaded.
pub async fn reload<T, F, Fut>(
    file: &std::path::Path,
    serving: &[(AgentSpec, T)],
    build: F,
) -> anyhow::Result<Vec<(AgentSpec, T)>>
where
    T: Clone,
    F: Fn(AgentSpec) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<(AgentSpec, T)>>,
{
    let argv = [
        std::ffi::OsString::from("--config"),
        file.as_os_str().to_os_string(),
    ];
    let layered =
        crate::config::parse_layered(&crate::serve::ServeArgs::command(), &argv, "config")?;
    let specs = parse(&layered.lists)?;
    let mut next = Vec::with_capacity(specs.len());
    for spec in specs {
        match serving.iter().find(|(s, _)| s.table == spec.table) {
            Some(kept) => next.push(kept.clone()),
            None => {
                let label = format!("agent {:?} at {}", spec.name, spec.path);
                next.push(build(spec).await.with_context(|| label)?);
            }
        }
    }
    Ok(next)
}

/// The agents as `config check` prints them: their tables as TOML, the
/// values of secret-looking `env` variables masked.
pub fn render(specs: &[AgentSpec]) -> String {
    if specs.is_empty() {
        return String::new();
    }
    let tables: Vec<toml::Value> = specs
        .iter()
        .map(|s| toml::Value::Table(masked(&s.table)))
        .collect();
    let mut doc = toml::Table::new();
    doc.insert(LIST.into(), toml::Value::Array(tables));
    let text = toml::to_string(&doc).unwrap_or_default();
    format!(
        "\n# {} more agent(s), mounted beside the root agent\n{text}",
        specs.len()
    )
}

/// The agents as JSON for `config check --json`.
pub fn render_json(specs: &[AgentSpec]) -> serde_json::Value {
    serde_json::Value::Array(
        specs
            .iter()
            .map(|s| serde_json::to_value(masked(&s.table)).unwrap_or_default())
            .collect(),
    )
}

fn masked(table: &toml::Table) -> toml::Table {
    let mut table = table.clone();
    if let Some(toml::Value::Table(env)) = table.get_mut("env") {
        for (key, value) in env.iter_mut() {
            if crate::config::is_secret_name(key) {
                *value = toml::Value::String("***".into());
            }
        }
    }
    table
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn lists(text: &str) -> BTreeMap<String, Vec<toml::Table>> {
        let table: toml::Table = text.parse().unwrap();
        table
            .into_iter()
            .map(|(k, v)| {
                let toml::Value::Array(items) = v else {
                    panic!("a list")
                };
                let tables = items
                    .into_iter()
                    .map(|t| match t {
                        toml::Value::Table(t) => t,
                        _ => panic!("a table"),
                    })
                    .collect();
                (k, tables)
            })
            .collect()
    }

    fn error(text: &str) -> String {
        format!("{:#}", parse(&lists(text)).unwrap_err())
    }

    #[tokio::test]
    async fn agents_parse_with_their_runtime_keys() {
        let specs = parse(&lists(
            r#"
            [[agents]]
            name = "support"
            path = "/support/"
            runtime = "exec"
            command = "python3"
            args = ["-u", "x.py"]
            mode = "lines"
            timeout = 1.5
            [[agents.skills]]
            id = "faq"
            name = "FAQ"
            description = "Looks up the FAQ"
            tags = ["support"]
            [[agents]]
            name = "echo"
            path = "/echo"
            runtime = "echo"
            "#,
        ))
        .unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].path, "/support");
        let Runtime::Exec(config) = &specs[0].runtime else {
            panic!("exec")
        };
        assert_eq!(config.args, ["-u", "x.py"]);
        assert_eq!(config.timeout, std::time::Duration::from_millis(1500));
        let (_, card) = specs[0].build().await.unwrap();
        assert_eq!(card.name, "support");
        assert_eq!(card.skills[0].id, "faq");
        assert!(matches!(&specs[1].runtime, Runtime::Builtin(n) if n == "echo-message"));
    }

    #[tokio::test]
    async fn llm_agents_parse_and_show_only_the_key_variable_name() {
        let specs = parse(&lists(
            r#"
            [[agents]]
            name = "assistant"
            path = "/assistant"
            runtime = "llm"
            base_url = "http://127.0.0.1:9/v1"
            model = "tiny"
            api_key_env = "SWITCHBOARD_TEST_LLM_KEY_UNSET"
            temperature = 0
            idle_timeout = 2.5
            tools = [{ a2a = "http://127.0.0.1:9" }]
            "#,
        ))
        .unwrap();
        let Runtime::Llm(config) = &specs[0].runtime else {
            panic!("llm")
        };
        assert_eq!(config.model, "tiny");
        assert_eq!(config.idle_timeout, std::time::Duration::from_millis(2500));
        assert_eq!(config.tools[0].a2a, "http://127.0.0.1:9");
        // The key's variable is read when the agent is built: unset, an error naming it.
        let e = format!("{:#}", specs[0].build().await.unwrap_err());
        assert!(e.contains("SWITCHBOARD_TEST_LLM_KEY_UNSET"), "{e}");
        let shown = render(&specs);
        assert!(
            shown.contains("api_key_env = \"SWITCHBOARD_TEST_LLM_KEY_UNSET\""),
            "{shown}"
        );
    }

    #[test]
    fn mistakes_are_errors_naming_the_table() {
        let e = error("[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"llama\"\n");
        assert!(
            e.contains("[[agents]] #1 (\"a\")") && e.contains("unknown runtime"),
            "{e}"
        );
        let e = error("[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"exec\"\n");
        assert!(e.contains("#1") && e.contains("command"), "{e}");
        let e = error(
            "[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"echo\"\n[[agents]]\nname = \"b\"\npath = \"/a\"\nruntime = \"demo\"\n",
        );
        assert!(
            e.contains("#2 (\"b\")") && e.contains("clashes with [[agents]] #1"),
            "{e}"
        );
        let e = error(
            "[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"exec\"\ncommand = \"x\"\ncomand = \"y\"\n",
        );
        assert!(e.contains("comand"), "{e}");
        let e = error("[[agents]]\nname = \"a\"\npath = \"/metrics\"\nruntime = \"demo\"\n");
        assert!(e.contains("reserved"), "{e}");
        let e = error("[[agents]]\nname = \"a\"\npath = \"/tasks\"\nruntime = \"demo\"\n");
        assert!(e.contains("reserved"), "{e}");
        let e = error("[[agents]]\nname = \"a\"\npath = \"/\"\nruntime = \"demo\"\n");
        assert!(e.contains("`/`"), "{e}");
        let e =
            error("[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"demo\"\ncommand = \"x\"\n");
        assert!(e.contains("unknown key `command` for runtime demo"), "{e}");
        let e = error(
            "[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"proxy\"\nurl = \"http://127.0.0.1:1\"\nheader = [\"Authorization: Bearer x\"]\n",
        );
        assert!(
            e.contains("runtime proxy") && e.contains("token_env"),
            "{e}"
        );
        let e = error(
            "[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"llm\"\nbase_url = \"ftp://x\"\nmodel = \"m\"\n",
        );
        assert!(e.contains("runtime llm") && e.contains("base_url"), "{e}");
        let e = error("[[bots]]\nname = \"a\"\n");
        assert!(e.contains("[[bots]]"), "{e}");
    }
}
