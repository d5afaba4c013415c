"""The shared fitting context: a fit's warnings are recorded, never printed, even when statsmodels is first
imported inside it (its import adds "always" filters for its warnings)."""

from __future__ import annotations

import subprocess
import sys

from tsagent_plugins.forecasters._common import warning_counts

FRESH = """
import json, warnings
from tsagent_plugins.forecasters._common import quiet, warning_counts
with quiet() as caught:
    from statsmodels.tools.sm_exceptions import ConvergenceWarning  # first import: inside the fit
    warnings.warn("Maximum Likelihood optimization failed to converge.", ConvergenceWarning)
    warnings.warn("Maximum Likelihood optimization failed to converge.", ConvergenceWarning)
print(json.dumps(warning_counts(caught)))
"""


def test_warnings_of_a_first_statsmodels_import_are_recorded_not_printed():
    done = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    assert done.stdout.strip() == '{"ConvergenceWarning: Maximum Likelihood optimization failed to converge.": 2}'


def test_warning_counts_of_nothing_is_empty():
    assert warning_counts([]) == {}
