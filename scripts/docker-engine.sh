#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine (used by .ci/run).
#
# - installs docker.io (and debootstrap, which `harness image build --bootstrap`
#   needs) with apt-get when missing;
# - when no engine answers, starts `dockerd --bridge=none --iptables=false`
#   in the background (no container networking is needed: every sandbox runs
#   with network mode "none"), logging to $HARNESS_DOCKERD_LOG;
# - waits until `docker info` works (at most $HARNESS_DOCKERD_WAIT seconds).
#
# Idempotent: a second call finds the engine answering and returns at once.
set -euo pipefail

LOG=${HARNESS_DOCKERD_LOG:-/var/log/harness-dockerd.log}
WAIT=${HARNESS_DOCKERD_WAIT:-90}
PIDFILE=/var/run/docker.pid

say() { echo "docker-engine: $*" >&2; }

engine_answers() {
    timeout 10 docker info --format '{{.ServerVersion}}' >/dev/null 2>&1
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
    pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
    say "installing ${pkgs}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
fi

if engine_answers; then
    say "engine answers ($(docker info --format '{{.ServerVersion}}' 2>/dev/null))"
    exit 0
fi

if [ -n "${DOCKER_HOST:-}" ] && [ "${DOCKER_HOST}" != "unix:///var/run/docker.sock" ]; then
    say "DOCKER_HOST=${DOCKER_HOST} does not answer; starting a local engine at /var/run/docker.sock"
    export DOCKER_HOST=unix:///var/run/docker.sock
fi

running=""
if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    running=$(cat "$PIDFILE")
    say "dockerd (pid ${running}) is starting; waiting for it"
else
    say "starting dockerd --bridge=none --iptables=false (log: ${LOG})"
    as_root mkdir -p "$(dirname "$LOG")"
    as_root setsid nohup dockerd --bridge=none --iptables=false --ip-masq=false \
        --host=unix:///var/run/docker.sock >>"$LOG" 2>&1 </dev/null &
fi

for _ in $(seq 1 "$WAIT"); do
    if engine_answers; then
        say "engine answers ($(docker info --format '{{.ServerVersion}}' 2>/dev/null))"
        exit 0
    fi
    sleep 1
done
say "no Docker engine answered after ${WAIT}s; last lines of ${LOG}:"
tail -n 20 "$LOG" >&2 || true
exit 1
