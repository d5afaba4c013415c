"""``harness report FOLDER`` for a folder a plugin's ``register_report_folders`` recognises: its builder reads the
user's options (``--paper``, ``--ci``, ...) through ``report_options()``, as a section builder does."""

from __future__ import annotations

from harness.report import build_report
from harness.reporting import report_options


def test_a_folder_builder_sees_the_report_options(make_distribution, fresh_plugins, tmp_path):
    make_distribution("folder-kind", {"folder-kind": "folder_kind_plugin"}, {"folder_kind_plugin": """
        from pathlib import Path

        from harness.hookspecs import hookimpl
        from harness.reporting import Section, report_options


        def build(path):
            options = report_options()
            return Section([], [f"paper={options.paper} ci={options.ci} figures={options.with_figures}"])


        @hookimpl
        def register_report_folders(register):
            register("marked", lambda path: (Path(path) / "MARK").is_file(), build)
    """})
    fresh_plugins()
    folder = tmp_path / "marked"
    folder.mkdir()
    (folder / "MARK").write_text("")
    assert "paper=True ci=True figures=False" in build_report([folder], paper=True, ci=True,
                                                              with_figures=False).messages
    assert "paper=False ci=False figures=True" in build_report([folder]).messages
    assert report_options().paper is False                 # the options end with the report
