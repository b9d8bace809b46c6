//! One declaration per setting: a clap flag, its `SWITCHBOARD_*`
//! environment variable and its TOML key.
//!
//! Every setting of `serve` is declared once, as a clap argument with
//! `long` and `env` (including the arguments of structs flattened into
//! [`crate::serve::ServeArgs`]). The TOML file is not a second, hand-kept
//! list of settings: it is layered *under* clap, generically:
//!
//! 1. clap parses the command line, reading each unset flag's environment
//!    variable (so a flag beats its variable);
//! 2. each key of the file names an argument by its id (the flag with `_`
//!    for `-`, or one of its aliases); a key naming no argument is an error;
//! 3. a file value is used only for arguments that neither the command line
//!    nor the environment set (and that conflict with none they set): it
//!    becomes `--flag=value` tokens put *before* the command line, and clap
//!    parses again. Repeatable flags (`ArgAction::Append`) are the one
//!    exception: the file's values come first and the flags add to them.
//!
//! So precedence is flag > environment > file > default, every value goes
//! through the same clap value parser whatever its source, and a flag added
//! later gets its key and its variable with no further code (a test walks
//! the definitions to prove it: `tests/config.rs`).
//!
//! TOML values become tokens by shape: a string or number is one value, a
//! boolean of an on/off flag turns it on (`true`) or leaves it off, an
//! array is one value per element, and a table (`[interface_urls]`) one
//! `KEY=VALUE` per entry. A table whose name is no setting is a section
//! (`[auth]`): its keys are settings, as if written at the top level. An
//! array of tables whose name is no setting (`[[agents]]`) is a list of
//! structured entries, handed to the caller as it is ([`Layered::lists`]):
//! such entries are not flags, and the caller says which names it takes.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context, bail};
use clap::parser::ValueSource;
use clap::{ArgAction, Command};

/// Where an effective setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Given as a flag.
    Flag,
    /// Read from the setting's `SWITCHBOARD_*` variable.
    Env,
    /// Read from the config file.
    File,
    /// The built-in default.
    Default,
}

impl Source {
    fn label(self) -> &'static str {
        match self {
            Source::Flag => "flag",
            Source::Env => "env",
            Source::File => "file",
            Source::Default => "default",
        }
    }
}

/// The result of a layered parse: the matches of the final parse and where
/// each setting came from.
#[derive(Debug)]
pub struct Layered {
    /// What clap made of command line, environment and file together.
    pub matches: clap::ArgMatches,
    /// The source of each argument id that has a value.
    pub sources: BTreeMap<String, Source>,
    /// The file's arrays of tables (`[[agents]]`), by name.
    pub lists: BTreeMap<String, Vec<toml::Table>>,
}

/// The environment variable a setting reads: `SWITCHBOARD_` and its id in
/// capitals.
pub fn env_name(id: &str) -> String {
    format!("SWITCHBOARD_{}", id.to_ascii_uppercase())
}

/// Parses `argv` (the tokens after the subcommand) for `cmd`, with the
/// TOML file named by the argument `config_id` layered under it (see the
/// module docs).
pub fn parse_layered(cmd: &Command, argv: &[OsString], config_id: &str) -> anyhow::Result<Layered> {
    let name = cmd.get_name().to_string();
    let first = cmd
        .clone()
        .try_get_matches_from(std::iter::once(OsString::from(&name)).chain(argv.iter().cloned()))
        .map_err(|e| anyhow::anyhow!("{}", first_line(&e)))?;
    let path = first
        .get_raw(config_id)
        .and_then(|mut v| v.next())
        .map(std::path::PathBuf::from);
    let Some(path) = path else {
        return Ok(Layered {
            sources: sources(cmd, &first, &[]),
            matches: first,
            lists: BTreeMap::new(),
        });
    };
    let (table, lists) = take_lists(cmd, read_table(&path)?);
    let table =
        flatten_sections(cmd, table).with_context(|| format!("config file {}", path.display()))?;
    let (tokens, from_file) = file_tokens(cmd, &first, &table, config_id)
        .with_context(|| format!("config file {}", path.display()))?;
    let matches = cmd
        .clone()
        .try_get_matches_from(
            std::iter::once(OsString::from(&name))
                .chain(tokens)
                .chain(argv.iter().cloned()),
        )
        .map_err(|e| anyhow::anyhow!("config file {}: {}", path.display(), first_line(&e)))?;
    Ok(Layered {
        sources: sources(cmd, &matches, &from_file),
        matches,
        lists,
    })
}

