"""The pipeline's agents: stateless, typed inputs, one per file. The orchestrator wires them.

L1  KeywordSkeletonExtractor
L2  ReasoningGenerator, ICLGenerator(direct | cot | decompose), SQLFixer, CritiqueAgent, SQLRevisor
L3  ReasoningSelector
"""
