//! The relay agent: one agent-to-agent hop through switchboard's client.
//!
//! A message `URL TEXT` is sent to the agent whose card is served under
//! URL, and that agent's answer comes back as this agent's reply, hinted as
//! a subagent's output so AG-UI frontends show whose it is.

use switchboard_agui::hints::PartHints;
use switchboard_core::{AgentExecutor, BoxError, RequestContext, TaskEvents, async_trait};
use switchboard_protocol::{AgentCard, AgentSkill, Message, Part, Role};

/// Forwards each message to another A2A agent with switchboard's client and
/// answers with that agent's reply: send `URL TEXT` (the URL the other
/// agent's card is served under). It shows an agent-to-agent hop: with
/// tracing on, the outgoing call joins the incoming request's trace; the
/// reply's part is hinted as the other agent's run (`agui_subagent_run_id`
/// = its task or message id, `agui_subagent_name` = its card's name), so
/// AG-UI UIs show it as a subagent's output.
///
/// It calls whatever URL it is given, so serve it (`switchboard serve --agent relay`) only
/// where callers are trusted: it is a demo and test agent.
#[derive(Debug, Default)]
pub struct Relay;

#[async_trait]
impl AgentExecutor for Relay {
    async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        let text = ctx.text();
        let Some((url, rest)) = text.trim().split_once(char::is_whitespace) else {
            return Err("send `URL TEXT`: the agent to call and what to send it".into());
        };
        let client = switchboard_client::A2AClient::connect(url).await?;
        let name = client
            .card()
            .map_or_else(|| url.to_owned(), |card| card.name.clone());
        let (run, answer) = match client.send_text(rest.trim()).await? {
            switchboard_protocol::SendMessageResponse::Message(m) => {
                (m.task_id.clone().unwrap_or(m.message_id.clone()), m.text())
            }
            switchboard_protocol::SendMessageResponse::Task(t) => {
                let text = t
                    .artifacts
                    .unwrap_or_default()
                    .iter()
                    .map(|a| a.text())
                    .collect::<Vec<_>>()
                    .join("\n");
                (t.id, text)
            }
            other => return Err(format!("unexpected answer: {other:?}").into()),
        };
        // The answer is the other agent's output: hinted as its run's, so
        // an AG-UI UI shows it as a subagent's.
        let part = PartHints::default()
            .from_subagent(&run, &name)
            .apply(Part::text(answer));
        Ok(events.reply(Message::new(Role::Agent, vec![part])).await?)
    }
}

/// The relay agent's card.
pub fn relay_card() -> AgentCard {
    AgentCard::new(
        "switchboard relay",
        "Forwards `URL TEXT` to the agent at URL and answers with its reply.",
        env!("CARGO_PKG_VERSION"),
    )
    .with_streaming(true)
    .with_skill(AgentSkill::new(
        "relay",
        "Relay",
        "Calls another A2A agent",
        &["relay"],
    ))
}
