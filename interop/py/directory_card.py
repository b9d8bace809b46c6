"""Read a switchboard directory card (`agent = "none"` with `[[agents]]`)
with the official Python SDK (a2a-sdk 1.x): the server's card resolved and
parsed as an AgentCard, one skill per expected agent, and each skill's
description naming that agent's own card, which resolves too and names
the agent.

Usage: python directory_card.py URL AGENT [AGENT ...]

Prints one JSON line per step {"step", "ok", "detail"} and a final line
"interop: N passed, M failed". Exit code 0 only if every step passed.
"""

import asyncio
import json
import re
import sys

import httpx

from a2a.client import A2ACardResolver

TIMEOUT_S = 20.0


async def main() -> int:
    base, agents = sys.argv[1].rstrip('/'), sys.argv[2:]
    results = []

    def record(step, ok, detail=''):
        results.append(ok)
        print(json.dumps({'step': step, 'ok': ok, 'detail': detail}), flush=True)

    async with httpx.AsyncClient(timeout=TIMEOUT_S) as http:
        try:
            card = await A2ACardResolver(http, base).get_agent_card()
            ids = [s.id for s in card.skills]
            ok = sorted(ids) == sorted(agents) and len(card.supported_interfaces) > 0
            record('directory card', ok, f'skills {ids}')
        except Exception as e:  # noqa: BLE001 - reported as a failed step
            record('directory card', False, repr(e))
            card = None
        for agent in agents:
            step = f'agent {agent}'
            try:
                skill = next(s for s in card.skills if s.id == agent)
                urls = re.findall(r'https?://\S+/\.well-known/agent-card\.json', skill.description)
                if len(urls) != 1 or not urls[0].startswith(base + '/'):
                    raise AssertionError(f'no card URL under {base} in {skill.description!r}')
                url = urls[0]
                own = await A2ACardResolver(
                    http, url[: -len('/.well-known/agent-card.json')]
                ).get_agent_card()
                record(step, own.name == agent and len(skill.tags) > 0, f'{url}: {own.name}')
            except Exception as e:  # noqa: BLE001
                record(step, False, repr(e))
    passed = sum(results)
    print(f'interop: {passed} passed, {len(results) - passed} failed')
    return 0 if all(results) else 1


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
