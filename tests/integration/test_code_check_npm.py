"""The JavaScript/TypeScript code check on real npm packages: a project whose `node_modules`
has React Router 7, React DOM 19's types and Node's types (npm, from the registry). What
React Router 6 and React 19 removed is flagged with the installed version; the code their
upgrade guides give instead is not.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from codeweaver.codecheck import CodeChecker
from codeweaver.config import Settings
from codeweaver.factory import build_code_checker

pytestmark = pytest.mark.integration

PACKAGES = ["react-router-dom@7.18.6", "@types/react-dom@19.3.0", "@types/node@26.6.6"]

OLD = """Set up the routes:

```jsx
import ReactDOM from 'react-dom';
import { BrowserRouter, Switch, Route } from 'react-router-dom';
import { readFileSync } from 'node:fs';

ReactDOM.render(<BrowserRouter><Switch><Route path="/" /></Switch></BrowserRouter>, root);
```
"""

NEW = """Set up the routes:

```tsx
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Routes, Route, useNavigate } from 'react-router-dom';
import * as fs from 'node:fs';

const text: string = fs.readFileSync('a.txt', 'utf8');
createRoot(root).render(<BrowserRouter><Routes><Route path="/" /></Routes></BrowserRouter>);
```
"""


@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory) -> CodeChecker:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    project = tmp_path_factory.mktemp("js-project")
    (project / "package.json").write_text(json.dumps({"name": "p", "private": True}))
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *PACKAGES],
        cwd=project, check=True, timeout=600,
    )  # fmt: skip
    made = build_code_checker(Settings(project=project, data_dir=project / ".data"))
    assert made is not None
    return made


def test_removed_exports_are_flagged_at_the_installed_versions(checker: CodeChecker) -> None:
    check = checker.check(OLD)
    found = {item.finding.name: item.finding for item in check.findings}
    assert set(found) == {"react-dom.render", "react-router-dom.Switch"}
    # React DOM comes as React Router's peer: its version, not its `@types` one, is named.
    assert found["react-dom.render"].where.startswith("react-dom 19.")
    assert found["react-router-dom.Switch"].where == "react-router-dom 7.18.6"
    assert check.uses == 5  # render, BrowserRouter, Switch, Route, readFileSync


def test_the_upgrade_guides_code_passes(checker: CodeChecker) -> None:
    check = checker.check(NEW)
    assert check.findings == ()
    assert check.uses == 6  # createRoot, BrowserRouter, Routes, Route, useNavigate, readFileSync
