"""The TraceBench tables: Table 1, Table 2, Appendix I per-simulator tables (Table 23: :mod:`.table23`).

Conditions are read from the results columns: ``noise`` (low/high),
``submission`` (direct/programmatic), ``context`` and ``examples_per_class``.
The *main* setting is domain context with :data:`MAIN_EXAMPLES` labeled
examples per class; the ablations are *no labeled examples* (context, 0
examples) and *no domain context* (no context, 3 examples).  Agents are the
rows' ``profile`` (the evaluated configuration), ordered by mean main-setting
episode accuracy, best first.  When several rows share an episode's
identity (agent, setting, noise, submission, simulator, seed) their mean is used.

Aggregate cells are the pooled mean over simulators and seeds ± the
within-simulator SD (:func:`harness.report.stats.within_simulator_sd`);
per-simulator cells are mean ± sample SD (ddof = 1) across seeds.  The
console-output token share of a cell is the mean of the episodes' shares.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from harness.reporting import DASH, ReportError, Table, fmt_change, fmt_count, fmt_pm, fmt_share, within_simulator_sd
from tsagent_plugins.tasks.tracebench.report.answers import chance_level
from tsagent_plugins.tasks.tracebench.report.intervals import cell_interval

MAIN_EXAMPLES = 3
NOISES = ("low", "high")
SUBMISSIONS = ("direct", "programmatic")
SPLITS = {"episode": "accuracy", "held-out": "heldout_accuracy"}
#: (noise, submission, split) columns of Tables 1 and 2
CONDITION_COLUMNS = [("direct", "episode"), ("programmatic", "episode"), ("programmatic", "held-out")]
SETTING_LABELS = {"main": "Main experiment", "no-examples": "No labeled examples", "no-context": "No domain context"}
KEYS = ["profile", "setting", "noise", "submission", "simulator", "seed"]
REQUIRED = ("profile", "simulator", "noise", "submission", "seed", "accuracy")


# -- preparing the rows --------------------------------------------------------------------------

def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value) if not pd.isna(value) else True


def tracebench_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """TraceBench rows with a ``setting`` column (main | no-examples | no-context | other)."""
    if "template" in frame.columns:
        frame = frame[frame["template"].fillna("tracebench") == "tracebench"]
    if frame.empty:
        return frame.assign(setting=pd.Series(dtype=object))
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        runs = ", ".join(sorted(set(map(str, frame.get("run_dir", pd.Series(["?"]))))))
        raise ReportError(f"{runs}: results.parquet lacks column(s) {', '.join(missing)} needed for the TraceBench tables")
    frame = frame.copy()
    frame["context"] = frame["context"].map(_as_bool) if "context" in frame.columns else True
    if "examples_per_class" in frame.columns:
        frame["examples_per_class"] = pd.to_numeric(frame["examples_per_class"], errors="coerce").fillna(MAIN_EXAMPLES)
    else:
        frame["examples_per_class"] = MAIN_EXAMPLES

    def setting(row) -> str:
        if row["context"] and row["examples_per_class"] == MAIN_EXAMPLES:
            return "main"
        if row["context"] and row["examples_per_class"] == 0:
            return "no-examples"
        if not row["context"] and row["examples_per_class"] == MAIN_EXAMPLES:
            return "no-context"
        return f"context={row['context']},examples={int(row['examples_per_class'])}"

    frame["setting"] = frame.apply(setting, axis=1)
    frame["seed"] = frame["seed"].astype(str)
    for column in ("accuracy", "heldout_accuracy", "total_tokens", "cost_usd"):
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def agent_order(frame: pd.DataFrame) -> list[str]:
    """Agents (profiles), best mean main-setting episode accuracy first, then by name."""
    means = frame[frame["setting"] == "main"].groupby("profile")["accuracy"].mean()

    def key(agent: str) -> tuple[float, str]:
        mean = means.get(agent)
        return (-(float(mean) if mean is not None and not pd.isna(mean) else -1.0), agent)

    return sorted(frame["profile"].dropna().unique(), key=key)


def _select(frame: pd.DataFrame, **equal: Any) -> pd.DataFrame:
    mask = pd.Series(True, index=frame.index)
    for column, value in equal.items():
        mask &= frame[column] == value
    return frame[mask]


def _episode_means(frame: pd.DataFrame, column: str) -> pd.Series:
    """``column`` per episode identity (mean over duplicate rows), NaN dropped."""
    if column not in frame.columns:  # indexed like a grouped series, so callers may drop or read its levels
        return pd.Series(dtype=float, index=pd.MultiIndex.from_tuples([], names=KEYS))
    values = pd.to_numeric(frame[column], errors="coerce")
    return frame.assign(_v=values).dropna(subset=["_v"]).groupby(KEYS)["_v"].mean()


def _mean(values: pd.Series) -> float | None:
    values = pd.to_numeric(values, errors="coerce").dropna()
    return float(values.mean()) if len(values) else None


def _agg(rows: pd.DataFrame, column: str) -> tuple[float | None, float | None, int]:
    """Pooled mean and within-simulator SD of ``column`` over episode identities."""
    series = _episode_means(rows, column)
    if series.empty:
        return None, None, 0
    sims = series.index.get_level_values("simulator")
    return float(series.mean()), within_simulator_sd(series.to_numpy(), list(sims)), int(series.size)


# -- what a subset of the experiment cannot make -------------------------------------------------

def unsupported(frame: pd.DataFrame) -> list[str]:
    """One message per TraceBench table or figure that ``frame`` (any subset of the main experiment and
    its ablations) cannot make, naming it and why; the tables it can make are built regardless."""
    settings = set(frame["setting"])
    main = frame[frame["setting"] == "main"]
    out = []
    if main.empty:
        why = (f"no main-setting episode (domain context, {MAIN_EXAMPLES} labeled examples per class; "
               f"these rows hold {', '.join(SETTING_LABELS.get(s, s) for s in sorted(settings))})")
        out += [f"{name} not made: {why}" for name in ("Table 1", "Resource-use table and Figure 4",
                                                        "Main-result figure", "Confusion matrices",
                                                        "Accuracy-cost figures")]
    else:
        if "heldout_accuracy" not in main.columns or main["heldout_accuracy"].isna().all():
            out.append("Table 1: no held-out column (no programmatic episode with a held-out accuracy)")
        if not (main["submission"] == "direct").any():
            out.append("Confusion matrices not made: no main-setting direct episode (they count direct predictions)")
        if "cost_usd" not in main.columns or main["cost_usd"].isna().all():
            out.append("Accuracy-cost figures not made: no main-setting episode records a cost (no priced model "
                       "calls, e.g. classical baselines only)")
    if not settings & {"no-examples", "no-context"}:
        out.append("Table 2 not made: no ablation rows (no-context or no-examples)")
    elif main.empty:
        out.append("Table 2: changes not computed (no main-setting episode to match the ablations against)")
    return out


# -- Table 1 -------------------------------------------------------------------------------------

def table1(frame: pd.DataFrame, agents: list[str]) -> Table | None:
    """Main experiment aggregated across simulators (TraceBench Table 1).

    Only conditions someone ran and metric sections someone has are shown; counts are whole numbers,
    the console token share a percentage with one decimal, accuracies three decimals."""
    main = frame[frame["setting"] == "main"]
    if main.empty:
        return None
    noises = [n for n in NOISES if n in set(main["noise"])] + sorted(set(main["noise"]) - set(NOISES))
    columns = [(n, s, split) for n in noises for s, split in CONDITION_COLUMNS
               if not _episode_means(_select(main, noise=n, submission=s), SPLITS[split]).empty]
    if not columns:
        return None
    header = ["Agent"] + [f"{n} noise, {s}, {split}" for n, s, split in columns]
    table = Table("table1", "Table 1. Mean accuracy and exploration metrics per episode (main experiment, "
                  "aggregated across simulators; mean ± within-simulator SD)", header)
    chance = chance_level(frame)
    if chance is not None:
        table.notes.append(f"Random-chance accuracy: {chance:.3f} (mean over simulators of 1 / number of classes).")
    table.notes.append("Python: calls | statements. Plots: generated | inspected. Console output: numeric values "
                       "printed | token share. Counts are per-episode means rounded to whole numbers (exact values "
                       "in the data of --format json). See TraceBench Appendix G.")
    table.section("Accuracy")
    for agent in agents:
        cells = []
        for noise, submission, split in columns:
            rows = _select(main, profile=agent, noise=noise, submission=submission)
            mean, sd, n = _agg(rows, SPLITS[split])
            table.interval(len(cells) + 1, cell_interval(_episode_means(rows, SPLITS[split])))
            reason = ("no episode of this agent in this condition" if rows.empty else
                      "a single episode: no SD" if mean is not None else f"no {split} accuracy recorded")
            cells.append(table.explain(fmt_pm(mean, sd), reason))
            table.data.append({"section": "accuracy", "agent": agent, "noise": noise, "submission": submission,
                               "split": split, "mean": mean, "sd": sd, "n": n})
        table.add(agent, cells)
    pairs = [
        ("Python: calls | statements", "python", ("python_calls", "python_statements"), (fmt_count, fmt_count)),
        ("Plot counts: generated | inspected", "plots", ("plots_generated", "plots_inspected"), (fmt_count, fmt_count)),
        ("Console output: numeric values printed | token share", "console",
         ("numeric_values_printed", "console_token_share"), (fmt_count, fmt_share)),
    ]
    for title, key, (first, second), formats in pairs:
        rows_before, data_before = len(table.rows), len(table.data)
        table.section(title)
        shown = False
        for agent in agents:
            cells = []
            for noise, submission, split in columns:
                if split != "episode":  # a rule's held-out run has no trajectory: said, not left blank
                    cells.append(table.explain(DASH, "held-out columns: exploration is measured on the agent's "
                                                     "episode, not on the held-out run of its rule.py"))
                    continue
                rows = _select(main, profile=agent, noise=noise, submission=submission)
                a, b = (_mean(rows[c]) if c in rows.columns else None for c in (first, second))
                shown |= a is not None or b is not None
                # an agent without a trajectory (a classical baseline): its workspace's plot count is a real 0,
                # whether it looked at them is not measured -- said the same way as its other trajectory metrics
                traced = any(c in rows.columns and pd.to_numeric(rows[c], errors="coerce").notna().any()
                             for c in ("tool_calls", "agent_iterations", "python_calls"))
                text = f"{formats[0](a)} | {formats[1](b)}"
                reason = ("no episode of this agent in this condition" if rows.empty else
                          "plots inspected: the agent has no image support" if key == "plots" and a is not None
                          and traced else "not measured: no agent trajectory (e.g. a classical baseline)")
                cells.append(table.explain(text, reason))
                table.data.append({"section": key, "agent": agent, "noise": noise, "submission": submission,
                                   first: a, second if key != "console" else "console_token_share_pct":
                                   b if key != "console" or b is None else 100.0 * b})
            table.add(agent, cells)
        if not shown:  # nobody has this metric: no section
            del table.rows[rows_before:], table.data[data_before:]
            table.sections.discard(rows_before)
    _drop_unused_reasons(table)
    return table


def _drop_unused_reasons(table: Table) -> None:
    """Forget footnotes whose mark no longer appears in any cell (their rows were dropped)."""
    used = {ch for row in table.rows for cell in row for ch in cell}
    for reason, mark in list(table.reasons.items()):
        if mark not in used:
            table.notes.remove(f"{DASH}{mark} {reason}")
            del table.reasons[reason]


def _scaled(value: float | None, scale: float) -> float | None:
    return None if value is None else value * scale


RESOURCE_SECTIONS = (("Total tokens (M)", "total_tokens", 1e-6, 3), ("Cost (USD)", "cost_usd", 1, 3),
                     ("Time (s)", "_time", 1, 1), ("Tool calls", "tool_calls", 1, 0),
                     ("Agent iterations", "agent_iterations", 1, 0))
RESOURCE_MISSING = {"total_tokens": "no model calls recorded (e.g. a classical baseline)",
                    "cost_usd": "no priced model calls recorded (e.g. a classical baseline)",
                    "_time": "no episode time recorded",
                    "tool_calls": "not measured: no agent trajectory (e.g. a classical baseline)",
                    "agent_iterations": "not measured: no agent trajectory (e.g. a classical baseline)"}


def resources_table(frame: pd.DataFrame, agents: list[str]) -> Table | None:
    """Resource use per episode in the main experiment (the quantities of Figure 4); sections nobody
    has are left out, counts (tool calls, iterations) are whole numbers."""
    main = frame[frame["setting"] == "main"]
    if main.empty:
        return None
    noises = [n for n in NOISES if n in set(main["noise"])]
    columns = [(n, s) for n in noises for s in SUBMISSIONS if not _select(main, noise=n, submission=s).empty]
    header = ["Agent"] + [f"{n} noise, {s}" for n, s in columns]
    table = Table("resources", "Resource use per episode (main experiment; mean ± within-simulator SD)", header)
    table.notes.append("Time: agent wall-clock seconds (agent_seconds; when absent, total_seconds: the trajectory's "
                       "or proxy log's span). Tool calls and iterations: means rounded to whole numbers.")
    frame_time = time_column(main)
    for title, column, scale, digits in RESOURCE_SECTIONS:
        if _episode_means(frame_time, column).empty:
            continue
        table.section(title)
        for agent in agents:
            cells = []
            for noise, submission in columns:
                rows = _select(frame_time, profile=agent, noise=noise, submission=submission)
                mean, sd, n = _agg(rows, column)
                table.interval(len(cells) + 1, cell_interval(_episode_means(rows, column), digits, scale))
                reason = ("no episode of this agent in this condition" if rows.empty else
                          "a single episode: no SD" if mean is not None else RESOURCE_MISSING[column])
                cells.append(table.explain(fmt_pm(_scaled(mean, scale), _scaled(sd, scale), digits), reason))
                table.data.append({"section": column.lstrip("_") if column != "_time" else "time_seconds",
                                   "agent": agent, "noise": noise, "submission": submission,
                                   "mean": _scaled(mean, scale), "sd": _scaled(sd, scale), "n": n})
            table.add(agent, cells)
    return table if table.rows else None


def time_column(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``_time``: agent_seconds, else total_seconds."""
    agent = pd.to_numeric(frame["agent_seconds"], errors="coerce") if "agent_seconds" in frame.columns else None
    total = pd.to_numeric(frame["total_seconds"], errors="coerce") if "total_seconds" in frame.columns else None
    if agent is None and total is None:
        value = pd.Series(np.nan, index=frame.index)
    elif agent is None:
        value = total
    elif total is None:
        value = agent
    else:
        value = agent.fillna(total)
    return frame.assign(_time=value)


