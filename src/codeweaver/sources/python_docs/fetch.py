"""Python's HTML docs without root: the distribution's `pythonX.Y-doc` package, unpacked
into the cache.

On Debian and Ubuntu `apt-get download` writes a package's `.deb` into the current folder
and `dpkg-deb -x` unpacks one into any folder; neither needs root (as root, `apt-get
download` warns that it cannot hand the file to its `_apt` user and downloads anyway). The
package is the one the system's package lists know: Debian 12 has the docs of Python 3.11
only, so a pyenv 3.13 finds none and is told so. About 13 MB are downloaded; the HTML
folder (about 67 MB) ends up in `sections.fetched_dir` (`<cache_dir>/python-docs/X.Y/html`)
beside the package's copyright file.

Everything is unpacked in a temporary folder next to the destination and renamed into place
once complete, so a reader (or a later run) never sees half a folder. Each command runs
without a shell, with a timeout, in a process group of its own that is killed when it runs
over or the run is interrupted.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeweaver.sources.python_docs.sections import FETCHED_DIR, docs_version, fetched_dir

#: The Debian/Ubuntu package of a Python X.Y's HTML docs.
PACKAGE = "python{minor}-doc"
TOOLS = ("apt-cache", "apt-get", "dpkg-deb")
#: A line of progress at least this often while a command runs: never a silent wait.
HEARTBEAT_SECONDS = 15.0
POLL_SECONDS = 0.25
#: A temporary folder older than this was left by a run that was killed.
STALE_SECONDS = 3600.0
_PARTIAL = ".partial-"
_FIELD = re.compile(r"^([A-Za-z-]+):\s*(.*)$")
_DOC_PACKAGE = re.compile(r"^python(3\.[0-9]+)-doc$")
_MINOR = re.compile(r"^[0-9]+\.[0-9]+$")

Say = Callable[[str], None]


class FetchError(Exception):
    """The docs could not be fetched; the message says why and what to do."""


@dataclass(frozen=True)
class Timeouts:
    """Seconds each command may take before it is stopped."""

    lookup: float = 60.0
    download: float = 900.0  # 13 MB on a slow line
    unpack: float = 300.0


@dataclass(frozen=True)
class PackageInfo:
    """The candidate version of a package, as the system's package lists describe it."""

    name: str
    version: str
    download_bytes: int
    unpacked_bytes: int


@dataclass(frozen=True)
class Fetched:
    """Docs fetched and in place."""

    html_dir: Path
    docs_version: str  # "3.11.2"
    package: PackageInfo
    download_bytes: int
    unpacked_bytes: int
    seconds: float


def megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def missing_tools() -> list[str]:
    """The commands fetching needs that this system lacks (empty: it can fetch)."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def _kill(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)  # apt-get's download helpers too
    except OSError:
        process.kill()
    process.communicate()


def run(
    argv: Sequence[str],
    cwd: Path | None,
    timeout: float,
    heartbeat: Callable[[float], None] | None = None,
) -> tuple[int, str]:
    """(exit code, stdout and stderr) of `argv`; `heartbeat(seconds so far)` every
    `HEARTBEAT_SECONDS`; `FetchError` when it cannot start or runs over `timeout`."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env={**os.environ, "LC_ALL": "C"},  # messages in one language, fields parsed
            start_new_session=True,
        )
    except OSError as exc:
        raise FetchError(f"cannot run {argv[0]}: {exc}") from exc
    beat = started + HEARTBEAT_SECONDS
    try:
        while True:
            try:
                output, _ = process.communicate(timeout=POLL_SECONDS)
                return process.returncode, output
            except subprocess.TimeoutExpired:
                now = time.monotonic()
                if now - started > timeout:
                    _kill(process)
                    raise FetchError(
                        f"`{' '.join(argv)}` took more than {timeout:.0f} s and was stopped"
                    ) from None
                if heartbeat is not None and now >= beat:
                    heartbeat(now - started)
                    beat = now + HEARTBEAT_SECONDS
    except BaseException:
        if process.returncode is None:  # interrupted (Ctrl-C) or failed: nothing left running
            _kill(process)
        raise


