//! Human-in-the-loop forms on A2A: the wire vocabulary both sides share.
//!
//! An agent that needs a person's decision pauses its task in
//! `input-required` with a status message holding a text part (the
//! question, for people and plain clients) and a data part that describes
//! a form:
//!
//! ```json
//! {"type": "a2a.hitl.form", "formId": "approve-1", "title": "Approve the transfer?",
//!  "description": "…", "fields": [{"name": "approved", "type": "boolean"}], "metadata": {}}
//! ```
//!
//! The answer is a follow-up message on the same task with a data part
//!
//! ```json
//! {"type": "a2a.hitl.formResponse", "formId": "approve-1", "values": {"approved": true}}
//! ```
//!
//! The converter ([`crate::convert`]) turns the pause into an AG-UI
//! interrupt carrying the form; the bridge turns a run's `resume` into the
//! response. The names follow the design of seed 003 (AG-UI issue #762).

use serde_json::{Map, Value, json};
use switchboard_protocol::{Message, Part, PartContent};

/// The `type` of a form request's data part.
pub const FORM_TYPE: &str = "a2a.hitl.form";
/// The `type` of a form answer's data part.
pub const FORM_RESPONSE_TYPE: &str = "a2a.hitl.formResponse";

/// A form an agent asks a person to fill in.
#[derive(Debug, Clone, PartialEq)]
pub struct HitlForm {
    /// The form's id, echoed by the answer.
    pub form_id: String,
    /// The whole data part, as the agent sent it (title, fields, …).
    pub data: Map<String, Value>,
}

impl HitlForm {
    /// The form in `message`: its first data part of [`FORM_TYPE`] with a
    /// string `formId`.
    pub fn find(message: &Message) -> Option<HitlForm> {
        message.parts.iter().find_map(HitlForm::from_part)
    }

    /// The form a part describes, if it is one.
    pub fn from_part(part: &Part) -> Option<HitlForm> {
        let PartContent::Data(Value::Object(data)) = &part.content else {
            return None;
        };
        if data.get("type").and_then(Value::as_str) != Some(FORM_TYPE) {
            return None;
        }
        let form_id = data.get("formId")?.as_str()?.to_owned();
        Some(HitlForm {
            form_id,
            data: data.clone(),
        })
    }

    /// A JSON Schema (an object) of the `values` that answer the form, made
    /// from its `fields` — `None` when it has none. Each field with a
    /// string `name` becomes a property: its `type` when it is a JSON
    /// Schema type (`boolean`, `string`, `number`, `integer`, `array`,
    /// `object`), else `string` (`text`, `textarea`, `select`, … are
    /// strings to a person); `label` → `title`, `description` kept, an
    /// `options` array of strings → `enum`; fields with `required: true`
    /// are required. Nothing else is inferred: the agent validates the
    /// answer, the schema helps a UI render and check it.
    pub fn response_schema(&self) -> Option<Map<String, Value>> {
        let fields = self.data.get("fields")?.as_array()?;
        let mut properties = Map::new();
        let mut required = Vec::new();
        for field in fields {
            let Some(name) = field.get("name").and_then(Value::as_str) else {
                continue;
            };
            let kind = field
                .get("type")
                .and_then(Value::as_str)
                .filter(|t| {
                    ["boolean", "string", "number", "integer", "array", "object"].contains(t)
                })
                .unwrap_or("string");
            let mut property = Map::new();
            property.insert("type".into(), json!(kind));
            if let Some(label) = field.get("label").filter(|l| l.is_string()) {
                property.insert("title".into(), label.clone());
            }
            if let Some(d) = field.get("description").filter(|d| d.is_string()) {
                property.insert("description".into(), d.clone());
            }
            if let Some(Value::Array(options)) = field.get("options")
                && options.iter().all(Value::is_string)
            {
                property.insert("enum".into(), Value::Array(options.clone()));
            }
            if field.get("required") == Some(&Value::Bool(true)) {
                required.push(json!(name));
            }
            properties.insert(name.to_owned(), Value::Object(property));
        }
        if properties.is_empty() {
            return None;
        }
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".into(), Value::Array(required));
        }
        Some(schema)
    }

    /// The data part that answers this form with `values`.
    pub fn response(&self, values: Value) -> Part {
        Part::data(json!({
            "type": FORM_RESPONSE_TYPE,
            "formId": self.form_id,
            "values": values,
        }))
    }
}

