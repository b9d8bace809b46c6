//! Parts as a person reads them.
//!
//! Most parts are text and print as they are. Parts with AG-UI hints
//! (`switchboard_agui::hints`: the model's reasoning, code, tool calls and
//! their results, error reports) are what an agent uses to say *what kind*
//! of text or data a part is; glued together they read as JSON soup. So
//! each hinted block starts on a line of its own, labelled by its kind:
//!
//! ```text
//!   ▸ answer: thinking: I will count the words with a tool.
//!     → word_count({"text":"count these words"})
//!     ← word_count: 3
//!     ✗ dictionary: the dictionary is offline in this demo
//!     ! the dictionary tool failed; answering without it
//!     │ "why".split_whitespace().count() == 1
//!     word_count says your message has 3 words.
//! ```
//!
//! Parts of one block (the same `agui_block_index`, as chunks of a stream
//! are) continue one another. [`PartsView`] keeps that state across the
//! chunks of a streamed artifact; a whole artifact is rendered with a fresh
//! one. Parts without hints print exactly as before.

use std::collections::HashMap;

use switchboard_agui::hints::{PartHints, PartRole, read_tool_call, read_tool_result};
use switchboard_protocol::{Part, PartContent};

/// The rendering state of one artifact (or message).
#[derive(Debug, Default)]
pub struct PartsView {
    /// The block printed last: its index and what it is.
    block: Option<(Option<u64>, PartRole)>,
    /// Tool names by call id, so a result names the tool it answers.
    tools: HashMap<String, String>,
    /// Whether anything was rendered yet (a new block then needs a line).
    started: bool,
}

impl PartsView {
    /// `parts` as text: plain parts joined by `sep` (as before hints
    /// existed), hinted blocks each on a line of their own.
    pub fn render(&mut self, parts: &[Part], sep: &str) -> String {
        let mut out = String::new();
        for (i, part) in parts.iter().enumerate() {
            let hints = PartHints::read(part);
            let role = hints.role();
            if role == PartRole::Plain {
                if i > 0 {
                    out.push_str(sep);
                }
                out.push_str(&plain(part));
                self.block = None;
                self.started |= !out.is_empty();
                continue;
            }
            let key = (hints.block_index, role);
            // Tool calls, results and errors are one line each, whatever
            // their index.
            let continues = self.block == Some(key)
                && !matches!(
                    role,
                    PartRole::ToolCall | PartRole::ToolResult | PartRole::Error
                );
            if !continues && self.started {
                out.push('\n');
            }
            self.block = Some(key);
            match role {
                PartRole::Text | PartRole::Plain => out.push_str(&plain(part)),
                PartRole::Reasoning => {
                    if !continues {
                        out.push_str("thinking: ");
                    }
                    out.push_str(&plain(part));
                }
                PartRole::Code => {
                    if !continues {
                        out.push_str("│ ");
                    }
                    out.push_str(&plain(part).replace('\n', "\n│ "));
                }
                PartRole::Error => out.push_str(&format!("! {}", plain(part))),
                PartRole::ToolCall => match read_tool_call(part, &hints) {
                    Some(call) => {
                        out.push_str(&format!("→ {}({})", call.name, call.arguments));
                        self.tools.insert(call.id, call.name);
                    }
                    None => out.push_str(&format!("→ {}", plain(part))),
                },
                PartRole::ToolResult => match read_tool_result(part, &hints) {
                    Some(result) => {
                        let name = self
                            .tools
                            .get(&result.tool_call_id)
                            .map_or(result.tool_call_id.as_str(), String::as_str);
                        match &result.error {
                            Some(error) => out.push_str(&format!("✗ {name}: {error}")),
                            None => out.push_str(&format!("← {name}: {}", result.content)),
                        }
                    }
                    None => out.push_str(&format!("← {}", plain(part))),
                },
            }
            self.started = true;
        }
        out
    }
}

/// The printable content of one part: text as is, other kinds as
/// placeholders.
pub fn plain(p: &Part) -> String {
    match &p.content {
        PartContent::Text(t) => t.clone(),
        PartContent::Data(v) => v.to_string(),
        PartContent::Url(u) => format!("<{u}>"),
        PartContent::Raw(b) => format!(
            "[{} bytes{}]",
            b.len(),
            p.media_type
                .as_deref()
                .map(|m| format!(" {m}"))
                .unwrap_or_default()
        ),
        _ => "[unsupported part]".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_agui::hints::{
        code_part, error_part, text_part, thinking_part, tool_call_part, tool_result_part,
    };

    #[test]
    fn plain_parts_print_as_before() {
        let parts = [Part::text("a"), Part::text("b")];
        assert_eq!(PartsView::default().render(&parts, ""), "ab");
        assert_eq!(PartsView::default().render(&parts, "\n"), "a\nb");
    }

    #[test]
    fn each_hinted_block_is_a_labelled_line() {
        let parts = [
            thinking_part("I will count", "b", 0),
            thinking_part(" the words.", "b", 0),
            tool_call_part("c1", "word_count", json!({"text": "a b"})),
            tool_result_part("c1", "2", None),
            tool_call_part("c2", "dictionary", json!({"word": "a"})),
            tool_result_part("c2", "", Some("offline")),
            error_part("the dictionary failed"),
            code_part("let x = 1;\nx + 1", "b", 6),
            text_part("It has 2 words", "b", 7),
            text_part(".", "b", 7),
        ];
        let got = PartsView::default().render(&parts, "");
        assert_eq!(
            got,
            "thinking: I will count the words.\n\
             → word_count({\"text\":\"a b\"})\n\
             ← word_count: 2\n\
             → dictionary({\"word\":\"a\"})\n\
             ✗ dictionary: offline\n\
             ! the dictionary failed\n\
             │ let x = 1;\n│ x + 1\n\
             It has 2 words."
        );
    }

    #[test]
    fn chunks_of_a_stream_continue_their_block() {
        let mut view = PartsView::default();
        let mut out = String::new();
        for chunk in [
            vec![thinking_part("a", "b", 0)],
            vec![thinking_part("b", "b", 0)],
            vec![text_part("c", "b", 1)],
            vec![text_part("d", "b", 1)],
        ] {
            out.push_str(&view.render(&chunk, ""));
        }
        assert_eq!(out, "thinking: ab\ncd");
    }
}
