"""Agent trajectories in ATIF (the Agent Trajectory Interchange Format): the schema version, validation and
readers of steps and model exchanges; what agents write and metric extractors read; and the readers of an
agent's native logs under an episode's ``home/``, plain or stored compressed (:mod:`harness.native_logs`:
every converter reads them through these).  Loaded lazily like the package root
(:func:`harness.lazy.public_api`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.lazy import public_api

if TYPE_CHECKING:
    from harness.trajectory import SCHEMA_VERSION as ATIF_SCHEMA_VERSION
    from harness.trajectory import Exchange as Exchange
    from harness.trajectory import TrajectoryError as TrajectoryError
    from harness.trajectory import content_text as content_text
    from harness.trajectory import exchanges as exchanges
    from harness.trajectory import parse_timestamp as parse_timestamp
    from harness.trajectory import steps as steps
    from harness.trajectory import to_dict as to_dict
    from harness.trajectory import validate_trajectory as validate_trajectory
    from harness.native_logs import read_text as read_native_text
    from harness.native_logs import find as find_native_files
    from harness.native_logs import size as native_file_size
    from harness.native_logs import copy as copy_native_file

__getattr__, __dir__ = public_api(globals())
