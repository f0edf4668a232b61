"""Knowledge-base round trip through the whole graph: index a folder, ask, get the file
cited; edit one file, re-index, only that file's chunks change. Real embeddings and
vector store; a scripted model keeps it fast."""

from __future__ import annotations

from pathlib import Path

from codeweaver.agent.deps import Deps
from codeweaver.agent.runner import Assistant
from codeweaver.config import Settings
from codeweaver.kb.store import KnowledgeBase
from codeweaver.llm.scripted import ScriptedChatModel
from codeweaver.memory.cache import NullCache
from codeweaver.sources.knowledge_base import KnowledgeBaseSource

DEPLOY = """# Deploying the billing service

Run `make release BILLING_ENV=prod` from the repository root. The release job signs the
artefact with the team's cosign key and pushes it to the internal registry
registry.corp.example/billing. Rollbacks use `make rollback TO=<tag>`.
"""
ONCALL = """# On-call handbook

Pages go to the #billing-oncall channel. Acknowledge within five minutes, then open an
incident document from the template in the wiki.
"""


def point_ids(kb: KnowledgeBase, file: Path) -> set[str]:
    return {
        str(pid)
        for pid, payload in kb.collection.scroll(fields=["path"])
        if payload["path"] == str(file)
    }


async def test_index_ask_cite_and_reindex_one_file(tmp_path: Path) -> None:
    docs = tmp_path / "team-docs"
    docs.mkdir()
    (docs / "deploy.md").write_text(DEPLOY)
    (docs / "oncall.md").write_text(ONCALL)
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    kb = KnowledgeBase(settings)
    report = kb.add([docs])
    assert report.counts()["added"] == 2

    llm = ScriptedChatModel(
        script={
            "classify_intent": '{"intent": "learning"}',
            "generate_answer": "Run `make release BILLING_ENV=prod` [1].",
            "refine_search": '{"query": "release billing service"}',
        }
    )
    deps = Deps(
        llm=llm,
        settings=settings,
        sources={"knowledge_base": KnowledgeBaseSource(settings)},
        cache=NullCache(),
    )
    result = await Assistant(deps).ask("How do we deploy the billing service to production?")
    assert result.sources, result.steps
    assert result.sources[0]["reference"].startswith("kb:team-docs/deploy.md")
    assert result.sources[0]["url"].startswith(f"file://{docs / 'deploy.md'}")
    assert result.answer.endswith("[1].")

    before_deploy = point_ids(kb, docs / "deploy.md")
    before_oncall = point_ids(kb, docs / "oncall.md")
    assert before_deploy and before_oncall
    (docs / "deploy.md").write_text(DEPLOY.replace("make release", "just release"))
    again = kb.add([docs])
    assert again.counts()["updated"] == 1 and again.counts()["unchanged"] == 1
    assert point_ids(kb, docs / "oncall.md") == before_oncall
    after_deploy = point_ids(kb, docs / "deploy.md")
    assert after_deploy and after_deploy.isdisjoint(before_deploy)
