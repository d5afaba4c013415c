"""Whether a cost is money spent: the marks every place that shows a cost puts on offline model backends.

A results row's ``cost_usd`` is its tokens at the profile's prices.  When an offline model backend answered the
episode's model calls (one whose :attr:`harness.contracts.ModelBackend.billed` is False, e.g. a backend that
answers from a script), no money was spent: the row records the backend (``model_backend``) and
``model_billed`` False, and ``harness runs list``, the viewer's run pages and leaderboards (where such rows
rank on a board of their own) and a plugin's summaries show the cost with the backend's name:
``$0.42 (<backend>)``.  Rows written before these columns existed fall back on the run's ``--model-backend``
(``run.json``'s ``model_backend``).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

#: What the mark says about a cost with an offline backend (the viewer's hint, the docs).
NOT_SPENT = "the profiles' prices for the tokens an offline model backend answered with; no money was spent"


def backend_billed(name: str | None) -> bool:
    """Whether requests through the model backend ``name`` cost money: the registered backend's ``billed``;
    True for None (a profile's provider) and for a backend that is not installed here."""
    if not name:
        return True
    from harness import plugins

    try:
        return bool(getattr(plugins.get("model_backend", name), "billed", True))
    except plugins.UnknownPlugin:
        return True


def offline_backend(row: Mapping[str, Any], run_backend: str | None = None) -> str | None:
    """The name of the offline model backend that answered ``row``'s model calls (its ``cost_usd`` is no money
    spent), or None: a billed provider, or no model called.  ``row``: a results row (a dict or a pandas row);
    ``run_backend``: the run's ``--model-backend`` (``run.json``), read only for a row without
    ``model_billed`` (written before the column) that made model requests."""
    billed = row.get("model_billed")
    if type(billed).__name__ in ("bool", "bool_"):  # a Python or a numpy bool
        if billed:
            return None
        name = row.get("model_backend")
        return name if isinstance(name, str) and name else "offline"
    requests = row.get("n_requests")
    called = isinstance(requests, (int, float)) and not (isinstance(requests, float) and math.isnan(requests)) \
        and requests > 0
    if run_backend and called and not backend_billed(run_backend):
        return run_backend
    return None


def offline_mark(names: Iterable[str | None]) -> str:
    """``" (NAME, ...)"``: the mark after a cost whose rows include offline backends ``names`` (None entries
    ignored); ``""`` when there are none."""
    found = sorted({n for n in names if n})
    return f" ({', '.join(found)})" if found else ""


def cost_text(cost: float | None, offline: Iterable[str | None] = (), digits: int = 2, dollar: bool = True) -> str:
    """``cost`` (USD) as text with ``digits`` decimals and the mark of its offline backends, e.g.
    ``$0.42 (<backend>)``; ``–`` for None or NaN (still marked)."""
    if cost is None or (isinstance(cost, float) and math.isnan(cost)):
        text = "–"
    else:
        text = f"{'$' if dollar else ''}{cost:.{digits}f}"
    return text + offline_mark(offline)
