"""The aeon-backed baselines of TraceBench Appendix E: DTW 1-NN and MiniRocket + ridge.

Both take the :func:`tsagent_plugins.agents.classical.nn.features` arrays, shape (T, C)
(aeon wants (C, T)).  aeon is an optional dependency (``pip install -e
'.[baselines]'``), imported by the first call that needs it (ImportError with
that command when it is missing), so each method loads only its own part of aeon.

* :func:`dtw_distance` -- dependent multivariate DTW: squared-Euclidean local
  cost summed over channels, unconstrained warping path (aeon's ``dtw_distance``
  with ``window=None``); series of different lengths are allowed.
* :func:`fit_minirocket` -- MiniRocket with 10,000 kernels and seed
  :data:`MINIROCKET_SEED`, standardised features (without centring) and a
  ridge classifier whose regularisation is chosen by leave-one-out
  cross-validation on the support batch only (aeon's ``MiniRocketClassifier``:
  ``RidgeClassifierCV`` over alphas 10^-3..10^3).  aeon flags channels whose
  standard deviation is at most 1e-7 as constant (a warning, the paper's
  "constant-channel threshold") and transforms them as they are.
  MiniRocket needs one length for all series: support and test trajectories of
  one episode share the simulator's time grid; different lengths raise ValueError.
"""

from __future__ import annotations

import sys

import numpy as np

INSTALL = "pip install -e '.[baselines]'"


def hide_torch() -> None:
    """Make ``import torch`` fail in this process (call it only in a process of its own: the solver's).

    aeon's convolution package imports its Hydra transform, which imports torch at
    module level when torch is installed (it is, for the Chronos forecaster); these
    baselines never use torch, and aeon treats a failed import as "not installed".
    Saves about 2.5 s per MiniRocket episode.  (An import hook rather than
    ``sys.modules["torch"] = None``: scipy looks torch up in ``sys.modules``.)"""
    if "torch" not in sys.modules and not any(isinstance(f, _NoTorch) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoTorch())


class _NoTorch:
    """Import hook: ``import torch`` raises ModuleNotFoundError."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden from the classical baselines)", name=name)
        return None


def _aeon(module: str, name: str):
    """``name`` from aeon's ``module``, imported on first use (ImportError naming the extra without aeon)."""
    try:
        return getattr(__import__(module, fromlist=[name]), name)
    except ImportError as exc:
        raise ImportError(f"the dtw-1nn and minirocket-ridge baselines need aeon: {INSTALL} ({exc})") from exc


#: The aeon object each method uses: (module, name).
PARTS = {"dtw": ("aeon.distances", "dtw_distance"),
         "minirocket": ("aeon.classification.convolution_based", "MiniRocketClassifier")}


def load(method: str):
    """Import the aeon object ``method`` ("dtw" or "minirocket") uses now (so its cost is measured apart)."""
    return _aeon(*PARTS[method])


#: Paper: "MiniRocket uses 10,000 kernels, a fixed random seed".  The seed's value is not given; ours is 0.
MINIROCKET_KERNELS = 10_000
MINIROCKET_SEED = 0


def dtw_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Dependent DTW distance of two (T, C) float arrays (lengths may differ)."""
    dtw = load("dtw")
    return float(dtw(np.ascontiguousarray(np.asarray(a, float).T), np.ascontiguousarray(np.asarray(b, float).T),
                     window=None))


def _stack(xs: list[np.ndarray]) -> np.ndarray:
    lengths = sorted({len(x) for x in xs})
    if len(lengths) != 1:
        raise ValueError(f"MiniRocket needs trajectories of one length; got lengths {lengths}")
    return np.stack([np.asarray(x, float).T for x in xs])  # (n, C, T)


def fit_minirocket(xs: list[np.ndarray], classes: list[int], seed: int = MINIROCKET_SEED):
    """Fit MiniRocket + ridge on the support batch: ``xs`` (T, C) arrays, ``classes`` class indices."""
    model = load("minirocket")(n_kernels=MINIROCKET_KERNELS, random_state=seed, n_jobs=1)
    model.fit(_stack(xs), np.asarray(classes))
    return model


def predict_minirocket(model, xs: list[np.ndarray]) -> list[int]:
    """Class indices predicted for (T, C) arrays."""
    return [int(c) for c in model.predict(_stack(xs))]
