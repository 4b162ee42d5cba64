# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Stores on S3: opening them, bounding and retrying their reads, and saying what went wrong.

A missing bucket, refused credentials and a silent endpoint each give one clear message;
transient errors are retried (botocore's standard mode per request, :func:`with_retries` per
sample), and every read is bounded in time.
"""

from __future__ import annotations

import copy
import errno
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)

# Retries: botocore's "standard" mode (exponential backoff with jitter on throttling, 5xx and
# timeouts) does them; s3fs's own loop is cut to one try, since it also retries timeouts (5
# tries of botocore's attempts of 60 s each stalled a read of a silent endpoint for 10 min with
# no output). A silent endpoint now fails a read after BOTO_ATTEMPTS x READ_TIMEOUT_S (~80 s);
# with_retries adds sample-level retries for throttling that outlasts botocore's, but none
# once GIVE_UP_AFTER_S have passed.
READ_TIMEOUT_S = 20
BOTO_ATTEMPTS = 4
S3_TRIES = 1
GIVE_UP_AFTER_S = 60.0
T = TypeVar("T")


class StoreError(ValueError):
    """A store that cannot be read as asked. ``option``: the setting that would accept it
    (e.g. ``assume_grid``), which the message ends by naming; ``bare``: the message without
    it, for a caller that names that setting its own way (a command line's flag)."""

    def __init__(self, message: str, option: str | None = None):
        self.bare, self.option = message, option
        super().__init__(f"{message} ({option})" if option else message)


def is_s3(url: str) -> bool:
    return str(url).startswith("s3://")


def s3_message(url: str, options: dict, err: BaseException) -> str | None:
    """One clear sentence for the S3 failures a user can fix; None if not recognised."""
    endpoint = options.get("endpoint_url") or "the default AWS endpoint"
    bucket = url[len("s3://") :].split("/", 1)[0]
    text = f"{type(err).__name__}: {err}"
    if any(k in text for k in ("NoSuchBucket", "The specified bucket does not exist")):
        return f"{url}: bucket '{bucket}' does not exist at {endpoint}"
    denied = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "Forbidden")
    # HTTP 403 as a status, not digits of a port or a URL (CI's endpoint 127.0.0.1:40361)
    status_403 = re.search(r"(?<![\d:.])403(?![\d])", text) is not None
    if isinstance(err, PermissionError) or status_403 or any(k in text for k in denied):
        return (
            f"{url}: access denied by {endpoint}: check key/secret in the config's "
            "storage_options or the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY environment"
        )
    unreachable = (
        "Could not connect",
        "EndpointConnectionError",
        "Cannot connect",
        "timed out",
        "Read timeout",
        "ReadTimeout",
        "Connect timeout",
    )
    if any(k in text for k in unreachable):
        return f"{url}: the endpoint {endpoint} does not answer ({type(err).__name__})"
    return None


# errno values s3fs gives S3's retryable answers once its own retries are spent: 503 SlowDown /
# ServiceUnavailable (EBUSY), 500 InternalError (EREMOTEIO), and timeouts
_TRANSIENT_ERRNOS = {errno.EBUSY, errno.ETIMEDOUT, getattr(errno, "EREMOTEIO", 121)}


def _transient(err: BaseException) -> bool:
    text = f"{type(err).__name__}: {err}"
    signs = (
        "SlowDown",
        "Throttl",
        "RequestTimeout",
        "InternalError",
        "ServiceUnavailable",
        "reduce your request rate",
        "Connect",
        "timed out",
        "Read timeout",
        "ReadTimeout",
        "Service Unavailable",  # obstore's wording of 503
        "error sending request",  # obstore: the connection failed
    )
    if isinstance(err, (ConnectionError, TimeoutError)) or any(k in text for k in signs):
        return True
    return type(err) is OSError and err.errno in _TRANSIENT_ERRNOS


def with_retries(
    fn: Callable[[], T],
    what: str,
    retries: int = 3,
    backoff: float = 0.5,
    give_up_after: float = GIVE_UP_AFTER_S,
) -> T:
    """Call ``fn``, retrying transient errors ``retries`` times with exponential backoff.

    Each retry is logged (what is being waited for, and why); no retry starts once
    ``give_up_after`` seconds have passed since the first call (a silent endpoint times out
    slowly). A transient error that outlasts the retries is re-raised with a note naming ``what``.
    """
    t0 = time.monotonic()
    for attempt in range(retries + 1):
        try:
            return fn()
        except StoreError:
            raise
        except Exception as err:
            if not _transient(err):
                raise
            waited = time.monotonic() - t0
            if attempt == retries or waited > give_up_after:
                err.add_note(
                    f"{what}: still failing after {attempt} retries with backoff ({waited:.0f} s)"
                )
                raise
            delay = backoff * 2**attempt
            log.warning(
                "%s: %s: %s; retry %d of %d in %.1f s",
                what,
                type(err).__name__,
                str(err)[:200],
                attempt + 1,
                retries,
                delay,
            )
            time.sleep(delay)
    raise AssertionError("unreachable")


