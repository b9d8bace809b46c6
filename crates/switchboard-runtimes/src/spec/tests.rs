#![allow(clippy::unwrap_used)]
use super::*;

/// The `[[agents]]` tables of a config file's text.
fn lists(text: &str) -> Vec<toml::Table> {
    let mut table: toml::Table = text.parse().unwrap();
    let Some(toml::Value::Array(items)) = table.remove("agents") else {
        panic!("a list")
    };
    items
        .into_iter()
        .map(|t| match t {
            toml::Value::Table(t) => t,
            _ => panic!("a table"),
        })
        .collect()
}

// The error with its causes, as anyhow's `{:#}` shows it.
use crate::llm::stream::error_chain as chain;

fn error(text: &str) -> String {
    chain(&parse(&lists(text)).unwrap_err())
}

#[tokio::test]
async fn agents_parse_with_their_runtime_keys() {
    let specs = parse(&lists(
        r#"
        [[agents]]
        name = "support"
        path = "/support/"
        runtime = "exec"
        command = "python3"
        args = ["-u", "x.py"]
        mode = "lines"
        timeout = 1.5
        [[agents.skills]]
        id = "faq"
        name = "FAQ"
        description = "Looks up the FAQ"
        tags = ["support"]
        [[agents]]
        name = "echo"
        path = "/echo"
        runtime = "echo"
        "#,
    ))
    .unwrap();
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[0].path, "/support");
    let Runtime::Exec(config) = &specs[0].runtime else {
        panic!("exec")
    };
    assert_eq!(config.args, ["-u", "x.py"]);
    assert_eq!(config.timeout, std::time::Duration::from_millis(1500));
    let (_, card) = specs[0].build().await.unwrap();
    assert_eq!(card.name, "support");
    assert_eq!(card.skills[0].id, "faq");
    assert!(matches!(&specs[1].runtime, Runtime::Builtin(n) if n == "echo-message"));
}

#[tokio::test]
async fn llm_agents_parse_and_show_only_the_key_variable_name() {
    let specs = parse(&lists(
        r#"
        [[agents]]
        name = "assistant"
        path = "/assistant"
        runtime = "llm"
        base_url = "http://127.0.0.1:9/v1"
        model = "tiny"
        api_key_env = "SWITCHBOARD_TEST_LLM_KEY_UNSET"
        temperature = 0
        idle_timeout = 2.5
        tools = [{ a2a = "http://127.0.0.1:9" }]
        "#,
    ))
    .unwrap();
    let Runtime::Llm(config) = &specs[0].runtime else {
        panic!("llm")
    };
    assert_eq!(config.model, "tiny");
    assert_eq!(config.idle_timeout, std::time::Duration::from_millis(2500));
    assert_eq!(config.tools[0].a2a, "http://127.0.0.1:9");
    // The key's variable is read when the agent is built: unset, an error naming it.
    let e = chain(&specs[0].build().await.unwrap_err());
    assert!(e.contains("SWITCHBOARD_TEST_LLM_KEY_UNSET"), "{e}");
    let shown = toml::to_string(&specs[0].masked_table(|_| true)).unwrap();
    assert!(
        shown.contains("api_key_env = \"SWITCHBOARD_TEST_LLM_KEY_UNSET\""),
        "{shown}"
    );
}

#[test]
fn mistakes_are_errors_naming_the_table() {
    let e = error("[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"llama\"\n");
    assert!(
        e.contains("[[agents]] #1 (\"a\")") && e.contains("unknown runtime"),
        "{e}"
    );
    let e = error("[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"exec\"\n");
    assert!(e.contains("#1") && e.contains("command"), "{e}");
    let e = error(
        "[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"echo\"\n[[agents]]\nname = \"b\"\npath = \"/a\"\nruntime = \"demo\"\n",
    );
    assert!(
        e.contains("#2 (\"b\")") && e.contains("clashes with [[agents]] #1"),
        "{e}"
    );
    let e = error(
        "[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"exec\"\ncommand = \"x\"\ncomand = \"y\"\n",
    );
    assert!(e.contains("comand"), "{e}");
    let e = error("[[agents]]\nname = \"a\"\npath = \"/metrics\"\nruntime = \"demo\"\n");
    assert!(e.contains("reserved"), "{e}");
    let e = error("[[agents]]\nname = \"a\"\npath = \"/tasks\"\nruntime = \"demo\"\n");
    assert!(e.contains("reserved"), "{e}");
    let e = error("[[agents]]\nname = \"a\"\npath = \"/\"\nruntime = \"demo\"\n");
    assert!(e.contains("`/`"), "{e}");
    let e = error("[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"demo\"\ncommand = \"x\"\n");
    assert!(e.contains("unknown key `command` for runtime demo"), "{e}");
    let e = error(
        "[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"proxy\"\nurl = \"http://127.0.0.1:1\"\nheader = [\"Authorization: Bearer x\"]\n",
    );
    assert!(
        e.contains("runtime proxy") && e.contains("token_env"),
        "{e}"
    );
    let e = error(
        "[[agents]]\nname = \"a\"\npath = \"/a\"\nruntime = \"llm\"\nbase_url = \"ftp://x\"\nmodel = \"m\"\n",
    );
    assert!(e.contains("runtime llm") && e.contains("base_url"), "{e}");
}
