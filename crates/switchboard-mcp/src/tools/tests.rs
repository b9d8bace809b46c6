#![allow(clippy::unwrap_used)]

use serde_json::json;
use switchboard_protocol::{AgentCard, AgentSkill};

use super::*;

fn card(skills: &[&str]) -> AgentCard {
    let mut card = AgentCard::new("Demo agent", "does things", "1.0");
    for id in skills {
        card = card.with_skill(AgentSkill::new(*id, "Skill", "a skill", &["t"]));
    }
    card
}

#[test]
fn skills_become_tools_named_by_their_ids() {
    let mut table = ToolTable::default();
    table.add_agent(0, &card(&["analyse", "life cycle", "life/cycle"]), None);
    let names: Vec<String> = table.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["analyse", "life_cycle", "life_cycle_2"]);
    let route = table.get("life_cycle_2").unwrap();
    assert_eq!(route.skill.as_deref(), Some("life/cycle"));
    let schema = &table.get("analyse").unwrap().tool.input_schema;
    assert_eq!(schema["required"], json!(["message"]));
    assert!(
        schema["properties"].get("data").is_none(),
        "no JSON input mode"
    );
}

#[test]
fn an_agent_without_skills_gets_the_generic_tool_and_prefixes_tell_agents_apart() {
    let mut table = ToolTable::default();
    table.add_agent(0, &card(&[]), Some(&tool_name_part("Demo agent")));
    table.add_agent(1, &card(&["x"]), Some("b"));
    let names: Vec<String> = table.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["Demo_agent__send_message", "b__x"]);
    assert_eq!(table.get("b__x").unwrap().agent, 1);
    assert!(table.get("x").is_none());
    let long = "a".repeat(100);
    assert_eq!(tool_name_part(&long).len(), MAX_NAME);
    assert_eq!(tool_name_part(" "), "agent");
}

#[test]
fn arguments_are_checked() {
    let ok = json!({"message": "hi", "task_id": "t1", "data": {"a": 1}});
    let args = Arguments::read(ok.as_object(), false).unwrap();
    assert_eq!(args.message, "hi");
    assert_eq!(args.task_id.as_deref(), Some("t1"));
    assert_eq!(args.data, Some(json!({"a": 1})));
    for bad in [
        json!({}),
        json!({"message": 1}),
        json!({"message": "x", "data": 3}),
        json!({"message": "x", "task_id": ""}),
        json!({"message": "x", "other": 1}),
    ] {
        assert!(Arguments::read(bad.as_object(), false).is_err(), "{bad}");
    }
    assert_eq!(Arguments::read(None, true).unwrap(), Arguments::default());
}
