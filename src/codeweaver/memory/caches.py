"""The answer cache the settings ask for: semantic (vectors), exact, or none."""

from __future__ import annotations

from codeweaver.config import Settings
from codeweaver.memory.cache import AnswerCache, ExactAnswerCache, NullCache


def build_cache(settings: Settings) -> AnswerCache:
    """The answer cache the settings ask for; entries expire after the configured TTL."""
    if not settings.cache_enabled:
        return NullCache()
    ttl = settings.cache_ttl_days * 86400
    if settings.cache_mode == "semantic":
        from codeweaver.embeddings import create_embedder
        from codeweaver.memory.semantic_cache import SemanticAnswerCache
        from codeweaver.memory.vector_store import open_collection

        embedder = create_embedder(settings.embeddings, settings)
        collection = open_collection(
            settings, "cache", embedder.name, embedder.dimension, keyword_fields=["key"]
        )
        return SemanticAnswerCache(
            collection, embedder, threshold=settings.cache_threshold, ttl_seconds=ttl
        )
    return ExactAnswerCache(settings.answer_cache_path, ttl_seconds=ttl)
