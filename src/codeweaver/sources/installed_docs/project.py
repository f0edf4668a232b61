"""The user's project and the Python environment its code runs in.

The project root is the nearest folder, from the working directory (or `--project`,
`CODEWEAVER_PROJECT`) up, that holds `.git` (a folder, or a file in a worktree or
submodule); else that folder itself. Its interpreter is the first of
`CODEWEAVER_PROJECT_PYTHON`, `$VIRTUAL_ENV/bin/python`, `<root>/.venv/bin/python` and
`<root>/venv/bin/python`. An activated `VIRTUAL_ENV` that is CodeWeaver's own environment is
tried last: someone running CodeWeaver from its activated venv inside their project means
the project's `.venv`.

The interpreter is asked for its facts in a subprocess (`SCRIPT`: version, prefix, stdlib and
site-packages folders), run with `-I -S` from an empty temporary folder: without `site`, no
`.pth` file of the environment runs, and nothing of the project is imported. A missing,
non-executable, failing or hanging interpreter gives a reason (`Project.reason`) instead, and
the installed docs fall back to CodeWeaver's own environment.

CodeWeaver's own environment (same resolved `sys.prefix` and `sys.version`) is indexed
exactly as without a project: same options, fingerprint and folder. Another environment's
indexes live in `<index dir>/envs/<key>/`, `key` a digest of its resolved prefix (a venv's
`bin/python` links to its base interpreter, which many venvs share: the prefix is what tells
them apart), with `environment.json` saying whose they are.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field, replace
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeweaver.sources.installed_docs.collect import list_distributions, same_minor
from codeweaver.sources.installed_docs.model import ENVS_DIR, CollectorOptions, PythonFacts

if TYPE_CHECKING:
    from codeweaver.config import Settings

logger = logging.getLogger(__name__)

TIMEOUT = 10.0
ENVIRONMENT_FILE = "environment.json"
BY_SETTING = "CODEWEAVER_PROJECT_PYTHON"
BY_ACTIVATION = "VIRTUAL_ENV"

#: Runs in the project's interpreter: stdlib only, compatible with old Pythons. With `-S`
#: the venv is not applied to `sys.prefix`, so its `pyvenv.cfg` is read as `site.venv` would.
SCRIPT = """
import json, os, platform, site, sys, sysconfig
exe_dir = os.path.dirname(os.path.abspath(sys.executable))
prefix, venv, system_site = sys.prefix, False, True
for folder in (exe_dir, os.path.dirname(exe_dir)):
    cfg = os.path.join(folder, "pyvenv.cfg")
    if os.path.isfile(cfg):
        venv, prefix = True, os.path.dirname(exe_dir)
        with open(cfg) as handle:
            for line in handle:
                key, sep, value = line.partition("=")
                if sep and key.strip().lower() == "include-system-site-packages":
                    system_site = value.strip().lower() == "true"
        break
sites = list(site.getsitepackages([prefix] + ([sys.prefix] if venv and system_site else [])))
own = sysconfig.get_paths(vars={"base": prefix, "platbase": prefix})
sites += [own["purelib"], own["platlib"]]
if system_site:
    sites.append(site.getusersitepackages())
print(json.dumps({
    "version": platform.python_version(),
    "sys_version": sys.version,
    "prefix": prefix,
    "stdlib": sysconfig.get_paths()["stdlib"],
    "site": sites,
    "stdlib_names": sorted(getattr(sys, "stdlib_module_names", ())),
}))
"""


@dataclass(frozen=True)
class Environment:
    """A Python environment as its interpreter describes itself."""

    python: Path  # the executable as found (not resolved: a venv's links to its base)
    found_by: str  # BY_SETTING, BY_ACTIVATION, ".venv in the project", ...
    version: str  # platform.python_version()
    sys_version: str
    prefix: Path  # resolved; a venv's own folder
    stdlib: Path
    site_dirs: tuple[Path, ...]
    stdlib_names: frozenset[str] = field(default=frozenset(), repr=False)
    own: bool = False  # CodeWeaver's own environment

    @property
    def key(self) -> str:
        """Names the environment's index folder (`env_index_dir`)."""
        return sha256(str(self.prefix).encode("utf-8", "surrogateescape")).hexdigest()[:16]


@dataclass(frozen=True)
class Project:
    """The project root and its environment, or why none could be used."""

    root: Path
    env: Environment | None = None
    reason: str = ""  # why `env` is None ("" otherwise)


# --------------------------------------------------------------------------- finding


