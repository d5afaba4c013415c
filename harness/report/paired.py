"""Paired comparisons of two groups of episodes: ``harness report RUNS --compare A B``.

The statistics layer behind every paired comparison, a template's own paper tables included
(one way to do it, for any template):

1. each side is a :class:`Selector` -- a profile, a run, or conditions
   (``noise=low``, ``profile=x,context=False``);
2. the episodes of the two sides pair when they agree on every factor of the
   template's :class:`~harness.design.PairedDesign` that neither side names
   (e.g. task, seed, and the other conditions); episodes without a
   partner are dropped and counted (the paper's rule: pairs both ran);
3. paired differences are averaged within each cluster (e.g. a task-seed
   pair, over the conditions both ran or over agents), per stratum (a factor
   the design reports apart), so the observations are the independent clusters;
4. the cluster differences get the exhaustive sign-flip interval and p-value
   (:func:`harness.report.stats.sign_flip_ci`) and the
   win/tie/loss counts; p-values of several contrasts asked at once are
   Holm-corrected (:func:`statsmodels.stats.multitest.multipletests`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from harness.design import DEFAULT_DESIGN, PairedDesign
from harness.report.load import ReportError
from harness.report.stats import SignFlipCI, sign_flip_ci, sign_flip_pvalue, win_tie_loss
from harness.report.tables import Table

#: Columns a bare selector value is looked up in before the design's factors (a profile, then a run).
BARE_COLUMNS = ("profile", "run_id", "run_name")


@dataclass(frozen=True)
class Selector:
    """One side of a comparison: ``column -> value`` (values compared as text)."""

    text: str
    equal: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, text: str, frame: pd.DataFrame, factors: Sequence[str] = ()) -> Selector:
        """``KEY=VALUE[,KEY=VALUE...]``, or a bare ``VALUE`` looked up as a profile, a run (its id, folder
        name or folder path), then a value of one of ``factors``.  :class:`ReportError` when nothing matches or a bare value
        is ambiguous."""
        text = text.strip()
        if "=" in text:
            equal = []
            for part in text.split(","):
                key, sep, value = part.partition("=")
                if not sep or not key.strip():
                    raise ReportError(f"--compare {text!r}: expected KEY=VALUE[,KEY=VALUE...]")
                if key.strip() not in frame.columns:
                    raise ReportError(f"--compare {text!r}: no results column {key.strip()!r}")
                equal.append((key.strip(), value.strip()))
            return cls(text, tuple(equal))
        frame = with_run_name(frame)
        for column in BARE_COLUMNS:
            if column in frame.columns and (frame[column].astype(str) == text).any():
                return cls(text, ((column, text),))
        run_dir = _run_dir_of(text, frame)
        if run_dir is not None:
            return cls(text, (("run_dir", run_dir),))
        hits = [c for c in factors if c in frame.columns and (frame[c].astype(str) == text).any()]
        if len(hits) > 1:
            raise ReportError(f"--compare {text!r} is a value of several columns ({', '.join(hits)}): "
                              f"write COLUMN={text}")
        if not hits:
            raise ReportError(f"--compare {text!r}: no episode has it as a profile, run or condition value")
        return cls(text, ((hits[0], text),))

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.equal)

    def mask(self, frame: pd.DataFrame) -> pd.Series:
        frame = with_run_name(frame)
        mask = pd.Series(True, index=frame.index)
        for column, value in self.equal:
            mask &= frame[column].astype(str) == value
        return mask


def _run_dir_of(text: str, frame: pd.DataFrame) -> str | None:
    """The ``run_dir`` value of the run folder ``text`` names as a path (``runs/old``, ``./runs/old/``, an
    absolute path), compared after resolving both; None when ``text`` names none of the report's runs."""
    if "run_dir" not in frame.columns or ("/" not in text and os.sep not in text):
        return None
    wanted = os.path.realpath(text)
    for value in frame["run_dir"].astype(str).unique():
        if os.path.realpath(value) == wanted:
            return value
    return None


