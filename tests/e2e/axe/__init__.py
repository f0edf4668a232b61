"""axe-core, the accessibility checker, run inside a Playwright page.

`axe.min.js` is axe-core 4.14.1 from npm (`npm install axe-core@4.14.1`), unchanged, with
its licence header; LICENSE (MPL-2.0) and LICENSE-3RD-PARTY.txt come from the same
package. It is kept here so the browser tests need no network or npm.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE_JS = Path(__file__).with_name("axe.min.js")
AXE_VERSION = "4.14.1"

_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.join(' '), summary: n.failureSummary})),
  }));
}"""


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """Every axe violation on `page` (the default rule set: WCAG 2.x A and AA and best
    practices). The script is evaluated through the DevTools protocol, so a strict page
    policy that refuses inline scripts does not stop it."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(AXE_JS.read_text(encoding="utf-8") + "\n;0")
    version = page.evaluate("axe.version")
    assert version == AXE_VERSION, version
    violations: list[dict[str, Any]] = page.evaluate(_RUN)
    return violations


def describe(violations: list[dict[str, Any]]) -> str:
    """The violations as lines a failing assertion can show."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        lines += [f"    {n['target']}: {' '.join(str(n['summary']).split())}" for n in v["nodes"]]
    return "\n".join(lines)
