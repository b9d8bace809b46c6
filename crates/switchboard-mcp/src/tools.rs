//! An agent card's skills as MCP tools.
//!
//! A2A skills describe what an agent can do in words (name, description,
//! examples, input modes); they carry no argument schema, because an A2A
//! agent takes a message. So every tool takes the same arguments:
//!
//! - `message` (string, required): what to send the agent, as the text of
//!   one user message;
//! - `data` (object, optional; only when the skill or card accepts
//!   `application/json`): sent as a data part beside the text;
//! - `task_id` (string, optional): continue that task (one the front left
//!   waiting for input) instead of starting a new one.
//!
//! The tool's name is the skill id reduced to the characters every MCP host
//! accepts (`A-Z a-z 0-9 _ -`, at most 64), prefixed by `<prefix>__` when
//! the front serves several agents; two skills that reduce to the same name
//! are told apart by a `_2`, `_3`, … suffix. An agent without skills gets
//! one tool, [`GENERIC_TOOL`].

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};
use switchboard_protocol::AgentCard;

/// The tool of an agent whose card lists no skills.
pub const GENERIC_TOOL: &str = "send_message";

/// The longest tool name some hosts accept.
const MAX_NAME: usize = 64;

/// The media type that earns a tool its `data` argument.
const JSON_MODE: &str = "application/json";

/// One tool and where its calls go.
#[derive(Debug, Clone)]
pub struct Route {
    /// What `tools/list` shows.
    pub tool: Tool,
    /// The agent's index in the front.
    pub agent: usize,
    /// The skill the tool stands for (`None` for [`GENERIC_TOOL`]).
    pub skill: Option<String>,
}

/// Every tool of a front, in card order, by name.
#[derive(Debug, Default)]
pub(crate) struct ToolTable {
    routes: Vec<Route>,
    by_name: HashMap<String, usize>,
}

impl ToolTable {
    /// Adds the tools of the agent at `index`.
    pub(crate) fn add_agent(&mut self, index: usize, card: &AgentCard, prefix: Option<&str>) {
        let accepts_json = |modes: &[String]| modes.iter().any(|m| m == JSON_MODE);
        if card.skills.is_empty() {
            let description = format!(
                "Send a message to the A2A agent {:?} and get its answer. {}",
                card.name, card.description
            );
            let schema = input_schema(
                &format!("What to say to {}.", card.name),
                accepts_json(&card.default_input_modes),
            );
            self.push(
                index,
                None,
                GENERIC_TOOL,
                Some(card.name.clone()),
                description,
                schema,
                prefix,
            );
            return;
        }
        for skill in &card.skills {
            let mut description = skill.description.clone();
            if !skill.examples.is_empty() {
                description.push_str("\nExamples of messages: ");
                let examples: Vec<String> =
                    skill.examples.iter().map(|e| format!("{e:?}")).collect();
                description.push_str(&examples.join(", "));
            }
            let modes = if skill.input_modes.is_empty() {
                &card.default_input_modes
            } else {
                &skill.input_modes
            };
            let schema = input_schema(
                &format!("What to ask the agent ({}).", skill.name),
                accepts_json(modes),
            );
            self.push(
                index,
                Some(skill.id.clone()),
                &tool_name_part(&skill.id),
                Some(skill.name.clone()),
                description,
                schema,
                prefix,
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        agent: usize,
        skill: Option<String>,
        base: &str,
        title: Option<String>,
        description: String,
        schema: JsonObject,
        prefix: Option<&str>,
    ) {
        let full = match prefix {
            Some(prefix) => format!("{prefix}__{base}"),
            None => base.to_owned(),
        };
        let mut name = truncate(&full, MAX_NAME);
        let mut n = 2;
        while self.by_name.contains_key(&name) {
            let suffix = format!("_{n}");
            name = format!("{}{suffix}", truncate(&full, MAX_NAME - suffix.len()));
            n += 1;
        }
        let mut tool = Tool::new(name.clone(), description, Arc::new(schema));
        if let Some(title) = title {
            tool = tool.with_title(title);
        }
        self.by_name.insert(name, self.routes.len());
        self.routes.push(Route { tool, agent, skill });
    }

    /// The tools, in order.
    pub(crate) fn tools(&self) -> Vec<Tool> {
        self.routes.iter().map(|r| r.tool.clone()).collect()
    }

    /// The route of the tool `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Route> {
        self.by_name.get(name).map(|&i| &self.routes[i])
    }
}

fn truncate(s: &str, max: usize) -> String {
    // Tool names are ASCII (see `tool_name_part`), so bytes are characters.
    s.chars().take(max).collect()
}

/// `s` reduced to the characters of an MCP tool name every host accepts:
/// ASCII letters, digits, `_` and `-`; anything else becomes `_`, and an
/// empty result `agent`.
pub fn tool_name_part(s: &str) -> String {
    let part: String = s
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if part.is_empty() {
        "agent".to_owned()
    } else {
        truncate(&part, MAX_NAME)
    }
}

/// The arguments every tool takes (see the module docs).
fn input_schema(message: &str, data: bool) -> JsonObject {
    let mut properties = json!({
        "message": {"type": "string", "description": message},
        "task_id": {
            "type": "string",
            "description": "Continue this task of the agent (one waiting for your answer, named by an earlier result) instead of starting a new one: `message` is then the answer."
        },
    });
    if data {
        properties["data"] = json!({
            "type": "object",
            "description": "Structured input, sent to the agent as a JSON data part beside the message."
        });
    }
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": ["message"],
        "additionalProperties": false,
    });
    match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// A call's arguments, read against [`input_schema`].
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Arguments {
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
    pub(crate) task_id: Option<String>,
}

impl Arguments {
    /// Reads `arguments`; a missing `message` is an empty one only when
    /// `answering` (a retry carrying the answer elsewhere).
    pub(crate) fn read(arguments: Option<&JsonObject>, answering: bool) -> Result<Self, String> {
        let empty = JsonObject::new();
        let arguments = arguments.unwrap_or(&empty);
        let message = match arguments.get("message") {
            Some(Value::String(s)) => s.clone(),
            None if answering => String::new(),
            None => return Err("`message` (a string) is required".into()),
            Some(_) => return Err("`message` must be a string".into()),
        };
        let data = match arguments.get("data") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(_) => return Err("`data` must be an object".into()),
        };
        let task_id = match arguments.get("task_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(_) => return Err("`task_id` must be a non-empty string".into()),
        };
        for key in arguments.keys() {
            if !["message", "data", "task_id"].contains(&key.as_str()) {
                return Err(format!("unknown argument `{key}`"));
            }
        }
        Ok(Arguments {
            message,
            data,
            task_id,
        })
    }
}

#[cfg(test)]
mod tests;
