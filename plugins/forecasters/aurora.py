"""``aurora``: Aurora (Wu et al., ICLR 2026; Dr-CiK Appendix G "Forecasters"), the authors' ``aurora-model``
package, run in an environment of its own through a subprocess worker (:mod:`.aurora_worker`).

Why a separate environment: the package imports torchvision at module level, and no torchvision from PyPI
imports beside the harness's CPU torch 2.13.0 (README, "Aurora").  ``scripts/install-forecasters.sh
aurora`` makes a virtual environment (default ``$HARNESS_CACHE_DIR/envs/aurora``, else
``~/.cache/harness/envs/aurora``) with the pins of ``aurora_requirements.txt``: torch 2.14.1 and
torchvision 0.29.1 (a CUDA build that runs on the CPU), aurora-model 0.2.0 and transformers 4.57.6
(aurora-model asks for transformers >= 4.50; 5.x fails to load it: ``AuroraForPrediction`` never calls
``post_init``, so ``all_tied_weights_keys`` is missing).

The harness talks to the worker as to any forecaster: :class:`AuroraForecaster` implements the forecaster
contract, starts the worker once per (interpreter, model, device) with the environment's Python in
isolated mode (``-I``: the worker's own folder, which holds this module named ``aurora``, is not on its
path, so ``import aurora`` finds the package), and sends
each request as one JSON line (history values, horizon, S, seed, the text context).  Aurora is multimodal:
it reads the text context (``uses_context``), tokenized by its BERT tokenizer (at most 125 tokens), and
draws its own S paths with its flow-matching head under ``torch.manual_seed(request.seed)``, one request
at a time.  Options: those of every pretrained family (``model``: a folder saved with ``save_pretrained``
or a Hugging Face id, default ``DecisionIntelligence/Aurora``) and ``python`` (the worker environment's
interpreter; default ``$HARNESS_AURORA_PYTHON``, else the script's environment).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import Forecast, ForecastError, ForecastRequest, hookimpl, lazy_module
from harness.sandboxing import cache_root
from tsagent_plugins.forecasters._common import Deadline
from tsagent_plugins.forecasters._pretrained import RANDOM_INIT, PretrainedForecaster

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

WORKER = Path(__file__).with_name("aurora_worker.py")
REQUIREMENTS = Path(__file__).with_name("aurora_requirements.txt")
PYTHON_ENV = "HARNESS_AURORA_PYTHON"
#: seconds the worker may take to start and load a model
LOAD_TIMEOUT = 600.0

_WORKERS: dict[tuple, "Worker"] = {}
_LOCK = threading.Lock()


def default_python() -> Path:
    """The worker environment's interpreter: ``$HARNESS_AURORA_PYTHON``, else the one
    ``scripts/install-forecasters.sh aurora`` makes under the harness cache."""
    if os.environ.get(PYTHON_ENV):
        return Path(os.environ[PYTHON_ENV])
    return cache_root() / "envs" / "aurora" / "bin" / "python"


class Worker:
    """One worker process: JSON lines in, JSON lines out, one answer per message, serialised by a lock."""

    def __init__(self, python: Path, model: str, device: str):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        self.process = subprocess.Popen([str(python), "-I", str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, env=env)
        self.lock = threading.Lock()
        self.info = self.ask({"op": "load", "model": model, "device": device, "threads": 1},
                             LOAD_TIMEOUT)["info"]

    def ask(self, message: dict, timeout: float) -> dict:
        """The worker's answer to ``message``; ForecastError when it fails, dies or exceeds ``timeout``."""
        with self.lock:
            if self.process.poll() is not None:
                raise ForecastError(f"aurora worker exited (code {self.process.returncode})")
            assert self.process.stdin is not None and self.process.stdout is not None
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
            answer: list[str] = []
            reader = threading.Thread(target=lambda: answer.append(self.process.stdout.readline()), daemon=True)
            reader.start()
            reader.join(max(timeout, 0.0))
            if reader.is_alive():
                self.close()
                raise ForecastError(f"aurora worker gave no answer within {timeout:g} s (stopped)")
        if not answer or not answer[0]:
            raise ForecastError(f"aurora worker exited (code {self.process.poll()})")
        reply = json.loads(answer[0])
        if not reply.get("ok"):
            raise ForecastError(f"aurora: {reply.get('error')}")
        return reply

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class AuroraForecaster(PretrainedForecaster):
    """Aurora sample paths from its own environment's worker; reads the text context."""

    name = "aurora"
    family = "Aurora"
    install = "bash scripts/install-forecasters.sh aurora"
    default_model = "DecisionIntelligence/Aurora"
    extra_options = {"python": None}
    uses_context = True
    quantile_model = False

    @property
    def python(self) -> Path:
        return Path(self.options["python"]) if self.options.get("python") else default_python()

    @classmethod
    def import_family(cls) -> dict[str, Any]:
        """Nothing is imported here: the package lives in the worker's environment (checked there)."""
        python = cls().python
        if not python.exists():
            raise ForecastError(f"aurora is not installed: no worker environment at {python} "
                                f"(${PYTHON_ENV} or option python=...); install: {cls.install}")
        return {}

    def installed(self) -> bool:  # type: ignore[override]  # the instance's own interpreter option
        return self.python.exists()

    def loaded(self) -> tuple[Worker, str]:
        if not self.python.exists():
            raise ForecastError(f"aurora is not installed: no worker environment at {self.python} "
                                f"(${PYTHON_ENV} or option python=...); install: {self.install}")
        key = (str(self.python), self.model, self.device)
        with _LOCK:
            worker = _WORKERS.get(key)
            if worker is None or worker.process.poll() is not None:
                source = self.locate()
                try:
                    worker = Worker(self.python, source, self.device)
                except OSError as exc:
                    raise ForecastError(f"cannot start the aurora worker with {self.python}: {exc}") from None
                except ForecastError as exc:
                    raise ForecastError(f"cannot load aurora model {self.model!r}: {exc}") from None
                _WORKERS[key] = worker
        return worker, worker.info["device"]

    def _forecast_checked(self, requests: list[ForecastRequest], checked: dict[int, tuple[np.ndarray, int]],
                          out: list) -> None:
        deadline = Deadline(sum(requests[i].time_limit for i in checked))
        worker, device = self.loaded()
        source = self.locate()
        weights = self.weights_of(source)
        base_info = {"uses_context": True, "model": self.model, "weights": weights,
                     "flag_untrained": weights == RANDOM_INIT, **worker.info}
        for i, (y, horizon) in checked.items():
            request = requests[i]
            try:
                if deadline.expired():
                    raise ForecastError(f"{self.name}: time limit reached before this forecast")
                reply = worker.ask({"op": "forecast", "history": [float(v) for v in y], "horizon": int(horizon),
                                    "n_samples": int(request.n_samples), "seed": int(request.seed),
                                    "context": request.context}, deadline.remaining())
                forecast = self._finish(np.asarray(reply["samples"], dtype=float), request, horizon, base_info,
                                        deadline, 1)
                out[i] = Forecast(samples=forecast.samples,
                                  info={**forecast.info, "context_ignored": False})
            except Exception as exc:  # noqa: BLE001 - this request only
                out[i] = exc


def close_workers() -> None:
    """Stop every worker this process started (they also end with it: their stdin closes)."""
    with _LOCK:
        for worker in _WORKERS.values():
            worker.close()
        _WORKERS.clear()


def build_tiny_model(folder: Path | str, *, python: Path | str | None = None, seed: int = 0) -> Path:
    """A tiny randomly initialised Aurora saved under ``folder`` by Aurora's own classes and
    ``save_pretrained`` in the worker's environment (:func:`.aurora_worker.build_tiny_model`), flagged
    ``random-init``.  No download."""
    python = Path(python) if python else default_python()
    proc = subprocess.run([str(python), "-I", str(WORKER), "--build-tiny", str(folder), str(seed)], capture_output=True,
                          text=True, timeout=LOAD_TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"building a tiny Aurora failed: {proc.stderr.strip()[-2000:]}")
    return Path(folder)


@hookimpl
def register_forecasters(register):
    register(AuroraForecaster())


__all__ = ["AuroraForecaster", "build_tiny_model", "close_workers", "default_python"]
