"""Two `codeweaver serve` replicas sharing everything, started by `scripts/cluster.sh`.

PostgreSQL holds the conversations, Redis the rate-limit budget and the run queue,
Milvus Lite (as a gRPC server) the answer cache and the knowledge base. The model is
`scripted:echo@1s`: each answer takes a second, as if a model computed it, so runs
overlap and the shared slots can be watched in Redis.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from codeweaver.sources.knowledge_base import STATUS_SECONDS
from tests.services import postgres_url, redis_url

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "scripts" / "cluster.sh"
EXE = Path(sys.executable).with_name("codeweaver")
SLOTS = 2
LINE = 4
BUDGET = 10
RUNNING_KEY = "codeweaver:runq:default:running"
pytestmark = pytest.mark.services  # the replicas share PostgreSQL and Redis


def free_ports(count: int) -> int:
    """The first of `count` consecutive free loopback ports."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            first = int(probe.getsockname()[1])
        if first + count > 65535:
            continue
        try:
            for port in range(first, first + count):
                with socket.socket() as other:
                    other.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError("no free ports")


@dataclass
class Cluster:
    a: str
    b: str
    env: dict[str, str]
    dir: Path
    tokens: dict[str, str]

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def chat(self, url: str, user: str, message: str, **extra: Any) -> httpx.Response:
        return httpx.post(
            f"{url}/api/chat",
            json={"message": message, **extra},
            headers=self.headers(user),
            timeout=60,
        )


def cluster_script(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(CLUSTER), *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("cluster")
    run = uuid.uuid4().hex[:8]  # users of their own: budgets in Redis outlive a run
    tokens = {name: secrets.token_urlsafe(16) for name in ("alice", "bob", "carol")}
    users = {f"{name}-{run}": token for name, token in tokens.items()}
    (folder / "tokens").write_text("".join(f"{u} {t}\n" for u, t in users.items()))
    replica = free_ports(2)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CODEWEAVER_", "MILVUS"))},
        "CLUSTER_DIR": str(folder / "state"),
        "CLUSTER_MILVUS_PORT": str(free_ports(1)),
        "CLUSTER_REPLICA_PORT": str(replica),
        "DATABASE_URL": postgres_url(),
        "CODEWEAVER_REDIS_URL": redis_url(),
        "CODEWEAVER_MODEL": "scripted:echo@1s",
        "CODEWEAVER_SOURCES": "knowledge_base",
        "CODEWEAVER_CACHE_MODE": "semantic",
        "CODEWEAVER_API_TOKENS": str(folder / "tokens"),
        "CODEWEAVER_API_RATE": str(BUDGET),
        "CODEWEAVER_API_CONCURRENCY": str(SLOTS),
        "CODEWEAVER_API_QUEUE": str(LINE),
    }
    started = cluster_script(env, "start")
    assert started.returncode == 0, started.stdout + started.stderr
    state = folder / "state"
    pids = [int(p.read_text()) for p in state.glob("*.pid")]
    assert len(pids) == 3  # Milvus and two replicas; a scripted model needs no server
    try:
        yield Cluster(
            f"http://127.0.0.1:{replica}",
            f"http://127.0.0.1:{replica + 1}",
            env,
            state,
            {name: users[f"{name}-{run}"] for name in tokens},
        )
    finally:
        stopped = cluster_script(env, "stop")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        for pid in pids:  # every process is gone, none left behind
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


def nodes(answer: dict[str, Any]) -> list[str]:
    return [str(step["node"]) for step in answer["steps"]]


def test_both_replicas_report_the_shared_stores(cluster: Cluster) -> None:
    for url in (cluster.a, cluster.b):
        health = httpx.get(f"{url}/api/health", headers=cluster.headers("alice")).json()
        assert health["stores"]["threads"] == "postgresql"
        assert health["stores"]["vectors"].startswith("milvus")
        assert health["queue"]["shared"] is True and health["queue"]["concurrency"] == SLOTS


def test_a_conversation_started_on_a_continues_on_b(cluster: Cluster) -> None:
    first = cluster.chat(cluster.a, "alice", "How do I merge two dicts in Python?").json()
    session = first["session_id"]
    follow = cluster.chat(cluster.b, "alice", "Can you show me an example?", session_id=session)
    assert follow.status_code == 200, follow.text
    body = follow.json()
    assert body["session_id"] == session and body["turn"] == 2
    assert "generate_with_history" in nodes(body)  # it answered from the conversation
    listed = httpx.get(f"{cluster.b}/api/sessions/{session}", headers=cluster.headers("alice"))
    history = listed.json()["history"]
    assert [(m["role"], m["content"]) for m in history if m["role"] == "user"] == [
        ("user", "How do I merge two dicts in Python?"),
        ("user", "Can you show me an example?"),
    ]
    assert len(history) == 4


