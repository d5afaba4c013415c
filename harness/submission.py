"""Sandboxed evaluation of a submitted rule (programmatic submission).

In programmatic mode the agent
writes ``rule.py`` with ``predict(df) -> list[str]``; the harness calls it on
each test and held-out sample.  The reference implementation imports the
file into the scoring process with no timeout; here each episode gets one
worker (:mod:`harness.sandbox.rule_worker`) in its own sandbox where, of the
episode, only a copy of the submitted file is visible (at
``/submission/<name>``; besides it only the read-only system, Python and
harness code allowlist): no workspace, no test or held-out folder, no network.

Per call the host sends the sample's Parquet bytes and waits at most
``call_timeout`` seconds; on timeout the worker's whole process tree is killed,
the call is recorded as ``"timeout after Ns"`` and a fresh worker serves the
remaining inputs.  A crash (segfault, ``os._exit``) is an error for that call
and the worker restarts.  The worker caps its address space at ``memory_mb``
(RLIMIT_AS: an allocation past it raises MemoryError inside ``predict``).
When the host runs as root the worker runs as a fresh unprivileged uid with
RLIMIT_NPROC = ``limits.pids``, so it cannot fork without bound.
An import error (or a missing function) gives every call that error.

All calls of one runner (one episode: the test batch, then the held-out
batch) share a total time ``budget`` (default :data:`DEFAULT_RULE_BUDGET`
seconds): a call never waits past it, and once it is spent every remaining
sample gets the error ``"rule budget of Ns spent"`` (so a rule that always
sleeps costs the budget, not one call timeout per sample).  The worker's
sandbox caps the total memory of its processes at ``memory_mb`` and its
processes at ``limits.pids`` where the backend can (control groups).
"""

from __future__ import annotations

import collections
import dataclasses
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness import interrupt, untrusted
from harness.contracts.sandbox import WORKSPACE, Limits, SandboxBackend, SandboxSpec
from harness.contracts.task import CallResult, SubmissionRunner
from harness.sandbox import owner
from harness.sandbox.errors import SandboxError
from harness.sandbox.mounts import Mount
from harness.sandbox.process import SandboxProcess
from harness.sandbox.rule_worker import HEADER, SEQ

SUBMISSION_DIR = "/submission"
#: Host uids handed to rule workers: a range no distribution allocates to users.
UID_BASE, UID_SPAN = 1_200_000_000, 1 << 24
#: Largest reply frame accepted from a worker (answers are capped at 1 MiB of JSON inside).
MAX_FRAME = 4 << 20
#: Default total seconds for evaluating one episode's rule.py (all its calls).
DEFAULT_RULE_BUDGET = 600.0
#: Default process/thread cap of a rule worker (RLIMIT_AS is per process, so this also bounds memory).
WORKER_PIDS = 128
WORKER_ENV = {
    "HOME": "/tmp", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg",
}



def read_submission_inputs(module: Path, function: str, inputs: list[Path]) -> tuple[list[bytes], list[CallResult] | None]:
    """The input files' bytes, or the results to return at once (no module: every call fails; no inputs).

    Raises ValueError when ``function`` is not an identifier; a missing input file is a harness bug and raises.
    """
    if not function.isidentifier():
        raise ValueError(f"function {function!r} is not a Python identifier")
    if not Path(module).is_file():
        return [], [CallResult(error=f"submission file {Path(module).name} not found") for _ in inputs]
    samples = [Path(p).read_bytes() for p in inputs]
    return samples, (None if samples else [])

class WorkerGone(Exception):
    """The worker ended (crash, exit) or broke the protocol; the message says how."""


