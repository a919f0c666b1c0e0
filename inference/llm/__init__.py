"""The LLM engine: endpoints (OpenAI-compatible, Azure, local Hugging Face), the answer cache, retries and
re-prompts."""
