"""Time zones by name: hostile names refused, Australia's zones offered first."""

from __future__ import annotations

from importlib.resources import files

import pytest

from gwdesk.domain.errors import InputRefused
from gwdesk.domain.zones import (
    MAX_ZONE_NAME,
    OFFERED_FIRST,
    ZoneChoice,
    ZoneError,
    zone_choices,
    zone_label,
    zone_named,
)

NOT_SHAPED_LIKE_A_ZONE = [
    "../../etc/passwd",
    "/etc/localtime",
    "Australia\\Sydney",
    "UTC\x00",
    "Australia/Sydney\n",
    " Australia/Sydney",
    "Australia/\x1b[31mSydney",
    "\u202eUTC",
    "zone.tab",  # a file beside the zones, not one
]
UNKNOWN = [
    "Australia",  # a folder of zones, not a zone
    "leapseconds",  # a file among the zones that is not one
    "Australia/Nowhere",
    "australia/sydney",
]


def test_a_zone_is_found_by_its_name() -> None:
    assert zone_named("Australia/Lord_Howe").key == "Australia/Lord_Howe"


@pytest.mark.parametrize("name", NOT_SHAPED_LIKE_A_ZONE, ids=repr)
def test_a_name_not_shaped_like_a_zone_is_refused_before_any_look_up(name: str) -> None:
    with pytest.raises(ValueError, match="is not a time zone name"):
        zone_named(name)


@pytest.mark.parametrize("name", UNKNOWN, ids=repr)
def test_a_name_no_zone_has_is_refused_as_a_value_error(name: str) -> None:
    with pytest.raises(ValueError, match="no time zone called"):
        zone_named(name)


def test_an_empty_name_is_refused() -> None:
    with pytest.raises(ZoneError, match="No time zone given"):
        zone_named("")


def test_a_10_kb_name_is_refused_for_its_length() -> None:
    with pytest.raises(ZoneError, match="10,000 characters"):
        zone_named("x" * 10_000)


def test_a_name_that_is_not_text_is_refused() -> None:
    with pytest.raises(ZoneError, match="not int"):
        zone_named(10)  # type: ignore[arg-type]


def test_a_refusal_names_the_field_it_is_for() -> None:
    with pytest.raises(InputRefused) as refused:
        zone_named("Mars/Olympus_Mons", field="contact.zone")
    assert refused.value.field == "contact.zone"


def test_a_refusal_shows_a_control_character_escaped() -> None:
    with pytest.raises(ZoneError) as refused:
        zone_named("UTC\x00\x1b[2J")
    assert "\\x00" in refused.value.message
    assert "\x00" not in refused.value.message
    assert "\x1b" not in refused.value.message


def test_a_refusal_of_a_huge_name_does_not_repeat_it() -> None:
    with pytest.raises(ZoneError) as refused:
        zone_named("Australia/" + "x" * 10_000)
    assert len(refused.value.message) < 200


def test_a_name_at_the_length_limit_is_looked_up_not_refused_for_length() -> None:
    name = "A" * MAX_ZONE_NAME
    with pytest.raises(ZoneError, match="no time zone called"):
        zone_named(name)


def test_australias_zones_are_offered_first_then_new_zealand_and_utc() -> None:
    assert [choice.name for choice in OFFERED_FIRST] == [
        "Australia/Sydney",
        "Australia/Melbourne",
        "Australia/Brisbane",
        "Australia/Adelaide",
        "Australia/Darwin",
        "Australia/Perth",
        "Australia/Hobart",
        "Australia/Lord_Howe",
        "Australia/Broken_Hill",
        "Pacific/Auckland",
        "UTC",
    ]


@pytest.mark.parametrize("choice", OFFERED_FIRST, ids=lambda choice: choice.name)
def test_every_zone_offered_first_is_found(choice: ZoneChoice) -> None:
    assert zone_named(choice.name).key == choice.name


@pytest.mark.parametrize("choice", OFFERED_FIRST, ids=lambda choice: choice.name)
def test_the_tzdata_package_holds_every_zone_offered_first(choice: ZoneChoice) -> None:
    """A machine (or frozen app) without zone files still has these, from `tzdata`."""
    zone_file = files("tzdata.zoneinfo").joinpath(*choice.name.split("/"))
    assert zone_file.read_bytes().startswith(b"TZif")


def test_a_zone_offered_first_has_a_short_label_and_any_other_its_name() -> None:
    assert zone_label("Australia/Brisbane") == "Brisbane (QLD, no daylight saving)"
    assert zone_label("Europe/London") == "Europe/London"


def test_the_other_zones_follow_the_offered_ones_alphabetically_each_once() -> None:
    choices = zone_choices(["Europe/London", "UTC", "Asia/Tokyo", "Australia/Perth", "Asia/Tokyo"])
    assert choices[: len(OFFERED_FIRST)] == OFFERED_FIRST
    assert [choice.name for choice in choices[len(OFFERED_FIRST) :]] == [
        "Asia/Tokyo",
        "Europe/London",
    ]