class _Worker:
    """One running rule worker: framed requests with deadlines, stderr kept for diagnostics.

    ``seq``: the number of the last request sent; ``pid``: the worker's pid (from its hello);
    ``discarded``: replies dropped because they answered another request or came from another process."""

    def __init__(self, proc: SandboxProcess, memory_cap_hit=None):
        self.proc = proc
        #: a callable saying whether the kernel killed a process of the worker's group for its memory cap
        self.memory_cap_hit = memory_cap_hit
        self.seq = 0
        self.pid: int | None = None
        self.discarded = 0
        self.out = proc.stdout.fileno()
        self.inp = proc.stdin.fileno()
        os.set_blocking(self.inp, False)
        self.buffer = b""
        self.stderr_tail: collections.deque[bytes] = collections.deque(maxlen=64)
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        fd = self.proc.stderr.fileno()
        try:
            while chunk := os.read(fd, 4096):
                self.stderr_tail.append(chunk)
        except OSError:
            pass

    def _fill(self, n: int, deadline: float) -> bool:
        while len(self.buffer) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            ready, _, _ = select.select([self.out], [], [], remaining)
            if ready:
                chunk = os.read(self.out, 1 << 16)
                if not chunk:
                    raise WorkerGone(self._death())
                self.buffer += chunk
        return True

    def read(self, deadline: float) -> dict | None:
        """The next reply, or None when ``deadline`` passes first; raises WorkerGone."""
        if not self._fill(HEADER.size, deadline):
            return None
        (size,) = HEADER.unpack(self.buffer[:HEADER.size])
        if size > MAX_FRAME:
            raise WorkerGone(f"protocol error: reply of {size} bytes")
        if not self._fill(HEADER.size + size, deadline):
            return None
        frame, self.buffer = self.buffer[HEADER.size:HEADER.size + size], self.buffer[HEADER.size + size:]
        parsed = untrusted.parse_json(frame, untrusted.Bounds(max_bytes=MAX_FRAME), "reply")
        if not parsed.ok:
            raise WorkerGone(f"protocol error: {parsed.reason}")
        reply = parsed.value
        if not isinstance(reply, dict):
            raise WorkerGone("protocol error: reply is not an object")
        return reply

    def request(self, sample: bytes, deadline: float) -> dict | None:
        """Send ``sample`` as the next numbered request and return its reply (replies that carry another
        number or pid are discarded), or None when ``deadline`` passes first; raises WorkerGone."""
        self.seq += 1
        if not self.write(SEQ.pack(self.seq) + sample, deadline):
            return None
        while True:
            reply = self.read(deadline)
            if reply is None:
                return None
            if reply.get("seq") == self.seq and reply.get("pid") == self.pid:
                return reply
            self.discarded += 1

    def write(self, payload: bytes, deadline: float) -> bool:
        """Send one frame; False when ``deadline`` passes first; raises WorkerGone."""
        view = memoryview(HEADER.pack(len(payload)) + payload)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            _, ready, _ = select.select([], [self.inp], [], remaining)
            if ready:
                try:
                    view = view[os.write(self.inp, view):]
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    raise WorkerGone(self._death()) from None
        return True

    def _death(self) -> str:
        try:
            rc = self.proc.wait(5)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            rc = self.proc.returncode
        self._drain.join(1)
        tail = b"".join(self.stderr_tail).decode("utf-8", "replace").strip().splitlines()
        last = f" ({tail[-1][:300]})" if tail else ""
        if rc is not None and rc in (128 + signal.SIGKILL, -signal.SIGKILL) and self.memory_cap_hit is not None \
                and self.memory_cap_hit():
            return f"worker killed: the rule's memory cap was hit{last}"
        if rc is not None and rc > 128:
            try:
                name = signal.Signals(rc - 128).name
            except ValueError:
                name = f"signal {rc - 128}"
            return f"worker crashed: killed by {name}{last}"
        return f"worker exited with status {rc}{last}"

    def close(self) -> None:
        try:
            self.write(b"", time.monotonic() + 1)
            self.proc.wait(2)
        except (OSError, WorkerGone, subprocess.TimeoutExpired):
            pass  # closing is best effort; the kill below ends it either way
        self.proc.kill()


def memory_cap_watch(sandbox):
    """A callable saying whether the kernel killed a process of ``sandbox``'s control group for its memory cap
    since this call (None when the sandbox has no group whose kills can be read)."""
    group = getattr(sandbox, "group", None)
    before = group.oom_kills() if group is not None else None
    if before is None:
        return None
    return lambda: (group.oom_kills() or 0) > before


