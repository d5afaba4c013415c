import json

import numpy as np
import pandas as pd
import pytest

from harness.testing import AgentTests
from nearest_centroid import NearestCentroid
from nearest_centroid.solve import solve


class TestNearestCentroid(AgentTests):
    """The kit: identity, command, log conversion, and a small TraceBench episode it must answer."""

    @pytest.fixture
    def agent(self):
        return NearestCentroid()


def test_each_test_sample_gets_the_label_of_the_nearest_centroid(tmp_path):
    """Rising and falling series (with a time column) in a workspace laid out as TraceBench's."""
    t = np.linspace(0, 1, 50)

    def sample(folder, name, values):
        (tmp_path / folder).mkdir(exist_ok=True)
        pd.DataFrame({"col1": values, "col2": t}).to_parquet(tmp_path / folder / name)

    for i, scale in enumerate((1.0, 3.0)):
        sample("train_samples", f"up{i}.parquet", scale * t)
        sample("train_samples", f"down{i}.parquet", -scale * t + 5)
    sample("test_samples", "a.parquet", 10 * t + np.sin(20 * t))
    sample("test_samples", "b.parquet", 2 - 0.5 * t)
    labels = {f"{d}{i}.parquet": d for d in ("up", "down") for i in range(2)}
    (tmp_path / "train_labels.json").write_text(json.dumps(labels))
    assert solve(tmp_path) == {"a.parquet": ["up"], "b.parquet": ["down"]}
    assert json.loads((tmp_path / "results.json").read_text()) == {"a.parquet": ["up"], "b.parquet": ["down"]}
