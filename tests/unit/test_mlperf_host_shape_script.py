"""scripts/mlperf_host_shape.py: the overlap-scheduler host-loop test of round 28 (mlperf28), by hand.

The two B200 Server rows (Little's law on the logs: Google 112.053 per rank at 61.27 ms mean TPOT, NVIDIA 154.457 at
66.461 ms) fix a line H = h0 + h·n: h = (66.461 − 61.27) / (154.457 − 112.053) = 5.191 / 42.404 = 0.12242 ms per
request, h0 = 61.27 − 112.053 × 0.12242 = 47.552 ms; at 509 per rank that line is 47.552 + 62.31 = 109.86 ms.
A pure per-request cost from the Google row is 61.27 / 112.053 = 0.5468 ms, 278.3 ms at 509 per rank.
"""

from __future__ import annotations

import pytest
from script_module import load_script

hs = load_script("mlperf_host_shape")

SERVER = [{"label": "Google B200 Server", "running": 112.053, "measured_s": 0.06127, "model_s": 0.0358},
          {"label": "NVIDIA B200 Server", "running": 154.457, "measured_s": 0.066461, "model_s": 0.0430}]
OFFLINE = {"label": "B200 Offline", "running": 509.0, "measured_s": 0.0885, "model_s": 0.0720}


def test_fit_line_by_hand():
    h0, h = hs.fit_line([112.053, 154.457], [0.06127, 0.066461])
    assert h == pytest.approx(0.005191 / 42.404, rel=1e-9)
    assert h0 == pytest.approx(0.06127 - 112.053 * 0.005191 / 42.404, rel=1e-9)
    assert h0 == pytest.approx(0.047552, abs=2e-6)


def test_overlap_step_is_the_larger():
    assert hs.overlap_step(0.072, 509, 0.0, 0.0001) == pytest.approx(0.0720)  # host 50.9 ms hidden
    assert hs.overlap_step(0.030, 100, 0.010, 0.0003) == pytest.approx(0.040)  # host 40 ms exposed


def test_host_fits_by_hand():
    f = hs.host_fits(SERVER + [OFFLINE])
    assert f["h"] == pytest.approx(0.12242e-3, rel=1e-3)
    rows = {r["label"]: r for r in f["rows"]}
    # the fit rows are met exactly (host above the GPU step there)
    assert rows["Google B200 Server"]["with_base"] == pytest.approx(0.06127)
    assert rows["NVIDIA B200 Server"]["with_base"] == pytest.approx(0.066461)
    # reported on the Offline row: 109.86 ms against 88.5 measured (+24%): the line overshoots
    assert rows["B200 Offline"]["with_base"] == pytest.approx(0.10986, abs=5e-5)
    # a pure per-request cost (h0 = 0) from the Google row: 0.5468 ms/request, 278.3 ms at 509
    assert f["pure_h"]["Google B200 Server"] == pytest.approx(0.06127 / 112.053)
    assert rows["B200 Offline"]["pure"]["Google B200 Server"] == pytest.approx(0.2783, abs=1e-4)


def test_blog10_run_constants():
    # TensorRT-LLM tech blog 10: 16,000 requests, mean output 3,653.8, 34,140 output tok/s on 8 GB200, interval 1,024
    assert hs.BLOG10_RUN == {"requests": 16000, "mean_osl": 3653.8, "tps": 34140.0, "gpus": 8, "stream_interval": 1024}
