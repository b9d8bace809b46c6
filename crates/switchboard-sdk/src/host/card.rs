//! The extended agent card: what authenticated callers of
//! GetExtendedAgentCard see, as a JSON object laid over the public card.

use std::path::{Path, PathBuf};

use switchboard_protocol::AgentCard;

/// Why the extended card file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtendedCardError {
    /// The file could not be read.
    #[error("reading the extended card {}", .0.display())]
    Read(PathBuf, #[source] std::io::Error),
    /// The file is not JSON.
    #[error("{} is not JSON", .0.display())]
    NotJson(PathBuf, #[source] serde_json::Error),
    /// The file's JSON is not an object.
    #[error("{}: the extended card must be a JSON object", .0.display())]
    NotAnObject(PathBuf),
    /// The merged card is not a valid agent card.
    #[error("{}: not a valid agent card", .0.display())]
    Invalid(PathBuf, #[source] serde_json::Error),
}

/// The extended card: the file's JSON object over the public `card`, its
/// `skills` added to the public ones, every other member (e.g.
/// `description`) replacing the public one.
pub fn extended_card(card: &AgentCard, path: &Path) -> Result<AgentCard, ExtendedCardError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| ExtendedCardError::Read(path.to_owned(), e))?;
    let overlay: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ExtendedCardError::NotJson(path.to_owned(), e))?;
    let serde_json::Value::Object(overlay) = overlay else {
        return Err(ExtendedCardError::NotAnObject(path.to_owned()));
    };
    let mut merged =
        serde_json::to_value(card).map_err(|e| ExtendedCardError::Invalid(path.to_owned(), e))?;
    for (key, value) in overlay {
        match (key.as_str(), &value, merged.get_mut(&key)) {
            ("skills", serde_json::Value::Array(extra), Some(serde_json::Value::Array(skills))) => {
                skills.extend(extra.iter().cloned());
            }
            _ => {
                merged[&key] = value;
            }
        }
    }
    serde_json::from_value(merged).map_err(|e| ExtendedCardError::Invalid(path.to_owned(), e))
}
