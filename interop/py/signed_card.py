"""The official Python SDK verifies a card switchboard signed.

Usage: signed_card.py BASE_URL

With a2a-sdk 1.x and its `signing` extra (PyJWT): fetches the server's JWKS,
reads the card through the SDK's card resolver with the SDK's signature
verifier (`a2a.utils.signing.create_signature_verifier`, ES256 only, keys
resolved by `kid` and only from the server's own `jku`), then checks that the
same verifier refuses the card after a change to any signed field, and a
card whose signature was swapped for another. Finally it signs a card of
its own with the SDK's signer and prints it (line `python-signed: {json}`)
with its public JWKS (line `python-jwks: {json}`), so the Rust side can
verify the Python canonical form too. Prints one line per step and, last,
"interop: N passed, M failed".
"""

import asyncio
import copy
import json
import sys
import traceback

import httpx
from a2a.client.card_resolver import A2ACardResolver, parse_agent_card
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from a2a.utils.signing import (
    InvalidSignaturesError,
    create_agent_card_signer,
    create_signature_verifier,
)
from cryptography.hazmat.primitives.asymmetric import ec
from google.protobuf.json_format import MessageToDict
from jwt import PyJWK
from jwt.algorithms import ECAlgorithm

BASE = sys.argv[1].rstrip("/")
JWKS_URL = f"{BASE}/.well-known/jwks.json"
passed = 0
failed = 0


def step(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def refuses(verifier, card):
    try:
        verifier(card)
    except InvalidSignaturesError:
        return True
    return False


async def main():
    async with httpx.AsyncClient(timeout=10) as http:
        jwks = (await http.get(JWKS_URL)).json()

        def key_provider(kid, jku):
            # Only keys the card's own server publishes.
            if jku != JWKS_URL:
                raise ValueError(f"untrusted jku {jku}")
            for key in jwks["keys"]:
                if key.get("kid") == kid:
                    return PyJWK(key)
            raise ValueError(f"unknown kid {kid}")

        verifier = create_signature_verifier(key_provider, ["ES256"])
        card = await A2ACardResolver(http, BASE).get_agent_card(
            signature_verifier=verifier
        )
        step("resolver verifies the signed card", len(card.signatures) >= 1)

        raw = (await http.get(f"{BASE}/.well-known/agent-card.json")).json()
        for field, change in [
            ("name", lambda c: c.__setitem__("name", c["name"] + "!")),
            ("description", lambda c: c.__setitem__("description", "forged")),
            ("skill tags", lambda c: c["skills"][0]["tags"].append("forged")),
            (
                "capabilities",
                lambda c: c["capabilities"].__setitem__(
                    "streaming", not c["capabilities"].get("streaming", False)
                ),
            ),
        ]:
            tampered = copy.deepcopy(raw)
            change(tampered)
            step(
                f"a changed {field} is refused",
                refuses(verifier, parse_agent_card(tampered)),
            )

        swapped = copy.deepcopy(raw)
        sig = swapped["signatures"][0]
        sig["signature"] = sig["signature"][::-1]
        step("a garbled signature is refused", refuses(verifier, parse_agent_card(swapped)))

    # The other direction: the SDK signs, switchboard verifies (printed for
    # the Rust test).
    private = ec.generate_private_key(ec.SECP256R1())
    public_jwk = json.loads(ECAlgorithm.to_jwk(private.public_key()))
    public_jwk.update({"kid": "py-1", "alg": "ES256", "use": "sig"})
    own = AgentCard(
        name="signed in python",
        description="ünïcödé and \"quotes\" survive canonicalization",
        version="1.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        supported_interfaces=[
            AgentInterface(
                url="http://127.0.0.1:1/",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="d", tags=["t"])],
    )
    signer = create_agent_card_signer(
        PyJWK(
            json.loads(ECAlgorithm.to_jwk(private))
            | {"kid": "py-1", "alg": "ES256"}
        ),
        {"kid": "py-1", "alg": "ES256", "typ": "JOSE"},
    )
    own = signer(own)
    print("python-signed: " + json.dumps(MessageToDict(own)))
    print("python-jwks: " + json.dumps({"keys": [public_jwk]}))
    step("the SDK signed a card of its own", len(own.signatures) == 1)


try:
    asyncio.run(main())
except Exception:  # noqa: BLE001 - any failure is a failed step
    traceback.print_exc()
    step("driver ran to the end", False)
print(f"interop: {passed} passed, {failed} failed")
