//! The agent card: who an agent is, where to reach it, what it can do.
//!
//! Served at `/.well-known/agent-card.json`. Clients walk
//! `supportedInterfaces` in order and take the first binding and protocol
//! version they speak.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::serde_util::{is_empty, null_as_default};

/// The JSON-RPC 2.0 binding.
pub const BINDING_JSONRPC: &str = "JSONRPC";
/// The HTTP+JSON (REST) binding.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";
/// The gRPC binding.
pub const BINDING_GRPC: &str = "GRPC";
/// The protocol version this crate models.
pub const PROTOCOL_VERSION: &str = "1.0";

/// A self-description of an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// Human-readable name.
    pub name: String,
    /// What the agent does.
    #[serde(default)]
    pub description: String,
    /// Where and how to reach the agent, preferred first.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        alias = "supported_interfaces"
    )]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    #[serde(default)]
    pub version: String,
    /// Documentation link.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "documentation_url"
    )]
    pub documentation_url: Option<String>,
    /// Optional features.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Named security schemes.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "null_as_default",
        alias = "security_schemes"
    )]
    pub security_schemes: BTreeMap<String, Value>,
    /// Which schemes a caller must satisfy (OR of ANDs).
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        deserialize_with = "null_as_default",
        alias = "security_requirements"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types accepted by default.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        alias = "default_input_modes"
    )]
    pub default_input_modes: Vec<String>,
    /// Media types produced by default.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        alias = "default_output_modes"
    )]
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    #[serde(default, deserialize_with = "null_as_default")]
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the card.
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        deserialize_with = "null_as_default"
    )]
    pub signatures: Vec<AgentCardSignature>,
    /// Icon link.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "icon_url")]
    pub icon_url: Option<String>,
}

impl AgentCard {
    /// A minimal card; fill in interfaces and skills with the builder methods.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        AgentCard {
            name: name.into(),
            description: description.into(),
            supported_interfaces: Vec::new(),
            provider: None,
            version: version.into(),
            documentation_url: None,
            capabilities: AgentCapabilities::default(),
            security_schemes: BTreeMap::new(),
            security_requirements: Vec::new(),
            default_input_modes: vec!["text/plain".into()],
            default_output_modes: vec!["text/plain".into()],
            skills: Vec::new(),
            signatures: Vec::new(),
            icon_url: None,
        }
    }

    /// Adds a skill.
    pub fn with_skill(mut self, skill: AgentSkill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Sets the streaming capability.
    pub fn with_streaming(mut self, on: bool) -> Self {
        self.capabilities.streaming = Some(on);
        self
    }

    /// Declares an extension in `capabilities.extensions`.
    pub fn with_extension(mut self, extension: AgentExtension) -> Self {
        self.capabilities.extensions.push(extension);
        self
    }

    /// `true` when the card declares streaming.
    pub fn supports_streaming(&self) -> bool {
        self.capabilities.streaming == Some(true)
    }
}

/// One way to reach the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Endpoint URL (for gRPC, `host:port`).
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON`, `GRPC` or a custom URI.
    #[serde(alias = "protocol_binding")]
    pub protocol_binding: String,
    /// When set, clients copy it into every request's `tenant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// `Major.Minor`, e.g. `1.0`.
    #[serde(default, alias = "protocol_version")]
    pub protocol_version: String,
}

/// The organisation behind an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// Website.
    pub url: String,
    /// Name.
    pub organization: String,
}

/// Optional features an agent supports. The booleans keep presence:
/// absent is not the same as `false` (it matters for card signatures).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// SendStreamingMessage and SubscribeToTask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notification configs.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "push_notifications"
    )]
    pub push_notifications: Option<bool>,
    /// Extensions the agent supports.
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        deserialize_with = "null_as_default"
    )]
    pub extensions: Vec<AgentExtension>,
    /// GetExtendedAgentCard.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "extended_agent_card"
    )]
    pub extended_agent_card: Option<bool>,
}

/// An extension the agent supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// The extension's URI.
    pub uri: String,
    /// What it is used for here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Clients must activate it.
    #[serde(
        default,
        skip_serializing_if = "crate::serde_util::is_false",
        deserialize_with = "null_as_default"
    )]
    pub required: bool,
    /// Extension-specific parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Map<String, Value>>,
}

/// Something the agent can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Keywords.
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        deserialize_with = "null_as_default"
    )]
    pub examples: Vec<String>,
    /// Accepted media types, if different from the card's defaults.
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        deserialize_with = "null_as_default",
        alias = "input_modes"
    )]
    pub input_modes: Vec<String>,
    /// Produced media types, if different from the card's defaults.
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        deserialize_with = "null_as_default",
        alias = "output_modes"
    )]
    pub output_modes: Vec<String>,
    /// Security requirements specific to this skill.
    #[serde(
        default,
        skip_serializing_if = "is_empty",
        deserialize_with = "null_as_default",
        alias = "security_requirements"
    )]
    pub security_requirements: Vec<SecurityRequirement>,
}

impl AgentSkill {
    /// A skill with id, name, description and tags.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        tags: &[&str],
    ) -> Self {
        AgentSkill {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            examples: Vec::new(),
            input_modes: Vec::new(),
            output_modes: Vec::new(),
            security_requirements: Vec::new(),
        }
    }

    /// Adds example prompts.
    pub fn with_examples(mut self, examples: &[&str]) -> Self {
        self.examples.extend(examples.iter().map(|e| e.to_string()));
        self
    }
}

/// Scheme name → required scopes, all of which must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SecurityRequirement {
    /// Scheme name → scopes.
    #[serde(default, deserialize_with = "null_as_default")]
    pub schemes: BTreeMap<String, StringList>,
}

/// A list of strings (the proto's `StringList` wrapper).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StringList {
    /// The strings.
    #[serde(default, deserialize_with = "null_as_default")]
    pub list: Vec<String>,
}

/// A JWS signature over the card (detached payload).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentCardSignature {
    /// base64url JWS protected header.
    pub protected: String,
    /// base64url signature.
    pub signature: String,
    /// Unprotected header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<serde_json::Map<String, Value>>,
}