/// The values `message` answers the form `form_id` with: the `values` of
/// its first [`FORM_RESPONSE_TYPE`] data part naming that form (an object
/// of the form's field names), `None` when it holds no such answer. A
/// form answer is a data part, so `RequestContext::text` does not show
/// it: an agent waiting on a form reads it here.
pub fn form_values<'m>(message: &'m Message, form_id: &str) -> Option<&'m Value> {
    message.parts.iter().find_map(|part| match &part.content {
        PartContent::Data(d)
            if d.get("type").and_then(Value::as_str) == Some(FORM_RESPONSE_TYPE)
                && d.get("formId").and_then(Value::as_str) == Some(form_id) =>
        {
            d.get("values")
        }
        _ => None,
    })
}

/// The data part of a form with id `form_id`, `title` and `fields`
/// (`[{"name", "type", "label", "required", "options"}, …]`, see
/// [`HitlForm::response_schema`]), for `TaskEventsExt::ask_form`.
pub fn form_part(form_id: &str, title: &str, fields: Value) -> Part {
    Part::data(json!({
        "type": FORM_TYPE,
        "formId": form_id,
        "title": title,
        "fields": fields,
    }))
}

#[cfg(test)]
mod tests {
    use switchboard_protocol::Role;

    use super::*;

    #[test]
    fn form_values_are_read_from_the_answer_to_that_form_only() {
        let form = |id: &str| HitlForm {
            form_id: id.into(),
            data: Map::new(),
        };
        let asked = form_part(
            "f1",
            "Go?",
            json!([{"name": "approved", "type": "boolean"}]),
        );
        assert_eq!(
            HitlForm::from_part(&asked).map(|f| f.form_id),
            Some("f1".to_owned())
        );
        let answer = Message::new(
            Role::User,
            vec![
                Part::text("here"),
                form("other").response(json!({"approved": false})),
                form("f1").response(json!({"approved": true})),
            ],
        );
        assert_eq!(form_values(&answer, "f1"), Some(&json!({"approved": true})));
        assert_eq!(
            form_values(&answer, "other"),
            Some(&json!({"approved": false}))
        );
        assert_eq!(form_values(&answer, "missing"), None);
        assert_eq!(answer.text(), "here", "the answer is not text");
    }

    #[test]
    fn finds_the_form_and_answers_it() {
        let form = json!({"type": FORM_TYPE, "formId": "f1", "title": "Approve?", "fields": []});
        let message = Message::new(
            Role::Agent,
            vec![
                Part::text("Approve?"),
                Part::data(json!({"type": "other"})),
                Part::data(form.clone()),
            ],
        );
        let found = HitlForm::find(&message);
        assert_eq!(found.as_ref().map(|f| f.form_id.as_str()), Some("f1"));
        assert_eq!(
            found.as_ref().map(|f| Value::Object(f.data.clone())),
            Some(form)
        );
        let answer = found.map(|f| f.response(json!({"approved": true})));
        assert_eq!(
            answer.map(|p| p.content),
            Some(PartContent::Data(
                json!({"type": FORM_RESPONSE_TYPE, "formId": "f1", "values": {"approved": true}})
            ))
        );
    }

    #[test]
    fn the_response_schema_comes_from_the_fields() {
        let form = |fields: Value| {
            HitlForm::from_part(&Part::data(
                json!({"type": FORM_TYPE, "formId": "f", "fields": fields}),
            ))
            .map(|f| f.response_schema().map(Value::Object))
        };
        assert_eq!(
            form(json!([
                {"name": "approved", "type": "boolean", "label": "Approve?", "required": true},
                {"name": "comment", "type": "textarea", "description": "why"},
                {"name": "size", "type": "select", "options": ["s", "m"]},
                {"type": "boolean"},
            ])),
            Some(Some(json!({
                "type": "object",
                "properties": {
                    "approved": {"type": "boolean", "title": "Approve?"},
                    "comment": {"type": "string", "description": "why"},
                    "size": {"type": "string", "enum": ["s", "m"]},
                },
                "required": ["approved"],
            })))
        );
        // No fields (or none with a name): no schema.
        assert_eq!(form(json!([])), Some(None));
        assert_eq!(form(json!([{"type": "string"}])), Some(None));
        assert_eq!(form(json!("approved")), Some(None));
    }

    #[test]
    fn a_form_needs_its_type_and_a_string_id() {
        for data in [
            json!({"type": FORM_TYPE}),
            json!({"type": FORM_TYPE, "formId": 7}),
            json!({"type": "a2a.hitl.formx", "formId": "f"}),
            json!([FORM_TYPE]),
        ] {
            assert_eq!(
                HitlForm::from_part(&Part::data(data.clone())),
                None,
                "{data}"
            );
        }
        assert_eq!(HitlForm::from_part(&Part::text(FORM_TYPE)), None);
    }
}
