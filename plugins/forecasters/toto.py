"""``toto``: Toto (Khwaja et al., 2026; Dr-CiK Appendix G "Forecasters") from Datadog's ``toto-ts`` package.

Loads with ``Toto.load_from_checkpoint(FOLDER/model.safetensors, device, **config.json)``: the call the
package's own ``Toto.from_pretrained`` makes for a local folder and for a Hugging Face download (default
``Datadog/Toto-Open-Base-1.0``; a hub id is first fetched with ``huggingface_hub.snapshot_download``).
``from_pretrained`` itself cannot be used: toto-ts 0.2.0 declares the ``proxies`` and
``resume_download`` arguments that huggingface_hub 1.0 stopped passing (TypeError).  The public package
is Toto 1.0; the paper's Toto-2.0 has no public checkpoint id we know of (README).  Context: the last
``context_length`` points (default 4096, the released model's); horizon: any length (autoregressive);
timestamps are passed as the package expects (seconds, with the series' step).  Toto draws its own S
paths (``TotoForecaster.forecast``, ``num_samples`` = S).

toto-ts 0.2.0 pins torch 2.7.0, numpy 1.26.4 and pandas 2.2.3: ``scripts/install-forecasters.sh toto``
installs it with ``--no-deps`` and the tested runtime set its modelling code imports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import hookimpl, lazy_module
from tsagent_plugins.forecasters._pretrained import PretrainedForecaster, mark_random_init

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

WEIGHTS = "model.safetensors"


class TotoForecaster(PretrainedForecaster):
    """Toto sample paths; ignores the text context.  Options: ``model``, ``device``, ``weights``,
    ``context_length`` (points, default 4096)."""

    name = "toto"
    family = "Toto"
    modules = ("toto.model.toto", "toto.inference.forecaster", "toto.data.util.dataset")
    install = "bash scripts/install-forecasters.sh toto"
    default_model = "Datadog/Toto-Open-Base-1.0"
    extra_options = {"context_length": 4096}
    quantile_model = False

    def load(self, mods: dict[str, Any], source: str, device: str):
        folder = Path(source)
        if not folder.is_dir():
            from huggingface_hub import snapshot_download

            folder = Path(snapshot_download(source, allow_patterns=["config.json", WEIGHTS]))
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        model = mods["toto.model.toto"].Toto.load_from_checkpoint(str(folder / WEIGHTS), device, False, **config)
        return mods["toto.inference.forecaster"].TotoForecaster(model.model)

    def describe(self, handle) -> dict[str, Any]:
        return {"context_length": int(self.options["context_length"])}

    def predict_samples(self, handle, context, horizon, request):
        import torch
        from toto.data.util.dataset import MaskedTimeseries

        device = next(handle.model.parameters()).device
        y = torch.tensor(context[-int(self.options["context_length"]):], dtype=torch.float32, device=device)[None]
        index = request.history.index[-y.shape[-1]:]
        step = int((index[1] - index[0]).total_seconds()) if len(index) > 1 else 0
        stamps = torch.tensor(toto_timestamp_seconds(index), device=device)[None]
        series = MaskedTimeseries(series=y, padding_mask=torch.ones_like(y, dtype=torch.bool),
                                  id_mask=torch.zeros_like(y), timestamp_seconds=stamps,
                                  time_interval_seconds=torch.full((1,), step, device=device))
        out = handle.forecast(series, prediction_length=horizon, num_samples=request.n_samples,
                              samples_per_batch=request.n_samples)
        return out.samples[0, 0].T.cpu().numpy()                                          # (H, S) -> (S, H)


def toto_timestamp_seconds(index) -> np.ndarray:
    """(N,) int64 seconds since 1970 of a DatetimeIndex, the ``timestamp_seconds`` Toto takes, whatever the
    index's resolution (``asi8`` is in the index's unit: microseconds for dates pandas 3 parses)."""
    return np.asarray(index.as_unit("s").asi8, dtype=np.int64)


#: The smallest architecture the package's classes accept (embed_dim divisible by heads, patch = stride).
TINY_CONFIG = {"patch_size": 8, "stride": 8, "embed_dim": 16, "num_layers": 2, "num_heads": 2, "mlp_hidden_dim": 32,
               "dropout": 0.0, "spacewise_every_n_layers": 2,
               "scaler_cls": "<class 'model.scaler.CausalPatchStdMeanScaler'>",
               "output_distribution_classes": ["<class 'model.distribution.MixtureOfStudentTsOutput'>"],
               "output_distribution_kwargs": {"k_components": 2}, "use_memory_efficient_attention": False}


def build_tiny_model(folder: Path | str, *, seed: int = 0) -> Path:
    """Save a tiny randomly initialised Toto under ``folder`` in the released layout (``config.json`` +
    ``model.safetensors``, written with safetensors' ``save_model``: Toto's ``save_pretrained`` is not
    implemented in toto-ts 0.2.0), flagged ``random-init``.  No download."""
    import safetensors.torch
    import torch
    from toto.model.toto import Toto

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Toto(**TINY_CONFIG)
    safetensors.torch.save_model(model, str(folder / WEIGHTS))
    (folder / "config.json").write_text(json.dumps(TINY_CONFIG, indent=2), encoding="utf-8")
    return mark_random_init(folder)


@hookimpl
def register_forecasters(register):
    register(TotoForecaster())
