"""The CLI of an install without the `local` extra, as a process: another model answers,
and `doctor` and `ask` say what the local model needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from codeweaver.llm.registry import LOCAL_EXTRA_HINT

# As if `pip install codeweaver` had left the extra out: these imports fail.
WITHOUT_EXTRA = "import sys\nfor name in ('xllamacpp', 'gguf'):\n    sys.modules[name] = None\n"


def run(tmp_path: Path, *args: str, model: str) -> subprocess.CompletedProcess[str]:
    code = (
        WITHOUT_EXTRA
        + "from codeweaver.cli.app import main\n"
        + f"sys.argv = ['codeweaver', *{list(args)!r}]\n"
        + "main()\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "CODEWEAVER_MODEL": model,
        "CODEWEAVER_DATA_DIR": str(tmp_path / "data"),
        "CODEWEAVER_CACHE_DIR": str(tmp_path / "cache"),
        "CODEWEAVER_SOURCES": "local_code",
        "CODEWEAVER_CODE_PATHS": str(tmp_path / "code"),
        "CODEWEAVER_PROJECT": str(tmp_path),
    }
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "lines.py").write_text("def read_lines(path):\n    return open(path)\n")
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )


def test_another_model_answers_without_llama_cpp(tmp_path: Path) -> None:
    done = run(
        tmp_path, "ask", "How do I read lines with read_lines?", "--json", model="scripted:echo"
    )
    assert done.returncode == 0, done.stderr
    assert "Scripted answer to:" in json.loads(done.stdout)["answer"]


def test_doctor_and_ask_say_what_the_local_model_needs(tmp_path: Path) -> None:
    doctor = run(tmp_path, "doctor", "--json", model="local:qwen2.5-coder-1.5b")
    assert doctor.returncode == 0, doctor.stderr
    assert json.loads(doctor.stdout)["model"]["runtime"] == LOCAL_EXTRA_HINT
    asked = run(tmp_path, "ask", "How do I read a file?", model="local:qwen2.5-coder-1.5b")
    assert asked.returncode == 2
    assert "pip install 'codeweaver[local]'" in " ".join(asked.stderr.split())