def _errors(output: str) -> str:
    """The error lines of apt's or dpkg's output, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("E:", "dpkg-deb: error"))]
    return " ".join(errors or lines[-1:]) or "no message"


def _known_docs(timeout: float) -> list[str]:
    """The Python X.Y whose docs the package lists have ("3.11"), for the message."""
    try:
        code, output = run(["apt-cache", "pkgnames", "python3."], None, timeout)
    except FetchError:
        return []  # only a detail of the message about the package
    found = {m.group(1) for line in output.split() if (m := _DOC_PACKAGE.match(line))}
    return sorted(found, key=lambda v: tuple(int(p) for p in v.split("."))) if code == 0 else []


def lookup(minor: str, timeout: float = Timeouts.lookup) -> PackageInfo:
    """The docs package of Python `minor` ("3.11") the package lists offer."""
    name = PACKAGE.format(minor=minor)
    code, output = run(["apt-cache", "show", "--no-all-versions", name], None, timeout)
    fields: dict[str, str] = {}
    for line in output.splitlines():
        if not line.strip() and fields:
            break  # the first stanza is the candidate version
        if match := _FIELD.match(line):
            fields.setdefault(match.group(1), match.group(2).strip())
    if code != 0 or fields.get("Package") != name:
        known = _known_docs(timeout)
        has = (
            f"they have the docs of Python {', '.join(known)} only"
            if known
            else "they name no Python docs at all (empty or old lists: `apt-get update`, "
            "as root, refreshes them)"
        )
        raise FetchError(
            f"this system's package lists have no {name} ({has}). Set "
            f"CODEWEAVER_PYTHON_DOCS to a folder of Python {minor}'s HTML docs (the one "
            "holding `tutorial/`: an unpacked HTML archive from docs.python.org), or use a "
            "Python whose docs the system packages"
        )
    try:
        download = int(fields.get("Size", "0"))
        unpacked = int(fields.get("Installed-Size", "0")) * 1024  # in KiB
    except ValueError:
        download = unpacked = 0
    return PackageInfo(name, fields.get("Version", "?"), download, unpacked)


def folder_bytes(folder: Path) -> int:
    """Bytes of the regular files under `folder` (links not followed)."""
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        except OSError:
            pass  # removed meanwhile
    return total


def _clean_stale(root: Path) -> None:
    """Remove temporary folders that killed runs left (old enough not to be another's)."""
    now = time.time()
    for path in root.glob(f"{_PARTIAL}*"):
        try:
            if now - path.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def replace_folder(new: Path, target: Path) -> None:
    """Put the complete folder `new` at `target` (same file system), replacing what is there:
    `target` is at every moment either the old folder, absent, or the new one."""
    if not target.exists():
        new.rename(target)
        return
    aside = target.with_name(f"{_PARTIAL}old-{target.name}-{os.getpid()}-{time.monotonic_ns()}")
    target.rename(aside)
    try:
        new.rename(target)
    except OSError:
        aside.rename(target)  # put the old one back rather than leave nothing
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _download(info: PackageInfo, folder: Path, timeout: float, say: Say) -> Path:
    """The `.deb` of `info`, downloaded into the empty `folder`."""

    def heartbeat(seconds: float) -> None:
        so_far, total = megabytes(folder_bytes(folder)), megabytes(info.download_bytes)
        say(f"downloading: {so_far} of {total} ({seconds:.0f} s)")

    code, output = run(["apt-get", "download", info.name], folder, timeout, heartbeat)
    debs = sorted(folder.glob("*.deb"))
    if code != 0 or len(debs) != 1:
        raise FetchError(
            f"cannot download {info.name}: {_errors(output)}. Check the network (and the "
            "proxy apt is set to use, if any), then run `codeweaver setup` again"
        )
    return debs[0]


def _unpack(deb: Path, folder: Path, minor: str, timeout: float, say: Say) -> tuple[Path, str]:
    """(HTML folder, docs version) of `deb` unpacked under `folder`."""

    def heartbeat(seconds: float) -> None:
        say(f"unpacking: {megabytes(folder_bytes(folder))} so far ({seconds:.0f} s)")

    code, output = run(["dpkg-deb", "-x", str(deb), str(folder)], folder.parent, timeout, heartbeat)
    if code != 0:
        raise FetchError(f"cannot unpack {deb.name}: {_errors(output)}")
    html = folder / "usr" / "share" / "doc" / f"python{minor}" / "html"
    version = docs_version(html)
    if version.split(".")[:2] != minor.split("."):
        raise FetchError(f"{deb.name} holds no HTML docs of Python {minor} where expected")
    return html, version


def fetch_docs(
    cache_dir: Path,
    minor: str,
    *,
    say: Say | None = None,
    timeouts: Timeouts | None = None,
) -> Fetched:
    """Download and unpack the docs of Python `minor` ("3.11") into `cache_dir`, telling
    `say` each phase with its size and time; `FetchError` says why it could not."""
    tell: Say = say or (lambda _line: None)
    limits = timeouts or Timeouts()
    started = time.monotonic()
    if not _MINOR.match(minor):  # it names a package and a folder: nothing else gets in
        raise FetchError(f"not a Python version: {minor!r}")
    if lacking := missing_tools():
        raise FetchError(
            f"this system has no {', '.join(lacking)} to fetch Python {minor}'s docs without "
            "root (Debian and Ubuntu have them). Set CODEWEAVER_PYTHON_DOCS to a folder of "
            f"Python {minor}'s HTML docs (the one holding `tutorial/`)"
        )
    tell(f"looking up {PACKAGE.format(minor=minor)} in the system's package lists…")
    info = lookup(minor, limits.lookup)
    tell(
        f"{info.name} {info.version}: {megabytes(info.download_bytes)} to download, "
        f"{megabytes(info.unpacked_bytes)} unpacked (`--no-python-docs` skips this)"
    )
    root = cache_dir / FETCHED_DIR
    target = fetched_dir(cache_dir, minor).parent
    try:
        root.mkdir(parents=True, exist_ok=True)
        _clean_stale(root)
        work = Path(tempfile.mkdtemp(prefix=f"{_PARTIAL}{minor}-", dir=root))
    except OSError as exc:
        raise FetchError(f"cannot write in {root}: {exc}") from exc
    try:
        (work / "download").mkdir()
        phase = time.monotonic()
        tell(f"downloading {info.name} with apt-get (no root needed)…")
        deb = _download(info, work / "download", limits.download, tell)
        size = deb.stat().st_size
        tell(f"downloaded {megabytes(size)} in {time.monotonic() - phase:.1f} s")
        phase = time.monotonic()
        tell(f"unpacking {deb.name} with dpkg-deb…")
        html, version = _unpack(deb, work / "tree", minor, limits.unpack, tell)
        # Only the HTML and its licence are kept; the .deb and the rest go with `work`.
        (work / "out").mkdir()
        html.rename(work / "out" / "html")
        copyright_file = html.parents[1] / f"python{minor}-doc" / "copyright"
        if copyright_file.is_file():
            copyright_file.rename(work / "out" / "copyright")
        unpacked = folder_bytes(work / "out")
        took = time.monotonic() - phase
        tell(f"unpacked in {took:.1f} s; the HTML docs kept: {megabytes(unpacked)}")
        replace_folder(work / "out", target)
    except OSError as exc:
        raise FetchError(f"cannot write the docs into {root}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Fetched(
        fetched_dir(cache_dir, minor),
        version,
        info,
        size,
        unpacked,
        time.monotonic() - started,
    )
