"""Dr-CiK: deep research for context-aided forecasting (Tang et al., 2026).

Modules: :mod:`.loader` (release task format and data rules) and :mod:`.flat`
(the flat Hugging Face layout), :mod:`.frequency` (frequency alias table,
seasonal periods), :mod:`.corpus` (the shared corpus as agents see it),
:mod:`.contexts` (context conditions), :mod:`.metrics` (sMAE, sRMSE, sCRPS,
aggregation and average ranks).  The embedded public sample (3 tasks, CC BY 4.0)
lives in ``data/sample`` with its attribution.

No task template is registered yet: the deep-research episode template
(workspace with the salted corpus, report + cited evidence, scoring) is to come.
"""

from plugins.tasks.drcik.loader import SAMPLE_DIR, Document, DrcikTask, EvidenceItem, load_task_file, load_tasks

__all__ = ["SAMPLE_DIR", "Document", "DrcikTask", "EvidenceItem", "load_task_file", "load_tasks"]
