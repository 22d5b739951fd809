"""An ICL strategy is a named prompt; the generator machinery is shared (ICLGenerator)."""

from __future__ import annotations

from core.types import Frozen
from pipelines.prompts import PromptTemplate, load_prompt


class IclStrategy(Frozen):
    name: str
    prompt_name: str
    description: str

    def prompt(self) -> PromptTemplate:
        return load_prompt(self.prompt_name)