def zarr_store(
    url: str, storage_options: dict | None = None, retries: int = 3, client: str = "s3fs"
) -> Any:
    """A read-only zarr store object for a local path or ``s3://bucket/key``; checks it exists.

    ``client="obstore"``: S3 reads go through obstore (Rust ``object_store``; 1.65x s3fs's
    crops per second in ``benchmarks/loader_s3.py``), after the same checks through s3fs."""
    if client not in ("s3fs", "obstore"):
        raise StoreError(f"S3 client must be 's3fs' or 'obstore', got {client!r}")
    options = dict(storage_options or {})
    if "config_kwargs" in options:  # botocore edits the nested dicts in place: not the caller's
        options["config_kwargs"] = copy.deepcopy(options["config_kwargs"])
    import zarr  # here: the commands' first word must not wait for it

    if not is_s3(url):
        path = Path(url)
        if not path.exists():
            raise StoreError(f"store {url} does not exist")
        return zarr.storage.LocalStore(path, read_only=True)
    import s3fs

    config = options.setdefault("config_kwargs", {})
    config.setdefault("connect_timeout", 5)
    config.setdefault("read_timeout", READ_TIMEOUT_S)
    config.setdefault("retries", {"mode": "standard", "max_attempts": BOTO_ATTEMPTS})
    fs = s3fs.S3FileSystem(**options)
    fs.retries = S3_TRIES
    bucket, _, key = url[len("s3://") :].partition("/")

    def probe() -> None:
        try:
            fs.ls(bucket)  # raises (unlike exists) on refused credentials and dead endpoints
        except FileNotFoundError:
            endpoint = options.get("endpoint_url", "the default AWS endpoint")
            raise StoreError(f"{url}: bucket '{bucket}' does not exist at {endpoint}") from None
        if not any(fs.exists(f"{bucket}/{key}/{m}") for m in ("zarr.json", ".zgroup")):
            raise StoreError(f"store {url} does not exist (no zarr.json or .zgroup under it)")

    try:
        with_retries(probe, url, retries=retries)
    except StoreError:
        raise
    except Exception as err:
        message = s3_message(url, options, err)
        if message is None:
            raise
        raise StoreError(message) from err
    if client == "obstore":
        return obstore_store(url, options)
    store = zarr.storage.FsspecStore.from_url(url, storage_options=options, read_only=True)
    store.fs.retries = S3_TRIES
    return store


def obstore_store(url: str, options: dict) -> Any:
    """``url`` through obstore, from s3fs-style ``options`` (endpoint_url, key, secret, token,
    anon, client_kwargs.region_name; otherwise the AWS environment), with the same bounds:
    ``READ_TIMEOUT_S`` per request, ``BOTO_ATTEMPTS`` tries, none after ``GIVE_UP_AFTER_S``."""
    import datetime

    try:
        from obstore.store import S3Store
    except ImportError:
        raise StoreError(
            f"{url}: the obstore S3 client is not installed: pip install obstore "
            "(or use data.s3_client=s3fs)"
        ) from None
    bucket, _, prefix = url[len("s3://") :].partition("/")
    config = {
        k: options[o]
        for o, k in (("endpoint_url", "endpoint"), ("key", "access_key_id"))
        + (("secret", "secret_access_key"), ("token", "session_token"))
        if options.get(o)
    }
    if options.get("anon"):
        config["skip_signature"] = True
    region = (options.get("client_kwargs") or {}).get("region_name")
    if region:
        config["region"] = region
    client_options = {"timeout": f"{READ_TIMEOUT_S}s", "connect_timeout": "5s"}
    if str(config.get("endpoint", "")).startswith("http://"):
        client_options["allow_http"] = True
    retry = {
        "max_retries": BOTO_ATTEMPTS - 1,
        "retry_timeout": datetime.timedelta(seconds=GIVE_UP_AFTER_S),
    }
    s3 = S3Store(
        bucket,
        prefix=prefix.strip("/") or None,
        client_options=client_options,
        retry_config=retry,
        **config,
    )
    import zarr

    return zarr.storage.ObjectStore(s3, read_only=True)


def writable(url: str, storage_options: dict | None = None):
    """A writable zarr store for a local path or an ``s3://`` URL."""
    import zarr

    if "://" not in url:
        return zarr.storage.LocalStore(url)
    return zarr.storage.FsspecStore.from_url(url, storage_options=storage_options or {})
