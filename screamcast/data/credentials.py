# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Credentials never travel in a URL, and never reach a message.

``s3://KEY:SECRET@bucket/x.zarr`` would put a secret in shell history, process lists, logs and
every traceback that prints the URL. A URL with a user part is refused (:func:`refuse`,
pointing at ``--storage-options`` and the environment), and any text that goes to the user
passes :func:`redact` first (a URL's user part, and the values of secret storage options).
"""

from __future__ import annotations

import re

# A URL's user part: what follows ``scheme://`` up to an ``@``, with no ``/`` in it, or with a
# ``:`` before any ``/`` (``KEY:SECRET@``: half of real AWS secret keys hold a ``/``, and
# ``+``, ``=`` or percent-encoding; a path's ``@``, as in ``s3://b/x@v1``, has no ``:``, and
# ``host:9000/x@v2`` is a port, not a secret).
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)"
    r"(?P<info>[^/@\s'\"]+|[^/@\s'\":]+:(?!\d+(?:/|$))[^@\s'\"]+)@"
)
# The same without its scheme, as botocore quotes a bucket (``Invalid bucket name "K:S@b"``).
_BARE = re.compile(r"(?<![\w/:.@-])(?P<info>[A-Za-z0-9_.-]{3,}:(?!//)[^@\s'\"]+)@(?=[A-Za-z0-9])")
SECRET_KEYS = {
    "key",
    "secret",
    "token",
    "password",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
}
HOW = (
    'pass credentials through --storage-options \'{"key": ..., "secret": ...}\' (JSON; '
    "storage_options in a config) or the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY environment"
)


class CredentialsInURL(ValueError):
    """A URL that carries a user or secret: refused before anything is opened."""


def secrets_of(options: dict | None) -> list[str]:
    """The secret values in (nested dicts and lists of) storage options, longest first, so
    a secret that holds another is redacted whole."""
    found: list[str] = []

    def walk(d) -> None:
        items = d.items() if isinstance(d, dict) else enumerate(d if isinstance(d, list) else [])
        for k, v in items:
            if isinstance(v, dict | list):
                walk(v)
            elif str(k).lower() in SECRET_KEYS and isinstance(v, str) and v:
                found.append(v)

    walk(options if isinstance(options, dict) else {})
    return sorted(set(found), key=len, reverse=True)


def redact(text: str, options: dict | None = None) -> str:
    """``text`` with every URL's user part as ``***`` (with or without its scheme) and secret
    option values as ``***``."""
    out = _USERINFO.sub(lambda m: f"{m['scheme']}***@", str(text))
    out = _BARE.sub("***@", out)
    for secret in secrets_of(options):
        out = out.replace(secret, "***")
    return out


def scrub(config):
    """A copy of ``config`` (nested dicts and lists) with every secret option's value as
    ``***``: what a checkpoint, a run directory's config.yaml or an output's attrs record."""
    if isinstance(config, dict):
        return {
            k: "***" if str(k).lower() in SECRET_KEYS and isinstance(v, str) and v else scrub(v)
            for k, v in config.items()
        }
    if isinstance(config, list):
        return [scrub(v) for v in config]
    return config


def refuse_in(config, source: str, key: str = "") -> None:
    """:func:`refuse` every string in a (nested) config read from ``source``, naming its key."""
    if isinstance(config, dict):
        for k, v in config.items():
            refuse_in(v, source, f"{key}.{k}" if key else str(k))
    elif isinstance(config, list):
        for i, v in enumerate(config):
            refuse_in(v, source, f"{key}[{i}]")
    elif isinstance(config, str):
        refuse(config, f"{key} ({source})")


def refuse(url: str, where: str) -> None:
    """Raise :class:`CredentialsInURL` if ``url`` has a user part (``where``: the flag or key)."""
    if _USERINFO.search(str(url)):
        raise CredentialsInURL(
            f"{where}: {redact(url)} carries credentials in the URL, which would be printed "
            f"and logged; remove them and {HOW}"
        )
