"""``tirex``: TiRex (Auer et al., 2026; Dr-CiK Appendix G "Forecasters") from the ``tirex-ts`` package.

Loads with ``TiRexZero.from_pretrained(path, backend="torch", device=...)``, the call
``tirex.load_model`` makes: for a Hugging Face id (default ``NX-AI/TiRex``) it downloads
``model.ckpt``; for a local folder it reads ``FOLDER/model.ckpt`` (a Lightning-style checkpoint:
``hyper_parameters`` + ``state_dict``).  The public package is TiRex 1.x; the paper's "TiRex-2" has
no public checkpoint id we know of (README).  The ``torch`` backend (no custom CUDA kernels) runs on
CPU and GPU.  Context: the whole history (the model pads / cuts it to its training context);
horizon: any length (autoregressive over output patches); no timestamps.  The model outputs the
quantiles 0.1..0.9: S paths are drawn by :func:`~tsagent_plugins.forecasters._pretrained.paths_from_quantiles`.
Histories of the same length go through the model as one batch, at the longest horizon asked: TiRex
decodes output patches one after another, so the first h steps of a longer forecast are the h-step
forecast bit for bit (tested).
Install: ``pip install -e '.[tirex]'``.
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

CHECKPOINT = "model.ckpt"


class TiRexForecaster(PretrainedForecaster):
    """TiRex quantiles -> S paths; ignores the text context.  Options: ``model``, ``device``, ``weights``."""

    name = "tirex"
    family = "TiRex"
    modules = ("tirex", "tirex.models.tirex")
    install = "pip install -e '.[tirex]'"
    default_model = "NX-AI/TiRex"

    def load(self, mods: dict[str, Any], source: str, device: str):
        path = Path(source)
        checkpoint = str(path / CHECKPOINT) if path.is_dir() else source
        return mods["tirex.models.tirex"].TiRexZero.from_pretrained(checkpoint, backend="torch", device=device)

    def describe(self, handle) -> dict[str, Any]:
        return {"context_length": handle.config.train_ctx_len, "patch": handle.config.output_patch_size}

    def batch_key(self, context, horizon) -> tuple:
        return (len(context),)

    def predict_quantiles(self, handle, contexts, horizon, requests):
        import torch

        levels = np.asarray(handle.config.quantiles, dtype=float)
        out = np.empty((len(contexts), len(levels), horizon))
        by_length: dict[int, list[int]] = {}
        for i, c in enumerate(contexts):
            by_length.setdefault(len(c), []).append(i)
        for idx in by_length.values():
            batch = torch.tensor(np.stack([contexts[i] for i in idx]), dtype=torch.float32)
            q, _ = handle.forecast(batch, prediction_length=horizon, output_type="numpy")   # (B, H, K)
            out[idx] = np.asarray(q, dtype=float).transpose(0, 2, 1)
        return levels, out


def build_tiny_model(folder: Path | str, *, seed: int = 0, patch: int = 8, dims: int = 16,
                     context_length: int = 64) -> Path:
    """Save a tiny randomly initialised TiRex as ``folder/model.ckpt`` (the checkpoint layout
    ``from_pretrained`` reads: ``hyper_parameters`` and ``state_dict``), flagged ``random-init``.
    TiRex has no save function of its own; ``torch.save`` writes what its Lightning trainer writes."""
    import torch
    from tirex.models.tirex import TiRexZero

    hyper = {"model_config": {"input_patch_size": patch, "output_patch_size": patch,
                              "quantiles": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
                              "block_kwargs": {"embedding_dim": dims, "num_heads": 2, "num_blocks": 1,
                                               "ffn_proj_factor": 2.0},
                              "input_ff_dim": dims},
             "train_ctx_len": context_length}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TiRexZero(backend="torch", **hyper)
        # The sLSTM cell and its head-wise linear layers allocate their weights with torch.empty (the
        # package only ever loads trained ones): give them defined random values, or they hold whatever
        # memory was there (NaN seen after other models ran in the same process).
        for name, param in model.named_parameters():
            if name.endswith(("_recurrent_kernel_", "_bias_", "gate.weight")):
                torch.nn.init.normal_(param, std=0.1)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"hyper_parameters": hyper, "state_dict": model.state_dict()}, folder / CHECKPOINT)
    return mark_random_init(folder)


@hookimpl
def register_forecasters(register):
    register(TiRexForecaster())
