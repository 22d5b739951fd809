"""The local CPU runtime: a llama.cpp server process serving one GGUF model.

LocalServer (a child process on 127.0.0.1:<free port>, owned by this process or by the
LocalModelServer Ray actor) ──OpenAI-compatible HTTP──► models.backends.openai_compat
"""