# -- Table 2 -------------------------------------------------------------------------------------

def _matched_change(ablated: pd.DataFrame, base: pd.DataFrame, column: str) -> tuple[float | None, int]:
    a = _episode_means(ablated, column).droplevel("setting")
    b = _episode_means(base, column).droplevel("setting")
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    if joined.empty:
        return None, 0
    return float((joined["a"] - joined["b"]).mean()), int(len(joined))


def table2(frame: pd.DataFrame, agents: list[str]) -> list[Table]:
    """Ablations against the matched non-ablated condition (TraceBench Table 2), one table per noise level."""
    tables = []
    ablations = [s for s in ("no-examples", "no-context") if s in set(frame["setting"])]
    if not ablations:
        return tables
    main = frame[frame["setting"] == "main"]
    for noise in [n for n in NOISES if n in set(frame[frame["setting"].isin(ablations)]["noise"])]:
        header = ["Agent (ablation)"] + [f"{s}, {split}" for s, split in CONDITION_COLUMNS]
        table = Table(f"table2-{noise}", f"Table 2. Ablations at {noise} noise: mean ± within-simulator SD "
                      "(signed change against the matched condition with domain context and "
                      f"{MAIN_EXAMPLES} labeled examples per class)", header)
        table.notes.append("Accuracy changes in percentage points; token values and changes in millions. "
                           "Changes are means of paired differences (same agent, simulator, seed, noise, submission).")
        for section, column, scale, digits, change_digits, splits in (
                ("Accuracy", None, 1.0, 3, 1, ("episode", "held-out")),
                ("Total tokens (M)", "total_tokens", 1e-6, 3, 3, ("episode",))):
            table.section(section)
            for agent in agents:
                for ablation in ablations:
                    rows = _select(frame, profile=agent, setting=ablation, noise=noise)
                    if rows.empty:
                        continue
                    cells = []
                    for submission, split in CONDITION_COLUMNS:
                        if split not in splits:
                            cells.append(table.explain(DASH, "held-out columns: only accuracy is measured on the "
                                                             "held-out run of a rule.py"))
                            continue
                        col = column or SPLITS[split]
                        abl = _select(rows, submission=submission)
                        base = _select(main, profile=agent, noise=noise, submission=submission)
                        mean, sd, n = _agg(abl, col)
                        table.interval(len(cells) + 1, cell_interval(_episode_means(abl, col), digits, scale))
                        change, pairs = _matched_change(abl, base, col)
                        change_scale = 100.0 if column is None else scale
                        shown_change = _scaled(change, change_scale)
                        if mean is None:
                            cells.append(table.explain(DASH, "no ablated episode of this agent in this condition"
                                                       if abl.empty else f"no {split} value recorded"))
                        else:
                            text = table.explain(fmt_pm(_scaled(mean, scale), _scaled(sd, scale), digits),
                                                 "a single episode: no SD")
                            cells.append(f"{text} " + table.explain(fmt_change(shown_change, change_digits),
                                                                    "no matched episode in the main setting"))
                        table.data.append({"section": "accuracy" if column is None else column, "agent": agent,
                                           "ablation": ablation, "noise": noise, "submission": submission,
                                           "split": split, "mean": _scaled(mean, scale), "sd": _scaled(sd, scale),
                                           "n": n, "change": shown_change, "pairs": pairs})
                    table.add(f"{agent} ({SETTING_LABELS[ablation]})", cells)
        tables.append(table)
    return tables


