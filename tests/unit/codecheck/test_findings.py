"""The code check: names missing at the installed versions and impossible keywords are
flagged; whatever cannot be known for certain (unknown receivers, dynamic modules and
classes, `**kwargs`, instance attributes, packages not installed) never is."""

from __future__ import annotations

import pytest

from codeweaver.codecheck import ApiIndex, check_python
from tests.unit.codecheck.files import flags, package_api

PACKAGE = {
    "shop/__init__.py": "from shop.models import Cart\nfrom shop.util import *\n",
    "shop/models.py": (
        "class Base:\n"
        "    def total(self):\n        return 0\n\n\n"
        "class Cart(Base):\n"
        "    def __init__(self, owner, *, discount=0):\n        self.owner = owner\n\n"
        "    def add(self, item, qty=1):\n        pass\n"
    ),
    "shop/util.py": (
        "__all__ = ['price', 'tax']\n\n\n"
        "def price(x, currency='EUR'):\n    return x\n\n\n"
        "def tax(x, **options):\n    return x\n"
    ),
    "shop/dynamic.py": "def __getattr__(name):\n    return name\n",
    "shop/frames.py": (
        "class Frame:\n    def __getattr__(self, name):\n        return lambda: name\n"
    ),
    "shop-1.2.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: shop\nVersion: 1.2.0\n",
    "shop-1.2.0.dist-info/top_level.txt": "shop\n",
    # A test suite is no API: never read.
    "shop/tests/__init__.py": "",
    "shop/tests/test_cart.py": "def test_cart():\n    pass\n",
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> ApiIndex:
    return package_api(tmp_path_factory.mktemp("site"), PACKAGE)


def test_a_missing_module_member_is_flagged_with_the_installed_version(api: ApiIndex) -> None:
    report = check_python("import shop\nshop.checkout()\n", api)
    assert [(f.name, f.line, f.kind) for f in report.findings] == [("shop.checkout", 2, "missing")]
    assert "shop 1.2.0" in report.findings[0].message
    assert flags("from shop import checkout\n", api) == {"shop.checkout"}


def test_members_found_through_aliases_wildcards_and_bases_are_not(api: ApiIndex) -> None:
    code = (
        "import shop as s\n"
        "cart = s.Cart('me', discount=5)\n"
        "cart.add('pen', qty=2)\n"
        "cart.total()\n"  # inherited from Base
        "s.price(3, currency='USD')\n"  # from shop.util import *
    )
    assert flags(code, api) == set()


def test_a_method_the_class_lacks_and_impossible_keywords_are_flagged(api: ApiIndex) -> None:
    code = (
        "from shop import Cart\n"
        "cart = Cart('me', discont=5)\n"
        "cart.remove('pen')\n"
        "cart.add('pen', quantity=2)\n"
    )
    assert flags(code, api) == {
        "shop.Cart(discont)", "shop.Cart.remove", "shop.Cart.add(quantity)",
    }  # fmt: skip


def test_what_cannot_be_known_is_never_flagged(api: ApiIndex) -> None:
    code = (
        "import shop, shop.dynamic, shop.frames, notinstalled\n"
        "shop.tax(1, anything=2)\n"  # **options
        "shop.dynamic.whatever()\n"  # module __getattr__
        "shop.frames.Frame().anything()\n"  # class __getattr__
        "cart = shop.Cart('me')\n"
        "print(cart.owner, cart.items)\n"  # instance attributes: set at run time
        "notinstalled.thing()\n"
        "def f(x, str):\n    x.nothing()\n    return str.decode()\n"
        "map.items()\n"  # a variable named after a builtin, in a snippet
    )
    assert flags(code, api) == set()


def test_code_that_does_not_parse_is_not_judged(api: ApiIndex) -> None:
    report = check_python("import shop\nshop.checkout(\n", api)
    assert not report.parsed and report.findings == ()


def test_builtins_and_literals(api: ApiIndex) -> None:
    code = (
        "sorted([3, 1], reversed=True)\n"
        "int('10', base=2)\n"  # `base` is in an overload of int.__new__
        "d = {}\nd.has_key('a')\n"
        "'a b'.split(maxsplit=1)\n"
        "'a b'.split(maxsplits=1)\n"
    )
    assert flags(code, api) == {"sorted(reversed)", "dict.has_key", "str.split(maxsplits)"}


def test_the_standard_library_at_the_environment_s_version(api: ApiIndex) -> None:
    code = (
        "import os, time, functools, collections\n"
        "time.clock()\ntime.perf_counter()\n"
        "os.getcwdu()\nos.getcwd()\nos.path.join('a', 'b')\n"  # os: C names from typeshed
        "functools.lru_cache.cache_clear()\n"
        "collections.Mapping\ncollections.OrderedDict()\n"
    )
    assert flags(code, api) == {
        "time.clock", "os.getcwdu", "functools.lru_cache.cache_clear", "collections.Mapping",
    }  # fmt: skip


def test_a_package_s_test_suite_is_not_read(api: ApiIndex) -> None:
    shop = api.module("shop")
    assert shop is not None and "models" in shop.members and "tests" not in shop.members


@pytest.mark.parametrize(
    ("code", "name", "line"),
    [
        ("import sys\nprint 'hello', sys.argv\n", "python2:print", 2),
        ("exec 'x = 1'\n", "python2:exec", 1),
        ("try:\n    pass\nexcept ValueError, e:\n    pass\n", "python2:except", 3),
    ],
)
def test_python_2_code_is_a_finding(api: ApiIndex, code: str, name: str, line: int) -> None:
    report = check_python(code, api)
    assert report.parsed and [(f.name, f.line, f.kind) for f in report.findings] == [
        (name, line, "syntax")
    ]
    assert "does not run on Python 3.11, installed here" in report.findings[0].message


@pytest.mark.parametrize(
    "code",
    [
        "pip install requests\n",  # a shell command
        ">>> import os\n>>> os.getcwd()\n'/home'\n",  # a console session
        "    return x\n",  # a fragment
        "def f():\n    ....\n",  # a placeholder
        "0    one  two\n1    three  four\n",  # output
    ],
)
def test_other_syntax_errors_are_not_judged(api: ApiIndex, code: str) -> None:
    report = check_python(code, api)
    assert not report.parsed and report.findings == ()
