"""The closed lists a profile's fields choose from, with names an operator recognises."""

from __future__ import annotations

import zoneinfo

import phonenumbers
from PySide6.QtCore import QLocale

AUTH_CHOICES = (
    ("oauth", "OAuth (token)", "A token is fetched with the password and renewed when it expires"),
    ("basic", "Basic", "The user name and password travel with every request"),
)
LODGE_PORTS = (
    ("soap12", "SOAP 1.2"),
    ("soap11", "SOAP 1.1"),
    ("http_post", "HTTP POST"),
    ("http_get", "HTTP GET"),
)


def time_zones() -> tuple[str, ...]:
    """Every IANA zone name this Python knows, regions first (``Australia/Sydney``)."""
    names = zoneinfo.available_timezones()
    regional = sorted(n for n in names if "/" in n and not n.startswith(("Etc/", "SystemV/")))
    return (*regional, *sorted(n for n in names if n not in regional))


def region_name(code: str) -> str:
    territory = QLocale.codeToTerritory(code)
    if territory == QLocale.Country.AnyTerritory:
        return code
    return QLocale.territoryToString(territory)


def regions() -> tuple[tuple[str, str], ...]:
    """(code, label) for every region the number parser knows, sorted by country name."""
    items = []
    for code in phonenumbers.SUPPORTED_REGIONS:
        dial = phonenumbers.country_code_for_region(code)
        items.append((code, f"{region_name(code)} ({code}, +{dial})"))
    return tuple(sorted(items, key=lambda item: item[1].casefold()))
