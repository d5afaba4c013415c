"""Write the scripted model's scripts for the shipped sample chain (``tasks/drcik/generate-sample.yaml``).

The one way to make offline scripts for any CAF tasks is ``harness dr-offline-scripts SPEC --out DIR``
(:mod:`tsagent_plugins.tasks.drcik.quality.offline`, ``docs/benchmarks/drcik-own-data.md``); this wrapper runs it on
the sample and puts the files where the sample spec and the tests expect them::

    python scripts/make_dr_generate_script.py
    # -> tests/fixtures/scripts/dr_generate/sample.yaml           (dr-generate, the spec's script)
    #    tests/fixtures/scripts/dr_generate/audit.yaml            (dr-audit, dr-calibrate)
    #    tests/fixtures/scripts/dr_generate/sample-reviews.jsonl  (illustrative review records)

Re-run it when a prompt, the sample or the pipeline's inputs change.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "tests" / "fixtures" / "scripts" / "dr_generate"
SPEC = REPO / "tasks" / "drcik" / "generate-sample.yaml"
#: file made by dr-offline-scripts -> its name among the fixtures
NAMES = {"generate.yaml": "sample.yaml", "audit.yaml": "audit.yaml", "reviews.jsonl": "sample-reviews.jsonl"}


def main() -> None:
    from tsagent_plugins.tasks.drcik.quality.offline import make_all

    with tempfile.TemporaryDirectory() as tmp:
        made = make_all(SPEC, Path(tmp))
        for source, target in NAMES.items():
            shutil.copyfile(Path(tmp) / source, FOLDER / target)
    print(f"{FOLDER}: {', '.join(NAMES.values())} ({made['requests']} recorded requests)")


if __name__ == "__main__":
    main()
