"""Strategies: the pipelines that turn a question into one SQL, each ``answer(task) -> Prediction``.

    Task ──► single_pass   one prompt, greedy or n samples and a vote (the references)
         ──► adaptive      a first wave; fix / widen / revise / tournament / likelihood only
                           while the candidates disagree
         ──► agentic       one generation at a time: schema tools, the checker chain,
                           classified errors and their repair directives
         ──► full_width    the full-width L1 ──► L2 ──► L3 orchestrator; its DifficultyRouter
                           picks a scaling profile per question
         ──► Prediction (+ ReasoningTrace)

A strategy is one module and one line of ``registry.py`` (its name ──► its class); its settings
(a ``StrategyScaling``, ``scaling.py``) are the ``scaling`` config group keyed by that name
(``scaling.strategy``). ``base.Strategy`` owns what every question goes through (its limits,
the schema read, failures, step accounting, the prediction); a strategy supplies its search
and its call allowance. ``pipelines.factory.build_pipeline`` builds the configured one. They
share the stages of ``pipelines.repair`` and ``pipelines.selection``.
"""