def test_an_answer_cached_by_a_is_a_cache_hit_on_b(cluster: Cluster) -> None:
    question = "How do I remove duplicates from a list in Python?"
    first = cluster.chat(cluster.a, "alice", question).json()
    assert "generate_answer" in nodes(first) and "return_cached_answer" not in nodes(first)
    again = cluster.chat(cluster.b, "alice", question).json()
    assert "return_cached_answer" in nodes(again)
    assert again["answer"] == first["answer"]


def test_a_folder_indexed_through_a_is_searched_by_b(cluster: Cluster, tmp_path: Path) -> None:
    docs = tmp_path / "team-docs"
    docs.mkdir()
    (docs / "deploy.md").write_text(
        "# Deploying\n\nSet CW_DEPLOY_TOKEN to the registry token before running "
        "deploy.sh; the token lets the script push images to the registry.\n"
    )
    # Replica A's configuration and data folder: what `codeweaver index add` on A's machine uses.
    env_a = {**cluster.env, "CODEWEAVER_DATA_DIR": str(cluster.dir / "replica1")}
    env_a["CODEWEAVER_VECTOR_STORE"] = "milvus"
    env_a["MILVUS_URI"] = f"http://127.0.0.1:{cluster.env['CLUSTER_MILVUS_PORT']}"
    added = subprocess.run(
        [str(EXE), "index", "add", str(docs)], env=env_a, capture_output=True, text=True
    )
    assert added.returncode == 0, added.stderr
    # B asks its knowledge base's status again after this long; then it searches the folder.
    # (Asked earlier, B answers without it and caches that answer: no source was ready,
    # and with no online source a second round would find nothing new.)
    time.sleep(STATUS_SECONDS + 1)
    status = cluster.chat(cluster.b, "alice", "What is CW_DEPLOY_TOKEN used for?").json()
    steps = [f"{s['node']}: {s['message']}" for s in status.get("steps", [])]
    assert status.get("sources"), "\n".join([str(status.get("detail")), *steps])
    assert any(str(s["url"]).endswith(".md#L1") or "deploy.md" in str(s) for s in status["sources"])


def stream(cluster: Cluster, url: str, user: str, question: str, out: list[Any]) -> None:
    """One streamed answer: its status, queue positions and whether it finished."""
    positions: list[int] = []
    with httpx.stream(
        "POST",
        f"{url}/api/chat/stream",
        json={"message": question},
        headers=cluster.headers(user),
        timeout=120,
    ) as response:
        if response.status_code != 200:
            response.read()
            out.append((response.status_code, response.headers.get("retry-after"), [], False))
            return
        event = ""
        done = False
        for line in response.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event == "queue":
                positions.append(int(json.loads(line[5:])["position"]))
            elif line.startswith("data:") and event == "done":
                done = True
    out.append((200, None, positions, done))


def test_a_burst_split_across_replicas_shares_the_line_and_the_slots(cluster: Cluster) -> None:
    topics = [
        "reverse a string",
        "read a CSV file",
        "sort by two keys",
        "parse a date",
        "zip two lists",
        "count words",
        "flatten a nested list",
        "read env variables",
    ]
    questions = [f"How do I {topic} in Python?" for topic in topics]
    out: list[Any] = []
    watcher = redis.Redis.from_url(redis_url())
    most = 0
    threads = [
        threading.Thread(
            target=stream, args=(cluster, (cluster.a, cluster.b)[i % 2], "bob", q, out)
        )
        for i, q in enumerate(questions)
    ]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        most = max(most, int(watcher.zcard(RUNNING_KEY)))
        time.sleep(0.02)
    statuses = sorted(status for status, *_ in out)
    # Eight at once against 2 slots and 4 places in line, whichever replica they reach.
    assert statuses == [200] * (SLOTS + LINE) + [503] * (len(questions) - SLOTS - LINE), out
    assert all(int(retry) >= 1 for status, retry, *_ in out if status == 503)
    answered = [entry for entry in out if entry[0] == 200]
    assert all(done for *_, done in answered)
    assert most == SLOTS  # never more answers at once than the slots, across replicas
    waited = sorted(max(positions, default=0) for _, _, positions, _ in answered)
    assert waited[-1] >= 2 and waited.count(0) <= SLOTS, waited  # places shown, in order


def test_the_rate_limit_budget_is_shared(cluster: Cluster) -> None:
    question = "How do I get the current time in Python?"
    for i in range(BUDGET):
        response = cluster.chat((cluster.a, cluster.b)[i % 2], "carol", question)
        assert response.status_code == 200, (i, response.text)
    for url in (cluster.a, cluster.b):
        refused = cluster.chat(url, "carol", question)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
