"""BounceBall and MassSlide through the generic pool generation (Section 3.4, Appendix B, C.1)."""

from __future__ import annotations

import pytest

from harness.contracts import NO_CHANGE
from harness.plugins import get
from tsagent_plugins.tasks.tracebench.pool import load_pool


@pytest.mark.parametrize("name", ["bounceball", "massslide"])
def test_small_pool_every_class_from_configurations_with_two_passing_root_causes(name, tmp_path):
    sim = get("simulator", name)
    pool = load_pool(sim, pool_seed=3, per_class=3, cache_dir=tmp_path, workers=1)
    rec = pool.recipes
    assert sorted(rec["label"].value_counts().to_dict().items()) == sorted((lab, 3) for lab in sim.labels)
    kept = pool.configs.set_index("config_id")
    for cid in rec["config_id"].unique():
        assert kept.loc[cid, "kept"] and kept.loc[cid, "n_passed"] >= 2
    for sid, row in rec.iterrows():
        tr = pool.clean(sid)
        assert tr.values.shape == (sim.n_samples, 3)
        if row["label"] != NO_CHANGE:
            spec = next(p for p in sim.parameters if p.name == row["parameter"])
            assert spec.low <= row["new_value"] <= spec.high
            assert 0.2 * sim.horizon <= row["t_int"] <= 0.8 * sim.horizon
            assert min(row["r_ni_1024"], row["r_sc_1024"]) > 2.0
