#!/usr/bin/env python3
"""Regenerates iso3166.tsv from the PyPI package iso3166 (MIT), a
self-contained table of ISO 3166-1 country codes:

    pip download iso3166==3.0.0 --no-deps && unzip iso3166-3.0.0-py3-none-any.whl -d pkg
    python3 make-iso3166.py pkg > iso3166.tsv

One line per country: alpha-2, alpha-3, numeric, English short name.
Codes in ISO 3166-1's user-assigned ranges (the package has Kosovo, XK)
are left out: the standard assigns them to no one, and txmap lists those
ranges itself as user-assigned. CORRECTIONS below fixes the package where
its name is not ISO's English short name.
"""
import sys

sys.path.insert(0, sys.argv[1])
import iso3166  # noqa: E402

# Where the package's name is not ISO's English short name.
CORRECTIONS = {
    "NR": "Nauru",  # the package has the Nauruan "Naoero"
}


def user_assigned(alpha2):
    return alpha2 in ("AA", "ZZ") or (alpha2[0] == "Q" and alpha2[1] >= "M") or alpha2[0] == "X"


for c in iso3166.countries:
    if user_assigned(c.alpha2):
        continue
    name = CORRECTIONS.get(c.alpha2, c.name)
    print(f"{c.alpha2}\t{c.alpha3}\t{c.numeric}\t{name}")
