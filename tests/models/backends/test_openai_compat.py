"""OpenAI-compatible backend against real HTTP servers on 127.0.0.1.

Error paths use a scripted server (status, body, delay per request); the happy path, ``n``,
JSON schema, grammar and context overflow run against the real llama.cpp server with the
0.5B model (``real_model``).
"""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import SecretStr

from models.backends.openai_compat import OpenAICompatBackend, OpenAICompatSettings
from models.client import ModelClient, RetryPolicy, Slot
from models.errors import (
    ContextTooLong,
    ModelRequestRejected,
    ModelServerError,
    ModelTimeout,
    ModelUnavailable,
)
from models.scoring import scored, teacher_forced
from models.types import ChatMessage, ChatRequest


def _choice(text: str, index: int = 0) -> dict:
    return {
        "index": index,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "stop",
    }


def _completion(*texts: str) -> dict:
    return {
        "choices": [_choice(t, i) for i, t in enumerate(texts)],
        "usage": {"prompt_tokens": 20, "completion_tokens": 3 * len(texts)},
    }


class ScriptedServer:
    """A real HTTP server answering POSTs from a script of (status, body, delay_s)."""

    def __init__(self, script: list[tuple[int, object, float]]) -> None:
        self.script = list(script)
        self.received: list[dict] = []
        self.paths: list[str] = []
        self.authorization: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                outer.received.append(
                    json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                )
                outer.paths.append(self.path)
                outer.authorization.append(self.headers.get("Authorization"))
                status, body, delay = (
                    outer.script.pop(0) if outer.script else (200, _completion("SELECT 1"), 0)
                )
                threading.Event().wait(delay)
                payload = (body if isinstance(body, str) else json.dumps(body)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted():
    servers: list[ScriptedServer] = []

    def make(*script: tuple[int, object, float]) -> ScriptedServer:
        servers.append(ScriptedServer(list(script)))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def _req(content: str = "Count the singers.", **kw) -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="user", content=content),), **kw)


def _backend(url: str, **kw) -> OpenAICompatBackend:
    return OpenAICompatBackend(OpenAICompatSettings(base_url=url, model="m", **kw))


async def test_parses_choices_and_usage(scripted) -> None:
    server = scripted((200, _completion("SELECT 1", "SELECT 2"), 0))
    resp = await _backend(server.url).chat(_req(n=2, temperature=0.5, stop=(";",), seed=7))
    assert resp.texts == ("SELECT 1", "SELECT 2")
    assert resp.usage.prompt_tokens == 20 and resp.usage.completion_tokens == 6
    sent = server.received[0]
    assert (sent["n"], sent["temperature"], sent["stop"], sent["seed"]) == (2, 0.5, [";"], 7)
    assert sent["messages"] == [{"role": "user", "content": "Count the singers."}]


async def test_logprobs_are_asked_for_and_parsed_per_choice(scripted) -> None:
    reply = _completion("SELECT 1")
    reply["choices"][0]["logprobs"] = {
        "content": [
            {"token": "SELECT", "logprob": -0.25, "top_logprobs": []},
            {"token": " 1", "logprob": -1.5, "top_logprobs": []},
        ]
    }
    server = scripted((200, reply, 0), (200, _completion("SELECT 1"), 0))
    backend = _backend(server.url, flavor="llama.cpp")
    resp = await backend.chat(_req(grammar='root ::= "SELECT 1"', logprobs=True))
    assert [(t.token, t.logprob) for t in resp.logprobs[0]] == [("SELECT", -0.25), (" 1", -1.5)]
    sent = server.received[0]
    assert (sent["logprobs"], sent["top_logprobs"], sent["post_sampling_probs"]) == (True, 1, False)
    plain = await backend.chat(_req())
    assert plain.logprobs == () and "logprobs" not in server.received[1]


async def test_unreadable_logprobs_are_a_server_error(scripted) -> None:
    reply = _completion("SELECT 1")
    reply["choices"][0]["logprobs"] = {"content": [{"token": "SELECT"}]}
    server = scripted((200, reply, 0))
    with pytest.raises(ModelServerError, match="unreadable logprobs"):
        await _backend(server.url).chat(_req(logprobs=True))


async def test_cached_prompt_tokens_in_either_report_format(scripted) -> None:
    openai_style = _completion("SELECT 1") | {
        "usage": {
            "prompt_tokens": 20,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 16},
        }
    }
    llama_style = _completion("SELECT 2") | {"timings": {"cache_n": 12, "prompt_n": 8}}
    server = scripted(
        (200, openai_style, 0), (200, llama_style, 0), (200, _completion("SELECT 3"), 0)
    )
    backend = _backend(server.url)
    cached = [(await backend.chat(_req())).usage.cached_prompt_tokens for _ in range(3)]
    assert cached == [16, 12, 0]


