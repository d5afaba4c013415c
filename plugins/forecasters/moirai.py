"""``moirai`` (Moirai 2.0, Woo et al., 2024) and ``moirai-moe`` (Moirai-MoE, Liu et al., 2024c): Dr-CiK
Appendix G "Forecasters", from Salesforce's ``uni2ts`` package.

Loads with the package's ``Moirai2Module.from_pretrained(model)`` / ``MoiraiMoEModule.from_pretrained(model)``
(``PyTorchModelHubMixin``: a Hugging Face id -- defaults ``Salesforce/moirai-2.0-R-small`` and
``Salesforce/moirai-moe-1.0-R-small`` -- or a local folder saved by ``save_pretrained``), wrapped in
``Moirai2Forecast`` / ``MoiraiMoEForecast`` per horizon.  Context: the last ``context_length``
points (option, default 1680, the length of the uni2ts examples; shorter histories are padded as the
package does); horizon: any length; timestamps are not inputs.  Moirai 2.0 outputs the quantiles
0.1..0.9 (paths drawn by :func:`~tsagent_plugins.forecasters._pretrained.paths_from_quantiles`,
histories batched in one ``predict`` call); Moirai-MoE draws S paths from its mixture distribution.

uni2ts 2.0.0 pins torch < 2.5, numpy ~= 1.26 and scipy ~= 1.11, which cannot live beside this
project's torch; ``scripts/install-forecasters.sh moirai`` installs it with ``--no-deps`` and the
tested runtime set its modelling code imports (README, "Forecaster families").
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

INSTALL = "bash scripts/install-forecasters.sh moirai"


class MoiraiForecaster(PretrainedForecaster):
    """Moirai 2.0 quantiles -> S paths; ignores the text context.  Options: ``model``, ``device``,
    ``weights``, ``context_length`` (points, default 1680)."""

    name = "moirai"
    family = "Moirai 2.0"
    modules = ("uni2ts.model.moirai2",)
    install = INSTALL
    default_model = "Salesforce/moirai-2.0-R-small"
    extra_options = {"context_length": 1680}

    def load(self, mods: dict[str, Any], source: str, device: str):
        return mods["uni2ts.model.moirai2"].Moirai2Module.from_pretrained(source).to(device)

    def describe(self, handle) -> dict[str, Any]:
        return {"context_length": int(self.options["context_length"]), "patch": int(handle.patch_size)}

    def predict_quantiles(self, handle, contexts, horizon, requests):
        from uni2ts.model.moirai2 import Moirai2Forecast

        model = Moirai2Forecast(prediction_length=horizon, target_dim=1, feat_dynamic_real_dim=0,
                                past_feat_dynamic_real_dim=0, context_length=int(self.options["context_length"]),
                                module=handle).to(next(handle.parameters()).device)
        q = model.predict([c.astype(np.float32) for c in contexts])                   # (B, K, H)
        return np.asarray(handle.quantile_levels, dtype=float), np.asarray(q, dtype=float).reshape(
            len(contexts), len(handle.quantile_levels), horizon)


class MoiraiMoEForecaster(PretrainedForecaster):
    """Moirai-MoE sample paths; ignores the text context.  Options: ``model``, ``device``, ``weights``,
    ``context_length`` (points, default 1680), ``patch_size`` (default 16, the released models')."""

    name = "moirai-moe"
    family = "Moirai-MoE"
    modules = ("uni2ts.model.moirai_moe",)
    install = INSTALL
    default_model = "Salesforce/moirai-moe-1.0-R-small"
    extra_options = {"context_length": 1680, "patch_size": 16}
    quantile_model = False

    def load(self, mods: dict[str, Any], source: str, device: str):
        return mods["uni2ts.model.moirai_moe"].MoiraiMoEModule.from_pretrained(source).to(device)

    def describe(self, handle) -> dict[str, Any]:
        return {"context_length": int(self.options["context_length"]), "patch": int(self.options["patch_size"])}

    def predict_samples(self, handle, context, horizon, request):
        import torch
        from uni2ts.model.moirai_moe import MoiraiMoEForecast

        length = int(self.options["context_length"])
        device = next(handle.parameters()).device
        model = MoiraiMoEForecast(prediction_length=horizon, target_dim=1, feat_dynamic_real_dim=0,
                                  past_feat_dynamic_real_dim=0, context_length=length, module=handle,
                                  patch_size=int(self.options["patch_size"]),
                                  num_samples=request.n_samples).to(device)
        y = context[-length:]
        pad = length - len(y)
        values = np.concatenate([np.full(pad, y[0]), y]).astype(np.float32)          # padded as uni2ts pads
        target = torch.tensor(values, device=device)[None, :, None]
        is_pad = torch.zeros(1, length, dtype=torch.bool, device=device)
        is_pad[:, :pad] = True
        samples = model(past_target=target, past_observed_target=torch.ones_like(target, dtype=torch.bool),
                        past_is_pad=is_pad)                                              # (1, S, H)
        return samples[0].cpu().numpy()


def build_tiny_model(folder: Path | str, *, moe: bool = False, seed: int = 0, patch: int = 8) -> Path:
    """Save a tiny randomly initialised Moirai 2.0 (or Moirai-MoE) module with the package's
    ``save_pretrained`` under ``folder``, flagged ``random-init``.  No download."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if moe:
            from uni2ts.distribution import MixtureOutput, NormalFixedScaleOutput, StudentTOutput
            from uni2ts.model.moirai_moe import MoiraiMoEModule

            module = MoiraiMoEModule(distr_output=MixtureOutput([StudentTOutput(), NormalFixedScaleOutput()]),
                                     d_model=64, d_ff=64, num_layers=1, patch_sizes=(patch,), max_seq_len=64,
                                     attn_dropout_p=0.0, dropout_p=0.0)
            # The encoder's expert centroids (the MoE gate: distances to them pick the experts) are a buffer
            # allocated with torch.empty (the package only ever loads trained ones): give them defined random
            # values, or they hold whatever memory was there (NaN seen after other models ran in the process).
            torch.nn.init.normal_(module.encoder.centroid)
        else:
            from uni2ts.model.moirai2 import Moirai2Module

            module = Moirai2Module(d_model=64, d_ff=64, num_layers=1, patch_size=patch, max_seq_len=64,
                                   attn_dropout_p=0.0, dropout_p=0.0)
    module.save_pretrained(folder)
    return mark_random_init(folder)


@hookimpl
def register_forecasters(register):
    register(MoiraiForecaster())
    register(MoiraiMoEForecaster())
