# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""A nudging method's settings are its own dataclass, checked in one place
(``method_settings``): the relaxation's from the section's keys, a plug-in's from
``nudging.config``; a key a method does not declare is refused naming it."""

import pytest

from screamcast.config.inference import NudgingSection
from screamcast.config.strict import ConfigError
from screamcast.rollout.nudging import RelaxationConfig, method_settings

PLUGIN = "tests.plugins.global_mean_corrector:global_mean"


def test_the_relaxation_reads_the_sections_own_keys():
    got = method_settings(NudgingSection(tau_hours=3.0, increment="block", time="linear"))
    assert got == RelaxationConfig(3.0, "block", "linear", "nudge")


@pytest.mark.parametrize(
    "section, said",
    [
        (NudgingSection(tau_hours=0.0), "{nudging.tau_hours} must be positive, got 0.0"),
        (NudgingSection(increment="spline"), "{nudging.increment} must be one of"),
        (NudgingSection(time="spline"), "{nudging.time} must be one of cubic, linear"),
        (NudgingSection(partial_reference="x"), "{nudging.partial_reference} must be one of"),
        (NudgingSection(config={"tau": 1}), "nudging.config.tau: unknown for nudging method"),
        (NudgingSection(config={"tau_hours": 1.0}), "set {nudging.tau_hours} itself"),
        (NudgingSection(method="nope"), "{nudging.method}: nudging method 'nope' is not"),
    ],
)
def test_a_bad_relaxation_setting_names_its_key(section, said):
    with pytest.raises(ConfigError) as err:
        method_settings(section)
    assert said in err.value.template


def test_a_plugin_gets_its_own_dataclass_and_refuses_the_relaxations_keys():
    from tests.plugins.global_mean_corrector import GlobalMeanConfig

    got = method_settings(NudgingSection(method=PLUGIN, tau_hours=2.0, config={"fraction": 0.5}))
    assert got == GlobalMeanConfig(tau_hours=2.0, fraction=0.5)
    with pytest.raises(ConfigError, match="nudging.increment is not a setting of nudging"):
        method_settings(NudgingSection(method=PLUGIN, increment="block"))
    with pytest.raises(ConfigError, match="unknown for nudging method .* fraction, tau_hours"):
        method_settings(NudgingSection(method=PLUGIN, config={"strength": 1.0}))


def test_a_bad_tau_is_refused_naming_its_flag_even_without_a_reference(
    tiny_checkpoint, tiny_store, tmp_path, capsys
):
    """The rollout checks the method's settings as it plans, nudged or not (the one check:
    the config's validation has no copy), worded with the flag that set it."""
    from screamcast.cli import rollout as cli
    from tests.rollout.test_run_nudged import args

    out = tmp_path / "o.zarr"
    assert cli.main(args(tiny_checkpoint, tiny_store, out, "--nudge-tau-hours", "-1")) == 2
    assert "--nudge-tau-hours must be positive, got -1.0" in capsys.readouterr().err
    assert not out.exists()
    config = args(tiny_checkpoint, tiny_store, out, "nudging.config.x=1")
    assert cli.main(config) == 2
    assert "nudging.config.x: unknown for nudging method 'relaxation'" in capsys.readouterr().err


def test_a_method_missing_a_member_of_the_protocol_is_refused_naming_it():
    """``restrict`` is part of the protocol: a corrector without it fails at build, on any
    rank count, instead of only on several ranks."""
    from dataclasses import dataclass

    from screamcast.rollout.nudging import (
        CORRECTORS,
        NudgingError,
        build_corrector,
        register_corrector,
    )

    @dataclass(frozen=True)
    class NoSettings:
        pass

    class OneRankOnly:
        variables, resume_attrs = ["u"], ()

        def __init__(self, settings, context):
            self.settings = settings

        def prepare(self, first, last): ...
        def apply(self, x, time): ...
        def misfit(self, fields, time): ...
        def attrs(self): ...
        def close(self): ...

    register_corrector("no_restrict", NoSettings)(OneRankOnly)
    try:
        with pytest.raises(NudgingError, match="'no_restrict' lacks restrict of the corrector"):
            build_corrector(NudgingSection(method="no_restrict"), None)
        OneRankOnly.restrict = lambda self, *a: self
        built = build_corrector(NudgingSection(method="no_restrict"), None)
        assert built.settings == NoSettings()
    finally:
        CORRECTORS.entries.pop("no_restrict")


def test_a_plugin_registered_without_settings_gets_the_section_as_before():
    """Plug-ins written before typed settings (``register_corrector(name)``) keep working:
    their factory gets the ``nudging`` section itself."""
    from screamcast.rollout.nudging import CORRECTORS, register_corrector

    seen = []
    register_corrector("untyped")(lambda settings, context: seen.append(settings))
    try:
        section = NudgingSection(method="untyped", tau_hours=3.0)
        assert method_settings(section) is section
    finally:
        CORRECTORS.entries.pop("untyped")