class SandboxedSubmissionRunner:
    """:class:`~harness.contracts.task.SubmissionRunner` backed by a local sandbox backend.

    ``backend``: a local backend (bubblewrap, unshare, none) whose ``create``
    accepts ``mounts`` and ``run_as``.  ``limits.pids``: process cap (when the
    host runs as root).  ``call_timeout``: seconds per ``predict`` call.
    ``memory_mb``: address-space cap of the worker.  ``import_timeout``:
    seconds for the worker to start and import the module.  ``budget``: total
    seconds for every call of this runner (see the module docstring).
    """

    def __init__(self, backend: SandboxBackend, limits: Limits, call_timeout: float, memory_mb: int,
                 import_timeout: float = 120.0, budget: float = DEFAULT_RULE_BUDGET):
        if call_timeout <= 0 or import_timeout <= 0 or budget <= 0:
            raise ValueError("call_timeout, import_timeout and budget must be positive")
        self.budget, self.spent = float(budget), 0.0
        self._budget_end = float("inf")
        if memory_mb < 256:
            raise ValueError(f"memory_mb={memory_mb}: the worker needs at least 256 MiB to import pandas")
        if not backend.runs_rule_workers:
            raise ValueError(f"sandbox backend {backend.name!r} cannot run rule workers: use a local backend "
                             "(bubblewrap, unshare or none)")
        self.backend, self.limits = backend, limits
        self.call_timeout, self.memory_mb, self.import_timeout = float(call_timeout), int(memory_mb), float(import_timeout)

    def __call__(self, module: Path, function: str, inputs: list[Path]) -> list[CallResult]:
        """One result per input, in order (value, or error text such as ``"timeout after 5s"``)."""
        module = Path(module)
        samples, early = read_submission_inputs(module, function, inputs)
        if early is not None:
            return early
        with tempfile.TemporaryDirectory(prefix="harness-sub-") as tmp:
            owner.write(Path(tmp))  # a killed run's copy is found by `harness sandbox cleanup`
            sub, ws = Path(tmp) / "submission", Path(tmp) / "workspace"
            sub.mkdir(mode=0o755)
            ws.mkdir(mode=0o755)
            os.chmod(tmp, 0o755)
            shutil.copyfile(module, sub / module.name)
            os.chmod(sub / module.name, 0o644)
            limits = dataclasses.replace(self.limits, memory_mb=self.memory_mb)
            spec = SandboxSpec(workspace=ws, env=dict(WORKER_ENV), limits=limits)
            isolated = self.backend.name != "none"
            if isolated:
                run_as = UID_BASE + secrets.randbelow(UID_SPAN) if os.geteuid() == 0 else None
                sandbox = self.backend.create(spec, mounts=(Mount("ro", SUBMISSION_DIR, src=str(sub)),), run_as=run_as)
                module_path = f"{SUBMISSION_DIR}/{module.name}"
            else:
                sandbox = self.backend.create(spec)
                module_path = str(sub / module.name)
            argv = [sys.executable, "-m", "harness.sandbox.rule_worker", "--module", module_path,
                    "--function", function, "--memory-mb", str(self.memory_mb)]
            with sandbox:
                return self._run_all(sandbox, argv, samples)

    def _start(self, sandbox, argv: list[str]) -> tuple[_Worker | None, str | None]:
        """A ready worker, or (None, the error every call gets).

        Failures before the worker announces ``loading`` are the sandbox's
        (raised as SandboxError); after it, they are the submitted module's.
        """
        worker = _Worker(sandbox.spawn(argv, cwd=WORKSPACE), memory_cap_watch(sandbox))
        deadline = time.monotonic() + self.import_timeout
        try:
            hello = worker.read(deadline)
        except WorkerGone as gone:
            raise SandboxError(f"rule worker did not start: {gone}") from None
        if hello is None or not hello.get("loading"):
            worker.proc.kill()
            detail = "no answer" if hello is None else hello.get("error")
            raise SandboxError(f"rule worker did not start: {detail}")
        worker.pid = hello.get("pid")
        try:
            reply = worker.read(min(deadline, self._budget_end))
        except WorkerGone as gone:
            return None, f"import failed: {gone}"
        if reply is None:
            worker.proc.kill()
            if time.monotonic() >= self._budget_end:
                return None, f"rule budget of {self.budget:g}s spent"
            return None, f"import timeout after {self.import_timeout:g}s"
        if reply.get("error"):
            worker.close()
            return None, str(reply["error"])
        return worker, None

    def _run_all(self, sandbox, argv: list[str], samples: list[bytes]) -> list[CallResult]:
        """One result per sample; a run being stopped (SIGINT, SIGTERM) destroys ``sandbox`` at once and
        raises :class:`harness.interrupt.Interrupted` here."""
        started = time.monotonic()
        self._budget_end = started + max(0.0, self.budget - self.spent)
        stop = getattr(sandbox, "destroy", None) or getattr(sandbox, "recycle")  # kills the worker, now
        try:
            with interrupt.guard(stop):
                return self._calls(sandbox, argv, samples)
        finally:
            self.spent += time.monotonic() - started

    def _calls(self, sandbox, argv: list[str], samples: list[bytes]) -> list[CallResult]:
        results: list[CallResult] = []
        worker: _Worker | None = None
        fatal: str | None = None
        try:
            for sample in samples:
                interrupt.check()
                if time.monotonic() >= self._budget_end:
                    fatal = f"rule budget of {self.budget:g}s spent"
                if fatal is None and worker is None:
                    worker, fatal = self._start(sandbox, argv)
                if fatal is not None:
                    results.append(CallResult(error=fatal))
                    continue
                result, alive = self._call(worker, sample)
                interrupt.check()  # a worker killed by the stop answers nothing
                results.append(result)
                if not alive:
                    worker = None
        finally:
            if worker is not None:
                worker.proc.kill() if interrupt.stopping() else worker.close()
        return results

    def _call(self, worker: _Worker, sample: bytes) -> tuple[CallResult, bool]:
        deadline = min(time.monotonic() + self.call_timeout, self._budget_end)
        try:
            reply = worker.request(sample, deadline)
        except WorkerGone as gone:
            worker.proc.kill()
            return CallResult(error=str(gone)), False
        if reply is None:
            worker.proc.kill()
            if time.monotonic() >= self._budget_end:
                return CallResult(error=f"rule budget of {self.budget:g}s spent"), False
            return CallResult(error=f"timeout after {self.call_timeout:g}s"), False
        if reply.get("ok"):
            return CallResult(value=reply.get("value")), True
        kind, msg = reply.get("type") or "Error", reply.get("error") or ""
        return CallResult(error=f"{kind}: {msg}" if msg else kind), True


