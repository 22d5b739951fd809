"""The agentic mode's generator, a tool the orchestrator calls: it turns the assembled context
into one SQL and never sees a tool's result (rows, messages), only what the orchestrator wrote
about earlier attempts.

    GenerationRequest(question, dialect, schema_text, examples, rules, history=(Attempt, ...))
        ──► agentic_generator prompt ──► one greedy (or lightly sampled) reply ──► GeneratedSQL

    >>> history = (Attempt(sql="SELECT count(*) FROM t",
    ...     feedback=("[table_not_found] t does not exist.",)),)
    >>> print(render_history(history))
    Your earlier answers to this question were wrong. Do not write them again; avoid these mistakes:
    Attempt 1:
    - [table_not_found] t does not exist.
    >>> print(render_history(history, show_sql=True))
    Your earlier answers to this question were wrong. Do not write them again; fix what is listed under each:
    Attempt 1:
    ```sql
    SELECT count(*) FROM t
    ```
    - [table_not_found] t does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.types import Frozen
from models.sql_extract import extract_sql
from pipelines.agents.base import sql_block_request
from pipelines.agents.render import DIALECT_NAME, cells_block, render_evidence, solved_examples
from pipelines.agents.runtime import AgentRuntime
from pipelines.contracts import CellHit, Dialect, ExampleHit
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.settings import AgentCall

AGENT = "agentic.generate_sql"
DEFAULT_CALL = AgentCall(max_tokens=512)


class Attempt(Frozen):
    """One earlier generation of the question and what was wrong with it, in words."""

    sql: str
    feedback: tuple[str, ...] = ()


class GenerationRequest(Frozen):
    """Everything the generator is given for one call."""

    question: str
    evidence: str = ""
    dialect: Dialect
    db_id: str = ""
    schema_text: str
    examples: tuple[ExampleHit, ...] = ()
    cells: tuple[CellHit, ...] = ()  # database values that match words of the question (L0)
    rules: str = ""  # the cheatsheet's block ("" when it has none)
    history: tuple[Attempt, ...] = ()
    show_sql: bool = False  # the attempts' SQL in the history, not only what was wrong
    temperature: float = 0.0
    seed: int = 0  # another seed draws another sample of the same prompt


class GeneratedSQL(Frozen):
    sql: str
    reply: str  # the model's text, for the trace


def render_history(history: Sequence[Attempt], *, show_sql: bool = False) -> str:
    """The earlier attempts and what was wrong with each; their SQL only with ``show_sql`` (the
    1.5B, shown its failed SQL, writes it again character for character, at any temperature)."""
    if not history:
        return ""
    lines = [
        "Your earlier answers to this question were wrong. Do not write them again; "
        + ("fix what is listed under each:" if show_sql else "avoid these mistakes:")
    ]
    for number, attempt in enumerate(history, 1):
        lines.append(f"Attempt {number}:")
        if show_sql:
            lines += ["```sql", attempt.sql, "```"]
        lines += [f"- {line}" for line in attempt.feedback]
    return "\n".join(lines)


async def generate_sql(
    request: GenerationRequest,
    runtime: AgentRuntime,
    *,
    settings: AgentCall = DEFAULT_CALL,
    prompt: PromptTemplate | None = None,
) -> GeneratedSQL:
    """One SQL for ``request`` (role ``generator``). Raises ``InvalidModelOutput`` when the reply
    holds no SQL, and the runtime's errors (budget, call cap, model, a prompt over the model's
    context: the caller's ``pipelines.prompt_fit.within_context`` gives up the examples and cell
    values) as they are."""
    prompt = prompt or load_prompt("agentic_generator")
    messages = prompt.render(
        dialect=DIALECT_NAME[request.dialect],
        schema=request.schema_text,
        examples=solved_examples(request.examples, request.db_id, len(request.examples)),
        cells=cells_block(request.cells),
        rules=request.rules,
        history=render_history(request.history, show_sql=request.show_sql),
        evidence=render_evidence(request.evidence),
        question=request.question.strip(),
    )
    chat = sql_block_request(
        messages,
        temperature=request.temperature,
        max_tokens=settings.max_tokens,
        seed=request.seed,
    )
    response = await runtime.chat(chat, role="generator", agent=AGENT)
    text = response.texts[0]
    return GeneratedSQL(sql=extract_sql(text), reply=text)
