"""What the agents share: the one-prompt agent's call, reply parsing, and the generators'
machinery (a typed input, the spec that registers a family in ``pipelines/agents/generators.py``).

PromptAgent:  input ──► values ──► prompt ──► ChatRequest ──► runtime.chat(role) ──► parse ──► output
SQLGenerator: GenerationInput ──► prompt ──► runtime.chat(n samples) ──► [(sql, rationale)]
              ──► CandidateSQL
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from core.types import Frozen
from models.errors import BudgetExceeded, InvalidModelOutput
from models.sql_extract import extract_sql
from models.types import ChatMessage, ChatRequest
from pipelines.agents.errors import AgentOutputError, CallCapExceeded
from pipelines.agents.render import DIALECT_NAME, cells_block, evidence_line, examples_block
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import LessonsBlock
from pipelines.contracts import CandidateSQL, CellHit, Dialect, ExampleHit
from pipelines.prompts import PromptTemplate, load_prompt
from pipelines.settings import AgentCall
from pipelines.trace import Surface

_SQL_TAG = re.compile(r"<sql>(.*?)(?:</sql>|\Z)", re.IGNORECASE | re.DOTALL)
_THINK_TAG = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.IGNORECASE | re.DOTALL)
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# The closing fence of a ```sql block (the opening one is "```sql", so it never matches early).
END_OF_SQL_BLOCK = "\n```\n"
# GBNF for a reply that is one ```sql block and nothing else: the reply opens with the fence (no
# prose first: sampled replies of the 1.5B often spent 150+ tokens explaining before the SQL)
# and generation ends at the closing fence.
SQL_BLOCK_GRAMMAR = 'root ::= "```sql\\n" [^`]+ "```"'
# A generated reply under that grammar: SQL_BLOCK_OPENING + the SQL + SQL_BLOCK_CLOSING (what the
# likelihood selection forces when it scores an SQL as the generator's reply).
SQL_BLOCK_OPENING = "```sql\n"
SQL_BLOCK_CLOSING = "\n```"


def sql_block_request(
    messages: tuple[ChatMessage, ...],
    *,
    temperature: float,
    max_tokens: int,
    n: int = 1,
    seed: int | None = None,
) -> ChatRequest:
    """A request for ``n`` replies that are each one ```sql block: generation stops at its
    closing fence, under ``SQL_BLOCK_GRAMMAR`` where the server takes grammars."""
    return ChatRequest(
        messages=messages,
        n=n,
        temperature=temperature,
        max_tokens=max_tokens,
        stop=(END_OF_SQL_BLOCK,),
        grammar=SQL_BLOCK_GRAMMAR,
        grammar_optional=True,
        seed=seed,
    )


In = TypeVar("In")
Out = TypeVar("Out")
M = TypeVar("M", bound=BaseModel)


class PromptAgent(Generic[In, Out]):
    """An agent that is one prompt, one request and one typed reply (extractor, fixer, critic,
    revisor, selector). The class states once what differs: its name in traces, the model
    ``role`` its calls go to, its prompt file and the reply's constraint (``json_schema``, or a
    ``grammar`` the server may drop, with ``stop``); a subclass maps its input to the prompt's
    placeholders (``values``) and the reply text to its output (``parse``).

        >>> class Echo(PromptAgent[str, str]):
        ...     agent_name, role, prompt_name = "l2.echo", "generator", "sql_fixer"
        ...     def values(self, inp): return dict.fromkeys(self.prompt.placeholders, inp)
        ...     def parse(self, text, inp): return text.strip()
        >>> request = Echo(settings=AgentCall(temperature=None, max_tokens=64)).request("q")
        >>> request.temperature, request.max_tokens, request.json_schema
        (0.0, 64, None)
    """

    agent_name: ClassVar[str]
    role: ClassVar[str]  # a role of the model config (models.client: role -> slot)
    prompt_name: ClassVar[str]  # pipelines/prompts/<prompt_name>.md
    surface: ClassVar[Surface] = "cognitive"
    json_schema: ClassVar[dict[str, Any] | None] = None
    grammar: ClassVar[str | None] = None  # GBNF that only saves tokens: optional for the server
    stop: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, settings: AgentCall, prompt: PromptTemplate | None = None) -> None:
        self.settings = settings
        self.prompt = prompt or load_prompt(self.prompt_name)

    def values(self, inp: In) -> dict[str, object]:
        """The prompt's placeholders for ``inp``."""
        raise NotImplementedError

    def parse(self, text: str, inp: In) -> Out:
        """The output from the reply's text; AgentOutputError when it holds none."""
        raise NotImplementedError

    def request(self, inp: In) -> ChatRequest:
        return ChatRequest(
            messages=self.prompt.render(**self.values(inp)),
            temperature=self.settings.temperature or 0.0,
            max_tokens=self.settings.max_tokens,
            stop=self.stop,
            json_schema=self.json_schema,
            grammar=self.grammar,
            grammar_optional=self.grammar is not None,
        )

    async def run(self, inp: In, runtime: AgentRuntime) -> Out:
        response = await runtime.chat(
            self.request(inp), role=self.role, agent=self.agent_name, surface=self.surface
        )
        return self.parse(response.texts[0], inp)


class QuestionInput(Frozen):
    """What every prompt agent is asked about: the question and its evidence; a subclass adds
    its own fields, and ``prompt_values`` fills the placeholders these fields stand for.

        >>> QuestionInput(question="How many singers?").prompt_values()
        {'question': 'How many singers?', 'evidence': ''}
    """

    question: str
    evidence: str = ""

    def prompt_values(self) -> dict[str, object]:
        return {"question": self.question, "evidence": evidence_line(self.evidence)}


class SchemaQuestionInput(QuestionInput):
    """The question shown with a schema (``schema``)."""

    schema_text: str

    def prompt_values(self) -> dict[str, object]:
        return {**super().prompt_values(), "schema": self.schema_text}


class WrittenSQLInput(SchemaQuestionInput):
    """The question, the schema and an SQL written for them in ``dialect`` (``sql``)."""

    dialect: Dialect = "sqlite"
    sql: str

    def prompt_values(self) -> dict[str, object]:
        return {**super().prompt_values(), "dialect": DIALECT_NAME[self.dialect], "sql": self.sql}


class SQLRewriter(PromptAgent[In, tuple[str, str]]):
    """A prompt agent whose reply is one ```sql block: ``(sql, rationale)`` of the rewritten
    query (not yet executed)."""

    stop = (END_OF_SQL_BLOCK,)
    grammar = SQL_BLOCK_GRAMMAR  # the query only: no prose before or after it

    def parse(self, text: str, inp: In) -> tuple[str, str]:
        return parse_sql_reply(text)


def parse_json(text: str, model: type[M], what: str) -> M:
    """``text`` as ``model``; AgentOutputError ``"<what>: <first validation error>"`` otherwise."""
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise AgentOutputError(f"{what}: {exc.errors()[0]['msg']}") from exc


class GenerationInput(Frozen):
    """What a generator sees for one question (schema already rendered for its view)."""

    question: str
    evidence: str = ""
    dialect: Dialect = "sqlite"
    schema_text: str
    examples: tuple[ExampleHit, ...] = ()
    cell_hits: tuple[CellHit, ...] = ()
    lessons: LessonsBlock = LessonsBlock()


def parse_sql_reply(text: str) -> tuple[str, str]:
    """``(sql, rationale)`` from a reply: the SQL in a code block (or bare), the rest as rationale.

    >>> parse_sql_reply("- join singer\\n```sql\\nSELECT 1\\n```")
    ('SELECT 1', '- join singer')
    """
    sql = extract_sql(text)
    rationale = _CODE_BLOCK.sub("", text).strip()
    return sql, rationale


def parse_tagged_reply(text: str) -> tuple[str, str]:
    """``(sql, rationale)`` from ``<think>…</think><sql>…</sql>``; falls back to code blocks.

    >>> parse_tagged_reply("<think>- count rows</think><sql>SELECT count(*) FROM t</sql>")
    ('SELECT count(*) FROM t', '- count rows')
    """
    think = _THINK_TAG.search(text)
    rationale = think.group(1).strip() if think else ""
    after_think = text[think.end() :] if think else text
    tagged = [m.strip().rstrip(";").strip() for m in _SQL_TAG.findall(after_think)]
    tagged = [m for m in tagged if m]
    if tagged:
        return _strip_fence(tagged[-1]), rationale
    try:
        return extract_sql(after_think), rationale
    except InvalidModelOutput:
        return extract_sql(text), rationale


def _strip_fence(sql: str) -> str:
    if sql.startswith("```"):
        return extract_sql(sql)
    return sql


class SQLGenerator:
    """A candidate generator: one prompt, sampled at several temperatures.

    Samples sharing a temperature go out as one request with ``n`` samples (the server batches
    them and reuses the prompt prefix); distinct temperatures go out concurrently. The prompt is
    rendered with every field of the input (a template uses the placeholders it names);
    subclasses set ``stop`` and may override ``parse`` or ``messages``.
    """

    stop: tuple[str, ...] = ()  # where the answer is complete (saves tokens on chatty models)

    def __init__(self, *, spec: GeneratorSpec, settings: AgentCall) -> None:
        self.spec = spec
        self.settings = settings
        self.family = spec.name
        self.agent_name = spec.agent_name
        self.prompt = spec.prompt_template()

    def messages(self, inp: GenerationInput) -> tuple[ChatMessage, ...]:
        return self.prompt.render(
            dialect=DIALECT_NAME[inp.dialect],
            schema=inp.schema_text,
            cells=cells_block(inp.cell_hits),
            examples=examples_block(inp.examples, len(inp.examples)),
            lessons=inp.lessons.for_generator(self.family).render(),
            question=inp.question,
            evidence=evidence_line(inp.evidence),
        )

    def parse(self, text: str) -> tuple[str, str]:
        return parse_sql_reply(text)

    async def generate(
        self,
        inp: GenerationInput,
        temperatures: Sequence[float],
        runtime: AgentRuntime,
        *,
        lineage: tuple[str, ...] = ("gen",),
    ) -> list[CandidateSQL]:
        """Candidates (not yet executed), one per parsable sample. Raises when nothing came back."""
        if not temperatures:
            return []
        messages = self.messages(inp)
        counts = Counter(temperatures)
        requests = [
            ChatRequest(
                messages=messages,
                n=n,
                temperature=t,
                max_tokens=self.settings.max_tokens,
                stop=self.stop,
            )
            for t, n in counts.items()
        ]
        replies = await asyncio.gather(
            *(runtime.chat(r, role="generator", agent=self.agent_name) for r in requests),
            return_exceptions=True,
        )
        candidates: list[CandidateSQL] = []
        failures: list[BaseException] = []
        for request, reply in zip(requests, replies):
            if isinstance(reply, BaseException):
                if is_fatal(reply):
                    raise reply
                failures.append(reply)
                continue
            for text in reply.texts:
                try:
                    sql, rationale = self.parse(text)
                except InvalidModelOutput as exc:
                    failures.append(exc)
                    continue
                candidates.append(
                    CandidateSQL(
                        sql=sql,
                        producer=f"{self.family}/T={request.temperature:g}",
                        rationale=rationale or None,
                        lineage=lineage,
                    )
                )
        if not candidates and failures:
            # A request that failed outright says more than samples that held no SQL.
            calls_failed = [f for f in failures if not isinstance(f, InvalidModelOutput)]
            if calls_failed:
                raise calls_failed[0]
            raise AgentOutputError(
                f"{self.agent_name}: no usable sample ({failures[0]})"
            ) from failures[0]
        return candidates


class GeneratorSpec(Frozen):
    """One candidate generator family: its name, class, what it reads and its prompt file.

    ``view`` is the schema rendering in ``GenerationInput.schema_text`` (``light``: markdown with
    sample values; ``ddl``: CREATE TABLE); ``examples`` / ``cells``: whether the retrieved solved
    examples (the first ``pipeline.understanding.examples_in_prompt``) and cell values are passed;
    ``settings``: the ``pipeline.agents`` entry holding its max_tokens.

        >>> from pipelines.agents.icl_generator import ICLGenerator
        >>> spec = GeneratorSpec(name="icl/direct", generator=ICLGenerator, view="light",
        ...                      examples=True, cells=True, prompt="icl_direct", settings="icl")
        >>> spec.build(AgentCall(max_tokens=768)).family
        'icl/direct'
    """

    name: str  # producers read "<name>/T=<temperature>"; FullWidthScaling.k is keyed by it
    generator: type[SQLGenerator]
    view: Literal["light", "ddl"]
    examples: bool = False
    cells: bool = False
    prompt: str  # pipelines/prompts/<prompt>.md, or under ``prompt_dir``
    prompt_dir: str | None = None
    settings: str  # a field of pipelines.settings.AgentSettings
    agent: str = ""  # gen_ai.agent.name in traces; "": "l2.<name>"
    description: str = ""

    @property
    def agent_name(self) -> str:
        return self.agent or f"l2.{self.name}"

    def prompt_template(self) -> PromptTemplate:
        return load_prompt(self.prompt, self.prompt_dir)

    def build(self, settings: AgentCall) -> SQLGenerator:
        return self.generator(spec=self, settings=settings)


def is_fatal(exc: BaseException) -> bool:
    """Errors that end the task's search (budget, call cap, cancellation), not just one call."""
    return isinstance(exc, (BudgetExceeded, CallCapExceeded)) or not isinstance(exc, Exception)
