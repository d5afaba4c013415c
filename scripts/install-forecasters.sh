#!/usr/bin/env bash
# Install the pretrained forecaster families (Dr-CiK Appendix G) into the environment of $PY
# (default .venv/bin/python) and print, per family, the added wall time and download size.
# usage: scripts/install-forecasters.sh [FAMILY ...]   (timesfm tirex moirai toto, moirai-moe = moirai; default all)
#
# Every family installs with --no-deps into an environment that already holds torch and the harness (torch
# is never replaced: the CPU build installed first stays).  timesfm's and tirex's other requirements are
# among the harness's own (`pip check` finds nothing missing).  uni2ts 2.0.0 (moirai, moirai-moe) pins
# torch<2.5, numpy~=1.26, scipy~=1.11, and toto-ts 0.2.0 pins torch 2.7.0, numpy 1.26.4, pandas 2.2.3:
# both install with --no-deps beside the tested set of what their modelling code imports (versions
# below), checked by importing the modules the forecasters use.  aurora is not installed: see README.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
PIP=("$PY" -m pip install -q --disable-pip-version-check --no-deps)

# What each family adds, all installed with --no-deps: pyproject.toml's [tool.tsagent-harness.no-deps] table
# (versions tested with torch 2.13 CPU, numpy 2.3).
pkgs() {
  "$PY" -c 'import sys, tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))
                  ["tool"]["tsagent-harness"]["no-deps"].get(sys.argv[1], [])))' "$1"
}
declare -A CHECK=(
  [timesfm]="import timesfm3.torch"
  [tirex]="import tirex.models.tirex"
  [moirai]="import uni2ts.model.moirai2, uni2ts.model.moirai_moe"
  [toto]="import toto.model.toto, toto.inference.forecaster, toto.data.util.dataset"
)
if ! "$PY" -c "import torch, harness" 2>/dev/null; then
  echo "install-forecasters: $PY needs torch and the harness first, e.g." \
       "$PY -m pip install torch && $PY -m pip install -e . (a CPU machine: torch's CPU build)" >&2
  exit 2
fi
families=("$@")
[ "${#families[@]}" -gt 0 ] || families=(timesfm tirex moirai toto)
for family in "${families[@]}"; do
  [ "$family" = moirai-moe ] && family=moirai  # one package (uni2ts) for both forecasters
  [ -n "${CHECK[$family]:-}" ] || { echo "unknown family $family (known: ${!CHECK[*]})" >&2; exit 2; }
  start=$(date +%s.%N)
  if "$PY" -c "${CHECK[$family]}" 2>/dev/null; then
    echo "forecaster family $family: already installed (0 s, 0 MB)"
    continue
  fi
  wheels=$(mktemp -d)
  # shellcheck disable=SC2086
  "$PY" -m pip download -q --disable-pip-version-check --no-deps -d "$wheels" $(pkgs "$family")
  size=$(du -sm "$wheels" | cut -f1)
  "${PIP[@]}" "$wheels"/*
  rm -rf "$wheels"
  "$PY" -c "${CHECK[$family]}"
  end=$(date +%s.%N)
  echo "forecaster family $family: installed in $("$PY" -c "print(f'{$end - $start:.1f}')") s, $size MB of wheels"
done
