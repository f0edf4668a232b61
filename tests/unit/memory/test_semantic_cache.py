"""The semantic answer cache: verified hits only, TTL, forget, model switch, concurrency."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from codeweaver.config import Settings
from codeweaver.embeddings import create_embedder
from codeweaver.memory.caches import build_cache
from codeweaver.memory.semantic_cache import SemanticAnswerCache
from codeweaver.memory.store_clients import VectorStoreLockedError, close_shared_clients
from codeweaver.memory.vectors import VectorCollection
from codeweaver.memory.verify import same_question
from tests.fakes import doc, docs


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", cache_mode="semantic")


@pytest.fixture
def cache(settings: Settings) -> SemanticAnswerCache:
    built = build_cache(settings)
    assert isinstance(built, SemanticAnswerCache)
    return built


def test_paraphrase_hits_and_reversed_direction_misses(cache: SemanticAnswerCache) -> None:
    cache.store("How do I convert a string to an integer in Python?", "Use int(s).", docs(1), "m")
    hit = cache.explain("how to convert a string to integer in python")
    assert hit.entry is not None and hit.entry.answer == "Use int(s)."
    miss = cache.explain("How do I convert an integer to a string in Python?")
    assert miss.entry is None
    assert "opposite direction" in miss.reason


@pytest.mark.parametrize(
    ("cached", "asked", "why"),
    [
        ("How do I print in Python 2?", "How do I print in Python 3?", "versions"),
        ("How do I sort a list in Python?", "How do I sort a list in Java?", "technologies"),
        (
            "How do I read a file with newlines?",
            "How do I read a file without newlines?",
            "negated",
        ),
        ("How do I get the current time?", "How do I get the current UTC time?", "different"),
    ],
)
def test_verifier_rejects_what_embeddings_blur(
    cache: SemanticAnswerCache, cached: str, asked: str, why: str
) -> None:
    cache.store(cached, "answer", [], "m")
    decision = cache.explain(asked)
    assert decision.entry is None
    assert why in decision.reason


def test_hits_are_counted_and_listed(cache: SemanticAnswerCache) -> None:
    cache.store("How do I reverse a list?", "list.reverse()", [], "m")
    cache.lookup("how do i reverse a list")
    cache.lookup("How do I reverse a list?")
    assert cache.stats().entries == 1 and cache.stats().hits == 2
    assert [e.question for e in cache.entries()] == ["How do I reverse a list?"]


def test_ttl_expiry_removes_the_entry(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = build_cache(settings.model_copy(update={"cache_ttl_days": 1.0}))
    assert isinstance(cache, SemanticAnswerCache)
    now = [1_000_000.0]
    monkeypatch.setattr("codeweaver.memory.semantic_cache.time.time", lambda: now[0])
    cache.store("How do I reverse a list?", "list.reverse()", [], "m")
    now[0] += 86000
    assert cache.lookup("How do I reverse a list?") is not None
    now[0] += 1000
    assert cache.lookup("How do I reverse a list?") is None
    assert cache.stats().entries == 0


def test_forget_exact_and_by_paraphrase(cache: SemanticAnswerCache) -> None:
    cache.store("How do I reverse a list?", "a", [], "m")
    cache.store("How do I merge two dicts?", "b", [], "m")
    assert cache.forget("how do I reverse a list")
    assert cache.forget("how do i merge two dictionaries")
    assert not cache.forget("How do I merge two dicts?")
    assert cache.stats().entries == 0


def test_model_switch_never_mixes_vectors(settings: Settings) -> None:
    embedder = create_embedder("minilm", settings)
    first = VectorCollection.open(settings, "cache", "minilm", embedder.dimension)
    other = VectorCollection.open(settings, "cache", "other-model", embedder.dimension)
    assert first.name != other.name
    SemanticAnswerCache(first, embedder).store("How do I reverse a list?", "a", [], "m")
    assert SemanticAnswerCache(other, embedder).lookup("How do I reverse a list?") is None


def test_concurrent_writes_from_two_threads(cache: SemanticAnswerCache) -> None:
    def write(offset: int) -> None:
        for i in range(15):
            cache.store(f"How do I solve problem number {offset + i}?", "a", [], "m")

    threads = [threading.Thread(target=write, args=(n * 100,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.stats().entries == 30


def test_locked_store_gives_a_clear_error_and_keeps_data(tmp_path: Path) -> None:
    import subprocess
    import sys

    data = tmp_path / "data"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from qdrant_client import QdrantClient; "
            f"client = QdrantClient(path={str(data / 'qdrant')!r}); print('ready', flush=True); "
            "time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        close_shared_clients()
        with pytest.raises(VectorStoreLockedError, match="another"):
            build_cache(Settings(data_dir=data, cache_mode="semantic"))
    finally:
        holder.kill()
        holder.wait()
    assert (data / "qdrant").is_dir()


def test_same_question_rules_directly() -> None:
    assert same_question("convert a string to an integer", "convert string to int").same
    assert not same_question(
        "convert a string to an integer", "convert an integer to a string"
    ).same


async def test_other_language_paraphrase_is_served_from_cache(settings: Settings) -> None:
    from codeweaver.agent.deps import Deps
    from codeweaver.agent.runner import Assistant
    from codeweaver.llm.scripted import ScriptedChatModel
    from tests.fakes import FakeSource

    def translate(messages: list[object]) -> str:
        text = str(messages[-1].content)  # type: ignore[attr-defined]
        if "정수를 문자열로" in text:
            return '{"canonical_question": "How do I convert an integer to a string in Python?"}'
        return '{"canonical_question": "How do I convert a string to an integer in Python?"}'

    llm = ScriptedChatModel(
        script={
            "analyze_question": translate,
            "classify_intent": '{"intent": "learning"}',
            "generate_answer": "Use int(s) [1].",
        }
    )
    cache = build_cache(settings)
    int_docs = [doc(1, text="int(s) converts a string s to an integer. " * 3)]
    deps = Deps(
        llm=llm,
        settings=settings,
        sources={"installed_docs": FakeSource(results=int_docs)},
        cache=cache,
        model_name="scripted",
    )
    assistant = Assistant(deps)
    first = await assistant.ask("How do I convert a string to an integer in Python?")
    korean = await assistant.ask("파이썬에서 문자열을 정수로 바꾸려면 어떻게 해?")
    assert [s["node"] for s in korean.steps][-1] == "return_cached_answer"
    assert korean.answer == first.answer
    reversed_ = await assistant.ask("파이썬에서 정수를 문자열로 바꾸려면 어떻게 해?")
    assert "return_cached_answer" not in [s["node"] for s in reversed_.steps]
    assert llm.tasks().count("generate_answer") == 2


def test_corrupted_store_gives_a_clear_error_and_keeps_the_files(settings: Settings) -> None:
    from codeweaver.memory.store_clients import VectorStoreError

    cache = build_cache(settings)
    cache.store("How do I reverse a list in Python?", "Use reversed().", [], "m")
    close_shared_clients()
    storage = next(settings.qdrant_path.glob("collection/*/storage.sqlite"))
    storage.write_bytes(b"\x00 not a database")
    with pytest.raises(VectorStoreError) as info:
        build_cache(settings)
    message = str(info.value)
    assert str(settings.qdrant_path.resolve()) in message
    assert "DatabaseError" in message and "left untouched" in message
    assert storage.read_bytes() == b"\x00 not a database"  # nothing deleted or rewritten


async def test_a_translation_that_dropped_a_version_is_not_a_key(settings: Settings) -> None:
    from codeweaver.agent.deps import Deps
    from codeweaver.agent.runner import Assistant
    from codeweaver.llm.scripted import ScriptedChatModel
    from tests.fakes import FakeSource

    llm = ScriptedChatModel(
        script={
            "analyze_question": '{"canonical_question": "How do I install Python?"}',
            "classify_intent": '{"intent": "learning"}',
            "generate_answer": "Use the installer [1].",
        }
    )
    cache = build_cache(settings)
    deps = Deps(
        llm=llm,
        settings=settings,
        sources={"installed_docs": FakeSource()},
        cache=cache,
        model_name="scripted",
    )
    result = await Assistant(deps).ask("파이썬 3.12는 어떻게 설치해?")
    analyze = [s for s in result.steps if s["node"] == "analyze_question"]
    assert any("dropped 3.12" in str(s) for s in analyze), analyze
    assert cache.stats().entries == 0  # neither looked up nor stored
