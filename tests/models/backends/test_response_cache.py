"""The experiment-wide response cache: each distinct request once, samples in issue order."""

import pytest

from core.config import load_config
from models import build_client
from models.backends.response_cache import CachedBackend, ResponseCache
from models.errors import ModelUnavailable
from models.scoring import TextScore, scored, teacher_forced
from models.types import ChatMessage, ChatRequest, ChatResponse, TokenLogprob, Usage


class Counting:
    """A backend whose every real call returns a new text (a sampler)."""

    model = "m"

    def __init__(self, fail: bool = False):
        self.calls = 0
        self.fail = fail

    async def chat(self, request):
        self.calls += 1
        if self.fail:
            raise ModelUnavailable("down")
        return ChatResponse(
            texts=(f"sample {self.calls}",),
            usage=Usage(calls=1, prompt_tokens=100, completion_tokens=7),
            latency_s=2.5,
            model="m",
        )

    async def aclose(self):
        pass


def ask(text: str, temperature: float = 0.7) -> ChatRequest:
    return ChatRequest(messages=(ChatMessage(role="user", content=text),), temperature=temperature)


async def test_identical_requests_are_new_samples_in_a_run_and_the_same_samples_in_the_next(
    tmp_path,
):
    path = tmp_path / "responses.jsonl"
    first_inner = Counting()
    first = CachedBackend(first_inner, ResponseCache(path))
    texts = [(await first.chat(ask("q"))).texts[0] for _ in range(2)] + [
        (await first.chat(ask("other"))).texts[0]
    ]
    assert texts == ["sample 1", "sample 2", "sample 3"] and first_inner.calls == 3

    second_inner = Counting()
    second = CachedBackend(second_inner, ResponseCache(path))
    again = [(await second.chat(ask("q"))).texts[0] for _ in range(3)]
    # the first two are the first run's samples; a third identical request is a new one
    assert again == ["sample 1", "sample 2", "sample 1"] and second_inner.calls == 1
    assert (second.hits, second.misses) == (2, 1)
    replayed = await CachedBackend(Counting(), ResponseCache(path)).chat(ask("other"))
    assert (
        replayed.usage.prompt_tokens == 100 and replayed.latency_s == 2.5
    )  # what it cost to compute


async def test_failures_are_not_cached_and_a_torn_last_line_is_asked_again(tmp_path):
    path = tmp_path / "responses.jsonl"
    with pytest.raises(ModelUnavailable):
        await CachedBackend(Counting(fail=True), ResponseCache(path)).chat(ask("q"))
    assert not path.exists() or path.read_text() == ""

    await CachedBackend(Counting(), ResponseCache(path)).chat(ask("q"))
    path.write_text(path.read_text() + '{"key": "torn')  # a writer killed mid-line
    inner = Counting()
    backend = CachedBackend(inner, ResponseCache(path))
    assert len(backend.cache) == 1
    assert (await backend.chat(ask("q"))).texts == ("sample 1",) and inner.calls == 0


def test_a_corrupt_entry_before_the_end_is_a_clear_error(tmp_path):
    path = tmp_path / "responses.jsonl"
    path.write_text("not json\n{}\n")
    with pytest.raises(ValueError, match="responses.jsonl:1 is not a response-cache entry"):
        ResponseCache(path)


async def test_a_replayed_reply_comes_back_after_its_recorded_seconds_when_asked(
    tmp_path, monkeypatch
):
    path = tmp_path / "responses.jsonl"
    await CachedBackend(Counting(), ResponseCache(path)).chat(ask("q"))  # took 2.5 s
    slept: list[float] = []

    async def sleep(seconds):
        slept.append(seconds)

    monkeypatch.setattr("models.backends.response_cache.asyncio.sleep", sleep)
    await CachedBackend(Counting(), ResponseCache(path)).chat(ask("q"))
    assert slept == []  # at once by default
    paced = CachedBackend(Counting(), ResponseCache(path), replay_latency=True)
    assert (await paced.chat(ask("q"))).texts == ("sample 1",) and slept == [2.5]
    await paced.chat(ask("q"))  # a new request is computed, not held back
    assert slept == [2.5] and paced.misses == 1


def test_the_model_config_puts_every_slot_behind_one_cache(tmp_path):
    overrides = [
        "model=replay",
        f"model.slots.default.cassette={tmp_path / 'c.jsonl'}",
        f"model.response_cache={tmp_path / 'responses.jsonl'}",
    ]
    client = build_client(load_config(overrides).model)
    try:
        backend = client.slots["default"].backend
        assert isinstance(backend, CachedBackend)
        assert backend.cache.path == tmp_path / "responses.jsonl"
        assert not backend.replay_latency
    finally:
        client.close()
    paced = build_client(load_config([*overrides, "model.replay_latency=true"]).model)
    try:
        assert paced.slots["default"].backend.replay_latency
    finally:
        paced.close()


async def test_slots_sharing_a_cache_number_identical_requests_together(tmp_path):
    # two roles served by the same model through different slots: still two samples
    cache = ResponseCache(tmp_path / "responses.jsonl")
    generator, critic = Counting(), Counting()
    first = await CachedBackend(generator, cache).chat(ask("q"))
    second = await CachedBackend(critic, cache).chat(ask("q"))
    assert (generator.calls, critic.calls) == (1, 1) and len(cache) == 2
    assert first.texts == second.texts == ("sample 1",)  # each backend's own first sample


async def test_a_scoring_reply_comes_back_with_its_token_logprobs(tmp_path):
    class Scoring(Counting):
        async def chat(self, request):
            reply = await super().chat(request)
            tokens = (
                TokenLogprob(token="SELECT", logprob=-0.5),
                TokenLogprob(token=" 1", logprob=-2.0),
            )
            return reply.model_copy(update={"logprobs": (tokens,)})

    path = tmp_path / "responses.jsonl"
    request = teacher_forced((ChatMessage(role="user", content="q"),), "SELECT 1")
    recorded = await CachedBackend(Scoring(), ResponseCache(path)).chat(request)
    inner = Scoring()
    replayed = await CachedBackend(inner, ResponseCache(path)).chat(request)
    assert inner.calls == 0 and replayed.logprobs == recorded.logprobs
    assert scored(replayed) == TextScore(total=-2.5, tokens=2)
    # the same prompt without logprobs is another request
    assert request.fingerprint("m") != request.model_copy(update={"logprobs": False}).fingerprint(
        "m"
    )
