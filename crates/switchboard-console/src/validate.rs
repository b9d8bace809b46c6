//! Checking an agent card against the A2A 1.0 spec, field by field.
//!
//! The check reads the card as the JSON document the agent served, not the
//! typed [`AgentCard`](switchboard_client::protocol::AgentCard): decoding
//! fills in defaults and drops what it does not know, so a field the agent
//! left out would look present. Each rule broken is one [`CardIssue`]
//! naming the field by its JSON path (`supportedInterfaces[0].protocolVersion`)
//! and the rule in words. Fields of the A2A 0.3 card that hybrid cards carry
//! beside the 1.0 ones (`url`, `preferredTransport`, …) are not issues.
//!
//! The rules are the spec's required fields (the `REQUIRED` field
//! behaviours of `a2a.proto`), the JSON type of each field, and the rules
//! between fields: skill ids unique, security requirements naming declared
//! schemes, one kind per security scheme with its own required fields,
//! absolute interface URLs, `major.minor` protocol versions and media types
//! that are `type/subtype`. A binding outside the three core ones is a
//! warning: the spec allows it, but most clients will not speak it.

use serde::Serialize;
use serde_json::{Map, Value};

/// One rule a card breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardIssue {
    /// The field, as a JSON path from the card's root
    /// (`skills[2].tags`); empty for the card itself.
    pub path: String,
    /// The rule, in words.
    pub rule: String,
    /// `error` (the spec requires otherwise) or `warning` (allowed, but
    /// clients will likely fail on it).
    pub severity: &'static str,
}

#[derive(Default)]
struct Issues(Vec<CardIssue>);

impl Issues {
    fn error(&mut self, path: impl Into<String>, rule: impl Into<String>) {
        self.0.push(CardIssue {
            path: path.into(),
            rule: rule.into(),
            severity: "error",
        });
    }

    fn warning(&mut self, path: impl Into<String>, rule: impl Into<String>) {
        self.0.push(CardIssue {
            path: path.into(),
            rule: rule.into(),
            severity: "warning",
        });
    }

    /// A required string: present, a string, not empty.
    fn required_string<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        base: &str,
        key: &str,
    ) -> Option<&'v str> {
        let path = join(base, key);
        match obj.get(key) {
            None | Some(Value::Null) => {
                self.error(path, "required field is missing");
                None
            }
            Some(Value::String(s)) if s.trim().is_empty() => {
                self.error(path, "required field is empty");
                None
            }
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                self.error(path, "must be a string");
                None
            }
        }
    }

    /// An optional string: absent, or a string.
    fn optional_string<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        base: &str,
        key: &str,
    ) -> Option<&'v str> {
        match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                self.error(join(base, key), "must be a string");
                None
            }
        }
    }

    /// A required array (possibly empty unless `non_empty`).
    fn required_array<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        base: &str,
        key: &str,
        non_empty: bool,
    ) -> &'v [Value] {
        let path = join(base, key);
        match obj.get(key) {
            None | Some(Value::Null) => {
                self.error(path, "required field is missing");
                &[]
            }
            Some(Value::Array(items)) => {
                if non_empty && items.is_empty() {
                    self.error(path, "must list at least one entry");
                }
                items
            }
            Some(_) => {
                self.error(path, "must be an array");
                &[]
            }
        }
    }

    /// An optional array.
    fn optional_array<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        base: &str,
        key: &str,
    ) -> &'v [Value] {
        match obj.get(key) {
            None | Some(Value::Null) => &[],
            Some(Value::Array(items)) => items,
            Some(_) => {
                self.error(join(base, key), "must be an array");
                &[]
            }
        }
    }

    fn strings(&mut self, items: &[Value], path: &str) {
        for (i, item) in items.iter().enumerate() {
            if !item.is_string() {
                self.error(format!("{path}[{i}]"), "must be a string");
            }
        }
    }

    fn media_types(&mut self, items: &[Value], path: &str) {
        self.strings(items, path);
        for (i, item) in items.iter().enumerate() {
            if let Some(s) = item.as_str()
                && !is_media_type(s)
            {
                self.error(
                    format!("{path}[{i}]"),
                    format!("{s:?} is not a media type (type/subtype)"),
                );
            }
        }
    }

    fn object<'v>(&mut self, value: &'v Value, path: &str) -> Option<&'v Map<String, Value>> {
        match value {
            Value::Object(obj) => Some(obj),
            _ => {
                self.error(path, "must be an object");
                None
            }
        }
    }
}

fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}

fn is_media_type(s: &str) -> bool {
    let token = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+*".contains(c))
    };
    let essence = s.split(';').next().unwrap_or("").trim();
    matches!(essence.split_once('/'), Some((t, sub)) if token(t) && token(sub))
}

fn is_absolute_http_url(s: &str) -> bool {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/'))
}

/// Every rule of the A2A 1.0 spec `card` breaks (see the module docs);
/// empty for a valid card.
pub fn validate_card(card: &Value) -> Vec<CardIssue> {
    let mut issues = Issues::default();
    let Some(root) = issues.object(card, "") else {
        return issues.0;
    };
    issues.required_string(root, "", "name");
    issues.required_string(root, "", "description");
    issues.required_string(root, "", "version");
    for (i, iface) in issues
        .required_array(root, "", "supportedInterfaces", true)
        .iter()
        .enumerate()
    {
        interface(&mut issues, iface, &format!("supportedInterfaces[{i}]"));
    }
    match root.get("capabilities") {
        None | Some(Value::Null) => issues.error("capabilities", "required field is missing"),
        Some(caps) => capabilities(&mut issues, caps),
    }
    for key in ["defaultInputModes", "defaultOutputModes"] {
        let modes = issues.required_array(root, "", key, true);
        issues.media_types(modes, key);
    }
    let mut ids = std::collections::HashSet::new();
    for (i, skill_value) in issues
        .required_array(root, "", "skills", false)
        .iter()
        .enumerate()
    {
        let path = format!("skills[{i}]");
        if let Some(id) = skill(&mut issues, skill_value, &path)
            && !ids.insert(id.to_owned())
        {
            issues.error(
                format!("{path}.id"),
                format!("skill id {id:?} is used by an earlier skill"),
            );
        }
    }
    if let Some(provider) = root.get("provider").filter(|p| !p.is_null())
        && let Some(obj) = issues.object(provider, "provider")
    {
        if let Some(url) = issues.required_string(obj, "provider", "url")
            && !is_absolute_http_url(url)
        {
            issues.error("provider.url", "must be an absolute http(s) URL");
        }
        issues.required_string(obj, "provider", "organization");
    }
    for key in ["documentationUrl", "iconUrl"] {
        if let Some(url) = issues.optional_string(root, "", key)
            && !is_absolute_http_url(url)
        {
            issues.error(key, "must be an absolute http(s) URL");
        }
    }
    let schemes = security_schemes(&mut issues, root);
    let requirements = issues.optional_array(root, "", "securityRequirements");
    security_requirements(&mut issues, requirements, "securityRequirements", &schemes);
    for (i, skill) in root
        .get("skills")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        if let Some(obj) = skill.as_object() {
            let base = format!("skills[{i}]");
            let requirements = issues.optional_array(obj, &base, "securityRequirements");
            security_requirements(
                &mut issues,
                requirements,
                &join(&base, "securityRequirements"),
                &schemes,
            );
        }
    }
    for (i, signature) in issues
        .optional_array(root, "", "signatures")
        .iter()
        .enumerate()
    {
        let path = format!("signatures[{i}]");
        if let Some(obj) = issues.object(signature, &path) {
            issues.required_string(obj, &path, "protected");
            issues.required_string(obj, &path, "signature");
        }
    }
    issues.0
}

fn interface(issues: &mut Issues, value: &Value, path: &str) {
    let Some(obj) = issues.object(value, path) else {
        return;
    };
    let binding = issues.required_string(obj, path, "protocolBinding");
    let core = ["JSONRPC", "HTTP+JSON", "GRPC"];
    if let Some(b) = binding
        && !core.contains(&b)
    {
        issues.warning(
            join(path, "protocolBinding"),
            format!("{b:?} is not a core binding (JSONRPC, HTTP+JSON, GRPC): most clients will not speak it"),
        );
    }
    if let Some(url) = issues.required_string(obj, path, "url") {
        let grpc = binding == Some("GRPC");
        if !grpc && !is_absolute_http_url(url) {
            issues.error(join(path, "url"), "must be an absolute http(s) URL");
        }
    }
    if let Some(version) = issues.required_string(obj, path, "protocolVersion") {
        let parts: Vec<&str> = version.split('.').collect();
        let numeric = parts.len() >= 2
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        if !numeric {
            issues.error(
                join(path, "protocolVersion"),
                format!("{version:?} is not a version (major.minor)"),
            );
        }
    }
    issues.optional_string(obj, path, "tenant");
}

