"""``chronos``: Chronos sample paths (Ansari et al., 2024; Dr-CiK Appendix G "Forecasters").

Uses the chronos-forecasting package's pipelines, loaded with
``BaseChronosPipeline.from_pretrained(path_or_id, device_map=device)``: the
original T5-based Chronos models sample token paths autoregressively; Chronos-Bolt
and Chronos-2 (the pipeline class a model's ``config.json`` names) return the
quantiles they were trained on, from which the S paths are drawn by
:func:`tsagent_plugins.forecasters._pretrained.paths_from_quantiles` (one level
per path, from ``request.seed``).  Optional extra: ``pip install -e '.[chronos]'`` (torch CPU build); without it
:meth:`ChronosForecaster.forecast` raises :class:`ForecastError` saying so.

Per request: the last ``context_length`` history points (the model's, 512 for
the released models) are the context; S = ``request.n_samples`` paths are drawn
with the model's sampling settings (temperature, top-k, top-p); horizons past
the model's ``prediction_length`` (64) are forecast in chunks, each chunk's
median path appended to the context (as the package does), and the time limit
is checked before each chunk: a forecast that cannot finish in time is a
:class:`ForecastError` (no fallback).  Sampling is seeded by ``request.seed``
inside ``torch.random.fork_rng`` (the global torch RNG is left as it was).

The model: a local folder of weights (e.g. a download of ``amazon/chronos-t5-small``),
from the option ``model`` (a Dr-CiK spec's forecaster options, or the ``options`` of an
agent profile with ``agent: chronos``), else ``$HARNESS_CHRONOS_MODEL``.  Without one,
or when it is not a folder, each forecast fails with that reason: the harness never
downloads weights (runs must be reproducible offline).  A model whose ``config.json`` says
``"harness_weights": "random-init"`` (see :func:`build_tiny_model`), or the
option ``weights="random-init"``, is not pretrained: its forecasts carry
``info["weights"] = "random-init"`` and ``info["flag_untrained"] = True``, the
results rows a true ``flag_untrained`` column, and ``harness report`` refuses them.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import Forecast, Forecaster, ForecastError, ForecastRequest, lazy_module
from harness import hookimpl
from tsagent_plugins.forecasters._pretrained import HUB_HOST, hub_reachable
from tsagent_plugins.forecasters._common import Deadline, check_request

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

MODEL_ENV = "HARNESS_CHRONOS_MODEL"
#: The one reason given when no local weights are configured (forecasts fail, conformance tests skip).
NO_LOCAL_WEIGHTS = ("no local Chronos weights configured: set the forecaster option model (or an agent profile's "
                    f"options.model) or ${MODEL_ENV} to a model folder")
RANDOM_INIT = "random-init"
PRETRAINED = "pretrained"
WEIGHTS_FIELD = "harness_weights"
INSTALL_HINT = "pip install -e '.[chronos]' (with the CPU build of torch)"
OPTIONS = ("model", "weights", "temperature", "top_k", "top_p", "device")
#: Pipelines that output quantiles (their S paths are drawn from them).
QUANTILE_PIPELINES = ("ChronosBoltPipeline", "Chronos2Pipeline")

_PIPELINES: dict[str, Any] = {}
_LOCK = threading.Lock()


def _import():
    """(torch, BaseChronosPipeline); ForecastError naming the install line when missing."""
    try:
        import torch
        from chronos import BaseChronosPipeline
    except ImportError as exc:
        raise ForecastError(f"chronos needs torch and chronos-forecasting ({exc}); install: {INSTALL_HINT}") from None
    _quiet_transformers()
    return torch, BaseChronosPipeline


def _quiet_transformers() -> None:
    """No progress bars or length advice from transformers/chronos in run output."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover - transformers comes with chronos-forecasting
        pass
    import logging

    logging.getLogger("chronos").setLevel(logging.ERROR)


def _pipeline_class(model: str) -> str:
    """The pipeline a local model's config.json names (the original Chronos has none)."""
    config = Path(model) / "config.json"
    if not config.is_file():
        return "ChronosPipeline"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ForecastError(f"{config}: unreadable model config ({exc})") from None
    return str(data.get("chronos_pipeline_class") or "ChronosPipeline")


