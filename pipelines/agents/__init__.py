"""The pipeline's agents: stateless, typed inputs, one per file. The orchestrator wires them.

L1  KeywordSkeletonExtractor
L2  the generator families of ``generators.GENERATORS`` (ReasoningGenerator, ICLGenerator under
    direct | cot | decompose), SQLFixer, CritiqueAgent, SQLRevisor
L3  ReasoningSelector
"""
