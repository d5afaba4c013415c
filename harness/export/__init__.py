"""``harness export``: runs and tasks in other tools' formats (docs/results/exports.md).

Built in: ``inspect`` (:mod:`.inspect_log`: a run directory as Inspect AI eval logs, one per task and agent,
the transcript from :mod:`.transcript`).  Plugins add formats through the ``register_exporters`` hook (e.g.
``harbor``: a benchmark's task specs as Harbor task directories).  Results stay the harness's own: an export
is a view of them, written to a folder of its own.
"""
