"""The one way treerag talks to a model: an OpenAI-compatible endpoint or the embedded llama.cpp server,
behind a response cache, retries and a concurrency limit. Imports only common.
"""
