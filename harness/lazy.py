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
from typing import Any


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
