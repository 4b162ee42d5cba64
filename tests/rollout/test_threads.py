# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The rollout's CPU threads: the idle cores by default (a loaded machine's busy cores are not
oversubscribed), OMP_NUM_THREADS or stepper.threads when given, the caller's count restored."""

import os

import pytest
import torch

from screamcast.config.inference import InferenceConfig
from screamcast.config.strict import ConfigError
from screamcast.rollout.threads import (
    busy_between,
    busy_cores,
    choose_threads,
    cpu_times,
    idle_threads,
)


def test_the_idle_cores_less_the_busy_ones_shared_by_the_ranks():
    assert idle_threads(cores=16, busy=0.2) == 16
    assert idle_threads(cores=16, busy=3.4) == 13
    assert idle_threads(cores=2, busy=2.6) == 1  # a loaded 2-core machine: one thread
    assert idle_threads(cores=16, busy=0.0, ranks=4) == 4
    assert idle_threads(cores=8, busy=30.0, ranks=8) == 1


STAT = """cpu  100 0 100 700 100 0 0 0 0 0
cpu0 {u0} 0 0 {i0} 0 0 0 {s0} 0 0
cpu1 {u1} 0 0 {i1} 0 0 0 0 0 0
cpu2 50 0 0 50 0 0 0 0 0 0
intr 1 2 3
"""


def test_busy_cores_from_two_readings_of_proc_stat():
    """cpu0 busy all the time (a quarter of it another guest's, steal), cpu1 idle, cpu2 not
    this process's: 1 core busy."""
    before = cpu_times(STAT.format(u0=100, i0=100, s0=0, u1=10, i1=500), {0, 1})
    after = cpu_times(STAT.format(u0=175, i0=100, s0=25, u1=10, i1=600), {0, 1})
    assert set(before) == {"cpu0", "cpu1"} and before["cpu0"] == (200, 100)
    assert busy_between(before, after) == 1.0
    assert busy_cores({0}, "/nonexistent/stat") >= 0  # no /proc/stat: the load average


def test_a_setting_then_omp_num_threads_then_the_idle_cores():
    assert choose_threads(3, {"OMP_NUM_THREADS": "1"}) == (3, "stepper.threads")
    assert choose_threads(0, {"OMP_NUM_THREADS": "2"}) == (2, "OMP_NUM_THREADS")
    threads, why = choose_threads(0, {"OMP_NUM_THREADS": ""})
    assert why == "the idle cores" and 1 <= threads <= len(os.sched_getaffinity(0))
    with pytest.raises(ConfigError, match=r"stepper.threads must be >= 0"):
        InferenceConfig.from_keys({"stepper.threads": -1}).validate()


def test_the_rollout_takes_its_threads_and_gives_the_callers_back(
    tiny_checkpoint, tiny_store, tmp_path, monkeypatch
):
    from screamcast.rollout.run import run_rollout

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    keys = {
        "checkpoint.path": str(tiny_checkpoint),
        "initial_condition.data": str(tiny_store),
        "output.path": str(tmp_path / "o.zarr"),
        "output.steps": 2,
        "output.progress": False,
        "stepper.threads": 1,
    }
    before = torch.get_num_threads()
    summary = run_rollout(InferenceConfig.from_keys(keys))
    assert summary["threads"] == 1 and summary["threads_from"] == "stepper.threads"
    assert torch.get_num_threads() == before