/// Takes the arrays of tables that name no setting out of `table`.
fn take_lists(
    cmd: &Command,
    table: toml::Table,
) -> (toml::Table, BTreeMap<String, Vec<toml::Table>>) {
    let mut rest = toml::Table::new();
    let mut lists = BTreeMap::new();
    for (key, value) in table {
        match value {
            toml::Value::Array(items)
                if arg_for_key(cmd, &key).is_none()
                    && !items.is_empty()
                    && items.iter().all(toml::Value::is_table) =>
            {
                let tables = items
                    .into_iter()
                    .filter_map(|v| match v {
                        toml::Value::Table(t) => Some(t),
                        _ => None,
                    })
                    .collect();
                lists.insert(key, tables);
            }
            value => {
                rest.insert(key, value);
            }
        }
    }
    (rest, lists)
}

fn read_table(path: &Path) -> anyhow::Result<toml::Table> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading config file {}", path.display()))?;
    text.parse::<toml::Table>()
        .with_context(|| format!("parsing config file {}", path.display()))
}

/// A table whose name is no setting is a *section* (`[auth]`): its keys
/// are settings like the top-level ones, grouped for the reader.
fn flatten_sections(cmd: &Command, table: toml::Table) -> anyhow::Result<toml::Table> {
    let mut flat = toml::Table::new();
    let mut sections = Vec::new();
    for (key, value) in table {
        match value {
            toml::Value::Table(inner) if arg_for_key(cmd, &key).is_none() => {
                sections.push((key, inner));
            }
            value => {
                flat.insert(key, value);
            }
        }
    }
    for (section, inner) in sections {
        for (key, value) in inner {
            if flat.insert(key.clone(), value).is_some() {
                bail!("{key} is set both in [{section}] and elsewhere");
            }
        }
    }
    Ok(flat)
}

/// The clap error without its usage lines: the message names the flag.
fn first_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let line = text.lines().next().unwrap_or_default();
    line.trim_start_matches("error: ").to_string()
}

/// The arguments a user can set: everything but clap's own help/version.
pub fn settings(cmd: &Command) -> impl Iterator<Item = &clap::Arg> {
    cmd.get_arguments().filter(|a| {
        !matches!(
            a.get_action(),
            ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
        )
    })
}

/// The argument a TOML key names: by id, or by a long alias with `_`.
fn arg_for_key<'c>(cmd: &'c Command, key: &str) -> Option<&'c clap::Arg> {
    settings(cmd).find(|a| {
        a.get_id().as_str() == key
            || a.get_all_aliases()
                .unwrap_or_default()
                .iter()
                .any(|alias| alias.replace('-', "_") == key)
    })
}

fn explicit(m: &clap::ArgMatches, id: &str) -> bool {
    matches!(
        m.value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    )
}

