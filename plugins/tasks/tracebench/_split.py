"""Episode sample selection: test batch, held-out set, support batch (Section 4.5, Appendix C.1).

Order and independence:

1. **test** (``n_test`` samples): class counts differ by at most one (the classes
   receiving the extra samples are drawn at random), every sample from a
   distinct initial configuration.  Depends only on the pool and ``rep_seed``, so
   every condition with the same simulator and repetition seed -- including
   the 0-example ablation -- uses the same test samples.
2. **held-out** (``n_heldout_per_class`` per class): drawn from the samples not in
   the test batch; depends on ``rep_seed`` and ``n_test`` only (same held-out set
   with 3 and 0 support examples).
3. **support** (``n_support_per_class`` per class): from the remaining samples, all
   from distinct configurations that are also distinct from the test batch's.

Distinct-configuration selection is a bipartite matching (slots -> configurations)
solved with augmenting paths over randomly ordered candidates; it finds a
selection whenever one exists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass
class Split:
    """Sample ids of one episode.  ``test``: n_test ids, class counts differ by at most 1;
    ``support``: n_support_per_class per class; ``heldout``: n_heldout_per_class per class."""

    test: list[str]
    support: list[str]
    heldout: list[str]


def _rng(rep_seed: int, part: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(rep_seed), 0x5E1EC7, part]))


def match_distinct_configs(
    slots: list[str], candidates: dict[str, list[tuple[str, int]]], forbidden: set[int],
    rng: np.random.Generator,
) -> list[str] | None:
    """Pick one sample per slot (slot = class label) so that no two picks share a configuration.

    ``candidates[label]``: ``(sample_id, config_id)`` pairs.  Configurations in
    ``forbidden`` are not used.  Returns sample ids in slot order, or None when
    no such selection exists.
    """
    adj: list[list[tuple[int, str]]] = []
    for label in slots:
        opts = [(cfg, sid) for sid, cfg in candidates.get(label, []) if cfg not in forbidden]
        order = rng.permutation(len(opts))
        adj.append([opts[i] for i in order])
    owner: dict[int, int] = {}  # config -> slot
    pick: dict[int, str] = {}  # slot -> sample id

    def augment(slot: int, seen: set[int]) -> bool:
        for cfg, sid in adj[slot]:
            if cfg in seen:
                continue
            seen.add(cfg)
            if cfg not in owner or augment(owner[cfg], seen):
                owner[cfg] = slot
                pick[slot] = sid
                return True
        return False

    for slot in rng.permutation(len(slots)):
        if not augment(int(slot), set()):
            return None
    return [pick[i] for i in range(len(slots))]


def choose(
    recipes: pd.DataFrame, labels: list[str], rep_seed: int, n_test: int, n_support_per_class: int,
    n_heldout_per_class: int, where: str = "pool",
) -> Split:
    """Select test, held-out and support samples; see the module docstring.

    ``recipes``: index sample_id, columns ``label`` and ``config_id``.  Raises
    ValueError (naming ``where`` and the short class) when the pool is too small.
    """
    for name, n in (("n_test", n_test), ("n_support_per_class", n_support_per_class),
                    ("n_heldout_per_class", n_heldout_per_class)):
        if int(n) != n or n < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {n!r}")
    k = len(labels)
    by_label: dict[str, list[tuple[str, int]]] = {lab: [] for lab in labels}
    for sid, lab, cfg in zip(recipes.index, recipes["label"], recipes["config_id"]):
        if lab not in by_label:
            raise ValueError(f"{where}: sample {sid!r} has label {lab!r}, not one of {labels}")
        by_label[lab].append((str(sid), int(cfg)))
    for lab in labels:  # canonical order, independent of how the table was stored
        by_label[lab].sort()

    # 1. test batch
    rng = _rng(rep_seed, 1)
    counts = {lab: n_test // k for lab in labels}
    for i in rng.choice(k, size=n_test % k, replace=False):
        counts[labels[int(i)]] += 1
    _check_size(by_label, counts, {lab: 0 for lab in labels}, where, "test batch")
    slots = [lab for lab in labels for _ in range(counts[lab])]
    test = match_distinct_configs(slots, by_label, set(), rng)
    if test is None:
        raise ValueError(f"{where}: cannot draw a test batch of {n_test} samples from distinct "
                         f"configurations with class counts {counts}")
    test_set = set(test)
    test_configs = {cfg for lab in labels for sid, cfg in by_label[lab] if sid in test_set}

    # 2. held-out set
    rng = _rng(rep_seed, 2)
    rest = {lab: [p for p in by_label[lab] if p[0] not in test_set] for lab in labels}
    _check_size(rest, {lab: n_heldout_per_class for lab in labels}, counts, where, "held-out set")
    heldout: list[str] = []
    for lab in labels:
        order = rng.permutation(len(rest[lab]))[:n_heldout_per_class]
        heldout += [rest[lab][i][0] for i in sorted(order)]
    held_set = set(heldout)

    # 3. support batch
    rng = _rng(rep_seed, 3)
    rest = {lab: [p for p in rest[lab] if p[0] not in held_set] for lab in labels}
    need = {lab: n_support_per_class for lab in labels}
    _check_size(rest, need, {lab: counts[lab] + n_heldout_per_class for lab in labels}, where, "support batch")
    slots = [lab for lab in labels for _ in range(n_support_per_class)]
    support = match_distinct_configs(slots, rest, test_configs, rng)
    if support is None:
        raise ValueError(f"{where}: cannot draw {n_support_per_class} support samples per class from "
                         f"configurations distinct from each other and from the test batch")
    # random order, so that the position in a list never reveals the class
    test = [test[i] for i in _rng(rep_seed, 4).permutation(len(test))]
    support = [support[i] for i in _rng(rep_seed, 5).permutation(len(support))]
    return Split(test=test, support=support, heldout=heldout)


def _check_size(avail: dict[str, list], need: dict[str, int], used: dict[str, int], where: str, what: str) -> None:
    for lab, n in need.items():
        if len(avail[lab]) < n:
            raise ValueError(
                f"{where}: class {lab!r} has {len(avail[lab]) + used[lab]} samples, too few for the {what} "
                f"({n} more needed after {used[lab]} already taken); use a larger per_class")
