"""What the ATIF models (:mod:`harness.trajectory_models`) and the readers of :mod:`harness.trajectory` share:
the schema versions and the timestamp format.  Imports no pydantic."""

from __future__ import annotations

from datetime import datetime

#: The version the harness writes.
SCHEMA_VERSION = "ATIF-v1.6"
#: Versions the harness reads.
SUPPORTED_VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(8))


def parse_timestamp(value: str) -> datetime:
    """An ISO 8601 timestamp (``Z`` accepted) as a datetime; ValueError when malformed."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None