def make_runner(backend: SandboxBackend | None = None, limits: Limits | None = None, call_timeout: float = 60.0,
                memory_mb: int = 2048, *, import_timeout: float = 120.0,
                budget: float = DEFAULT_RULE_BUDGET) -> SubmissionRunner:
    """A :class:`SubmissionRunner` for programmatic-mode scoring.

    ``backend``: the episode's sandbox backend.  A backend that declares its own
    way (:meth:`SandboxBackend.submission_runner`, e.g. the agent image for
    Docker) is used; otherwise rule workers need a backend that
    ``runs_rule_workers`` (bubblewrap, unshare, or an explicit ``none``); for
    any other backend or None, the best available of bubblewrap and unshare is used.  ``limits`` None: ``Limits(pids=WORKER_PIDS)``.  Raises
    SandboxUnavailable when neither local backend runs here.
    """
    declared = (backend.submission_runner(limits, call_timeout, memory_mb, import_timeout, budget)
                if backend else None)
    if declared is not None:
        return declared
    if backend is None or not backend.runs_rule_workers:
        from harness.sandbox import choose_backend
        from harness.sandbox.errors import SandboxUnavailable

        reasons = []
        for name in ("bubblewrap", "unshare"):
            try:
                backend = choose_backend(name)
                break
            except SandboxUnavailable as exc:
                reasons.append(str(exc))
        else:
            raise SandboxUnavailable("no local sandbox for rule evaluation: " + "; ".join(reasons))
    return SandboxedSubmissionRunner(backend, limits or Limits(pids=WORKER_PIDS), call_timeout, memory_mb,
                                     import_timeout, budget)
