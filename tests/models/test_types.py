import hashlib
import json

import pytest
from pydantic import ValidationError

from models.types import ChatMessage, ChatRequest


def _req(**kw) -> ChatRequest:
    return ChatRequest(
        messages=(ChatMessage(role="user", content="How many singers are there?"),), **kw
    )


def test_fingerprint_is_stable_and_sensitive_to_every_field() -> None:
    base = _req(n=2, temperature=0.7)
    assert base.fingerprint("m") == _req(n=2, temperature=0.7).fingerprint("m")
    variants = [
        _req(n=3, temperature=0.7),
        _req(n=2, temperature=0.8),
        _req(n=2, temperature=0.7, seed=1),
        _req(n=2, temperature=0.7, stop=("\n\n",)),
        _req(n=2, temperature=0.7, json_schema={"type": "object"}),
        _req(n=2, temperature=0.7, logprobs=True),
    ]
    keys = {v.fingerprint("m") for v in variants} | {
        base.fingerprint("m"),
        base.fingerprint("other-model"),
    }
    assert len(keys) == len(variants) + 2


def test_a_field_added_later_keeps_recorded_keys_at_its_default() -> None:
    # The key of a request without logprobs is the one recorded before the field existed.
    request = _req(n=2, temperature=0.7)
    legacy = json.dumps(
        {"model": "m", "request": request.model_dump(mode="json", exclude={"logprobs"})},
        sort_keys=True,
        ensure_ascii=False,
    )
    assert request.fingerprint("m") == hashlib.sha256(legacy.encode()).hexdigest()[:32]


def test_request_rejects_bad_values() -> None:
    with pytest.raises(ValidationError):
        ChatRequest(messages=())
    with pytest.raises(ValidationError):
        _req(n=0)
    with pytest.raises(ValidationError):
        _req(temperature=-0.1)
    with pytest.raises(ValidationError, match="json_schema or grammar"):
        _req(json_schema={"type": "object"}, grammar='root ::= "a"')
    with pytest.raises(ValidationError):
        ChatMessage(role="tool", content="x")


def test_request_is_frozen() -> None:
    with pytest.raises(ValidationError):
        _req().n = 5  # type: ignore[misc]


def test_excerpt_shortens_and_flattens_whitespace() -> None:
    req = ChatRequest(
        messages=(ChatMessage(role="system", content="line one\n\n  line two " + "x" * 200),)
    )
    excerpt = req.excerpt(40)
    assert excerpt.startswith("line one line two")
    assert len(excerpt) == 40 and excerpt.endswith("…")