fn capabilities(issues: &mut Issues, value: &Value) {
    let Some(obj) = issues.object(value, "capabilities") else {
        return;
    };
    for key in ["streaming", "pushNotifications", "extendedAgentCard"] {
        if let Some(v) = obj.get(key)
            && !v.is_boolean()
            && !v.is_null()
        {
            issues.error(join("capabilities", key), "must be a boolean");
        }
    }
    for (i, ext) in issues
        .optional_array(obj, "capabilities", "extensions")
        .iter()
        .enumerate()
    {
        let path = format!("capabilities.extensions[{i}]");
        if let Some(ext) = issues.object(ext, &path) {
            issues.required_string(ext, &path, "uri");
            issues.optional_string(ext, &path, "description");
            if let Some(v) = ext.get("required")
                && !v.is_boolean()
                && !v.is_null()
            {
                issues.error(join(&path, "required"), "must be a boolean");
            }
            if let Some(v) = ext.get("params")
                && !v.is_object()
                && !v.is_null()
            {
                issues.error(join(&path, "params"), "must be an object");
            }
        }
    }
}

/// Checks a skill; its id when it has one.
fn skill<'v>(issues: &mut Issues, value: &'v Value, path: &str) -> Option<&'v str> {
    let obj = issues.object(value, path)?;
    let id = issues.required_string(obj, path, "id");
    issues.required_string(obj, path, "name");
    issues.required_string(obj, path, "description");
    let tags = issues.required_array(obj, path, "tags", false);
    issues.strings(tags, &join(path, "tags"));
    let examples = issues.optional_array(obj, path, "examples");
    issues.strings(examples, &join(path, "examples"));
    for key in ["inputModes", "outputModes"] {
        let modes = issues.optional_array(obj, path, key);
        issues.media_types(modes, &join(path, key));
    }
    id
}

/// Checks the declared schemes; their names.
fn security_schemes(issues: &mut Issues, root: &Map<String, Value>) -> Vec<String> {
    let Some(value) = root.get("securitySchemes").filter(|v| !v.is_null()) else {
        return Vec::new();
    };
    let Some(schemes) = issues.object(value, "securitySchemes") else {
        return Vec::new();
    };
    const KINDS: [(&str, &[&str]); 5] = [
        ("apiKeySecurityScheme", &["location", "name"]),
        ("httpAuthSecurityScheme", &["scheme"]),
        ("oauth2SecurityScheme", &[]),
        ("openIdConnectSecurityScheme", &["openIdConnectUrl"]),
        ("mtlsSecurityScheme", &[]),
    ];
    for (name, scheme) in schemes {
        let path = format!("securitySchemes.{name}");
        let Some(obj) = issues.object(scheme, &path) else {
            continue;
        };
        let kinds: Vec<&str> = KINDS
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| obj.contains_key(*k))
            .collect();
        match kinds.as_slice() {
            [] => issues.error(
                path,
                "names no kind of scheme (apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme)",
            ),
            [kind] => {
                let kpath = join(&path, kind);
                if let Some(inner) = obj.get(*kind).and_then(|k| issues.object(k, &kpath)) {
                    let required = KINDS.iter().find(|(k, _)| k == kind).map(|(_, r)| *r).unwrap_or_default();
                    for field in required {
                        issues.required_string(inner, &kpath, field);
                    }
                    if *kind == "oauth2SecurityScheme" && inner.get("flows").is_none_or(|f| !f.is_object()) {
                        issues.error(join(&kpath, "flows"), "required field is missing");
                    }
                }
            }
            _ => issues.error(path, format!("names {} kinds of scheme: exactly one is allowed", kinds.len())),
        }
    }
    schemes.keys().cloned().collect()
}

fn security_requirements(
    issues: &mut Issues,
    requirements: &[Value],
    path: &str,
    schemes: &[String],
) {
    for (i, requirement) in requirements.iter().enumerate() {
        let rpath = format!("{path}[{i}]");
        let Some(obj) = issues.object(requirement, &rpath) else {
            continue;
        };
        let Some(named) = obj.get("schemes").and_then(Value::as_object) else {
            issues.error(join(&rpath, "schemes"), "required field is missing");
            continue;
        };
        for name in named.keys() {
            if !schemes.iter().any(|s| s == name) {
                issues.error(
                    format!("{rpath}.schemes.{name}"),
                    format!(
                        "names the security scheme {name:?}, which securitySchemes does not declare"
                    ),
                );
            }
        }
    }
}
