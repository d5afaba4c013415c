"""``harness report``'s public API: what a plugin's report sections build with.

Reading results (:func:`read_json`, :func:`episode_dir`, :class:`ReportError`), :class:`Section` and the
``report_options`` a section reads, :class:`Table` and its number formats, figure helpers (one look for every
figure, checked by :func:`figure_problems`), the statistics the papers' tables use, :func:`render_report`, and the
marks of costs no money was spent on (:func:`cost_text`, :func:`offline_backend`, :func:`backend_billed`:
:mod:`harness.billing`).
Loaded lazily like the package root (:func:`harness.lazy.public_api`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.lazy import public_api

if TYPE_CHECKING:
    from harness.report.load import ReportError as ReportError
    from harness.report.load import episode_dir as episode_dir
    from harness.report.load import read_json as read_json
    from harness.report.sections import Section as Section
    from harness.report.sections import report_options as report_options
    from harness.report.tables import DASH as DASH
    from harness.report.tables import Table as Table
    from harness.report.tables import fmt_change as fmt_change
    from harness.report.tables import fmt_count as fmt_count
    from harness.report.tables import fmt_pm as fmt_pm
    from harness.report.tables import fmt_share as fmt_share
    from harness.report.figures import figure_problems as figure_problems
    from harness.report.figures import fit_ticks as fit_ticks
    from harness.report.figures import format_axis as format_axis
    from harness.report.figures import new_figure as new_figure
    from harness.report.figures import no_data as no_data
    from harness.report.figures import outside_legend as outside_legend
    from harness.report.figures import pad_limits as pad_limits
    from harness.report.figures import series_style as series_style
    from harness.report.figures import set_title as set_title
    from harness.report.figures import spread_coinciding as spread_coinciding
    from harness.report.render import render as render_report
    from harness.design import PairedDesign as PairedDesign
    from harness.report.paired import Contrast as Contrast
    from harness.report.paired import Selector as Selector
    from harness.report.paired import compare as compare_paired
    from harness.report.paired import contrast_record as contrast_record
    from harness.report.paired import effect_text as effect_text
    from harness.report.paired import unbounded_note as unbounded_note
    from harness.report.intervals import mean_interval as mean_interval
    from harness.report.stats import sign_flip_ci as sign_flip_ci
    from harness.report.stats import win_tie_loss as win_tie_loss
    from harness.report.stats import within_simulator_sd as within_simulator_sd
    from harness.billing import NOT_SPENT as NOT_SPENT
    from harness.billing import backend_billed as backend_billed
    from harness.billing import cost_text as cost_text
    from harness.billing import offline_backend as offline_backend

__getattr__, __dir__ = public_api(globals())
