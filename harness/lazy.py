"""A module imported on first use, for plugin modules whose heavy libraries serve only at run time.

Loading the plugins (``harness plugins list``, every run's start) imports every plugin module to call its
register hooks; a module that writes ``import numpy as np`` at the top makes each of those commands pay for
numpy although registering needs none of it.  Such a module writes instead::

    from typing import TYPE_CHECKING
    from harness import lazy_module

    if TYPE_CHECKING:
        import numpy as np  # what type checkers and IDEs read
    else:
        np = lazy_module("numpy")  # imported when a function first reads ``np.<name>``

and uses ``np`` as before.  ``tests/architecture/test_startup.py`` checks that listing the plugins imports
none of the libraries plugins defer this way.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Callable


class _LazyModule(types.ModuleType):
    """Stands for the module ``__name__`` until an attribute is read, then imports it.

    The first read copies the real module's namespace into this one, so later reads are plain attribute
    look-ups (no slower than on the module itself); a name the copy lacks (a submodule the library loads on
    demand) is read from the real module.  Thread-safe: Python's import lock serialises the import, and a
    thread that reads while another copies falls back to the real module.  (The standard library's
    ``importlib.util.LazyLoader`` is not: on Python 3.11 a second thread reading during the first import
    gets ``AttributeError``; ``tests/harness/test_lazy.py`` races eight.)
    """

    def __getattr__(self, attr: str) -> Any:
        name = object.__getattribute__(self, "__name__")
        module = importlib.import_module(name)
        self.__dict__.update(vars(module))
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "imported" if "__file__" in self.__dict__ else "not yet imported"
        return f"<lazy module {self.__name__!r} ({state})>"


def lazy_module(name: str) -> types.ModuleType:
    """The module ``name`` (dotted, absolute), imported when one of its attributes is first read.

    Returns the module itself when it is already imported.  Errors: an uninstalled module raises
    ``ModuleNotFoundError`` at that first read, not here (``harness plugins list`` lists the plugin all the
    same; running it reports the missing library).
    """
    module = sys.modules.get(name)
    return module if module is not None else _LazyModule(name)


def api_exports(path: str) -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute) of the API module at ``path`` (the package root or a topic module
    such as :mod:`harness.wire`): the imports of its ``if TYPE_CHECKING:`` block, the one list of its API
    that type checkers, IDEs and import-linter read.  Read once per module (cached)."""
    if path not in _EXPORTS:
        import ast

        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        block = next(node for node in tree.body if isinstance(node, ast.If)
                     and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        _EXPORTS[path] = {alias.asname or alias.name: (node.module or "", alias.name)
                          for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    return _EXPORTS[path]


_EXPORTS: dict[str, dict[str, tuple[str, str]]] = {}


def resolve(namespace: dict[str, Any], name: str) -> Any:
    """The value of the public name ``name`` of the API module whose globals are ``namespace`` (PEP 562
    ``__getattr__``): imported from the module its ``if TYPE_CHECKING`` block names, then stored in
    ``namespace`` so later look-ups skip ``__getattr__``.  ``__all__`` is the list of public names.
    Raises AttributeError for a name the module does not export."""
    exports = api_exports(namespace["__file__"])
    if name == "__all__":
        return [*(["__version__"] if "__version__" in namespace else []), *exports]
    try:
        module, attr = exports[name]
    except KeyError:
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}") from None
    parent = importlib.import_module(module) if module != namespace["__name__"] else None
    value = getattr(parent, attr) if parent is not None and hasattr(parent, attr) \
        else importlib.import_module(f"{module}.{attr}")  # a module exported as a namespace
    namespace[name] = value
    return value


def public_api(namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` of a lazily loaded API module: a topic module writes
    ``__getattr__, __dir__ = public_api(globals())`` below its ``if TYPE_CHECKING:`` block of imports."""
    def getattr_(name: str) -> Any:
        return resolve(namespace, name)

    def dir_() -> list[str]:
        return sorted(resolve(namespace, "__all__"))

    return getattr_, dir_
