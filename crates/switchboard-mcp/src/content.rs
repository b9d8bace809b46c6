//! What an agent produced, as an MCP tool result.
//!
//! - A text part is a text block.
//! - A data part is structured content (one part: its value when it is an
//!   object, else `{"value": …}`; several: `{"data": [...]}`), and its JSON
//!   as a text block too, for hosts that read only text.
//! - A file with bytes is an embedded resource (`blob`, its media type)
//!   named `a2a://tasks/<task>/artifacts/<artifact>/<file>`; a file by URL
//!   is a resource link to that URL.
//!
//! Each artifact's parts come in order, artifacts in the order the agent
//! made them; an artifact's name heads its text when there are several.

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, Resource, ResourceContents};
use serde_json::{Value, json};
use switchboard_protocol::{Artifact, Part, PartContent};

/// Builds a result part by part.
#[derive(Debug, Default)]
pub(crate) struct ResultBuilder {
    content: Vec<ContentBlock>,
    data: Vec<Value>,
}

impl ResultBuilder {
    /// Adds the artifacts of task `task_id`.
    pub(crate) fn artifacts(&mut self, task_id: &str, artifacts: &[Artifact]) {
        let several = artifacts.len() > 1;
        for artifact in artifacts {
            if several && let Some(name) = &artifact.name {
                self.content.push(ContentBlock::text(format!("[{name}]")));
            }
            let base = format!("a2a://tasks/{task_id}/artifacts/{}", artifact.artifact_id);
            for (i, part) in artifact.parts.iter().enumerate() {
                self.part(part, &base, i);
            }
        }
    }

    /// Adds the parts of a direct reply.
    pub(crate) fn parts(&mut self, message_id: &str, parts: &[Part]) {
        let base = format!("a2a://messages/{message_id}");
        for (i, part) in parts.iter().enumerate() {
            self.part(part, &base, i);
        }
    }

    /// Adds a line of text.
    pub(crate) fn text(&mut self, text: impl Into<String>) {
        self.content.push(ContentBlock::text(text));
    }

    fn part(&mut self, part: &Part, base: &str, index: usize) {
        let file_uri = || {
            let name = part
                .filename
                .clone()
                .unwrap_or_else(|| format!("part-{index}"));
            format!("{base}/{name}")
        };
        match &part.content {
            PartContent::Text(text) => self.content.push(ContentBlock::text(text.clone())),
            PartContent::Data(value) => {
                self.content.push(ContentBlock::text(value.to_string()));
                self.data.push(value.clone());
            }
            PartContent::Raw(bytes) => {
                let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
                let mut resource = ResourceContents::blob(blob, file_uri());
                if let Some(media_type) = &part.media_type {
                    resource = resource.with_mime_type(media_type.clone());
                }
                self.content.push(ContentBlock::resource(resource));
            }
            PartContent::Url(url) => {
                let name = part.filename.clone().unwrap_or_else(|| url.clone());
                let mut link = Resource::new(url.clone(), name);
                link.mime_type.clone_from(&part.media_type);
                self.content.push(ContentBlock::resource_link(link));
            }
            // A kind of part this version does not know: nothing to show.
            _ => {}
        }
    }

    /// The result, successful or an error.
    pub(crate) fn build(self, is_error: bool) -> CallToolResult {
        let mut result = if is_error {
            CallToolResult::error(self.content)
        } else {
            CallToolResult::success(self.content)
        };
        result.structured_content = match self.data.len() {
            0 => None,
            1 => self.data.into_iter().next().map(|value| match value {
                Value::Object(_) => value,
                other => json!({ "value": other }),
            }),
            _ => Some(json!({ "data": self.data })),
        };
        result
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use switchboard_protocol::{Artifact, Part};

    use super::ResultBuilder;

    #[test]
    fn parts_become_text_structured_content_and_resources() {
        let artifacts = [
            Artifact::new(vec![Part::text("hello"), Part::data(json!({"n": 2}))])
                .with_id("a1")
                .with_name("reply"),
            Artifact::new(vec![
                Part::raw(b"\x00\x01".to_vec(), "application/octet-stream").with_filename("x.bin"),
                Part::url("https://example.invalid/f.pdf").with_media_type("application/pdf"),
            ])
            .with_id("a2"),
        ];
        let mut builder = ResultBuilder::default();
        builder.artifacts("t1", &artifacts);
        let result = serde_json::to_value(builder.build(false)).unwrap();
        let content = result["content"].as_array().unwrap();
        assert_eq!(content[0], json!({"type": "text", "text": "[reply]"}));
        assert_eq!(content[1]["text"], "hello");
        assert_eq!(content[2]["text"], "{\"n\":2}");
        assert_eq!(content[3]["type"], "resource");
        assert_eq!(content[3]["resource"]["blob"], "AAE=");
        assert_eq!(
            content[3]["resource"]["uri"],
            "a2a://tasks/t1/artifacts/a2/x.bin"
        );
        assert_eq!(content[4]["type"], "resource_link");
        assert_eq!(content[4]["uri"], "https://example.invalid/f.pdf");
        assert_eq!(content[4]["mimeType"], "application/pdf");
        assert_eq!(result["structuredContent"], json!({"n": 2}));
        assert!(result.get("isError").is_none_or(|e| e == false), "{result}");
    }

    #[test]
    fn several_data_parts_and_scalars_are_wrapped() {
        let mut one = ResultBuilder::default();
        one.parts("m", &[Part::data(json!([1, 2]))]);
        let result = one.build(true);
        assert_eq!(result.structured_content, Some(json!({"value": [1, 2]})));
        assert_eq!(result.is_error, Some(true));
        let mut two = ResultBuilder::default();
        two.parts("m", &[Part::data(json!(1)), Part::data(json!({"a": 1}))]);
        assert_eq!(
            two.build(false).structured_content,
            Some(json!({"data": [1, {"a": 1}]}))
        );
    }
}
