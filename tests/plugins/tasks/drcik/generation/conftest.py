"""The CAF folder of :mod:`tests.support.own_caf` and its fixtures."""

from tests.support.own_caf import district, mill, own_scripts, own_spec, series, write_caf  # noqa: F401
