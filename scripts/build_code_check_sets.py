# ruff: noqa: E501, T201  (a data table of code lines; a script that reports what it wrote)
"""Build the code check's data sets (`codeweaver eval code` lines) in tests/fixtures/code_check/.

- `removed.jsonl`: snippets using APIs that no longer exist at pandas 2.2, NumPy 2.1 and
  CPython 3.11, each from a documented removal (the release notes named in `REMOVED`), and
  keywords the signature never had; `missing` is the name the check must flag.
- `stackeval_answers.jsonl`: the Python code blocks of StackEval's accepted answers (tag
  `python`), `missing` empty except where a flag was reviewed and found right
  (`REVIEWED_RIGHT`): any other flag on them is false.
- `conala_snippets.jsonl`: CoNaLa's reference snippets (real Stack Overflow code), same rule.

Check them from an environment that has the packages they import (`scripts/code_check_env.sh`).

    python scripts/build_code_check_sets.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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

# Flags on real code reviewed by hand and found right: (set, id) -> names.
REVIEWED_RIGHT: dict[tuple[str, str], list[str]] = {
    # `inspect.getargspec(m.__init__)`: removed in Python 3.11.
    ("stackeval", "20c37a6fd667-2"): ["inspect.getargspec"],
    # Python 2 code calling `.decode` on a str (a literal, or `str(x)`): no such method in 3.
    **{("conala", f"conala-{i}"): ["str.decode"] for i in (
        "31771758-144", "10618586-422", "42548362-618", "30747705-939", "8901996-1494",
        "1885181-1554", "5555063-2205")},
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


def write(path: Path, items: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    print(f"wrote {len(items)} items to {path.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    removed = [
        {"id": item_id, "language": "python", "code": code, "missing": names, "source": source}
        for item_id, source, code, names in REMOVED
    ]
    write(OUT / "removed.jsonl", removed)
    write(OUT / "stackeval_answers.jsonl",
          stackeval_blocks(args.data / "intent" / "stackeval" / "stack-eval.jsonl"))  # fmt: skip
    write(OUT / "conala_snippets.jsonl",
          conala_snippets(args.data / "retrieval" / "conala" / "conala-train.json"))  # fmt: skip


if __name__ == "__main__":
    main()