def locate(model: str) -> str:
    """``model`` as something loadable here: a local folder, a hub id already in the local cache,
    or a hub id when the hub is reachable.  Otherwise :class:`ForecastError` at once (one line,
    no download retries) saying how to give a local copy."""
    if Path(model).exists():
        return model
    if Path(model).is_absolute() or model.startswith((".", "~")):
        raise ForecastError(f"cannot load Chronos model {model!r}: no such folder")
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(model, local_files_only=True)
    except Exception:  # noqa: BLE001 - not cached (or no hub client): try the network below
        pass
    if not hub_reachable():
        raise ForecastError(f"chronos: model {model!r} is not a local folder nor in the Hugging Face cache, and "
                            f"{HUB_HOST[0]} is unreachable (offline): pass a downloaded model folder "
                            f"(option model=PATH or ${MODEL_ENV})")
    return model


def load_pipeline(model: str, device: str = "cpu"):
    """``BaseChronosPipeline.from_pretrained(model, device_map=device)``, cached per (model, device).

    Raises :class:`ForecastError` when the packages are missing, the model cannot
    be loaded (e.g. a hub id on an offline machine), or its pipeline class is unknown.
    """
    with _LOCK:
        if (model, device) in _PIPELINES:
            return _PIPELINES[model, device]
        source = locate(model)
        _, BaseChronosPipeline = _import()
        kind = _pipeline_class(source)
        if kind not in ("ChronosPipeline", *QUANTILE_PIPELINES):
            raise ForecastError(f"{model}: unknown Chronos pipeline class {kind!r}")
        try:
            pipeline = BaseChronosPipeline.from_pretrained(source, device_map=device)
        except Exception as exc:  # noqa: BLE001 - hub, file and config errors alike
            raise ForecastError(f"cannot load Chronos model {model!r}: {type(exc).__name__}: {exc}") from None
        _PIPELINES[model, device] = pipeline
        return pipeline


