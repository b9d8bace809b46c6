//! The agent card: who an agent is, where to reach it, what it can do.
//!
//! Served at `/.well-known/agent-card.json`. Clients walk
//! `supportedInterfaces` in order and take the first binding and protocol
//! version they speak.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::serde_util::null_as_default;

/// The JSON-RPC 2.0 binding.
pub const BINDING_JSONRPC: &str = "JSONRPC";
/// The HTTP+JSON (REST) binding.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";
/// The gRPC binding.
pub const BINDING_GRPC: &str = "GRPC";
/// The protocol version this crate models.
pub const PROTOCOL_VERSION: &str = "1.0";

/// A self-description of an agent.
///
/// Most of its lists are REQUIRED (written even when empty), so its rule
/// for lists and maps only says how they read: absent or `null` is empty.
/// The optional ones are left out when empty, which each says itself.
#[serde_with::apply(
    Vec => #[serde(default, deserialize_with = "null_as_default")],
    BTreeMap => #[serde(default, deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// Human-readable name.
    pub name: String,
    /// What the agent does.
    #[serde(default)]
    pub description: String,
    /// Where and how to reach the agent, preferred first.
    #[serde(alias = "supported_interfaces")]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who runs it.
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    #[serde(default)]
    pub version: String,
    /// Documentation link.
    #[serde(alias = "documentation_url")]
    pub documentation_url: Option<String>,
    /// Optional features.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Named security schemes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", alias = "security_schemes")]
    pub security_schemes: BTreeMap<String, Value>,
    /// Which schemes a caller must satisfy (OR of ANDs).
    #[serde(skip_serializing_if = "Vec::is_empty", alias = "security_requirements")]
    pub security_requirements: Vec<SecurityRequirement>,
    /// Media types accepted by default.
    #[serde(alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    /// Media types produced by default.
    #[serde(alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the card.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    /// Icon link.
    #[serde(alias = "icon_url")]
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

    /// The bytes an agent card signature covers (the A2A spec's JWS
    /// payload, RFC 7515 with a detached payload): this card as 1.0 JSON
    /// without `signatures`, with empty strings, lists and objects removed
    /// (recursively, as proto3 JSON leaves default values out), in the
    /// canonical form of RFC 8785 ([`crate::jcs`]).
    ///
    /// Fields outside the 1.0 card (the 0.3 fields of the hybrid card) are
    /// not covered: a 1.0 verifier never sees them. The result is the same
    /// whichever SDK re-serialized the card in between, which is what lets
    /// the official clients verify a card switchboard signed.
    pub fn signing_payload(&self) -> Result<String, crate::jcs::JcsError> {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.remove("signatures");
        }
        let cleaned = without_empty(value).unwrap_or(Value::Object(Default::default()));
        crate::jcs::canonicalize(&cleaned)
    }

    /// Sets the media types the agent accepts by default (the card's
    /// `defaultInputModes`; [`AgentCard::new`] starts with `text/plain`).
    ///
    /// **These are enforced.** A server built on switchboard refuses a
    /// SendMessage whose parts have a media type that neither these nor any
    /// skill's `inputModes` accept, with ContentTypeNotSupported (-32005)
    /// naming the offending part and the accepted types, e.g.
    /// `message.parts[1] has media type application/json; this agent accepts
    /// text/plain`. A text part without `mediaType` counts as `text/plain`;
    /// other parts without one are not checked. Patterns match like HTTP
    /// `Accept`: `*/*`, `image/*`. An empty list accepts everything.
    ///
    /// ```
    /// use switchboard_protocol::AgentCard;
    /// let card = AgentCard::new("a", "b", "1")
    ///     .with_input_modes(&["text/plain", "application/json"]);
    /// assert_eq!(card.default_input_modes, ["text/plain", "application/json"]);
    /// ```
    pub fn with_input_modes(mut self, modes: &[&str]) -> Self {
        self.default_input_modes = modes.iter().map(|m| m.to_string()).collect();
        self
    }

    /// Sets the media types the agent produces by default (the card's
    /// `defaultOutputModes`; [`AgentCard::new`] starts with `text/plain`).
    ///
    /// **These are enforced too**, from the other side: a SendMessage whose
    /// `configuration.acceptedOutputModes` shares no type with these (and
    /// the skills' `outputModes`) is refused with ContentTypeNotSupported
    /// naming both lists. A request without `acceptedOutputModes` accepts
    /// anything.
    pub fn with_output_modes(mut self, modes: &[&str]) -> Self {
        self.default_output_modes = modes.iter().map(|m| m.to_string()).collect();
        self
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

    /// Declares an extension in `capabilities.extensions` (see
    /// [`AgentExtension::new`]).
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
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Endpoint URL (for gRPC, `host:port`).
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON`, `GRPC` or a custom URI.
    #[serde(alias = "protocol_binding")]
    pub protocol_binding: String,
    /// When set, clients copy it into every request's `tenant`.
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
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// SendStreamingMessage and SubscribeToTask.
    pub streaming: Option<bool>,
    /// Push notification configs.
    #[serde(alias = "push_notifications")]
    pub push_notifications: Option<bool>,
    /// Extensions the agent supports.
    pub extensions: Vec<AgentExtension>,
    /// GetExtendedAgentCard.
    #[serde(alias = "extended_agent_card")]
    pub extended_agent_card: Option<bool>,
}

/// An extension the agent supports.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// The extension's URI.
    pub uri: String,
    /// What it is used for here.
    pub description: Option<String>,
    /// Clients must activate it.
    #[serde(
        default,
        skip_serializing_if = "crate::serde_util::is_false",
        deserialize_with = "null_as_default"
    )]
    pub required: bool,
    /// Extension-specific parameters.
    pub params: Option<serde_json::Map<String, Value>>,
}

impl AgentExtension {
    /// An optional extension identified by `uri`, with no description or
    /// parameters; add them with the `with_*` methods.
    ///
    /// ```
    /// use switchboard_protocol::{AgentCard, AgentExtension};
    /// let card = AgentCard::new("a", "b", "1").with_extension(
    ///     AgentExtension::new("https://example.com/ext/citations/v1")
    ///         .with_description("Cites sources in artifact metadata")
    ///         .with_param("style", "apa")
    ///         .required(true),
    /// );
    /// let ext = &card.capabilities.extensions[0];
    /// assert!(ext.required);
    /// assert_eq!(ext.params.as_ref().unwrap()["style"], "apa");
    /// ```
    pub fn new(uri: impl Into<String>) -> Self {
        AgentExtension {
            uri: uri.into(),
            description: None,
            required: false,
            params: None,
        }
    }

    /// Says what the extension is used for here.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Makes clients activate it: a request that does not is refused with
    /// ExtensionSupportRequired (-32008).
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Adds one extension-specific parameter.
    pub fn with_param(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params
            .get_or_insert_with(serde_json::Map::new)
            .insert(key.into(), value.into());
        self
    }
}

