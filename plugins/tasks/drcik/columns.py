"""The columns a ``drcik`` results row has besides the row key (``TaskTemplate.result_columns``).

One row per forecaster × context condition × task.  ``context`` is a context
condition name here (a bool in ``tracebench`` rows).  The episode folder is
``<forecaster>_<context>_<benchmark_id>-s<S>-<episode_id>``.  The token
columns are those of model-backed forecasters, as in agent-episode rows.
"""

#: the template's name (``template:`` of a TaskSpec) and the two values of ``episode_kind``
TEMPLATE = "drcik"
FORECAST = "forecast"
RESEARCH = "research"

#: Besides profile and episode, the columns that make a forecast row a different result
#: (``TaskTemplate.identity_columns``): rows equal in all of these are one forecast repeated in several run
#: directories, and a report keeps the first.
IDENTITY_COLUMNS = ("forecaster", "forecaster_options", "context", "evidence_run", "evidence_agent",
                    "fitted_model", "n_samples")

#: name -> (dtype, meaning)
RESULT_COLUMNS: dict[str, tuple[str, str]] = {
    "forecaster": ("str", "forecaster name"),
    "forecaster_options": ("str", "JSON of the forecaster's options; null: none"),
    "episode_kind": ("str", "forecast | research"),
    "evidence_run": ("str", "DR conditions: the evidence folder or research run directory; null otherwise"),
    "evidence_agent": ("str", "DR conditions: the agent profile whose research produced the evidence"),
    "fitted_model": ("str", "JSON of what the forecaster fitted (e.g. ARIMA order and AIC, seasonal terms; "
                            "fit_warnings: warning -> count)"),
    "seasonal_period": ("int", "the task's seasonal period m"),
    "data_rules": ("str", "the loader's data rules applied to the task ('; '-separated); null: none"),
    "tasks_source": ("str", "task set: sample or a folder"),
    "corpus": ("str", "the params' corpus label (e.g. A / B of Table 10); null: none"),
    "context": ("str", ("context condition: no-context | background | supporting-evidence | retrospective-only | "
                        "prospective-only | supporting-documents | dr-evidence | dr-report | verified-dr")),
    "benchmark_id": ("str", "Dr-CiK task id"),
    "reproduces_paper": ("bool", "the condition is the paper's (False: a stand-in)"),
    "context_used": ("bool", "the forecaster read the context (False: one forecast reused for every condition)"),
    "scale_status": ("str", "ok | undefined_scale | labels_hidden"),
    "n_samples": ("int", "sample paths per task (S)"),
    "seed": ("int", "forecast seed"),
    "context_status": ("str", "ok | empty | verified_empty | labels_hidden | missing"),
    "context_items": ("int", "evidence items or documents in the context"),
    "fallback": ("str", "fallback forecaster used; null: none"),
    "seconds": ("float", "forecast wall-clock (s)"),
    "weights": ("str", "model weights used"),
    "prompt_tokens": ("int", "input tokens incl. cached"),
    "cached_tokens": ("int", "cached input tokens"),
    "completion_tokens": ("int", "output tokens incl. reasoning"),
    "reasoning_tokens": ("int", "reasoning share of completion tokens"),
    "total_tokens": ("int", "prompt + completion tokens"),
    "cost_usd": ("float", "equation (1) at the profile's prices (USD)"),
    "n_requests": ("int", "LLM requests through the proxy"),
    "invalid_samples": ("int", "sample answers that did not parse"),
    "status": ("str", "ok | failed | undefined_scale | labels_hidden"),
    "smae": ("float", "scaled MAE of the sample mean, capped at 5; null unless status is ok"),
    "srmse": ("float", "scaled RMSE of the sample mean, capped at 5; null unless status is ok"),
    "scrps": ("float", "scaled energy-form CRPS, capped at 5; null unless status is ok"),
    "smae_uncapped": ("float", "sMAE before the cap"),
    "srmse_uncapped": ("float", "sRMSE before the cap"),
    "scrps_uncapped": ("float", "sCRPS before the cap"),
    "scale": ("float", "a = 1 / mean |y_future|"),
    "reason": ("str", "why the forecast was not scored; empty when scored"),
    "profile": ("str", "agent profile of a model-backed forecaster; null for the others"),
    "model": ("str", "model of a model-backed forecaster; null for the others"),
}