class ChronosForecaster(Forecaster):
    """Chronos (T5) sample paths; ignores the text context.  See the module docstring.

    ``model``: a local model folder (default: ``$HARNESS_CHRONOS_MODEL``).  ``weights``: ``random-init`` to flag untrained
    weights (default: read from the model's config).  ``temperature``, ``top_k``,
    ``top_p``: sampling overrides of the T5 models (default: the model's).  ``device``: ``auto``, ``cpu``
    (default) or ``cuda``.
    """

    name = "chronos"
    uses_context = False
    submission_type = "ts_model"

    def __init__(self, model: str | os.PathLike | None = None, *, weights: str | None = None,
                 temperature: float | None = None, top_k: int | None = None, top_p: float | None = None,
                 device: str = "cpu"):
        if device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be one of auto, cpu, cuda, got {device!r}")
        self.device = device
        if weights not in (None, RANDOM_INIT, PRETRAINED):
            raise ValueError(f"weights must be {RANDOM_INIT!r} or {PRETRAINED!r}, got {weights!r}")
        self._model = str(model) if model is not None else None
        self.weights = weights
        self.temperature, self.top_k, self.top_p = temperature, top_k, top_p

    @property
    def model(self) -> str | None:
        return self._model or os.environ.get(MODEL_ENV) or None

    def local_model(self) -> str:
        """The configured local model folder; ForecastError naming where to configure it otherwise."""
        model = self.model
        if model is None:
            raise ForecastError(NO_LOCAL_WEIGHTS)
        if not Path(model).expanduser().is_dir():
            raise ForecastError(f"Chronos model {model!r} is not a local folder ({NO_LOCAL_WEIGHTS})")
        return str(Path(model).expanduser())

    def configured(self, **options: Any) -> "ChronosForecaster":
        """A copy with ``options`` (names in :data:`OPTIONS`) changed; ValueError for unknown ones."""
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)} (known: {', '.join(OPTIONS)})")
        current = {"model": self._model, "weights": self.weights, "temperature": self.temperature,
                   "top_k": self.top_k, "top_p": self.top_p, "device": self.device}
        return ChronosForecaster(**{**current, **options})

    def weights_of(self, pipeline) -> str:
        if self.weights:
            return self.weights
        value = getattr(pipeline.inner_model.config, WEIGHTS_FIELD, None)
        return RANDOM_INIT if value == RANDOM_INIT else PRETRAINED

    def forecast(self, request: ForecastRequest) -> Forecast:
        y, horizon = check_request(request)
        deadline = Deadline(request.time_limit)
        folder = self.local_model()  # no local model fails here at once, before torch
        from tsagent_plugins.forecasters._pretrained import resolve_device

        device = resolve_device(self.device)
        pipeline = load_pipeline(folder, device)
        if type(pipeline).__name__ in QUANTILE_PIPELINES:
            return self._forecast_quantiles(pipeline, y, horizon, request, deadline, device)
        torch, _ = _import()
        config = pipeline.model.config
        weights = self.weights_of(pipeline)
        info: dict[str, Any] = {"uses_context": False, "context_ignored": request.context is not None,
                                "model": self.model, "weights": weights,
                                "flag_untrained": weights == RANDOM_INIT,
                                "context_length": config.context_length, "chunk": config.prediction_length,
                                "n_history": len(y), "device": device}
        context = torch.tensor(y[-config.context_length:], dtype=torch.float32).unsqueeze(0)
        pieces = []
        remaining = horizon
        with torch.random.fork_rng(devices=[]), torch.inference_mode(), _threads(torch, 1):
            torch.manual_seed(int(request.seed))
            while remaining > 0:
                if deadline.expired():
                    done = horizon - remaining
                    raise ForecastError(f"chronos: time limit of {request.time_limit:g} s reached after "
                                        f"{done} of {horizon} steps")
                step = min(remaining, config.prediction_length)
                samples = pipeline.predict(context, prediction_length=step, num_samples=request.n_samples,
                                           temperature=self.temperature, top_k=self.top_k, top_p=self.top_p,
                                           limit_prediction_length=True)
                pieces.append(samples[0])
                remaining -= step
                if remaining > 0:
                    median = samples.median(dim=1).values
                    context = torch.cat([context, median], dim=-1)[..., -config.context_length:]
        paths = torch.cat(pieces, dim=-1).numpy().astype(float)
        if paths.shape != (request.n_samples, horizon) or not np.isfinite(paths).all():
            raise ForecastError(f"chronos returned {paths.shape} paths with non-finite values or a wrong shape")
        info["time_s"] = round(deadline.elapsed(), 4)
        return Forecast(samples=paths, info=info)

    def _forecast_quantiles(self, pipeline, y: np.ndarray, horizon: int, request: ForecastRequest,
                            deadline: Deadline, device: str) -> Forecast:
        """Chronos-Bolt / Chronos-2: the model's own quantile levels over the whole horizon (the package
        continues past its prediction length autoregressively), then S paths drawn from them."""
        from tsagent_plugins.forecasters._pretrained import paths_from_quantiles

        torch, _ = _import()
        levels = list(pipeline.quantiles)
        context_length = int(pipeline.model.chronos_config.context_length)
        with torch.inference_mode(), _threads(torch, 1), warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the package's advice on long horizons: the run output stays clean
            q, _ = pipeline.predict_quantiles([torch.tensor(y[-context_length:], dtype=torch.float32)],
                                              prediction_length=horizon, quantile_levels=levels)
        q = (q[0] if isinstance(q, list) else q).reshape(-1, horizon, len(levels))[0]    # (H, K)
        if deadline.expired():
            raise ForecastError(f"chronos: time limit of {request.time_limit:g} s reached")
        paths = paths_from_quantiles(levels, q.cpu().numpy().T, request.n_samples, request.seed)
        if paths.shape != (request.n_samples, horizon) or not np.isfinite(paths).all():
            raise ForecastError(f"chronos returned {paths.shape} paths with non-finite values or a wrong shape")
        weights = self.weights_of(pipeline)
        info = {"uses_context": False, "context_ignored": request.context is not None, "model": self.model,
                "weights": weights, "flag_untrained": weights == RANDOM_INIT, "pipeline": type(pipeline).__name__,
                "context_length": context_length, "quantile_levels": levels, "n_history": len(y),
                "device": device, "time_s": round(deadline.elapsed(), 4)}
        return Forecast(samples=paths, info=info)