/// Something the agent can do.
#[serde_with::apply(
    Vec => #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")],
)]
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
    /// Keywords (REQUIRED: written even when empty).
    #[serde_with(skip_apply)]
    #[serde(default, deserialize_with = "null_as_default")]
    pub tags: Vec<String>,
    /// Example prompts.
    pub examples: Vec<String>,
    /// Accepted media types, if different from the card's defaults.
    #[serde(alias = "input_modes")]
    pub input_modes: Vec<String>,
    /// Produced media types, if different from the card's defaults.
    #[serde(alias = "output_modes")]
    pub output_modes: Vec<String>,
    /// Security requirements specific to this skill.
    #[serde(alias = "security_requirements")]
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
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentCardSignature {
    /// base64url JWS protected header.
    pub protected: String,
    /// base64url signature.
    pub signature: String,
    /// Unprotected header.
    pub header: Option<serde_json::Map<String, Value>>,
}

/// `value` without empty strings, lists and objects, recursively (an object
/// or list left empty by the removal goes too); `None` if nothing is left.
/// `false`, `0` and `null` stay: in proto3 JSON they are explicit values of
/// `optional` fields, which a verifier keeps.
fn without_empty(value: Value) -> Option<Value> {
    match value {
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().filter_map(without_empty).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(members) => {
            let members: serde_json::Map<String, Value> = members
                .into_iter()
                .filter_map(|(k, v)| without_empty(v).map(|v| (k, v)))
                .collect();
            (!members.is_empty()).then_some(Value::Object(members))
        }
        other => Some(other),
    }
}
