# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The strict config loader refuses what a misspelt or mistyped setting would silently become:
a bool where an int belongs, a list of the wrong items (issue 42's surviving mutations)."""

from dataclasses import dataclass, field

import pytest

from screamcast.config.inference import InferenceConfig
from screamcast.config.strict import ConfigError, from_dict


@dataclass
class Section:
    steps: int = 1
    tau: float = 6.0
    names: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


def test_a_bool_is_no_int_and_no_float():
    with pytest.raises(ConfigError, match=r"x.yaml: steps must be a int, got True"):
        from_dict(Section, {"steps": True}, "x.yaml")
    with pytest.raises(ConfigError, match=r"tau must be a float, got False"):
        from_dict(Section, {"tau": False}, "x.yaml")
    got = from_dict(Section, {"steps": 3, "tau": 2}, "x.yaml")
    assert got.steps == 3 and got.tau == 2.0 and isinstance(got.tau, float)


def test_list_items_are_checked_one_by_one():
    with pytest.raises(ConfigError, match=r"names must be a str, got 1"):
        from_dict(Section, {"names": [1, 2]}, "x.yaml")
    with pytest.raises(ConfigError, match=r"sizes must be a int, got True"):
        from_dict(Section, {"sizes": [4, True]}, "x.yaml")
    assert from_dict(Section, {"names": ["u", "v"], "sizes": [4]}, "x.yaml").names == ["u", "v"]


def test_the_inference_config_refuses_numbers_for_variable_names():
    with pytest.raises(ConfigError) as err:
        InferenceConfig.load(None, ["nudging.variables=[1,2]"])
    assert "nudging.variables" in str(err.value) and "must be a str, got 1" in str(err.value)
    config, _ = InferenceConfig.load(None, ["nudging.variables=[u,v]"])
    assert config.nudging.variables == ["u", "v"]


def test_a_float_written_without_a_dot_is_a_float():
    """YAML 1.1 (PyYAML) reads ``1e-9`` as a string: a float setting takes it as the number a
    user wrote (``guard.mean_sigmas=1e-9`` was refused), and still refuses a word."""
    from screamcast.config.strict import load

    got, _ = load(InferenceConfig, None, ["guard.mean_sigmas=1e-9", "nudging.tau_hours=3E+1"])
    assert got.guard.mean_sigmas == 1e-9 and got.nudging.tau_hours == 30.0
    assert from_dict(Section, {"tau": "2.5e-3"}, "x.yaml").tau == 0.0025
    with pytest.raises(ConfigError, match=r"tau must be a float, got 'soon'"):
        from_dict(Section, {"tau": "soon"}, "x.yaml")


@pytest.mark.parametrize("text", ["inf", "nan", "1_000", " 1e-9", "1e-9 ", "0x10"])
def test_only_a_number_in_exponent_notation_is_read_from_a_string(text):
    """``inf`` would turn a guard test off unseen: refused like any word."""
    with pytest.raises(ConfigError, match=r"tau must be a float"):
        from_dict(Section, {"tau": text}, "x.yaml")
