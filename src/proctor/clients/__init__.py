"""Clients of endpoints proctor measures: the OpenAI-compatible streaming client (two HTTP
transports, SSE, LLM datasets and accuracy) and the Network division's QDL over KServe V2."""