async def test_fans_out_when_the_server_ignores_n(scripted) -> None:
    server = scripted(
        (200, _completion("A"), 0), (200, _completion("B"), 0), (200, _completion("C"), 0)
    )
    resp = await _backend(server.url).chat(_req(n=3, temperature=0.8, seed=10))
    assert sorted(resp.texts) == ["A", "B", "C"] and resp.usage.calls == 3
    assert resp.usage.prompt_tokens == 60
    # follow-up requests ask for one sample each, with distinct seeds
    assert [r["n"] for r in server.received] == [3, 1, 1]
    assert sorted(r["seed"] for r in server.received) == [10, 13, 14]


async def test_requests_above_max_n_are_split(scripted) -> None:
    server = scripted((200, _completion("A", "B", "C"), 0), (200, _completion("D", "E"), 0))
    resp = await _backend(server.url, max_n=3).chat(_req(n=5, temperature=0.8, seed=100))
    assert resp.texts == ("A", "B", "C", "D", "E")
    assert [(r["n"], r["seed"]) for r in server.received] == [(3, 100), (2, 103)]


async def test_concurrent_requests_leave_the_slot_to_the_server(scripted) -> None:
    # A request pinned to a busy llama.cpp slot (id_slot) queues there, and queued requests
    # came back mixed between prompts: the server picks every slot.
    server = scripted(*[(200, _completion("SELECT 1"), 0.2)] * 4)
    backend = _backend(server.url, flavor="llama.cpp")
    schema = "CREATE TABLE singer (id INTEGER, name TEXT, age INTEGER);\n" * 30
    await asyncio.gather(
        *(backend.chat(_req(schema + q)) for q in ("How many?", "Oldest?", "Youngest?", "Names?"))
    )
    assert len(server.received) == 4
    assert not any("id_slot" in r for r in server.received)


async def test_llama_cpp_multi_choice_usage_is_recounted(scripted) -> None:
    # llama.cpp reports the first choice's completion tokens only; the rest are tokenized.
    server = scripted(
        (
            200,
            {
                "choices": [_choice("SELECT a", 0), _choice("SELECT b FROM t", 1)],
                "usage": {"prompt_tokens": 20, "completion_tokens": 2},
            },
            0,
        ),
        (200, {"tokens": [1, 2]}, 0),
        (200, {"tokens": [3, 4, 5, 6]}, 0),
    )
    resp = await _backend(server.url, flavor="llama.cpp").chat(_req(n=2, temperature=0.7))
    assert resp.usage.completion_tokens == 6 and resp.usage.prompt_tokens == 20
    assert server.paths == ["/v1/chat/completions", "/tokenize", "/tokenize"]


@pytest.mark.parametrize(
    ("status", "body", "error", "match"),
    [
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "request (9000 tokens) exceeds the available context size "
                    "(8192 tokens)",
                    "type": "exceed_context_size_error",
                }
            },
            ContextTooLong,
            "9000 tokens",
        ),
        (
            400,
            {"error": {"message": "This model's maximum context length is 4096 tokens."}},
            ContextTooLong,
            "maximum context",
        ),
        (503, {"error": {"message": "Loading model"}}, ModelServerError, "HTTP 503"),
        (429, {"error": {"message": "slow down"}}, ModelServerError, "slow down"),
        (422, {"error": {"message": "bad field"}}, ModelRequestRejected, "bad field"),
        (401, "unauthorized", ModelRequestRejected, "API key"),
        (200, "<html>proxy error</html>", ModelServerError, "non-JSON"),
    ],
)
async def test_server_errors_become_typed_errors(scripted, status, body, error, match) -> None:
    server = scripted((status, body, 0))
    with pytest.raises(error, match=match):
        await _backend(server.url).chat(_req())


@pytest.mark.parametrize(
    ("body", "counts"),
    [
        (  # llama.cpp: the counts as fields of its error
            {
                "error": {
                    "code": 400,
                    "message": "request (8584 tokens) exceeds the available context size "
                    "(8192 tokens), try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 8584,
                    "n_ctx": 8192,
                }
            },
            (8584, 8192),
        ),
        (  # an older llama.cpp: the message only
            {
                "error": {
                    "message": "request (9000 tokens) exceeds the available context size "
                    "(8192 tokens)"
                }
            },
            (9000, 8192),
        ),
        (  # vLLM
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, "
                    "you requested 8600 tokens (8088 in the messages, 512 in the completion)."
                }
            },
            (8088, 8192),
        ),
        ({"error": {"message": "This model's maximum context length is 4096 tokens."}}, None),
    ],
)
async def test_a_refusal_for_length_carries_the_servers_counts(scripted, body, counts) -> None:
    server = scripted((400, body, 0))
    with pytest.raises(ContextTooLong) as refused:
        await _backend(server.url).chat(_req(max_tokens=256))
    exc = refused.value
    assert exc.max_tokens == 256
    if counts is None:
        assert (exc.prompt_tokens, exc.context, exc.overshoot) == (None, None, None)
    else:
        assert (exc.prompt_tokens, exc.context) == counts
        assert exc.overshoot == counts[0] + 256 - counts[1]


