# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The benchmark suite runs and writes its table; no timing is asserted here."""

import json

import pytest

import benchmarks.harness as harness
from benchmarks import bench_halo


def test_halo_benchmark_runs_and_records(tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(harness, "PERF_DOC", tmp_path / "performance.md")
    (tmp_path / "performance.md").write_text("# Performance\n\nHand-written intro.\n")
    results, context = bench_halo.run(quick=True, n=16, channels=2, tile=8, halo=4)
    names = [r.case.split("[")[0] for r in results]
    assert names == ["gather", "adjoint", "adjoint_cosine", "adjoint_cross_face"]
    assert all(r.candidate_s > 0 and r.baseline_s > 0 for r in results)
    harness.record("halo", results, context)
    saved = json.loads((tmp_path / "results" / "halo.json").read_text())
    assert len(saved["results"]) == 4 and saved["context"]["tile_bytes"] > 0
    # enough to tell machines and code apart (was: "x86_64, cpu")
    machine = saved["machine"]
    assert machine["cpu"] and machine["cores"] >= 1 and machine["versions"]["torch"]
    assert machine["versions"]["screamcast"] and saved["context"]["repeats"] == 10
    assert len(machine["commit"].removesuffix("+dirty")) == 12 and saved["command"]
    doc = (tmp_path / "performance.md").read_text()
    assert "Hand-written intro." in doc
    assert doc.count("| halo | ") == 4 and harness.BEGIN in doc and harness.END in doc
    harness.record("halo", results[:1], context)  # regenerating replaces, never appends
    assert (tmp_path / "performance.md").read_text().count("| halo | ") == 1


def test_rollout_memory_benchmark_runs():
    """It runs (tiny sizes); no memory figure is asserted here."""
    from benchmarks import rollout_memory

    report = rollout_memory.main(["--n", "16", "--steps", "2", "4"])
    assert set(report["peak_rss_mb"]) == {2, 4} and min(report["peak_rss_mb"].values()) > 50


def test_rollout_step_benchmark_runs():
    """It runs (tiny sizes; the ratio itself is the benchmark's, never asserted here: at these
    sizes a step and its forwards are within timing noise of each other): it had stopped at
    ``build_pipeline``, which read its dataclass config as a dict, unseen for two rounds."""
    from benchmarks import bench_rollout

    results, context = bench_rollout.run(quick=True, n=16, tile=8, halo=4)
    assert context["steps"] == 6 and all(r.candidate_s > 0 and r.baseline_s > 0 for r in results)
    assert {r.case.split(", ")[-1].rstrip("]") for r in results} >= {"write_counted"}


def test_crop_reads_benchmark_runs(tiny_store):
    """It runs and counts (tiny sizes); the figures themselves are the benchmark's."""
    from benchmarks.crop_reads import measure

    report = measure(tiny_store, 16, 16, 1, 3)
    assert report["crops"] == 3 and report["requests_min"] > 0
    assert report["amplification_median"] > 0


def test_crop_layouts_benchmark_counts_each_layout(tmp_path, monkeypatch):
    """Small sizes, the real dataset: the stacked layout needs a fraction of the requests per
    crop of one array per variable, under 2 per crop when regions cover whole shards, and
    regions read fewer bytes per crop than crops read one by one; float16 packing the same
    requests at half the bytes (noise: no compression beyond it)."""
    from benchmarks import crop_layouts as cl
    from screamcast.data.region_sampler import RegionPlan

    small = dict(N=32, TILE=16, HALO=8, CROP=32, CHUNK=16, THREE_D=("T",), LEVELS=3)
    small |= dict(TWO_D=("ps",), CHANNELS=["T[0]", "T[1]", "T[2]", "ps"])
    for name, value in small.items():
        monkeypatch.setattr(cl, name, value)
    plan = RegionPlan.balanced(32 + 16 - 32 + 1, 32, 17, 8, 2)  # one region a face
    out = {}
    for layout in ("variables", "stacked", "stacked_f16"):
        cl.write(tmp_path / layout, layout, times=3)
        out[layout] = [cl.measure(tmp_path / layout, layout, 1, p, crops=16) for p in (None, plan)]
    (one, grouped), (stacked_one, stacked_grouped) = out["variables"], out["stacked"]
    assert stacked_one["requests_per_crop"] < 0.5 * one["requests_per_crop"]
    assert stacked_grouped["requests_per_crop"] < 2.0 < one["requests_per_crop"]
    assert grouped["amplification"] < one["amplification"]
    assert stacked_grouped["amplification"] < stacked_one["amplification"]
    for f32, f16 in zip(out["stacked"], out["stacked_f16"], strict=True):
        assert f16["requests_per_crop"] == f32["requests_per_crop"]
        assert 0.45 < f16["mb_per_crop"] / f32["mb_per_crop"] < 0.55  # half, as zstd leaves it


def test_the_data_projection_is_the_stated_arithmetic():
    """Supply = min(5,500 GET/s / requests, 12.5 GB/s / bytes); demand = 8 x 989 TFLOP/s x 0.4
    / (3 x forward FLOPs x k); the large model's forward on a 40-channel 192 crop counted."""
    from benchmarks import data_projection as dp

    flops = dp.forward_flops()
    assert 1e11 < flops < 1e12  # a 128-wide 3-level U-Net on 192 x 192
    row = {"layout": "x", "k": 4, "regions": None, "requests_per_crop": 2.0, "mb_per_crop": 25.0}
    (r,) = dp.project([row], flops)
    assert r["crops_per_s_by_requests"] == 2750.0
    assert r["crops_per_s_by_network"] == 500.0
    demand = 8 * 989e12 * 0.4 / (3 * flops * 4)
    assert r["crops_per_s_consumed"] == pytest.approx(demand, rel=1e-12)
    assert r["supply_over_demand"] == pytest.approx(500.0 / demand, rel=1e-12)
    f16 = row | {"layout": "stacked_f16", "k": 1, "regions": "320 px, 8 crops"}
    (r,) = dp.project([f16], flops, gain=1.5)  # the bytes zstd takes off real fields
    assert r["crops_per_s_by_network"] == pytest.approx(750.0) and r["default"]


def test_the_projection_scales_the_exact_plan_by_the_strip_area():
    """Parts of 3 faces, bands and whole faces: the largest rank's bytes are the exact
    plan's pixels on a small grid of the production's ratios, scaled by face x halo; its
    forwards its share of tiles."""
    from benchmarks import rollout_ranks as rr

    small = {"n": 64, "tile": 4, "halo": 1}  # 16 tiles a face, a quarter-tile halo
    worlds = (4, 6, 8, 12, 96)  # 4 and 8: parts of 3 faces, each rank an equal share
    rows, whole = rr.project(worlds, small)
    scale = 2048 * 32 / 64
    forward = whole["forward_s_one_gpu"]
    for row, world in zip(rows, worlds, strict=True):
        sent = [4 * scale * (h * 35 + p * 40) for h, p in rr.plan_pixels(64, 4, 1, world)]
        assert row["bytes_per_rank_per_step_max"] == max(sent)
        assert row["forward_s"] == pytest.approx(forward / world)
        assert row["comm_s_network"] == pytest.approx(max(sent) / rr.NETWORK)
    record = json.loads((rr.RESULTS / "rollout_ranks.json").read_text())
    record["report"]["projected"] = rows
    table = rr.tables(record)
    assert "| 8 (1 of 2 x 2 blocks of 3 faces) |" in table
    assert "| 12 (1 of 2 bands of a face) |" in table and "| 6 (a face) |" in table


def test_loader_cpu_benchmark_times_each_path_on_the_same_crops(monkeypatch):
    """Small sizes, the real dataset and device crops: every path timed per crop, and the
    cores a node needs follow from the projection's demand."""
    from benchmarks import crop_layouts as cl
    from benchmarks import loader_cpu as lc

    small = dict(N=32, TILE=16, HALO=8, CROP=32, CHUNK=16, THREE_D=("T",), LEVELS=3)
    small |= dict(TWO_D=("ps",), CHANNELS=["T[0]", "T[1]", "T[2]", "ps"])
    for name, value in small.items():
        monkeypatch.setattr(cl, name, value)
    monkeypatch.setattr(lc, "TIMES", 5)
    body = lc.main(["--rounds", "1"])
    ms = body["ms_per_crop"]
    assert set(ms) == {"cpu_1_worker", "cpu_8_workers", "device_loader", "device_stage"}
    assert min(ms.values()) > 0 and body["ratio_to_device_loader"]["cpu_1_worker"] > 0
    cores = body["node_cores"]
    assert cores["device_loader"] / cores["cpu_1_worker"] == pytest.approx(
        ms["device_loader"] / ms["cpu_1_worker"]
    )
