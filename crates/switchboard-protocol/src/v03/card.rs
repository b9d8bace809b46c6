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
    }
    v
}
