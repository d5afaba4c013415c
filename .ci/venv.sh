#!/usr/bin/env bash
# usage: bash .ci/venv.sh VENV BASE_PYTHON REQUIREMENT...
#
# Make VENV a virtual environment of BASE_PYTHON that holds exactly REQUIREMENT... and what they need: never
# the system's site-packages. A requirement starting with "." is this project (installed editable, extras
# allowed: '.[test]'). An existing VENV is updated when it was made by BASE_PYTHON without the system's
# site-packages; otherwise, or when it then holds distributions no requirement needs (installed by hand, or
# left from an older pyproject.toml), it is made again. So the result is the same whichever VENV existed.
set -euo pipefail
VENV=$1 BASE=$2
shift 2
PY="$VENV/bin/python"

install() {
  for req in "$@"; do
    if [[ "$req" == .* ]]; then
      "$PY" -m pip install -q --disable-pip-version-check -e "$req"
    else
      "$PY" -m pip install -q --disable-pip-version-check "$req"
    fi
  done
}
prefix() { "$1" -c 'import sys; print(sys.base_prefix)'; }

if [ -x "$PY" ] && grep -qx 'include-system-site-packages = false' "$VENV/pyvenv.cfg" \
    && [ "$(prefix "$PY")" = "$(prefix "$BASE")" ]; then
  echo "venv: updating $VENV"
  install "$@"
  extra=$("$PY" "$(dirname "$0")/undeclared_dists.py" "$@")
  if [ -n "$extra" ]; then
    echo "venv: $VENV holds distributions no requirement needs ($(echo $extra)): making it again"
    "$BASE" -m venv --clear "$VENV"
    install "$@"
  fi
else
  echo "venv: making $VENV with $BASE (no system site-packages)"
  "$BASE" -m venv --clear "$VENV"
  install "$@"
fi
echo "CI Python: $("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])'), environment" \
     "$(cd "$VENV" && pwd) (base $(prefix "$PY"), system site-packages: no)"