def find_root(folder: Path) -> Path:
    """The nearest ancestor of `folder` (itself included) holding `.git`, else `folder`."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return folder


def venv_python(folder: Path) -> Path:
    return folder / "Scripts" / "python.exe" if os.name == "nt" else folder / "bin" / "python"


def _own_prefix() -> Path:
    return Path(sys.prefix).resolve()


def choose_python(
    root: Path, python: Path | None = None, virtual_env: str | None = None
) -> tuple[Path, str] | None:
    """(interpreter, how it was found) by the order of the module docstring, or None."""
    if python is not None:
        return _executable(python), BY_SETTING
    activated = Path(virtual_env).expanduser() if virtual_env else None
    if activated is not None and activated.resolve() != _own_prefix():
        return venv_python(activated.absolute()), BY_ACTIVATION
    for name in (".venv", "venv"):
        candidate = venv_python(root / name)
        if os.path.lexists(candidate):
            return candidate, f"{name} in the project"
    if activated is not None:  # CodeWeaver's own venv, activated
        return venv_python(activated.absolute()), BY_ACTIVATION
    return None


def _executable(python: Path) -> Path:
    """A path as given (made absolute), or a bare command name looked up on PATH."""
    text = str(python.expanduser())
    if os.sep not in text and "/" not in text and not os.path.lexists(text):
        found = shutil.which(text)
        if found:
            return Path(found)
    return Path(text).absolute()


def find_project(
    folder: Path | None = None,
    *,
    python: Path | None = None,
    virtual_env: str | None = None,
    timeout: float = TIMEOUT,
) -> Project:
    """The project of `folder` (default: the working directory) and its environment; never
    raises (the sources are built from it)."""
    try:
        start = Path(folder or Path.cwd()).expanduser().absolute()
        if not start.is_dir():
            return Project(start, reason=f"the project folder {start} does not exist")
        root = find_root(start.resolve())
        chosen = choose_python(root, python, virtual_env)
    except (OSError, RuntimeError, ValueError) as exc:  # a vanished cwd, a symlink loop
        return Project(Path(folder or "."), reason=f"cannot read the project folder: {exc}")
    if chosen is None:
        return Project(
            root,
            reason="no project interpreter: CODEWEAVER_PROJECT_PYTHON and VIRTUAL_ENV are "
            "not set and the project has no .venv or venv folder",
        )
    found = inspect_python(*chosen, timeout=timeout)
    if isinstance(found, str):
        if found not in _WARNED:  # once per process: sources and doctor both look
            _WARNED.add(found)
            logger.warning("installed_docs: %s; using CodeWeaver's own environment", found)
        return Project(root, reason=found)
    return Project(root, env=found)


def find_project_for(settings: Settings, timeout: float = TIMEOUT) -> Project:
    """`find_project` as configured: `project`, `project_python`, and `VIRTUAL_ENV` (the
    standard activation variable, read only here)."""
    return find_project(
        settings.project,
        python=settings.project_python,
        virtual_env=os.environ.get("VIRTUAL_ENV") or None,
        timeout=timeout,
    )


# --------------------------------------------------------------------------- asking


_FACTS: dict[tuple[str, int, int], Environment] = {}
_WARNED: set[str] = set()


def inspect_python(python: Path, found_by: str, timeout: float = TIMEOUT) -> Environment | str:
    """The environment `python` reports, or why it cannot be used (never raises)."""
    where = f"{found_by}: {python}"
    if not os.path.lexists(python):
        return f"{where} does not exist"
    try:
        stamp = (str(python), os.lstat(python).st_mtime_ns, python.stat().st_mtime_ns)
    except OSError:
        return f"{where} is a broken link"
    if python.is_dir():
        return f"{where} is a folder, not a Python interpreter"
    if not os.access(python, os.X_OK):
        return f"{where} is not executable"
    if _is_own_python(python):
        return own_environment(python, found_by)
    known = _FACTS.get(stamp)
    if known is not None:
        return replace(known, python=python, found_by=found_by)
    facts = _ask(python, timeout)
    if isinstance(facts, str):
        return f"{where} {facts}"
    try:
        prefix = Path(str(facts["prefix"])).resolve()
        sys_version = str(facts["sys_version"])
        sites = (Path(str(p)) for p in facts["site"] if p)
        env = Environment(
            python=python,
            found_by=found_by,
            version=str(facts["version"]),
            sys_version=sys_version,
            prefix=prefix,
            stdlib=Path(str(facts["stdlib"])),
            site_dirs=tuple(dict.fromkeys(p for p in sites if p.is_dir())),
            stdlib_names=frozenset(str(n) for n in facts.get("stdlib_names") or ()),
            own=prefix == _own_prefix() and sys_version == sys.version,
        )
    except (KeyError, TypeError, ValueError, OSError) as exc:
        return f"{where} reported unusable facts ({type(exc).__name__}: {exc})"
    _FACTS[stamp] = env
    return env


def _is_own_python(python: Path) -> bool:
    """The running interpreter of CodeWeaver's own environment, known without asking it."""
    try:
        return python.parent.parent.resolve() == _own_prefix() and (
            python.resolve() == Path(sys.executable).resolve()
        )
    except OSError:
        return False


