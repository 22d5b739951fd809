"""Teacher-forced scoring: how likely the model finds a given text as its reply.

A grammar that admits exactly one text forces the reply; with ``logprobs`` the server reports
each forced token's log-probability as the model gave it before the grammar's mask, so one
ordinary chat call scores the text. It goes through the client (budget, retries, the replay
and response caches) like any other call.

    messages + "```sql\\nSELECT …\\n```" ──► teacher_forced() ──► ChatRequest(grammar=literal, logprobs)
        ──► client.chat ──► ChatResponse.logprobs[0] ──► scored(response, skip="```sql\\n")
        ──► TextScore(total=-3.1, tokens=12)

    request = teacher_forced(messages, "```sql\\nSELECT 1\\n```")     # messages: a prompt
    scored(await client.chat(request, role="generator"), skip="```sql\\n").mean

>>> teacher_forced([ChatMessage(role="user", content="Count the singers.")], "SELECT 1").grammar
'root ::= "SELECT 1"'
>>> TextScore(total=-3.0, tokens=12).mean
-0.25
"""

from __future__ import annotations

from collections.abc import Sequence

from core.types import Frozen
from models.errors import InvalidModelOutput
from models.types import ChatMessage, ChatRequest, ChatResponse


class TextScore(Frozen):
    """Sum of the token log-probabilities of a scored text and how many tokens it has."""

    total: float
    tokens: int

    @property
    def mean(self) -> float:
        return self.total / self.tokens if self.tokens else float("-inf")


def gbnf_literal(text: str) -> str:
    """``text`` as one GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def teacher_forced(
    messages: Sequence[ChatMessage], text: str, *, max_tokens: int = 1024
) -> ChatRequest:
    """The request whose only possible reply to ``messages`` is ``text``, scored per token."""
    if not text:
        raise ValueError("teacher_forced needs a non-empty text to score")
    return ChatRequest(
        messages=tuple(messages),
        temperature=0.0,
        max_tokens=max_tokens,
        grammar="root ::= " + gbnf_literal(text),
        logprobs=True,
    )


def scored(response: ChatResponse, *, skip: str = "") -> TextScore:
    """The score of the forced reply, leaving out its first tokens that spell ``skip`` (a fixed
    opening such as a code fence, the same for every text scored)."""
    if not response.logprobs or not response.logprobs[0]:
        raise InvalidModelOutput(
            f"{response.model} returned no token log-probabilities: its server cannot score",
            text=response.texts[0] if response.texts else "",
        )
    tokens = response.logprobs[0]
    spelled, start = "", 0
    while start < len(tokens) and len(spelled) < len(skip):
        spelled += tokens[start].token
        start += 1
    if spelled != skip:
        start = 0  # the opening was tokenised across the boundary: score the whole reply
    rest = tokens[start:]
    return TextScore(total=sum(t.logprob for t in rest), tokens=len(rest))