# -- Appendix I ----------------------------------------------------------------------------------

def per_simulator_tables(frame: pd.DataFrame, agents: list[str]) -> list[Table]:
    """Per-simulator results: mean ± SD (ddof = 1) across seeds (TraceBench Appendix I)."""
    tables = []
    simulators = sorted(frame["simulator"].dropna().unique())
    settings = [s for s in ("main", "no-examples", "no-context") if s in set(frame["setting"])]
    settings += sorted(set(frame["setting"]) - set(settings))
    for setting in settings:
        for noise in [n for n in NOISES if n in set(frame["noise"])]:
            for submission in SUBMISSIONS:
                rows = _select(frame, setting=setting, noise=noise, submission=submission)
                if rows.empty:
                    continue
                label = SETTING_LABELS.get(setting, setting)
                table = Table(f"per-simulator-{setting}-{noise}-{submission}",
                              f"Per-simulator results: {label}, {noise} noise, {submission} submission "
                              "(mean ± SD across seeds)", ["Agent"] + list(simulators))
                sections = [("Episode accuracy", "accuracy", 1.0, 3)]
                if submission == "programmatic":
                    sections.append(("Held-out accuracy", "heldout_accuracy", 1.0, 3))
                sections += [("Cost (USD)", "cost_usd", 1.0, 3), ("Total tokens (M)", "total_tokens", 1e-6, 3)]
                for title, column, scale, digits in sections:
                    if column not in rows.columns:
                        continue
                    table.section(title)
                    for agent in agents:
                        cells = []
                        for sim in simulators:
                            series = _episode_means(_select(rows, profile=agent, simulator=sim), column)
                            mean = float(series.mean()) if len(series) else None
                            sd = float(series.std(ddof=1)) if len(series) > 1 else None
                            table.interval(len(cells) + 1, cell_interval(series, digits, scale))
                            cells.append(table.explain(
                                fmt_pm(_scaled(mean, scale), _scaled(sd, scale), digits),
                                "a single seed: no SD" if mean is not None else
                                "no episode of this agent on this simulator" if _select(
                                    rows, profile=agent, simulator=sim).empty else "not recorded for this agent "
                                "(e.g. no model calls by a classical baseline)"))
                            table.data.append({"section": column, "agent": agent, "simulator": sim, "setting": setting,
                                               "noise": noise, "submission": submission,
                                               "mean": _scaled(mean, scale), "sd": _scaled(sd, scale),
                                               "n": int(len(series))})
                        if any(not c.startswith(DASH) for c in cells):
                            table.add(agent, cells)
                table.drop_empty_sections()
                _drop_unused_reasons(table)
                tables.append(table)
    return tables
