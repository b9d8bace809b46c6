//! `[[agents]]`: more agents on one `serve`, each under a path prefix.
//!
//! ```toml
//! [[agents]]
//! name = "support"                 # the card's name
//! path = "/support"                # card at /support/.well-known/agent-card.json
//! runtime = "exec"                 # demo, echo, echo-message, echo-task, relay, exec, proxy or llm
//! command = "python3"              # exec: the runtime's own keys
//! args = ["-u", "agents/support.py"]
//! ```
//!
//! Each table is an [`AgentSpec`] ([`switchboard_runtimes::spec`] has every
//! key, the runtimes' own, `auth` and `limits`, and the errors naming the
//! table). `--agent` stays the agent at `/`. This module is the config
//! file's side: the list's name, reading it again on SIGHUP, and showing
//! the agents in `config check`.

use std::collections::BTreeMap;

use anyhow::bail;
pub use switchboard_runtimes::spec::AgentSpec;

/// The file's name for the list.
pub const LIST: &str = "agents";

/// The agents of the config file's lists (only `[[agents]]` is one).
pub fn parse(lists: &BTreeMap<String, Vec<toml::Table>>) -> anyhow::Result<Vec<AgentSpec>> {
    if let Some(other) = lists.keys().find(|k| *k != LIST) {
        bail!("unknown list `[[{other}]]` (the config file's only list is `[[{LIST}]]`)");
    }
    match lists.get(LIST) {
        Some(tables) => Ok(switchboard_runtimes::spec::parse(tables)?),
        None => Ok(Vec::new()),
    }
}

/// The `[[agents]]` of the config file `file`, checked as at start (the
/// whole file: a mistake anywhere refuses it). The host reads them again
/// with this on SIGHUP; settings other than `[[agents]]` are not reloaded.
pub fn read(file: &std::path::Path) -> anyhow::Result<Vec<AgentSpec>> {
    let argv = [
        std::ffi::OsString::from("--config"),
        file.as_os_str().to_os_string(),
    ];
    let layered =
        crate::config::parse_layered(&crate::serve::ServeArgs::command(), &argv, "config")?;
    parse(&layered.lists)
}

/// The agents as `config check` prints them: their tables as TOML, the
/// values of secret-looking `env` variables masked.
pub fn render(specs: &[AgentSpec]) -> String {
    if specs.is_empty() {
        return String::new();
    }
    let tables: Vec<toml::Value> = specs
        .iter()
        .map(|s| toml::Value::Table(s.masked_table(crate::config::is_secret_name)))
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
            .map(|s| {
                serde_json::to_value(s.masked_table(crate::config::is_secret_name))
                    .unwrap_or_default()
            })
            .collect(),
    )
}