async def test_unreachable_server_is_model_unavailable(scripted) -> None:
    server = scripted()
    url = server.url
    server.close()
    with pytest.raises(ModelUnavailable, match="cannot reach"):
        await _backend(url).chat(_req())


async def test_slow_server_times_out_and_retries(scripted) -> None:
    server = scripted((200, _completion("late"), 2.0), (200, _completion("SELECT 9"), 0))
    client = ModelClient(
        {"s": Slot("s", _backend(server.url), timeout_s=0.5)},
        {"generator": "s"},
        RetryPolicy(max_attempts=2, backoff_s=0.0),
    )
    resp = await client.chat(_req(), role="generator")
    assert resp.texts == ("SELECT 9",)
    server.script.append((200, _completion("late"), 2.0))
    client.retry = RetryPolicy(max_attempts=1)
    with pytest.raises(ModelTimeout):
        await client.chat(_req(), role="generator")
    await client.aclose()


async def test_api_key_comes_from_the_named_variable(scripted, monkeypatch) -> None:
    with pytest.raises(ModelUnavailable, match="SA_TEST_KEY is not set"):
        _backend("http://127.0.0.1:9/v1", api_key_env="SA_TEST_KEY")
    monkeypatch.setenv("SA_TEST_KEY", "sk-test")
    captured: list[str] = []
    server = scripted()
    backend = _backend(server.url, api_key_env="SA_TEST_KEY")
    original = backend._post

    async def spy(body, request):
        captured.append(backend._headers["Authorization"])
        return await original(body, request)

    backend._post = spy  # type: ignore[method-assign]
    await backend.chat(_req())
    assert captured == ["Bearer sk-test"]


async def test_a_given_api_key_is_sent_with_every_request(scripted) -> None:
    # A local llama.cpp server's key: completions and the /tokenize calls counting extra samples.
    server = scripted(
        (200, _completion("a", "b"), 0), (200, {"tokens": [1]}, 0), (200, {"tokens": [1, 2]}, 0)
    )
    backend = _backend(server.url, flavor="llama.cpp", api_key=SecretStr("sk-local"))
    assert "sk-local" not in repr(backend.config)
    resp = await backend.chat(_req(n=2))
    assert resp.texts == ("a", "b") and server.paths == [
        "/v1/chat/completions",
        "/tokenize",
        "/tokenize",
    ]
    assert server.authorization == ["Bearer sk-local"] * 3
    await backend.aclose()


def test_constrained_output_fields_per_flavor() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    llama = _backend("http://x/v1", flavor="llama.cpp")
    vllm = _backend("http://x/v1", flavor="vllm")
    hosted = _backend("http://x/v1")
    assert (
        llama.payload(_req(json_schema=schema), n=1, seed=None)["response_format"]["json_schema"][
            "schema"
        ]
        == schema
    )
    assert llama.payload(_req(grammar='root ::= "x"'), n=1, seed=None)["grammar"] == 'root ::= "x"'
    assert vllm.payload(_req(grammar='root ::= "x"'), n=1, seed=None)["structured_outputs"] == {
        "grammar": 'root ::= "x"'
    }
    with pytest.raises(ValueError, match="no grammar"):
        hosted.payload(_req(grammar='root ::= "x"'), n=1, seed=None)


# --- the real llama.cpp server with the 0.5B model -----------------------------------------


@pytest.mark.real_model
async def test_real_server_samples_n_completions(server_05b) -> None:
    backend = _backend(
        server_05b.base_url, api_key=SecretStr(server_05b.api_key), flavor="llama.cpp"
    )
    resp = await backend.chat(
        _req(
            "Write an SQL query counting the rows of table singer.",
            n=3,
            temperature=0.9,
            max_tokens=48,
            seed=3,
        )
    )
    assert len(resp.texts) == 3 and all(resp.texts)
    # every sample's tokens are counted, not just the first one's (a word is at least one token)
    assert resp.usage.completion_tokens >= sum(len(t.split()) for t in resp.texts)
    assert resp.usage.prompt_tokens > 10
    await backend.aclose()


