//! The 0.3 top-level card fields, for a hybrid card 0.3-only clients can read.
//!
//! A 0.3 client does not know `supportedInterfaces`; it reads `url` and
//! `preferredTransport` (its main endpoint), `additionalInterfaces`
//! (`{url, transport}`), `protocolVersion` and
//! `supportsAuthenticatedExtendedCard`. [`hybrid_card`] merges those into the
//! 1.0 card JSON, derived from the card's 0.3 interfaces. 1.0 clients ignore
//! the extra fields, but a strict 1.0 validator (which forbids unknown
//! top-level fields) refuses the result, which is why servers keep a switch
//! for a strict card; switchboard-server serves the hybrid card by default
//! whenever the card lists 0.3 interfaces, as the official SDKs do.
//!
//! Security schemes share their key, `securitySchemes`, between the two
//! versions but not their form: 1.0 names the kind by a oneof member
//! (`{"httpAuthSecurityScheme": {"scheme": "Bearer"}}`), 0.3 by an OpenAPI
//! `type` (`{"type": "http", "scheme": "Bearer"}`). The hybrid card writes
//! both into each scheme object, each version ignoring the other's members,
//! and adds 0.3's `security` (`[{"name": ["scope"]}]`) beside 1.0's
//! `securityRequirements`.
//!
//! ```
//! use switchboard_protocol::{AgentCard, AgentInterface};
//! let mut card = AgentCard::new("a", "b", "1");
//! card.supported_interfaces.push(AgentInterface { url: "http://h/".into(),
//!     protocol_binding: "JSONRPC".into(), tenant: None, protocol_version: "0.3".into() });
//! let json = switchboard_protocol::v03::card::hybrid_card(&card);
//! assert_eq!(json["url"], "http://h/");
//! assert_eq!(json["preferredTransport"], "JSONRPC");
//! ```

use serde_json::{Map, Value, json};

use crate::AgentCard;

/// The 0.3 fields for `card`, from its interfaces whose `protocolVersion`
/// is 0.3 (in card order; the first is the preferred one). `None` when the
/// card has no 0.3 interface.
pub fn v03_fields(card: &AgentCard) -> Option<Map<String, Value>> {
    let v03: Vec<_> = card
        .supported_interfaces
        .iter()
        .filter(|i| i.protocol_version.starts_with("0.3"))
        .collect();
    let first = v03.first()?;
    let mut m = Map::new();
    m.insert("url".into(), json!(first.url));
    m.insert("preferredTransport".into(), json!(first.protocol_binding));
    m.insert(
        "protocolVersion".into(),
        json!(super::CARD_PROTOCOL_VERSION),
    );
    let additional: Vec<Value> = v03
        .iter()
        .map(|i| json!({"url": i.url, "transport": i.protocol_binding}))
        .collect();
    m.insert("additionalInterfaces".into(), Value::Array(additional));
    m.insert(
        "supportsAuthenticatedExtendedCard".into(),
        json!(card.capabilities.extended_agent_card.unwrap_or(false)),
    );
    Some(m)
}

/// The 1.0 card JSON with the 0.3 fields merged in (just the 1.0 JSON when
/// the card has no 0.3 interface).
pub fn hybrid_card(card: &AgentCard) -> Value {
    let mut v = serde_json::to_value(card).unwrap_or(Value::Null);
    if let (Value::Object(obj), Some(extra)) = (&mut v, v03_fields(card)) {
        for (k, val) in extra {
            obj.entry(k).or_insert(val);
        }
        if let Some(Value::Object(schemes)) = obj.get_mut("securitySchemes") {
            for scheme in schemes.values_mut() {
                if let Value::Object(scheme) = scheme {
                    for (k, val) in v03_security_scheme(scheme) {
                        scheme.entry(k).or_insert(val);
                    }
                }
            }
        }
        if !card.security_requirements.is_empty() {
            let security: Vec<Value> = card
                .security_requirements
                .iter()
                .map(|r| {
                    Value::Object(
                        r.schemes
                            .iter()
                            .map(|(name, scopes)| (name.clone(), json!(scopes.list)))
                            .collect(),
                    )
                })
                .collect();
            obj.entry("security").or_insert(Value::Array(security));
        }
    }
    v
}

/// The 0.3 (OpenAPI-style) members of a 1.0 `SecurityScheme` object: its
/// oneof member's fields with `type` naming the kind (`location` becomes
/// `in`). Empty for a scheme of no known kind.
pub fn v03_security_scheme(scheme: &Map<String, Value>) -> Map<String, Value> {
    const KINDS: [(&str, &str); 5] = [
        ("apiKeySecurityScheme", "apiKey"),
        ("httpAuthSecurityScheme", "http"),
        ("oauth2SecurityScheme", "oauth2"),
        ("openIdConnectSecurityScheme", "openIdConnect"),
        ("mtlsSecurityScheme", "mutualTLS"),
    ];
    let mut out = Map::new();
    for (member, kind) in KINDS {
        if let Some(Value::Object(fields)) = scheme.get(member) {
            out.insert("type".into(), json!(kind));
            for (k, val) in fields {
                let key = if k == "location" { "in" } else { k.as_str() };
                out.insert(key.to_string(), val.clone());
            }
        }
    }
    out
}