/// The tokens the file contributes, and the ids they set.
fn file_tokens(
    cmd: &Command,
    first: &clap::ArgMatches,
    table: &toml::Table,
    config_id: &str,
) -> anyhow::Result<(Vec<OsString>, Vec<String>)> {
    let mut tokens = Vec::new();
    let mut ids = Vec::new();
    for (key, value) in table {
        let Some(arg) = arg_for_key(cmd, key).filter(|a| a.get_id() != config_id) else {
            let known: Vec<&str> = settings(cmd)
                .map(|a| a.get_id().as_str())
                .filter(|id| *id != config_id)
                .collect();
            bail!("unknown key `{key}` (keys: {})", known.join(", "));
        };
        let id = arg.get_id().as_str();
        let append = matches!(arg.get_action(), ArgAction::Append);
        let overridden = explicit(first, id)
            || settings(cmd)
                .any(|other| explicit(first, other.get_id().as_str()) && conflict(cmd, arg, other));
        if overridden && !append {
            continue;
        }
        let Some(long) = arg.get_long() else {
            bail!("`{key}`: only flags can be set in the file");
        };
        let values = values_of(key, value)?;
        match arg.get_action() {
            ArgAction::SetTrue | ArgAction::SetFalse => {
                let on = match value {
                    toml::Value::Boolean(b) => *b,
                    _ => bail!("`{key}` must be true or false"),
                };
                let wanted = matches!(arg.get_action(), ArgAction::SetTrue);
                if on == wanted {
                    tokens.push(OsString::from(format!("--{long}")));
                }
            }
            ArgAction::Count => {
                let n = match value {
                    toml::Value::Integer(n) => *n,
                    _ => bail!("`{key}` must be a count"),
                };
                tokens.extend((0..n).map(|_| OsString::from(format!("--{long}"))));
            }
            _ if !append && values.len() != 1 => {
                bail!("`{key}` takes one value, not a list or table")
            }
            _ => {
                tokens.extend(
                    values
                        .into_iter()
                        .map(|v| OsString::from(format!("--{long}={v}"))),
                );
            }
        }
        if !overridden {
            ids.push(id.to_string());
        }
    }
    Ok((tokens, ids))
}

/// Whether clap refuses `a` and `b` together (declared on either side).
fn conflict(cmd: &Command, a: &clap::Arg, b: &clap::Arg) -> bool {
    let names = |x: &clap::Arg, y: &clap::Arg| {
        cmd.get_arg_conflicts_with(x)
            .iter()
            .any(|c| c.get_id() == y.get_id())
    };
    names(a, b) || names(b, a)
}

/// A TOML value as the strings a flag would be given.
fn values_of(key: &str, value: &toml::Value) -> anyhow::Result<Vec<String>> {
    Ok(match value {
        toml::Value::Array(items) => items
            .iter()
            .map(|v| scalar(key, v))
            .collect::<anyhow::Result<_>>()?,
        toml::Value::Table(t) => t
            .iter()
            .map(|(k, v)| Ok(format!("{k}={}", scalar(key, v)?)))
            .collect::<anyhow::Result<_>>()?,
        v => vec![scalar(key, v)?],
    })
}

fn scalar(key: &str, value: &toml::Value) -> anyhow::Result<String> {
    Ok(match value {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(_) | toml::Value::Table(_) => {
            bail!("`{key}`: nested lists and tables are not settings")
        }
    })
}

fn sources(cmd: &Command, m: &clap::ArgMatches, from_file: &[String]) -> BTreeMap<String, Source> {
    settings(cmd)
        .filter_map(|a| {
            let id = a.get_id().as_str();
            let source = match m.value_source(id)? {
                // The file's values were given to clap as tokens.
                ValueSource::CommandLine if from_file.iter().any(|f| f == id) => Source::File,
                ValueSource::CommandLine => Source::Flag,
                ValueSource::EnvVariable => Source::Env,
                _ => Source::Default,
            };
            Some((id.to_string(), source))
        })
        .collect()
}

/// Whether a setting's value is a secret, by its name: anything named
/// *key*, *token*, *secret* or *password* (not a path to a file holding
/// one).
pub fn is_secret_name(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    // `tls_key` is the path of the key file, as `--tls-key` is named.
    let names_a_file =
        id.ends_with("_file") || id.ends_with("_path") || id.ends_with("_dir") || id == "tls_key";
    !names_a_file
        && ["key", "token", "secret", "password"]
            .iter()
            .any(|word| id.contains(word))
}

