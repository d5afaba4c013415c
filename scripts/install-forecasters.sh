#!/usr/bin/env bash
# Install the pretrained forecaster families (Dr-CiK Appendix G) into the environment of $PY
# (default .venv/bin/python) and print, per family, the added wall time and download size.
# usage: scripts/install-forecasters.sh [FAMILY ...]   (timesfm tirex moirai toto aurora, moirai-moe = moirai;
#        default: all but aurora, whose environment of its own is asked for by name)
#
# Every family installs with --no-deps into an environment that already holds torch and the harness (torch
# is never replaced: the CPU build installed first stays); the family's other requirements (its extra less the
# no-deps list) go in first with pip's resolver.  uni2ts 2.0.0 (moirai, moirai-moe) pins
# torch<2.5, numpy~=1.26, scipy~=1.11, and toto-ts 0.2.0 pins torch 2.7.0, numpy 1.26.4, pandas 2.2.3:
# both install with --no-deps beside the tested set of what their modelling code imports (versions
# below), checked by importing the modules the forecasters use.
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
# The family's ordinary requirements: its pyproject.toml extra less what the no-deps list pins (tirex needs
# scikit-learn, moirai toolz and einops: declared there, installed with pip's resolver, so `.[test,chronos]`
# alone is enough before this script).
reqs() {
  "$PY" -c 'import re, sys, tomllib; t = tomllib.load(open("pyproject.toml", "rb")); f = sys.argv[1]
name = lambda r: re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", r).group()).lower()
pinned = {name(r) for r in t["tool"]["tsagent-harness"]["no-deps"].get(f, [])}
print(" ".join(r for r in t["project"]["optional-dependencies"].get(f, []) if name(r) not in pinned))' "$1"
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
# Aurora runs in an environment of its own (its package imports torchvision, which does not import beside our
# CPU torch): a virtual environment at $AURORA_VENV (default: the harness cache's envs/aurora) made with
# $AURORA_BASE_PYTHON (default python3.11, whose torch 2.14.1 and torchvision 0.29.1 wheels lie on this
# machine kind's disk) from plugins/forecasters/aurora_requirements.txt.  The harness finds it there, or
# through $HARNESS_AURORA_PYTHON.
install_aurora() {
  local venv="${AURORA_VENV:-$("$PY" -c 'from harness.sandboxing import cache_root; print(cache_root() / "envs" / "aurora")')}"
  local start end
  start=$(date +%s.%N)
  if "$venv/bin/python" -c "import aurora, torchvision" >/dev/null 2>&1; then
    echo "forecaster family aurora: already installed in $venv (0 s)"
    return
  fi
  rm -rf "$venv"
  "${AURORA_BASE_PYTHON:-python3.11}" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r plugins/forecasters/aurora_requirements.txt
  "$venv/bin/python" -c "import aurora, torchvision" >/dev/null
  end=$(date +%s.%N)
  echo "forecaster family aurora: installed in $("$PY" -c "print(f'{$end - $start:.1f}')") s into $venv," \
       "$(du -sm "$venv" | cut -f1) MB"
}
families=("$@")
[ "${#families[@]}" -gt 0 ] || families=(timesfm tirex moirai toto)
for family in "${families[@]}"; do
  [ "$family" = moirai-moe ] && family=moirai  # one package (uni2ts) for both forecasters
  if [ "$family" = aurora ]; then install_aurora; continue; fi
  [ -n "${CHECK[$family]:-}" ] || { echo "unknown family $family (known: ${!CHECK[*]} aurora)" >&2; exit 2; }
  start=$(date +%s.%N)
  if "$PY" -c "${CHECK[$family]}" 2>/dev/null; then
    echo "forecaster family $family: already installed (0 s, 0 MB)"
    continue
  fi
  # shellcheck disable=SC2046
  "$PY" -m pip install -q --disable-pip-version-check $(reqs "$family")
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
