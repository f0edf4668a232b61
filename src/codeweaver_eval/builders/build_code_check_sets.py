# ruff: noqa: E501  (a data table of code lines; a script that reports what it wrote)
"""Build the code check's data sets (`codeweaver eval code` lines) in tests/fixtures/code_check/.

- `removed.jsonl`: snippets using APIs that no longer exist at pandas 2.2, NumPy 2.1 and
  CPython 3.11, each from a documented removal (the release notes named in `REMOVED`), and
  keywords the signature never had; `missing` is the name the check must flag.
- `stackeval_answers.jsonl`: the Python code blocks of StackEval's accepted answers (tag
  `python`), `missing` empty except where a flag was reviewed and found right
  (`REVIEWED_RIGHT`): any other flag on them is false.
- `conala_snippets.jsonl`: CoNaLa's reference snippets (real Stack Overflow code), same rule.
- `removed_js.jsonl`: JavaScript/TypeScript using exports that no longer exist at React 19,
  React Router 7, Express 5 and Node.js's current types, each from a documented removal
  (`REMOVED_JS`), and names that never existed.
- `stackeval_js_answers.jsonl`: the JavaScript/TypeScript code blocks of StackEval's accepted
  answers (tags `javascript`, `typescript`), same rule as the Python ones.

Check them from an environment that has the packages they import (`scripts/code_check_env.sh`
makes its `.venv` and its `node_modules`).

    python -m codeweaver_eval.builders.build_code_check_sets [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from codeweaver_eval.repository import ROOT, SHARED_DATA

OUT = ROOT / "tests" / "fixtures" / "code_check"

PANDAS_2 = "pandas 2.0.0 release notes, Removal of prior version deprecations/changes"
NUMPY_124 = "NumPy 1.24.0 release notes, Expired deprecations"
NUMPY_2 = "NumPy 2.0.0 release notes, NEP 52 (Python API cleanup)"
PY = "Python {} changelog (What's New, Removed)"
NEVER = "a keyword the signature never had"

# (id, source, code, expected names)
REMOVED: list[tuple[str, str, str, list[str]]] = [
    ("pd-append", PANDAS_2,
     "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf = df.append({'a': 2}, ignore_index=True)\n",
     ["pandas.DataFrame.append"]),
    ("pd-read-csv-append", PANDAS_2,
     "import pandas as pd\ndf = pd.read_csv('data.csv')\ndf = df.append({'a': 2}, ignore_index=True)\n",
     ["pandas.DataFrame.append"]),
    ("pd-merge-iteritems", PANDAS_2,
     "import pandas as pd\na = pd.DataFrame({'k': [1]})\nm = a.merge(a, on='k')\nfor k, v in m.iteritems():\n    print(k)\n",
     ["pandas.DataFrame.iteritems"]),
    ("pd-series-append", PANDAS_2,
     "import pandas as pd\ns = pd.Series([1, 2])\ns = s.append(pd.Series([3]))\n",
     ["pandas.Series.append"]),
    ("pd-iteritems", PANDAS_2,
     "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\nfor name, col in df.iteritems():\n    print(name)\n",
     ["pandas.DataFrame.iteritems"]),
    ("pd-lookup", PANDAS_2,
     "import pandas as pd\ndf = pd.DataFrame({'a': [1], 'b': [2]})\nv = df.lookup([0], ['a'])\n",
     ["pandas.DataFrame.lookup"]),
    ("pd-mad", PANDAS_2,
     "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\nprint(df.mad())\n",
     ["pandas.DataFrame.mad"]),
    ("pd-tshift", PANDAS_2,
     "import pandas as pd\ns = pd.Series([1], index=pd.date_range('2020', periods=1))\ns.tshift(1)\n",
     ["pandas.Series.tshift"]),
    ("pd-int64index", PANDAS_2,
     "import pandas as pd\nidx = pd.Int64Index([1, 2, 3])\n", ["pandas.Int64Index"]),
    ("pd-float64index", PANDAS_2,
     "import pandas as pd\nidx = pd.Float64Index([1.0])\n", ["pandas.Float64Index"]),
    ("pd-np", PANDAS_2,
     "import pandas as pd\nx = pd.np.array([1, 2])\n", ["pandas.np"]),
    ("pd-datetime", PANDAS_2,
     "import pandas as pd\nd = pd.datetime(2020, 1, 1)\n", ["pandas.datetime"]),
    ("pd-read-csv-squeeze", PANDAS_2,
     "import pandas as pd\ns = pd.read_csv('data.csv', squeeze=True)\n", ["pandas.read_csv(squeeze)"]),
    ("pd-read-csv-bad-lines", PANDAS_2,
     "import pandas as pd\ndf = pd.read_csv('data.csv', error_bad_lines=False)\n",
     ["pandas.read_csv(error_bad_lines)"]),
    ("pd-to-csv-line-terminator", PANDAS_2,
     "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.to_csv('out.csv', line_terminator='\\n')\n",
     ["pandas.DataFrame.to_csv(line_terminator)"]),
    ("pd-set-axis-inplace", PANDAS_2,
     "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.set_axis(['b'], axis=1, inplace=True)\n",
     ["pandas.DataFrame.set_axis(inplace)"]),
    ("pd-read-csv-typo", NEVER,
     "import pandas as pd\ndf = pd.read_csv('data.csv', seperator=';')\n", ["pandas.read_csv(seperator)"]),
    ("np-float", NUMPY_124, "import numpy as np\nx = np.array([1, 2]).astype(np.float)\n", ["numpy.float"]),
    ("np-int", NUMPY_124, "import numpy as np\nx = np.zeros(3, dtype=np.int)\n", ["numpy.int"]),
    ("np-object", NUMPY_124, "import numpy as np\na = np.empty(2, dtype=np.object)\n", ["numpy.object"]),
    ("np-str", NUMPY_124, "import numpy as np\na = np.array(['a'], dtype=np.str)\n", ["numpy.str"]),
    ("np-complex", NUMPY_124, "import numpy as np\nz = np.complex(1, 2)\n", ["numpy.complex"]),
    ("np-float_", NUMPY_2, "import numpy as np\nx = np.float_(1.5)\n", ["numpy.float_"]),
    ("np-nan-alias", NUMPY_2, "import numpy as np\nx = np.NaN\n", ["numpy.NaN"]),
    ("np-inf-alias", NUMPY_2, "import numpy as np\nx = np.Inf\n", ["numpy.Inf"]),
    ("np-product", NUMPY_2, "import numpy as np\np = np.product([1, 2, 3])\n", ["numpy.product"]),
    ("np-cumproduct", NUMPY_2, "import numpy as np\np = np.cumproduct([1, 2, 3])\n", ["numpy.cumproduct"]),
    ("np-alltrue", NUMPY_2, "import numpy as np\nok = np.alltrue([True, False])\n", ["numpy.alltrue"]),
    ("np-sometrue", NUMPY_2, "import numpy as np\nok = np.sometrue([True, False])\n", ["numpy.sometrue"]),
    ("np-round_", NUMPY_2, "import numpy as np\nr = np.round_(1.234, 2)\n", ["numpy.round_"]),
    ("np-asfarray", NUMPY_2, "import numpy as np\na = np.asfarray([1, 2])\n", ["numpy.asfarray"]),
    ("np-string_", NUMPY_2, "import numpy as np\ns = np.string_('abc')\n", ["numpy.string_"]),
    ("np-unicode_", NUMPY_2, "import numpy as np\ns = np.unicode_('abc')\n", ["numpy.unicode_"]),
    ("np-find-common-type", NUMPY_2,
     "import numpy as np\nt = np.find_common_type([np.float32], [np.int64])\n", ["numpy.find_common_type"]),
    ("np-mat", NUMPY_2, "import numpy as np\nm = np.mat([[1, 2], [3, 4]])\n", ["numpy.mat"]),
    ("np-msort", NUMPY_2, "import numpy as np\ns = np.msort([3, 1, 2])\n", ["numpy.msort"]),
    ("py2-print", PY.format("3.0"), "import sys\nprint 'usage:', sys.argv[0]\n", ["python2:print"]),
    ("py2-exec", PY.format("3.0"), "code = 'x = 1'\nexec code\n", ["python2:exec"]),
    ("py2-except", PY.format("3.0"),
     "try:\n    int('x')\nexcept ValueError, e:\n    print(e)\n", ["python2:except"]),
    ("py-time-clock", PY.format("3.8"), "import time\nstart = time.clock()\n", ["time.clock"]),
    ("py-cgi-escape", PY.format("3.8"), "import cgi\nsafe = cgi.escape('<a>')\n", ["cgi.escape"]),
    ("py-linux-distribution", PY.format("3.8"),
     "import platform\nprint(platform.linux_distribution())\n", ["platform.linux_distribution"]),
    ("py-encodestring", PY.format("3.9"),
     "import base64\ndata = base64.encodestring(b'abc')\n", ["base64.encodestring"]),
    ("py-decodestring", PY.format("3.9"),
     "import base64\ndata = base64.decodestring(b'YWJj')\n", ["base64.decodestring"]),
    ("py-fractions-gcd", PY.format("3.9"),
     "import fractions\nprint(fractions.gcd(4, 6))\n", ["fractions.gcd"]),
    ("py-thread-isalive", PY.format("3.9"),
     "import threading\nt = threading.Thread(target=print)\nt.start()\nprint(t.isAlive())\n",
     ["threading.Thread.isAlive"]),
    ("py-getchildren", PY.format("3.9"),
     "import xml.etree.ElementTree as ET\nroot = ET.Element('a')\nkids = root.getchildren()\n",
     ["xml.etree.ElementTree.Element.getchildren"]),
    ("py-readplist", PY.format("3.9"),
     "import plistlib\ndata = plistlib.readPlist('a.plist')\n", ["plistlib.readPlist"]),
    ("py-collections-mapping", PY.format("3.10"),
     "import collections\nprint(isinstance({}, collections.Mapping))\n", ["collections.Mapping"]),
    ("py-collections-iterable", PY.format("3.10"),
     "from collections import Iterable\nprint(isinstance([], Iterable))\n", ["collections.Iterable"]),
    ("py-getargspec", PY.format("3.11"),
     "import inspect\nspec = inspect.getargspec(print)\n", ["inspect.getargspec"]),
    ("py-asyncio-coroutine", PY.format("3.11"),
     "import asyncio\n@asyncio.coroutine\ndef old():\n    yield\n", ["asyncio.coroutine"]),
    ("py-lgettext", PY.format("3.11"),
     "import gettext\nprint(gettext.lgettext('hi'))\n", ["gettext.lgettext"]),
    ("py2-has-key", PY.format("3.0"), "d = {'a': 1}\nprint(d.has_key('a'))\n", ["dict.has_key"]),
    ("py2-str-decode", PY.format("3.0"), "s = 'abc'\nprint(s.decode('utf-8'))\n", ["str.decode"]),
    ("py2-maxint", PY.format("3.0"), "import sys\nbig = sys.maxint\n", ["sys.maxint"]),
    ("py2-string-letters", PY.format("3.0"),
     "import string\nprint(string.letters)\n", ["string.letters"]),
    ("py2-getcwdu", PY.format("3.0"), "import os\nprint(os.getcwdu())\n", ["os.getcwdu"]),
    ("py2-izip", PY.format("3.0"),
     "import itertools\nfor a, b in itertools.izip([1], [2]):\n    print(a, b)\n", ["itertools.izip"]),
    ("py2-urlopen", PY.format("3.0"), "import urllib\nurllib.urlopen('http://example.com')\n",
     ["urllib.urlopen"]),
    ("py-lru-cache-clear", "functools docs: cache_clear is an attribute of the decorated function",
     "import functools\nfunctools.lru_cache.cache_clear()\n", ["functools.lru_cache.cache_clear"]),
    ("kw-sorted", NEVER, "print(sorted([3, 1, 2], reversed=True))\n", ["sorted(reversed)"]),
    ("kw-open", NEVER, "with open('a.txt', encodings='utf-8') as f:\n    print(f.read())\n",
     ["open(encodings)"]),
    ("kw-split", NEVER, "print('a b c'.split(maxsplits=1))\n", ["str.split(maxsplits)"]),
    ("kw-range", NEVER, "for i in range(0, 10, steps=2):\n    print(i)\n", ["range(steps)"]),
    ("kw-print", NEVER, "print('a', endl='')\n", ["print(endl)"]),
]  # fmt: skip

REACT_19 = "React 19 upgrade guide, Removed: deprecated React DOM APIs"
REACT_16 = "React 16.0.0 changelog (React.createClass and React.PropTypes removed)"
ROUTER_6 = "React Router upgrading from v5 guide (Switch, useHistory, Redirect, withRouter …)"
EXPRESS_4 = "Express 'Moving to Express 4': bundled Connect middleware removed"
NODE = "Node.js deprecations ({}), End-of-Life"
NEVER_JS = "a name the module never exported"

REMOVED_JS: list[tuple[str, str, str, list[str]]] = [
    ("react-dom-render", REACT_19,
     "import ReactDOM from 'react-dom';\nReactDOM.render(<App />, document.getElementById('root'));\n",
     ["react-dom.render"]),
    ("react-dom-render-named", REACT_19,
     "import { render } from 'react-dom';\nrender(<App />, document.getElementById('root'));\n",
     ["react-dom.render"]),
    ("react-dom-hydrate", REACT_19,
     "import * as ReactDOM from 'react-dom';\nReactDOM.hydrate(<App />, document.getElementById('root'));\n",
     ["react-dom.hydrate"]),
    ("react-dom-unmount", REACT_19,
     "import ReactDOM from 'react-dom';\nReactDOM.unmountComponentAtNode(container);\n",
     ["react-dom.unmountComponentAtNode"]),
    ("react-dom-find", REACT_19,
     "import { findDOMNode } from 'react-dom';\nconst node = findDOMNode(this);\n",
     ["react-dom.findDOMNode"]),
    ("react-create-factory", REACT_19,
     "import React from 'react';\nconst button = React.createFactory('button');\n",
     ["react.createFactory"]),
    ("react-test-utils", REACT_19,
     "import { renderIntoDocument } from 'react-dom/test-utils';\nrenderIntoDocument(<App />);\n",
     ["react-dom/test-utils.renderIntoDocument"]),
    ("react-create-class", REACT_16,
     "var React = require('react');\nvar Hello = React.createClass({\n  render: function () { return null; }\n});\n",
     ["react.createClass"]),
    ("react-proptypes", REACT_16,
     "import React from 'react';\nHello.propTypes = { name: React.PropTypes.string };\n",
     ["react.PropTypes"]),
    ("router-switch", ROUTER_6,
     "import { BrowserRouter, Switch, Route } from 'react-router-dom';\n",
     ["react-router-dom.Switch"]),
    ("router-use-history", ROUTER_6,
     "import { useHistory } from 'react-router-dom';\nconst history = useHistory();\nhistory.push('/home');\n",
     ["react-router-dom.useHistory"]),
    ("router-redirect", ROUTER_6,
     "import { Redirect } from 'react-router-dom';\nconst Go = () => <Redirect to=\"/login\" />;\n",
     ["react-router-dom.Redirect"]),
    ("router-with-router", ROUTER_6,
     "import { withRouter } from 'react-router-dom';\nexport default withRouter(Page);\n",
     ["react-router-dom.withRouter"]),
    ("router-route-match", ROUTER_6,
     "import { useRouteMatch } from 'react-router-dom';\nconst { path, url } = useRouteMatch();\n",
     ["react-router-dom.useRouteMatch"]),
    ("router-prompt", ROUTER_6,
     "import { Prompt } from 'react-router-dom';\n",
     ["react-router-dom.Prompt"]),
    ("express-body-parser", EXPRESS_4,
     "const express = require('express');\nconst app = express();\napp.use(express.bodyParser());\n",
     ["express.bodyParser"]),
    ("express-cookie-parser", EXPRESS_4,
     "import express from 'express';\nconst app = express();\napp.use(express.cookieParser());\n",
     ["express.cookieParser"]),
    ("node-util-puts", NODE.format("DEP0027, Node.js 12"),
     "const util = require('util');\nutil.puts('hello');\n", ["util.puts"]),
    ("node-util-print", NODE.format("DEP0026, Node.js 12"),
     "const util = require('node:util');\nutil.print('hello');\n", ["node:util.print"]),
    ("node-create-cipher", NODE.format("DEP0106, Node.js 22"),
     "const crypto = require('crypto');\nconst cipher = crypto.createCipher('aes192', 'a password');\n",
     ["crypto.createCipher"]),
    ("node-create-decipher", NODE.format("DEP0106, Node.js 22"),
     "import { createDecipher } from 'crypto';\n", ["crypto.createDecipher"]),
    ("node-is-string", NODE.format("DEP0056, Node.js 23"),
     "import util from 'node:util';\nif (util.isString(x)) { console.log(x); }\n",
     ["node:util.isString"]),
    ("uuid-named", NEVER_JS,
     "import { uuid } from 'uuid';\nconst id = uuid();\n", ["uuid.uuid"]),
    ("react-use-fetch", NEVER_JS,
     "import { useState, useFetch } from 'react';\n", ["react.useFetch"]),
    ("fs-read-file-async", NEVER_JS,
     "const fs = require('fs');\nconst text = await fs.readFileAsync('a.txt', 'utf8');\n",
     ["fs.readFileAsync"]),
    ("path-join-path", NEVER_JS,
     "import * as path from 'path';\nconst p = path.joinPath(__dirname, 'a');\n",
     ["path.joinPath"]),
]  # fmt: skip
JS_TAGS = {"javascript": "javascript", "typescript": "typescript"}
JS_FENCES = ("", "js", "javascript", "jsx", "ts", "typescript", "tsx", "mjs", "cjs")

# Flags on real code reviewed by hand and found right: (set, id) -> names.
REVIEWED_RIGHT: dict[tuple[str, str], list[str]] = {
    # `inspect.getargspec(m.__init__)`: removed in Python 3.11.
    ("stackeval", "20c37a6fd667-2"): ["inspect.getargspec"],
    # Python 2 code calling `.decode` on a str (a literal, or `str(x)`): no such method in 3.
    **{("conala", f"conala-{i}"): ["str.decode"] for i in (
        "31771758-144", "10618586-422", "42548362-618", "30747705-939", "8901996-1494",
        "1885181-1554", "5555063-2205")},
    # Python 2's print statement, on the Python 3.11 installed here.
    ("stackeval", "310585c97258-1"): ["python2:print"],
    ("stackeval", "310585c97258-2"): ["python2:print"],
    # React 17-era answers at React 19, React Router 7 and Vue 3, where these are gone:
    # `ReactDOM.render` (React 19), `Switch` and `useHistory` (React Router 6), and the
    # global `Vue.use` (Vue 3: `app.use`).
    ("stackeval", "3c0a1d3d98fd-5"): ["react-dom.render"],
    ("stackeval", "1b56b24cebd4-2"): ["react-dom.render"],
    ("stackeval", "773767a26673-1"): ["react-dom.render"],
    ("stackeval", "29c0a17115f5-1"): ["react-router-dom.useHistory"],
    ("stackeval", "02ae1d4e2556-2"): ["react-router-dom.Switch"],
    ("stackeval", "c25fd9fff6d9-1"): ["vue.use"],
}  # fmt: skip

FENCE = re.compile(r"```[ \t]*([\w+#-]*)[ \t]*\n(.*?)```", re.DOTALL)


def stackeval_blocks(path: Path) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    out: list[dict[str, object]] = []
    for row in rows:
        if row["questionMetadata"]["tag"] != "python":
            continue
        for number, match in enumerate(FENCE.finditer(row["answer"]), 1):
            if match.group(1).lower() not in ("", "python", "py", "python3"):
                continue
            item_id = f"{row['questionId'][:12]}-{number}"
            missing = REVIEWED_RIGHT.get(("stackeval", item_id), [])
            out.append({"id": item_id, "language": "python", "code": match.group(2),
                        "missing": missing})  # fmt: skip
    return out


def stackeval_js_blocks(path: Path) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    out: list[dict[str, object]] = []
    for row in rows:
        language = JS_TAGS.get(row["questionMetadata"]["tag"])
        if language is None:
            continue
        for number, match in enumerate(FENCE.finditer(row["answer"]), 1):
            if match.group(1).lower() not in JS_FENCES:
                continue
            item_id = f"{row['questionId'][:12]}-{number}"
            missing = REVIEWED_RIGHT.get(("stackeval", item_id), [])
            out.append({"id": item_id, "language": language, "code": match.group(2),
                        "missing": missing})  # fmt: skip
    return out


def conala_snippets(path: Path) -> list[dict[str, object]]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    out: list[dict[str, object]] = []
    seen: set[str] = set()
    for row in rows:
        snippet = row.get("snippet")
        if not isinstance(snippet, str) or snippet in seen:
            continue
        seen.add(snippet)
        item_id = f"conala-{row['question_id']}-{len(out)}"
        missing = REVIEWED_RIGHT.get(("conala", item_id), [])
        out.append({"id": item_id, "language": "python", "code": snippet, "missing": missing})
    return out


def write(path: Path, items: Sequence[Mapping[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    print(f"wrote {len(items)} items to {path.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    args = parser.parse_args()
    removed = [
        {"id": item_id, "language": "python", "code": code, "missing": names, "source": source}
        for item_id, source, code, names in REMOVED
    ]
    write(OUT / "removed.jsonl", removed)
    write(OUT / "stackeval_answers.jsonl",
          stackeval_blocks(args.data / "intent" / "stackeval" / "stack-eval.jsonl"))  # fmt: skip
    removed_js = [
        {"id": item_id, "language": "javascript", "code": code, "missing": names,
         "source": source}
        for item_id, source, code, names in REMOVED_JS
    ]  # fmt: skip
    write(OUT / "removed_js.jsonl", removed_js)
    write(OUT / "stackeval_js_answers.jsonl",
          stackeval_js_blocks(args.data / "intent" / "stackeval" / "stack-eval.jsonl"))  # fmt: skip
    write(OUT / "conala_snippets.jsonl",
          conala_snippets(args.data / "retrieval" / "conala" / "conala-train.json"))  # fmt: skip


if __name__ == "__main__":
    main()