pub use switchboard_sdk::store::mask_url_credentials;

/// The effective configuration as TOML, one line per setting in the order
/// they are declared, each with a comment saying where it came from;
/// secrets masked. The output is itself a valid config file.
pub fn render(cmd: &Command, layered: &Layered, config_id: &str) -> String {
    let mut out = String::new();
    for e in effective(cmd, layered, config_id) {
        let shown: Vec<String> = e
            .values
            .iter()
            .map(|v| {
                if e.secret {
                    "\"***\"".to_string()
                } else {
                    toml_literal(v)
                }
            })
            .collect();
        let id = e.id;
        let line = match (e.list, shown.as_slice()) {
            (true, _) => format!("{id} = [{}]", shown.join(", ")),
            (_, []) => format!("# {id} is unset"),
            (_, [one]) => format!("{id} = {one}"),
            (_, many) => format!("{id} = [{}]", many.join(", ")),
        };
        let env = e.env.map(|e| format!(", {e}")).unwrap_or_default();
        out.push_str(&format!("{line:<48} # {}{env}\n", e.source.label()));
    }
    out
}

/// [`render`] as one JSON object (`config check --json`): each setting's
/// key maps to `{"value": …, "source": "flag"|"env"|"file"|"default",
/// "env": "SWITCHBOARD_…"}`; `value` is a string, a list of strings for
/// repeatable settings, or `null` when unset; secrets are `"***"`.
pub fn render_json(cmd: &Command, layered: &Layered, config_id: &str) -> serde_json::Value {
    let mut settings = serde_json::Map::new();
    for e in effective(cmd, layered, config_id) {
        let values: Vec<String> = e
            .values
            .into_iter()
            .map(|v| if e.secret { "***".to_string() } else { v })
            .collect();
        let value = match (e.list, values.as_slice()) {
            (true, _) => serde_json::json!(values),
            (_, []) => serde_json::Value::Null,
            (_, [one]) => serde_json::json!(one),
            (_, _) => serde_json::json!(values),
        };
        settings.insert(
            e.id.to_string(),
            serde_json::json!({ "value": value, "source": e.source.label(), "env": e.env }),
        );
    }
    serde_json::Value::Object(settings)
}

/// One setting as `config check` shows it.
struct Effective<'a> {
    id: &'a str,
    /// Its values as given (URL passwords masked; secrets still in clear,
    /// see `secret`).
    values: Vec<String>,
    /// A repeatable setting (shown as a list even with one value).
    list: bool,
    /// Never shown: printed as `***`.
    secret: bool,
    source: Source,
    env: Option<String>,
}

/// Every setting of `cmd` but the config file's own, with its effective
/// value and where it came from.
fn effective<'a>(cmd: &'a Command, layered: &Layered, config_id: &str) -> Vec<Effective<'a>> {
    settings(cmd)
        .filter(|arg| arg.get_id().as_str() != config_id)
        .map(|arg| {
            let id = arg.get_id().as_str();
            let values = layered
                .matches
                .get_raw(id)
                .map(|vals| {
                    vals.map(|v| mask_url_credentials(&v.to_string_lossy()))
                        .collect()
                })
                .unwrap_or_default();
            Effective {
                id,
                values,
                list: matches!(arg.get_action(), ArgAction::Append),
                secret: is_secret_name(id),
                source: layered.sources.get(id).copied().unwrap_or(Source::Default),
                env: arg.get_env().map(|e| e.to_string_lossy().into_owned()),
            }
        })
        .collect()
}

/// A raw value as a TOML literal: booleans and integers bare, the rest quoted.
fn toml_literal(v: &str) -> String {
    if v == "true" || v == "false" || v.parse::<i64>().is_ok() {
        v.to_string()
    } else {
        toml::Value::String(v.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests;
