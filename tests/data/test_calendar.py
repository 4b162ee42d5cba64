# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Model calendars: steps, day of the year, encoding, parsing and the reference-date rule."""

import cftime
import numpy as np
import pytest
import xarray as xr

from screamcast.data import calendar as cal
from screamcast.data.forcing import day_of_year_and_hours, solar_terms
from screamcast.data.store import StoreError, open_store, time_step
from screamcast.sources import synthetic as syn


def dates(calendar, *stamps):
    return np.array([cftime.datetime(*s, calendar=calendar) for s in stamps], dtype=object)


@pytest.mark.parametrize("calendar", ["noleap", "365_day", "360_day", "standard", "julian"])
def test_a_store_in_any_calendar_opens_with_its_steps_in_that_calendar(tmp_path, calendar):
    path = syn.write_store(
        tmp_path / "s.zarr", 4, days=2, step_hours=6, start="2020-02-28T00", calendar=calendar
    )
    ds = open_store(path, None, ["u"], n=4)
    t = ds["time"].values
    assert cal.calendar_of(t) == cal.canonical(calendar) and time_step(ds).total_seconds() == 21600
    # the 5th time is Mar 1 in noleap (no Feb 29), Feb 29 in the others
    day = (t[4].month, t[4].day)
    assert day == ((3, 1) if cal.canonical(calendar) == "noleap" else (2, 29))


def test_the_noleap_traceback_of_issue_14_is_gone(tmp_path):
    """Times decoded to cftime made ``dt <= 0`` fail with a TypeError before."""
    path = syn.write_store(tmp_path / "s.zarr", 4, days=1, step_hours=6, calendar="noleap")
    bad = xr.open_zarr(path, decode_times=cal.DECODER, chunks=None).isel(time=[0, 1, 3, 4])
    bad.to_zarr(tmp_path / "gap.zarr", consolidated=False)
    with pytest.raises(StoreError, match=r"irregular time step: 720 min .*noleap calendar"):
        open_store(tmp_path / "gap.zarr", None, ["u"], n=4)


def test_day_of_year_follows_the_calendar():
    t = dates("noleap", (2020, 3, 1, 6), (2020, 12, 31))
    doy, hours = day_of_year_and_hours(t)
    assert list(doy) == [60, 365] and list(hours) == [6, 0]
    g = dates("proleptic_gregorian", (2020, 3, 1, 6))
    assert day_of_year_and_hours(g)[0][0] == 61
    numpy = np.array(["2020-03-01T06"], "datetime64[ns]")
    assert day_of_year_and_hours(numpy)[0][0] == 61  # datetime64 is Gregorian
    # in a 360-day year, day 91 is a quarter year after day 1: declination of the equinox + 10
    d360 = dates("360_day", (2020, 3, 21), (2020, 6, 21))
    sin_d = solar_terms(d360)[0]
    assert sin_d[0] == pytest.approx(0.0, abs=1e-12)
    assert np.degrees(np.arcsin(sin_d[1])) == pytest.approx(23.44, abs=1e-9)


def test_encoding_is_exact_in_the_calendar():
    t = dates("noleap", (2020, 2, 28, 23, 40), (2020, 3, 1, 0, 0), (2020, 3, 1, 0, 20))
    values, units, calendar = cal.encode(t)
    assert list(values) == [0, 20, 40] and units == "minutes since 2020-02-28 23:40:00"
    assert calendar == "noleap"
    back = cftime.num2date(values, units, calendar)
    assert list(back) == list(t)


def test_start_dates_are_parsed_in_the_calendar():
    assert cal.parse("2020-03-01T06", "noleap") == cftime.datetime(2020, 3, 1, 6, calendar="noleap")
    with pytest.raises(cal.CalendarError, match="2021-02-29 is not a date of the noleap"):
        cal.parse("2021-02-29", "noleap")
    with pytest.raises(cal.CalendarError, match="is not a date YYYY-MM-DD"):
        cal.parse("March 1st", "noleap")
    with pytest.raises(cal.CalendarError, match="unknown calendar 'lunar'"):
        cal.canonical("lunar")


def test_a_gregorian_reference_nudges_a_noleap_model_date_for_date():
    ref = xr.Dataset(
        {"u": ("time", np.arange(5.0))},
        coords={
            "time": np.array(
                [
                    "2020-02-28T12",
                    "2020-02-28T18",
                    "2020-02-29T00",
                    "2020-02-29T06",
                    "2020-03-01T00",
                ],
                "datetime64[ns]",
            )
        },
    )
    out = cal.in_model_calendar(ref, "noleap", "era5.zarr")
    want = dates("noleap", (2020, 2, 28, 12), (2020, 2, 28, 18), (2020, 3, 1))
    assert list(out["time"].values) == list(want)
    assert list(out["u"].values) == [0.0, 1.0, 4.0]  # Feb 29 unused, never shifted a day
    assert out.attrs["reference_dropped"] == 2 and out.attrs["reference_calendar"] != "noleap"


@pytest.mark.parametrize(("have", "want"), [("noleap", "standard"), ("360_day", "noleap")])
def test_other_calendar_pairs_are_refused(have, want):
    ref = xr.Dataset(coords={"time": dates(have, (2020, 1, 1), (2020, 1, 2))})
    with pytest.raises(cal.CalendarError, match=f"ref.zarr is on the {have} calendar"):
        cal.in_model_calendar(ref, want, "ref.zarr")