def with_run_name(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``run_name``: the folder name of ``run_dir`` (when there is one)."""
    if "run_dir" not in frame.columns or "run_name" in frame.columns:
        return frame
    return frame.assign(run_name=frame["run_dir"].astype(str).str.replace("\\", "/").str.rstrip("/")
                        .str.rsplit("/", n=1).str[-1])


@dataclass
class Contrast:
    """One row of a comparison: ``a − b`` on ``metric`` within ``stratum``, over ``ci.n`` clusters.

    ``unpaired``: episodes of (a, b) with a value but no partner (dropped).  ``p_holm`` is set by
    :func:`holm`."""

    a: str
    b: str
    metric: str
    stratum: dict[str, Any]
    differences: np.ndarray
    ci: SignFlipCI
    wins: int
    ties: int
    losses: int
    p: float
    pairs: int
    unpaired: tuple[int, int]
    p_holm: float | None = None
    record: dict[str, Any] = field(default_factory=dict)


def _values(rows: pd.DataFrame, identity: list[str], column: str) -> pd.Series:
    """``column`` per identity (as text; mean over repeated rows), NaN dropped."""
    if column not in rows.columns or rows.empty:
        return pd.Series(dtype=float)
    kept = rows.assign(_v=pd.to_numeric(rows[column], errors="coerce")).dropna(subset=["_v"])
    if kept.empty:
        return pd.Series(dtype=float)
    return kept.assign(**{c: kept[c].astype(str) for c in identity}).groupby(identity)["_v"].mean()


def _per_stratum(values: pd.Series, strata: list[str]) -> dict[tuple, int]:
    if values.empty:
        return {}
    if not strata:
        return {(): len(values)}
    counts = values.reset_index().groupby(strata).size()
    return {k if isinstance(k, tuple) else (k,): int(v) for k, v in counts.items()}


def compare(frame: pd.DataFrame, design: PairedDesign, a: Selector, b: Selector, alpha: float = 0.05,
            metrics: Mapping[str, str] | None = None) -> list[Contrast]:
    """Contrasts ``a − b``: one per stratum (of ``design.strata`` not named by a or b) and metric, in stratum
    order then metric order; strata and metrics without a pair are left out.  Episodes pair on the
    design's factors that neither side names; ``unpaired`` counts, per stratum, the episodes of each side
    with a value but no partner.

    Raises :class:`ReportError` when a side selects no episode or both sides select the same ones."""
    sel_a, sel_b = a.mask(frame), b.mask(frame)
    for side, mask in ((a, sel_a), (b, sel_b)):
        if not mask.any():
            raise ReportError(f"--compare {side.text!r}: no episode matches")
    if (sel_a & sel_b).any():
        raise ReportError(f"--compare {a.text!r} {b.text!r}: the two sides share episodes")
    missing = [c for c in design.clusters if c not in frame.columns]
    if missing:
        raise ReportError(f"results lack the column(s) {', '.join(missing)} that pair episodes")
    named = set(a.columns) | set(b.columns)
    identity = [c for c in design.factors if c not in named and c in frame.columns]
    strata = [c for c in design.strata if c in identity]
    clusters = [c for c in design.clusters if c in identity]
    found: list[tuple[tuple, int, Contrast]] = []
    for order, (label, column) in enumerate((metrics or design.metrics).items()):
        va, vb = _values(frame[sel_a], identity, column), _values(frame[sel_b], identity, column)
        joined = pd.concat([va.rename("a"), vb.rename("b")], axis=1, join="inner")
        if joined.empty:
            continue
        pairs = joined.assign(d=joined["a"] - joined["b"]).reset_index()
        count_a, count_b = _per_stratum(va, strata), _per_stratum(vb, strata)
        for key, group in (pairs.groupby(strata) if strata else [((), pairs)]):
            key = key if isinstance(key, tuple) else (key,)
            d = group.groupby(clusters)["d"].mean().to_numpy() if clusters else group["d"].to_numpy()
            ci = sign_flip_ci(d, alpha)
            wins, ties, losses = win_tie_loss(d)
            unpaired = (count_a.get(key, 0) - len(group), count_b.get(key, 0) - len(group))
            found.append((key, order, Contrast(a.text, b.text, label, dict(zip(strata, key)), d, ci, wins, ties,
                                               losses, sign_flip_pvalue(d), int(len(group)), unpaired)))
    return [c for _, _, c in sorted(found, key=lambda item: (item[0], item[1]))]


def holm(contrasts: Iterable[Contrast], alpha: float = 0.05) -> None:
    """Set ``p_holm`` on every contrast: Holm's step-down correction over all of them (one family)."""
    from statsmodels.stats.multitest import multipletests

    contrasts = list(contrasts)
    if not contrasts:
        return
    corrected = multipletests([c.p for c in contrasts], alpha=alpha, method="holm")[1]
    for contrast, p in zip(contrasts, corrected):
        contrast.p_holm = float(p)


def _pp(value: float) -> str:
    """Percentage points with one decimal, without a negative zero."""
    return f"{round(value, 1) + 0.0:.1f}"


def effect_text(ci: SignFlipCI) -> str:
    """``effect [low, high]`` in percentage points (``[unbounded]`` when no shift can be rejected)."""
    if ci.bounded:
        return f"{_pp(100 * ci.mean)} [{_pp(100 * ci.low)}, {_pp(100 * ci.high)}]"
    return f"{_pp(100 * ci.mean)} [unbounded]"


def contrast_record(contrast: Contrast) -> dict[str, Any]:
    """The machine-readable numbers of a contrast row (percentage points)."""
    ci = contrast.ci
    return {"effect_pp": 100.0 * ci.mean, "n": ci.n,
            "ci_low_pp": 100 * ci.low if ci.bounded else None, "ci_high_pp": 100 * ci.high if ci.bounded else None,
            "ci_unbounded": not ci.bounded, "min_p": ci.min_p, "method": ci.method, "p": contrast.p,
            "wins": contrast.wins, "ties": contrast.ties, "losses": contrast.losses}


def unbounded_note(contrasts: Sequence[Contrast], alpha: float) -> list[str]:
    """The note explaining unbounded intervals (none when every interval is bounded)."""
    ns = sorted({c.ci.n for c in contrasts if not c.ci.bounded})
    if not ns:
        return []
    count = sum(1 for c in contrasts if not c.ci.bounded)
    return [f"{count} contrast(s) have an unbounded {100 * (1 - alpha):.0f}% interval: with n = "
            f"{', '.join(map(str, ns))} pairs the smallest attainable two-sided p-value (2/2^n = "
            f"{', '.join(f'{2 / 2 ** n:.4g}' for n in ns)}) exceeds {alpha}, so no shift can be rejected."]


def _p_text(p: float | None) -> str:
    return "–" if p is None else f"{p:.3g}" if p >= 1e-3 else f"{p:.1e}"


def contrast_label(contrast: Contrast) -> str:
    parts = [f"{contrast.a} − {contrast.b}", *(f"{k}={v}" for k, v in contrast.stratum.items()), contrast.metric]
    return ", ".join(parts)


def comparison_table(contrasts: list[Contrast], alpha: float = 0.05, key: str = "compare") -> Table:
    """The comparison as a report table: effect with its sign-flip interval, W/T/L, clusters, pairs,
    unpaired episodes dropped, p and Holm-corrected p (call :func:`holm` first)."""
    level = f"{100 * (1 - alpha):.0f}%"
    table = Table(key, f"Paired comparison: differences in percentage points [{level} CI by exhaustive "
                  "sign-flip inversion]",
                  ["Contrast", f"Effect [{level} CI]", "W/T/L", "n", "pairs", "dropped (A/B)", "p", "p (Holm)"])
    for c in contrasts:
        table.add(contrast_label(c), [effect_text(c.ci), f"{c.wins}/{c.ties}/{c.losses}", str(c.ci.n), str(c.pairs),
                                      f"{c.unpaired[0]}/{c.unpaired[1]}", _p_text(c.p), _p_text(c.p_holm)])
        table.data.append({"contrast": contrast_label(c), "a": c.a, "b": c.b, "metric": c.metric, **c.stratum,
                           **contrast_record(c), "pairs": c.pairs, "dropped_a": c.unpaired[0],
                           "dropped_b": c.unpaired[1], "p_holm": c.p_holm})
    dropped = [(c.unpaired, contrast_label(c)) for c in contrasts if any(c.unpaired)]
    table.notes.append("Episodes pair when they share every factor the two sides do not name (task, simulator, "
                       "seed, other conditions); differences are averaged within each cluster (n = clusters, "
                       "e.g. simulator–seed pairs) before the test. W/T/L counts positive/zero/negative cluster "
                       "differences. p: two-sided sign-flip test of no difference; p (Holm): Holm-corrected over "
                       f"the {len(contrasts)} contrast(s) of this table.")
    if dropped:
        total = sum(a + b for (a, b), _ in dropped)
        table.notes.append(f"{total} episode(s) without a partner on the other side were dropped (pairs both ran), "
                           "counted per contrast in 'dropped (A/B)'.")
    table.notes += unbounded_note(contrasts, alpha)
    return table


def designs(templates: Iterable[str]) -> dict[str, PairedDesign]:
    """The paired design of each named template (its ``paired_design``, else :data:`DEFAULT_DESIGN`)."""
    from harness.plugins import plugins

    registry = plugins().registry("task_template")
    out = {}
    for name in templates:
        declared = getattr(registry[name].obj, "paired_design", None) if name in registry else None
        out[name] = declared or DEFAULT_DESIGN
    return out


def compare_frame(frame: pd.DataFrame, pairs: Sequence[tuple[str, str]], alpha: float = 0.05,
                  excluded_profiles: Sequence[str] = ()) -> Table:
    """``harness report --compare``: every pair of selectors compared within each template of ``frame``;
    p-values Holm-corrected over all the contrasts.  ``excluded_profiles`` are left out of the averages
    of comparisons that do not name a profile."""
    contrasts: list[Contrast] = []
    templates = list(pd.unique(frame["template"].dropna())) if "template" in frame.columns else []
    found = designs(templates) if templates else {}
    groups = [(t, frame[frame["template"] == t]) for t in templates] or [(None, frame)]
    for a_text, b_text in pairs:
        matched = False
        for template, rows in groups:
            design = found.get(template, DEFAULT_DESIGN)
            rows = design.prepare(rows.reset_index(drop=True)) if design.prepare else rows
            try:
                a = Selector.parse(a_text, rows, design.factors)
                b = Selector.parse(b_text, rows, design.factors)
            except ReportError:
                continue
            if excluded_profiles and "profile" not in set(a.columns) | set(b.columns):
                rows = rows[~rows["profile"].astype(str).isin(excluded_profiles)]
            matched = True
            contrasts += compare(rows, design, a, b, alpha)
        if not matched:  # say why, from the first template
            template, rows = groups[0]
            design = found.get(template, DEFAULT_DESIGN)
            Selector.parse(a_text, rows, design.factors)
            Selector.parse(b_text, rows, design.factors)
    if not contrasts:
        raise ReportError(f"--compare: no episode pairs ({'; '.join(f'{a} vs {b}' for a, b in pairs)} share no "
                          "task, simulator and seed)")
    holm(contrasts, alpha)
    return comparison_table(contrasts, alpha)
