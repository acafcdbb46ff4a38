"""Servers proctor runs itself and their wire protocols: OpenAI-compatible LLM streaming, KServe V2 nodes."""
