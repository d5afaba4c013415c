"""``dr-generate --dry-run``: the calls and cost each stage is expected to make, before anything is spent.

Counts are those of a first-pass generation (every unit accepted at its first attempt; the worst case is
``rounds`` times as many).  Where a count depends on an earlier stage's output it is estimated: one entity
type per task and no ancestors (step 2), chains of ``hops`` new contexts plus two source contexts (steps
6 and 8).  Tokens: the prompt file plus its inputs (the task's context and series) at four characters a
token, and :data:`ANSWER_TOKENS` per answer; cost at the profiles' prices (USD per million tokens).
"""

from __future__ import annotations

from typing import Any

from tsagent_plugins.tasks.drcik.generation import prompts

ANSWER_TOKENS = {"generator": 1200, "judge": 400}


def expected_calls(spec: Any, n: int) -> list[tuple[str, str, str, int]]:
    """``(stage, role, prompt, calls)`` rows for ``n`` tasks."""
    k, docs = spec.distractors_per_subtype, spec.hops + 2   # chain nodes hops + 2 -> hops + 1 bundles + background
    return [
        ("step1_entity_extraction", "generator", "entity_extraction", 1),
        ("step1_entity_extraction", "judge_entity", "judge_entity", n),
        ("step2_profile_generation", "generator", "profile_generation", n),
        ("step3_profile_assignment", "generator", "profile_assignment", 2 * n),   # the context, the objective
        ("step4_evidence_decomposition", "generator", "evidence_decomposition", n),
        ("step4_evidence_decomposition", "judge_evidence", "judge_evidence", n),
        ("step5_chain_expansion", "generator", "chain_expansion", n),
        ("step5_chain_expansion", "judge_chain", "judge_chain", n),
        ("step6_source_metadata", "generator", "source_metadata", n * docs),
        ("step7_distractor_metadata", "generator", "distractor_generic", 4 * n),
        ("step7_distractor_metadata", "generator", "counterfactual_spec", k * n),
        ("step7_distractor_metadata", "generator", "counterfactual_item", k * n),
        ("step8_meta2doc", "generator", "meta2doc", n * (docs + 5 * k)),
        ("step8_meta2doc", "judge_supporting", "judge_supporting", n),
        ("step8_meta2doc", "judge_distractor", "judge_distractor", 5 * n),
    ]


def estimate(spec: Any, tasks: list, profiles: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per stage × role: calls, tokens, cost (USD)."""
    n = len(tasks)
    context_chars = sum(len(t.context.text()) for t in tasks) / max(n, 1)
    series_chars = sum(30 * (len(t.series.history_values) + len(t.series.future_values)) for t in tasks) / max(n, 1)
    rows = []
    for stage, role, prompt_name, calls in expected_calls(spec, n):
        extra = series_chars if prompt_name == "counterfactual_spec" else 0
        prompt_tokens = (len(prompts.load(prompt_name).text) + context_chars + extra) / 4
        answer = ANSWER_TOKENS["judge" if role.startswith("judge") else "generator"]
        prices = profiles[role].prices
        cost = calls * (prompt_tokens * prices.input + answer * prices.output) / 1e6
        rows.append({"stage": stage, "role": role, "prompt": prompt_name, "profile": profiles[role].name,
                     "calls": calls,
                     "tokens": int(calls * (prompt_tokens + answer)), "cost_usd": cost})
    return rows


def print_estimate(spec: Any, tasks: list, profiles: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    rows = estimate(spec, tasks, profiles)
    table = Table(title=f"dr-generate {spec.name}: expected calls of a first-pass generation of {len(tasks)} "
                        f"task(s) (at most {spec.rounds}x with regenerations)")
    for col in ("stage", "prompt", "profile", "calls", "tokens", "cost (USD)"):
        table.add_column(col, justify="right" if col in ("calls", "tokens", "cost (USD)") else "left")
    for r in rows:
        table.add_row(r["stage"], r["prompt"], r["profile"], str(r["calls"]), f"{r['tokens']:,}",
                      f"{r['cost_usd']:.4f}")
    table.add_row("total", "", "", str(sum(r["calls"] for r in rows)), f"{sum(r['tokens'] for r in rows):,}",
                  f"{sum(r['cost_usd'] for r in rows):.4f}")
    Console().print(table)
