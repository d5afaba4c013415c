"""Built-in trajectory metrics (TraceBench Appendix G): one extractor per metric group.

Registered through the ``trajectory-metrics`` entry point:

=================  =========================================================================
extractor          columns
=================  =========================================================================
interaction        agent_iterations, tool_calls
python-use         python_calls, python_statements, shell_parse_fallbacks
plots              plots_generated, plots_inspected, plots_truncated
numeric-output     numeric_values_printed
console-share      console_tokens, context_tokens, console_token_share, tokenizer, context_source
usage              prompt_tokens, cached_tokens, completion_tokens, total_tokens, cost_usd,
                   total_seconds, usage_source
=================  =========================================================================
"""

from harness import hookimpl
from tsagent_plugins.metrics.extractors import (
    ConsoleShareMetrics,
    InteractionMetrics,
    NumericOutputMetrics,
    PlotMetrics,
    PythonUseMetrics,
    UsageMetrics,
    all_extractors,
)

__all__ = ["ConsoleShareMetrics", "InteractionMetrics", "NumericOutputMetrics", "PlotMetrics",
           "PythonUseMetrics", "UsageMetrics", "all_extractors"]


@hookimpl
def register_metric_extractors(register):
    for extractor in all_extractors():
        register(extractor)
