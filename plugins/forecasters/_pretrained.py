"""Shared by the pretrained time-series forecasters (Dr-CiK §5.1 and Appendix G "Forecasters"):
options, model location, device, seeding, batching and quantile-to-path sampling.

Each family (``timesfm``, ``tirex``, ``moirai``, ``moirai-moe``, ``toto``, ``aurora``) subclasses
:class:`PretrainedForecaster` and implements :meth:`~PretrainedForecaster.load` (the family's own
``from_pretrained``-style call, the same for a Hugging Face id and a local folder) and either
:meth:`~PretrainedForecaster.predict_quantiles` (models that output quantiles) or
:meth:`~PretrainedForecaster.predict_samples` (models that draw sample paths).

Options common to every family: ``model`` (a Hugging Face id or a local folder; default the family's
:attr:`default_model`, overridden by ``$HARNESS_<FAMILY>_MODEL``), ``device`` (``auto``: CUDA when
torch sees a GPU, else CPU; ``cpu``; ``cuda``), ``weights`` (``random-init`` flags untrained
weights; read from the model's ``config.json`` field ``harness_weights`` when not given) and
``batch_size`` (requests per model call, default :data:`BATCH_SIZE`; see "Batching").

Quantile-only models (TimesFM, TiRex, Moirai 2.0, Chronos-Bolt/Chronos-2): the S paths are drawn
from the model's per-step quantiles by :func:`paths_from_quantiles`, one uniform level per path
shared by all steps (see there for why).  Sample-path models (Moirai-MoE, Toto, Aurora) draw their
own S paths under ``torch.manual_seed(request.seed)`` inside ``torch.random.fork_rng``.

Batching (the contract's ``batch_size`` / ``forecast_batch``): a quantile model gets up to
``batch_size`` requests per call, those with the same :meth:`~PretrainedForecaster.batch_key` (the same
horizon and history length: the batches the packages compute bit for bit as they compute one series;
TiRex: the same history length, at the longest horizon, each request keeping its first steps);
each request's paths still come from its own seed, so a request's forecast does not depend on its batch.
If the package raises on a batch, each of its requests is retried alone: the series that raised fails,
the others are forecast.  A batch's time limit is the sum of its requests' (each brings its own).
Sample-path models run one request at a time (``batch_size`` 1), as their sampling would share one
RNG stream across a batch and a path would depend on its batch.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness import Forecast, Forecaster, ForecastError, ForecastRequest, lazy_module
from tsagent_plugins.forecasters._common import Deadline, check_request

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

RANDOM_INIT = "random-init"
PRETRAINED = "pretrained"
WEIGHTS_FIELD = "harness_weights"
#: A file beside the weights saying ``{"harness_weights": "random-init"}`` (config.json belongs to the family).
MARKER = "harness.json"
DEVICES = ("auto", "cpu", "cuda")
COMMON_OPTIONS = ("model", "device", "weights", "batch_size")
#: Requests per model call (option ``batch_size``): 16 series of a few thousand points fit a CPU's cache-friendly
#: forward pass of the small released models; raise it on a GPU.
BATCH_SIZE = 16
#: Where hub ids are downloaded from (probed once before a download is attempted).
HUB_HOST = ("huggingface.co", 443)

_MODELS: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the model hub answers a TCP connection (False at once with ``HF_HUB_OFFLINE=1``)."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    import socket

    try:
        with socket.create_connection(HUB_HOST, timeout=timeout):
            return True
    except OSError:
        return False


def paths_from_quantiles(levels, quantiles, n_samples: int, seed: int) -> np.ndarray:
    """S sample paths (S, H) from per-step quantiles ``quantiles`` (K, H) at ``levels`` (K,).

    Each path s gets one level u_s ~ U(0, 1) (``numpy.random.default_rng(seed)``) and is the
    model's quantile function at u_s at every step: the marginal at each step follows the model's
    quantiles (what sCRPS scores), and a path stays on one side of the median instead of jumping
    between quantile levels step to step (the model gives no dependence between steps; this is the
    comonotone choice, the one that keeps the spread of cumulative sums as wide as the quantiles
    say).  Between levels the quantile function is linear; below the lowest and above the highest
    level it is extended linearly with the slope of the outermost segment (a flat extension would
    draw no path outside the model's 10-90 % band).  Quantiles crossing at a step are sorted first.
    """
    levels = np.asarray(levels, dtype=float)
    q = np.sort(np.asarray(quantiles, dtype=float), axis=0)
    if q.ndim != 2 or q.shape[0] != len(levels) or len(levels) < 2:
        raise ValueError(f"quantiles {q.shape} do not match {len(levels)} levels")
    order = np.argsort(levels)
    levels, q = levels[order], q[order]
    u = np.random.default_rng(seed).uniform(0.0, 1.0, size=n_samples)
    k = np.clip(np.searchsorted(levels, u) - 1, 0, len(levels) - 2)        # segment of each u
    lo, hi = levels[k], levels[k + 1]
    weight = ((u - lo) / (hi - lo))[:, None]                                 # <0 or >1 outside: extension
    return q[k] + weight * (q[k + 1] - q[k])


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; ForecastError for ``cuda`` without one."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ForecastError("device 'cuda' asked for, but torch sees no GPU (use device: auto or cpu)")
    return device


@contextlib.contextmanager
def seeded(torch, seed: int, threads: int | None = None):
    """Torch RNG seeded with ``seed`` (the global state restored afterwards), inference mode."""
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        with torch.random.fork_rng(devices=[]), torch.inference_mode():
            torch.manual_seed(int(seed))
            yield
    finally:
        torch.set_num_threads(before)


class PretrainedForecaster(Forecaster):
    """A pretrained time-series model from its family's own package; see the module docstring.

    Subclasses set :attr:`name`, :attr:`family` (the README's family name), :attr:`modules` (the
    modules the family imports), :attr:`install` (the install command), :attr:`default_model` and
    :attr:`extra_options`.
    """

    name: ClassVar[str]
    family: ClassVar[str]
    modules: ClassVar[tuple[str, ...]] = ()
    install: ClassVar[str] = ""
    default_model: ClassVar[str] = ""
    extra_options: ClassVar[dict[str, Any]] = {}
    uses_context = False
    submission_type = "ts_model"
    #: whether the model outputs quantiles (paths drawn by paths_from_quantiles) or sample paths
    quantile_model: ClassVar[bool] = True

    def __init__(self, model: str | os.PathLike | None = None, *, device: str = "auto",
                 weights: str | None = None, batch_size: int = BATCH_SIZE, **options: Any):
        if device not in DEVICES:
            raise ValueError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
        if weights not in (None, RANDOM_INIT, PRETRAINED):
            raise ValueError(f"weights must be {RANDOM_INIT!r} or {PRETRAINED!r}, got {weights!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
        unknown = sorted(set(options) - set(self.extra_options))
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)} (known: {', '.join(self.option_names())})")
        self._model = str(model) if model is not None else None
        self.device = device
        self.weights = weights
        self._batch_size = batch_size
        self.options = {**self.extra_options, **options}

    # options ------------------------------------------------------------------------------------
    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return COMMON_OPTIONS + tuple(cls.extra_options)

    @classmethod
    def model_env(cls) -> str:
        return "HARNESS_" + cls.name.upper().replace("-", "_") + "_MODEL"

    @property
    def batch_size(self) -> int:  # type: ignore[override]  # the contract's capability, set by an option
        """Requests per model call: the ``batch_size`` option for quantile models, 1 for sample-path models
        (their paths are drawn one request at a time; see the module docstring)."""
        return self._batch_size if self.quantile_model else 1

    @property
    def model(self) -> str:
        """The configured model: the option, else ``$HARNESS_<NAME>_MODEL``, else the default hub id."""
        return self._model or os.environ.get(self.model_env()) or self.default_model

    def configured(self, **options: Any) -> "PretrainedForecaster":
        """A copy with ``options`` changed; ValueError naming unknown ones."""
        unknown = sorted(set(options) - set(self.option_names()))
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)} (known: {', '.join(self.option_names())})")
        current = {"model": self._model, "device": self.device, "weights": self.weights,
                   "batch_size": self._batch_size, **self.options}
        return type(self)(**{**current, **options})

    # loading ------------------------------------------------------------------------------------
    @classmethod
    def import_family(cls) -> dict[str, Any]:
        """The family's modules by name; ForecastError with the install command when one is missing."""
        found = {}
        for module in ("torch", *cls.modules):
            try:
                found[module] = importlib.import_module(module)
            except ImportError as exc:
                raise ForecastError(f"{cls.name} is not installed ({exc}); install: {cls.install}") from None
        return found

    @classmethod
    def installed(cls) -> bool:
        try:
            cls.import_family()
        except ForecastError:
            return False
        return True

    def locate(self) -> str:
        """The model as something loadable: a local folder, a cached hub id, or a hub id with the hub
        reachable; ForecastError at once otherwise (the harness never waits on an offline download)."""
        model = self.model
        path = Path(model).expanduser()
        if path.exists():
            return str(path)
        if path.is_absolute() or model.startswith((".", "~")) or model.count("/") != 1:
            raise ForecastError(f"{self.name}: model {model!r} is no such folder nor a Hugging Face id")
        try:
            from huggingface_hub import snapshot_download

            return snapshot_download(model, local_files_only=True)
        except Exception:  # noqa: BLE001 - not cached: the hub is tried below
            pass
        if not hub_reachable():
            raise ForecastError(f"{self.name}: model {model!r} is not a local folder nor in the Hugging Face cache, "
                                f"and {HUB_HOST[0]} is unreachable (offline): pass a downloaded model folder "
                                f"(option model=PATH or ${self.model_env()})")
        return model

    def loaded(self) -> tuple[Any, str]:
        """(the family's model object, the device), loaded once per (class, model, device, options)."""
        mods = self.import_family()
        device = resolve_device(self.device)
        key = (type(self).__name__, self.model, device, self._batch_size,
               json.dumps(self.options, sort_keys=True, default=str))
        with _LOCK:
            if key not in _MODELS:
                source = self.locate()
                _quiet()
                try:
                    with contextlib.redirect_stdout(io.StringIO()):   # packages that print while loading
                        _MODELS[key] = self.load(mods, source, device)
                except ForecastError:
                    raise
                except Exception as exc:  # noqa: BLE001 - file, config and hub errors alike
                    raise ForecastError(f"cannot load {self.name} model {self.model!r}: "
                                        f"{type(exc).__name__}: {exc}") from None
            return _MODELS[key], device

    def load(self, mods: dict[str, Any], source: str, device: str) -> Any:
        """The family's loaded model from ``source`` (a local folder or a hub id) on ``device``."""
        raise NotImplementedError

    def weights_of(self, source: str) -> str:
        if self.weights:
            return self.weights
        value = None
        for name in (MARKER, "config.json"):
            try:
                value = value or json.loads((Path(source) / name).read_text(encoding="utf-8")).get(WEIGHTS_FIELD)
            except (OSError, ValueError, AttributeError):
                pass
        return RANDOM_INIT if value == RANDOM_INIT else PRETRAINED

    # predicting ---------------------------------------------------------------------------------
    def predict_quantiles(self, handle: Any, contexts: list[np.ndarray], horizon: int,
                          requests: list[ForecastRequest]) -> tuple[np.ndarray, np.ndarray]:
        """(levels (K,), quantiles (B, K, H)) for the B ``contexts`` (quantile models)."""
        raise NotImplementedError

    def predict_samples(self, handle: Any, context: np.ndarray, horizon: int,
                        request: ForecastRequest) -> np.ndarray:
        """(S, H) sample paths for one request (sample-path models), under the seeded torch RNG."""
        raise NotImplementedError

    def describe(self, handle: Any) -> dict[str, Any]:
        """Model facts recorded in each forecast's ``info`` (context length, patch sizes...)."""
        return {}

    def forecast(self, request: ForecastRequest) -> Forecast:
        result = self.forecast_batch([request])[0]
        if isinstance(result, Exception):
            raise result
        return result

    def forecast_batch(self, requests: list[ForecastRequest]) -> list[Forecast | Exception]:
        """The forecasts of ``requests`` (see the module docstring, "Batching"): per request a
        :class:`~harness.Forecast` or the exception that failed it (ForecastError: not installed, model not
        loadable, bad history, time limit, bad output; another type: the package raised on that series)."""
        out: list[Forecast | Exception | None] = [None] * len(requests)
        checked: dict[int, tuple[np.ndarray, int]] = {}
        for i, request in enumerate(requests):
            try:
                checked[i] = check_request(request)
            except ForecastError as exc:
                out[i] = exc
        if checked:
            try:
                self._forecast_checked(requests, checked, out)
            except ForecastError as exc:   # not installed, not loadable, no time left: every request left fails
                for i in checked:
                    out[i] = exc if out[i] is None else out[i]
        return out  # type: ignore[return-value]

    def batch_key(self, context: np.ndarray, horizon: int) -> tuple:
        """Requests with equal keys go through the model in one call, at the longest of their horizons (each
        request keeps the first steps it asked for).  Default: the same horizon and history length, the
        batches whose outputs the packages compute exactly as for one series (padding a shorter history to a
        longer one's length changes TimesFM 3's float32 quantiles by up to 4e-4).  A family whose first h
        steps of a longer forecast are its h-step forecast may leave the horizon out."""
        return horizon, len(context)

    def _forecast_checked(self, requests: list[ForecastRequest], checked: dict[int, tuple[np.ndarray, int]],
                          out: list) -> None:
        deadline = Deadline(sum(requests[i].time_limit for i in checked))   # each request brings its own time
        handle, device = self.loaded()
        torch = self.import_family()["torch"]
        if deadline.expired():
            raise ForecastError(f"{self.name}: time limit of {deadline.end - deadline.start:g} s reached "
                                "before the model ran")
        source = self.locate()
        base_info = {"uses_context": self.uses_context, "model": self.model, "device": device,
                     "weights": self.weights_of(source), **self.describe(handle)}
        base_info["flag_untrained"] = base_info["weights"] == RANDOM_INIT
        threads = 1 if device == "cpu" else None
        if not self.quantile_model:
            for i, (y, horizon) in checked.items():
                try:
                    if deadline.expired():
                        raise ForecastError(f"{self.name}: time limit reached before this forecast "
                                            f"({deadline.elapsed():.2f} s into its batch)")
                    with seeded(torch, requests[i].seed, threads):
                        paths = self.predict_samples(handle, y, horizon, requests[i])
                    out[i] = self._finish(paths, requests[i], horizon, base_info, deadline, 1)
                except Exception as exc:  # noqa: BLE001 - this request only
                    out[i] = exc
            return
        groups: dict[tuple, list[int]] = {}
        for i, (y, horizon) in checked.items():
            groups.setdefault(self.batch_key(y, horizon), []).append(i)
        for idx in groups.values():
            for start in range(0, len(idx), self.batch_size):
                self._quantile_batch(handle, torch, threads, requests, checked, idx[start:start + self.batch_size],
                                     base_info, deadline, out)

    def _quantile_batch(self, handle, torch, threads, requests, checked, idx, base_info, deadline, out) -> None:
        """One model call for the requests ``idx`` (one batch key) at their longest horizon; if the package
        raises, each request is retried alone, so the series that raised fails and the others are forecast."""
        horizon = max(checked[i][1] for i in idx)
        try:
            if deadline.expired():
                raise ForecastError(f"{self.name}: time limit reached before this forecast "
                                    f"({deadline.elapsed():.2f} s into its batch)")
            with seeded(torch, 0, threads):
                levels, q = self.predict_quantiles(handle, [checked[i][0] for i in idx], horizon,
                                                   [requests[i] for i in idx])
        except Exception as exc:  # noqa: BLE001 - isolated below
            if len(idx) == 1:
                out[idx[0]] = exc
                return
            for i in idx:
                self._quantile_batch(handle, torch, threads, requests, checked, [i], base_info, deadline, out)
            return
        for j, i in enumerate(idx):
            try:
                own = checked[i][1]
                paths = paths_from_quantiles(levels, np.asarray(q[j])[:, :own], requests[i].n_samples,
                                             requests[i].seed)
                out[i] = self._finish(paths, requests[i], own, base_info, deadline, len(idx))
            except Exception as exc:  # noqa: BLE001 - this request only
                out[i] = exc

    def _finish(self, paths: np.ndarray, request: ForecastRequest, horizon: int, base_info: dict,
                deadline: Deadline, batch: int) -> Forecast:
        paths = np.asarray(paths, dtype=float)
        if deadline.expired():
            raise ForecastError(f"{self.name}: time limit of {request.time_limit:g} s reached "
                                f"({deadline.elapsed():.2f} s)")
        if paths.shape != (request.n_samples, horizon) or not np.isfinite(paths).all():
            raise ForecastError(f"{self.name} returned paths of shape {paths.shape} (expected "
                                f"{(request.n_samples, horizon)}) or non-finite values")
        info = {**base_info, "context_ignored": (request.context is not None and not self.uses_context),
                "n_history": len(request.history), "batch": batch, "time_s": round(deadline.elapsed(), 4)}
        return Forecast(samples=paths, info=info)


def _quiet() -> None:
    """No progress bars or advice from transformers / huggingface_hub in run output."""
    import logging

    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:
        pass
    for name in ("chronos", "uni2ts", "toto", "tirex", "timesfm", "lightning", "huggingface_hub"):
        logging.getLogger(name).setLevel(logging.ERROR)


def mark_random_init(folder: Path | str) -> Path:
    """Write ``folder/harness.json`` saying ``"harness_weights": "random-init"``, so every forecast from
    the folder is flagged untrained (tiny test checkpoints); the family's own files are left as saved."""
    folder = Path(folder)
    (folder / MARKER).write_text(json.dumps({WEIGHTS_FIELD: RANDOM_INIT}) + "\n", encoding="utf-8")
    return folder
