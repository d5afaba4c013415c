"""``timesfm``: TimesFM 3 (Jain & Sen, 2026; Dr-CiK Appendix G "Forecasters") from the ``timesfm``
package (``timesfm3.torch``).

Loads with ``TimesFM3Forecaster.from_pretrained(model, device=...)`` -- a Hugging Face id
(default ``google/timesfm-3.0-pytorch``) or a local folder saved by ``TimesFM3Torch.save_pretrained``.
The whole history is the context (the package pads it to its input patch and caps it at 15,360
points); the horizon is any length (the package decodes output patches until it is covered);
timestamps and frequency are not inputs of TimesFM 3.  The model outputs the quantiles 0.1..0.9
per step: S paths are drawn from them by
:func:`tsagent_plugins.forecasters._pretrained.paths_from_quantiles`.  Histories of the same
horizon are forecast in one ``predict_batch`` call (``per_core_batch_size`` at a time).
Install: ``pip install -e '.[timesfm]'``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import hookimpl, lazy_module
from tsagent_plugins.forecasters._pretrained import PretrainedForecaster, mark_random_init

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")


class TimesFMForecaster(PretrainedForecaster):
    """TimesFM 3 quantiles -> S paths; ignores the text context.  Options: ``model``, ``device``,
    ``weights``, ``batch_size`` (series per call and per forward pass, default 16)."""

    name = "timesfm"
    family = "TimesFM 3"
    modules = ("timesfm3.torch",)
    install = "pip install -e '.[timesfm]'"
    default_model = "google/timesfm-3.0-pytorch"

    def load(self, mods: dict[str, Any], source: str, device: str):
        api = mods["timesfm3.torch"]
        return api.TimesFM3Forecaster.from_pretrained(source, device=device,
                                                      per_core_batch_size=self._batch_size)

    def describe(self, handle) -> dict[str, Any]:
        return {"input_patch": handle.config.input_patch_length, "output_patch": handle.config.output_patch_length,
                "max_context": handle.global_context}

    def predict_quantiles(self, handle, contexts, horizon, requests):
        outputs = list(handle.predict_batch([c.astype(np.float32) for c in contexts], horizon=horizon,
                                            return_quantiles=True))
        q = np.stack([o.quantiles for o in outputs]).transpose(0, 2, 1)      # (B, H, K) -> (B, K, H)
        return np.asarray(handle.config.quantiles, dtype=float), q


def build_tiny_model(folder: Path | str, *, seed: int = 0, patch: int = 8, output_patch: int = 16,
                     dims: int = 16) -> Path:
    """Save a tiny randomly initialised TimesFM 3 (``TimesFM3Torch(...).save_pretrained``) under
    ``folder``, flagged ``random-init``; loads like a released model.  No download."""
    import torch
    from timesfm3.torch import ResidualBlockConfig, StackedTransformersConfig, TimesFM3Torch, TransformerConfig

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TimesFM3Torch(
            input_patch_len=patch, output_patch_len=output_patch,
            residual_block_config=ResidualBlockConfig(hidden_dims=dims, output_dims=dims, use_bias=False,
                                                      activation="relu"),
            transformer_config=StackedTransformersConfig(num_layers=1, transformer=TransformerConfig(
                model_dims=dims, hidden_dims=dims, num_heads=2, attention_norm="rms", feedforward_norm="rms",
                qk_norm="rms", use_bias=False, use_rope_seq=True, use_rope_var=True, ff_activation="relu",
                deterministic=True)))
    model.save_pretrained(folder)
    return mark_random_init(folder)


@hookimpl
def register_forecasters(register):
    register(TimesFMForecaster())
