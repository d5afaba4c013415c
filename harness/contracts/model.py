"""Model backend contract: where the model proxy sends an episode's requests.

Real providers forward upstream with the host's key; a script backend answers
offline from a script.  See :mod:`harness.proxy`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class ModelBackend(ABC):
    """``name``: the ``--model-backend`` value.  ``upstream(options)`` returns the
    object the proxy forwards to (see harness.proxy for its interface)."""

    name: str
    #: Whether requests through this backend cost money (a provider).  False for a backend that answers
    #: offline (a script): the costs a run shows are then the profiles' prices, not money spent.
    billed: bool = True

    @abstractmethod
    def upstream(self, options: dict[str, Any]) -> Any:
        """Build the upstream for one run from CLI/profile options."""
