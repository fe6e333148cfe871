"""Serving over HTTP (chapter 14): the batching engine, the OpenAI-compatible server, the load test."""