def own_environment(python: Path | None = None, found_by: str = "") -> Environment:
    """CodeWeaver's own environment, described in-process."""
    sites = (
        Path(p) for p in sys.path if p.rstrip("/\\").endswith(("site-packages", "dist-packages"))
    )
    return Environment(
        python=python or Path(sys.executable),
        found_by=found_by,
        version=platform.python_version(),
        sys_version=sys.version,
        prefix=_own_prefix(),
        stdlib=Path(sysconfig.get_paths()["stdlib"]),
        site_dirs=tuple(dict.fromkeys(p for p in sites if p.is_dir())),
        stdlib_names=frozenset(sys.stdlib_module_names),
        own=True,
    )


def _ask(python: Path, timeout: float) -> dict[str, Any] | str:
    """The JSON `SCRIPT` prints, or what went wrong (completing `'<python> ...'`)."""
    try:
        with tempfile.TemporaryDirectory(prefix="codeweaver-python-") as neutral:
            # Its own session, so a hanging interpreter is stopped with all it started.
            process = subprocess.Popen(
                [str(python), "-I", "-S", "-c", SCRIPT],
                cwd=neutral,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=os.name == "posix",
            )
            try:
                out, err = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _stop(process)
                return f"did not answer within {timeout:g} s"
    except (OSError, ValueError) as exc:  # not runnable (wrong format, no permission...)
        return f"cannot be run ({getattr(exc, 'strerror', None) or exc})"
    if process.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        detail = f": {lines[-1][:200]}" if lines else ""
        return f"exited with status {process.returncode}{detail}"
    try:
        facts = json.loads(out)
    except ValueError:
        return "did not report its paths (unexpected output)"
    return facts if isinstance(facts, dict) else "did not report its paths (unexpected output)"


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except OSError:  # already gone
        pass
    # A grandchild that left the group may still hold the pipes: wait a little, not forever.
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.communicate(timeout=5)


# --------------------------------------------------------------------------- indexing


def collector_options(
    env: Environment | None, base: CollectorOptions | None = None
) -> CollectorOptions:
    """`base` (default: everything) pointed at `env`'s folders and Python. CodeWeaver's own
    environment, or none, gets `base` unchanged: the same fingerprint as without a project.
    Built-in modules are read in-process, so only when `env` runs our `major.minor`."""
    base = base or CollectorOptions()
    if env is None or env.own:
        return base
    return replace(
        base,
        paths=env.site_dirs,
        stdlib_dir=env.stdlib,
        include_builtin_modules=base.include_builtin_modules and same_minor(env.version),
        python=PythonFacts(env.version, env.sys_version, env.stdlib_names),
    )


def env_index_dir(index_dir: Path, env: Environment | None) -> Path:
    """Where `env`'s indexes live: `index_dir` itself for CodeWeaver's own environment."""
    if env is None or env.own:
        return index_dir
    return index_dir / ENVS_DIR / env.key


def record_environment(folder: Path, env: Environment) -> None:
    """Write whose indexes `folder` holds (for people and `doctor`; never read back)."""
    text = json.dumps(
        {"python": str(env.python), "prefix": str(env.prefix), "version": env.version},
        indent=2,
    )
    path = folder / ENVIRONMENT_FILE
    try:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:  # only a label: the index works without it
        logger.debug("cannot write %s: %s", path, exc)


def describe(project: Project, index_dir: Path | None = None) -> dict[str, Any]:
    """What `doctor` shows: the root, and the environment indexed (or why ours is used)."""
    env = project.env
    report: dict[str, Any] = {"root": str(project.root)}
    if env is not None and not env.own:
        report.update(
            environment="project",
            python=str(env.python),
            found_by=env.found_by,
            python_version=env.version,
            distributions=len(list_distributions(collector_options(env))),
        )
        if index_dir is not None:
            report["index"] = str(env_index_dir(index_dir, env))
        return report
    report.update(
        environment="codeweaver",
        python=str(env.python) if env is not None else sys.executable,
        python_version=platform.python_version(),
        distributions=len(list_distributions(CollectorOptions())),
    )
    if env is not None:  # the project's interpreter is CodeWeaver's own
        report["found_by"] = env.found_by
    else:
        report["reason"] = project.reason
    if index_dir is not None:
        report["index"] = str(index_dir)
    return report
