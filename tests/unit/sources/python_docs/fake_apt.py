"""Stand-ins for `apt-cache`, `apt-get` and `dpkg-deb` on PATH: no network, no root.

Each logs its arguments and folder to `calls.jsonl` and behaves as `FAKE_APT` says:
`ok`, `unknown` (the package lists lack the package), `offline` (the download fails),
`hang` (the download never ends), `broken` (the unpacking fails). Every `pythonX.Y-doc`
is known unless `unknown`; the `.deb` "unpacked" is the docs fixture, at the version
`FAKE_DOCS_VERSION` (default: the fixture's 3.11.2).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FIXTURE = Path(__file__).parents[3] / "fixtures" / "python_docs" / "html"
DOWNLOAD_BYTES = 12_644_000

_COMMON = f"""#!{sys.executable}
import json, os, re, shutil, sys, time
from pathlib import Path

MODE = os.environ.get("FAKE_APT", "ok")
LOG = Path(os.environ["FAKE_APT_LOG"])
with LOG.open("a") as log:
    log.write(json.dumps({{"argv": [Path(sys.argv[0]).name, *sys.argv[1:]],
                          "cwd": os.getcwd(), "pid": os.getpid()}}) + "\\n")
"""

APT_CACHE = (
    _COMMON
    + """
if sys.argv[1] == "pkgnames":
    print("python3.11\\npython3.11-doc\\npython3.11-dev\\npython3.11-venv")
    sys.exit(0)
name = sys.argv[-1]
if MODE == "unknown":
    print(f"N: Unable to locate package {name}", file=sys.stderr)
    print("E: No packages found", file=sys.stderr)
    sys.exit(100)
print(f"Package: {name}\\nVersion: 3.11.2-6+deb12u9\\nInstalled-Size: 70544")
print(f"Filename: pool/main/p/python3.11/{name}_3.11.2-6+deb12u9_all.deb")
print("Size: %d\\n\\nPackage: {name}\\nVersion: 3.11.2-1\\nSize: 1\\n" % """
    + str(DOWNLOAD_BYTES)
    + """)
"""
)

APT_GET = (
    _COMMON
    + """
name = sys.argv[-1]
if MODE == "offline":
    print(f"E: Failed to fetch http://deb.example/{name}.deb  Temporary failure resolving "
          "'deb.example'", file=sys.stderr)
    sys.exit(100)
if MODE == "hang":
    Path("partial.deb").write_bytes(b"x" * 1000)
    time.sleep(60)
print("W: Download is performed unsandboxed as root", file=sys.stderr)
Path(f"{name}_3.11.2-6+deb12u9_all.deb").write_bytes(b"!<arch>\\n" + b"x" * 2000)
"""
)

DPKG_DEB = (
    _COMMON
    + f"""
FIXTURE = Path({str(FIXTURE)!r})
deb, target = Path(sys.argv[2]), Path(sys.argv[3])
if MODE == "broken":
    target.mkdir(parents=True, exist_ok=True)
    (target / "half-written").write_text("x")
    print(f"dpkg-deb: error: {{deb.name}} is not a Debian format archive", file=sys.stderr)
    sys.exit(2)
minor = re.match(r"python([0-9.]+)-doc_", deb.name).group(1)
html = target / "usr" / "share" / "doc" / f"python{{minor}}" / "html"
shutil.copytree(FIXTURE, html)
version = os.environ.get("FAKE_DOCS_VERSION", "3.11.2")
options = html / "_static" / "documentation_options.js"
options.write_text(re.sub(r"VERSION: '[^']*'", f"VERSION: '{{version}}'", options.read_text()))
copyright = target / "usr" / "share" / "doc" / f"python{{minor}}-doc" / "copyright"
copyright.parent.mkdir(parents=True)
copyright.write_text("Python Software Foundation License")
(target / "usr" / "share" / "info").mkdir(parents=True)
"""
)


def install(bin_dir: Path, log: Path, env: dict[str, str]) -> None:
    """Write the three commands into `bin_dir`; `env` gets the variables they read."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, text in (("apt-cache", APT_CACHE), ("apt-get", APT_GET), ("dpkg-deb", DPKG_DEB)):
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)
    env["FAKE_APT_LOG"] = str(log)
    env["PATH"] = str(bin_dir)  # only these: the machine's real apt is never reached


def calls(log: Path) -> list[dict[str, object]]:
    """What the fakes were run with, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
