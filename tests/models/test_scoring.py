import math

import pytest

from core.types import Usage
from models.errors import InvalidModelOutput
from models.scoring import TextScore, gbnf_literal, scored, teacher_forced
from models.types import ChatMessage, ChatResponse, TokenLogprob

MESSAGES = (ChatMessage(role="user", content="How many singers?"),)


def _response(*tokens: tuple[str, float]) -> ChatResponse:
    return ChatResponse(
        texts=("".join(t for t, _ in tokens),),
        usage=Usage(calls=1),
        latency_s=0.1,
        model="m",
        logprobs=(tuple(TokenLogprob(token=t, logprob=p) for t, p in tokens),),
    )


def test_the_request_admits_only_the_text() -> None:
    request = teacher_forced(MESSAGES, '```sql\nSELECT "a\\b"\n```')
    assert request.grammar == 'root ::= "```sql\\nSELECT \\"a\\\\b\\"\\n```"'
    assert request.logprobs and request.temperature == 0.0 and request.n == 1
    with pytest.raises(ValueError, match="non-empty"):
        teacher_forced(MESSAGES, "")


def test_gbnf_literal_escapes_control_characters() -> None:
    assert gbnf_literal("a\tb\r\n") == '"a\\tb\\r\\n"'


def test_the_fixed_opening_is_left_out() -> None:
    response = _response(
        ("```", -1.0), ("sql", -0.01), ("\n", -0.01), ("SELECT", -0.5), (" 1", -1.5)
    )
    score = scored(response, skip="```sql\n")
    assert score == TextScore(total=-2.0, tokens=2)
    assert score.mean == -1.0
    assert scored(response).tokens == 5


def test_an_opening_tokenised_across_the_boundary_scores_the_whole_reply() -> None:
    response = _response(("```", -1.0), ("sql\nSELECT", -0.5), (" 1", -1.5))
    assert scored(response, skip="```sql\n") == TextScore(total=-3.0, tokens=3)


def test_a_server_that_returns_no_logprobs_cannot_score() -> None:
    bare = ChatResponse(texts=("SELECT 1",), usage=Usage(calls=1), latency_s=0.1, model="m")
    with pytest.raises(InvalidModelOutput, match="no token log-probabilities"):
        scored(bare)


def test_an_empty_score_has_no_mean() -> None:
    assert TextScore(total=0.0, tokens=0).mean == -math.inf