@contextlib.contextmanager
def _threads(torch, n: int):
    """Run with ``n`` intra-op threads (small models on shared cores), restoring the setting."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def build_tiny_model(folder: Path | str, *, seed: int = 0, context_length: int = 64, prediction_length: int = 16,
                     n_tokens: int = 64, d_model: int = 16, kind: str = "t5") -> Path:
    """Save a tiny randomly initialised Chronos (T5; ``kind="bolt"``: Chronos-Bolt; ``kind="chronos2"``:
    Chronos-2) model under ``folder`` and return it.

    For tests and offline smoke runs: the real loading code reads it like a
    released model (``config.json`` with ``chronos_config``, safetensors weights),
    and its config says ``"harness_weights": "random-init"`` so every forecast
    from it is flagged untrained.  No download.
    """
    torch, _ = _import()
    from transformers import T5Config, T5ForConditionalGeneration

    if kind != "t5":
        return _build_tiny_quantile_model(Path(folder), kind, seed, context_length, prediction_length, d_model)
    folder = Path(folder)
    config = T5Config(vocab_size=n_tokens, d_model=d_model, d_kv=max(4, d_model // 2), d_ff=2 * d_model,
                      num_layers=1, num_decoder_layers=1, num_heads=2, decoder_start_token_id=0,
                      pad_token_id=0, eos_token_id=1)
    config.chronos_config = {
        "tokenizer_class": "MeanScaleUniformBins", "tokenizer_kwargs": {"low_limit": -15.0, "high_limit": 15.0},
        "context_length": context_length, "prediction_length": prediction_length, "n_tokens": n_tokens,
        "n_special_tokens": 2, "pad_token_id": 0, "eos_token_id": 1, "use_eos_token": True,
        "model_type": "seq2seq", "num_samples": 20, "temperature": 1.0, "top_k": 50, "top_p": 1.0,
    }
    setattr(config, WEIGHTS_FIELD, RANDOM_INIT)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = T5ForConditionalGeneration(config)
    model.save_pretrained(folder)
    return folder


def _build_tiny_quantile_model(folder: Path, kind: str, seed: int, context_length: int, patch_total: int,
                               d_model: int) -> Path:
    """A tiny Chronos-Bolt or Chronos-2 saved with ``save_pretrained``, its config naming the pipeline."""
    import torch

    levels = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    if kind == "bolt":
        from chronos.chronos_bolt import ChronosBoltModelForForecasting
        from transformers import T5Config

        config = T5Config(d_model=d_model, d_kv=max(4, d_model // 2), d_ff=2 * d_model, num_layers=1,
                          num_decoder_layers=1, num_heads=2, vocab_size=2, pad_token_id=0, eos_token_id=1,
                          decoder_start_token_id=0)
        config.chronos_config = {"context_length": context_length, "prediction_length": patch_total,
                                 "input_patch_size": 8, "input_patch_stride": 8, "quantiles": levels,
                                 "use_reg_token": True}
        config.chronos_pipeline_class, model_class = "ChronosBoltPipeline", ChronosBoltModelForForecasting
    elif kind == "chronos2":
        from chronos.chronos2.config import Chronos2CoreConfig
        from chronos.chronos2.model import Chronos2Model

        config = Chronos2CoreConfig(d_model=d_model, d_kv=max(4, d_model // 2), d_ff=2 * d_model, num_layers=1,
                                    num_heads=2)
        config.chronos_config = {"context_length": context_length, "output_patch_size": 8, "input_patch_size": 8,
                                 "input_patch_stride": 8, "quantiles": levels, "use_reg_token": True,
                                 "max_output_patches": max(1, patch_total // 8)}
        config.chronos_pipeline_class, model_class = "Chronos2Pipeline", Chronos2Model
    else:
        raise ValueError(f"kind must be t5, bolt or chronos2, got {kind!r}")
    config.architectures = [model_class.__name__]
    setattr(config, WEIGHTS_FIELD, RANDOM_INIT)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = model_class(config)
    model.save_pretrained(folder)
    return folder


@hookimpl
def register_forecasters(register):
    register(ChronosForecaster())