@pytest.mark.real_model
async def test_real_server_keeps_each_concurrent_reply_to_its_own_prompt(server_05b) -> None:
    # Twice as many requests as slots, sharing a long system prompt as a schema does: each reply
    # copies its own list; a word of another request's list is a reply mixed between requests
    # (benchmarks/check_slot_pinning.py: pinned requests, which this client never sends, mixed).
    backend = _backend(
        server_05b.base_url, api_key=SecretStr(server_05b.api_key), flavor="llama.cpp"
    )
    system = ChatMessage(role="system", content="You copy lists of words exactly. " * 40)
    words = "apple river stone cloud tiger violin pepper candle silver meadow rocket harbor".split()
    lists = {i: [f"{w}{i}" for w in (words[i:] + words[:i])[:6]] for i in range(8)}

    async def copy(i: int) -> str:
        task = "Copy this list, comma separated, nothing else: " + ", ".join(lists[i])
        request = ChatRequest(
            messages=(system, ChatMessage(role="user", content=task)), max_tokens=64
        )
        return (await backend.chat(request)).texts[0]

    replies = dict(zip(lists, await asyncio.gather(*(copy(i) for i in lists)), strict=True))
    await backend.aclose()
    foreign = {
        i: [w for w in reply.replace(",", " ").split() if w[-1:].isdigit() and w[-1] != str(i)]
        for i, reply in replies.items()
    }
    assert not any(foreign.values()), foreign
    # and the test saw tagged replies (the small model sometimes drops the tags)
    assert sum(lists[i][0] in reply for i, reply in replies.items()) >= 4, replies


@pytest.mark.real_model
async def test_real_server_json_schema_and_grammar(server_05b) -> None:
    backend = _backend(
        server_05b.base_url, api_key=SecretStr(server_05b.api_key), flavor="llama.cpp"
    )
    schema = {
        "type": "object",
        "properties": {"winner": {"enum": ["A", "B"]}},
        "required": ["winner"],
        "additionalProperties": False,
    }
    resp = await backend.chat(
        _req("Which is better, A or B? Answer in JSON.", json_schema=schema, max_tokens=20)
    )
    assert json.loads(resp.texts[0])["winner"] in {"A", "B"}
    resp = await backend.chat(_req("Pick A or B.", grammar='root ::= "A" | "B"', max_tokens=4))
    assert resp.texts[0] in {"A", "B"}
    await backend.aclose()


@pytest.mark.real_model
async def test_real_server_reuses_a_shared_system_prefix(server_05b) -> None:
    # What the shared schema_context system message is for: a second agent's call on the same
    # slot evaluates only its own part.
    backend = _backend(
        server_05b.base_url,
        api_key=SecretStr(server_05b.api_key),
        flavor="llama.cpp",
    )
    system = ChatMessage(
        role="system", content="CREATE TABLE singer (id INTEGER, name TEXT);\n" * 40
    )
    first, second = [
        await backend.chat(
            ChatRequest(messages=(system, ChatMessage(role="user", content=task)), max_tokens=4)
        )
        for task in ("Count the singers.", "List the singer names.")
    ]
    assert second.usage.cached_prompt_tokens >= 0.8 * first.usage.prompt_tokens
    await backend.aclose()


@pytest.mark.real_model
async def test_real_server_scores_a_forced_reply_before_the_grammar_mask(server_05b) -> None:
    backend = _backend(
        server_05b.base_url, api_key=SecretStr(server_05b.api_key), flavor="llama.cpp"
    )
    messages = (
        ChatMessage(role="system", content="CREATE TABLE singer (id INTEGER, name TEXT);"),
        ChatMessage(role="user", content="How many singers are there? Reply with SQL only."),
    )
    likely, unlikely = [
        scored(await backend.chat(teacher_forced(messages, text)))
        for text in ("SELECT COUNT(*) FROM singer", "SELECT name FROM singer WHERE id = 7")
    ]
    # Forced tokens keep the model's own probabilities (after the mask every one would be 0).
    assert likely.tokens >= 4 and unlikely.tokens >= 6
    assert unlikely.mean < likely.mean < 0
    await backend.aclose()


@pytest.mark.real_model
async def test_real_server_context_overflow(server_05b) -> None:
    backend = _backend(
        server_05b.base_url, api_key=SecretStr(server_05b.api_key), flavor="llama.cpp"
    )
    with pytest.raises(ContextTooLong, match="context") as refused:
        await backend.chat(_req("SELECT * FROM t; " * 3000, max_tokens=8))
    # the server's own counts, which the pipelines' prompt_fit steps down by
    assert refused.value.prompt_tokens > refused.value.context >= 4096
    await backend.aclose()
