"""Backends: each turns a :class:`models.types.ChatRequest` into a :class:`ChatResponse`.

openai_compat  any /v1/chat/completions server (llama.cpp's, vLLM, Ray Serve LLM, hosted)
replay         record/replay cassettes for tests, wrapping a real backend when recording
vllm_serve     Ray Serve LLM deployments for the GPU slots (served through openai_compat)
"""
