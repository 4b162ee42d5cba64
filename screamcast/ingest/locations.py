# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where an ingestion's files are: sources (paths, globs, ``s3://`` URLs) expanded to files,
and one canonical spelling per location, so an output is never also an input (an output
written beside its inputs, or inside their folder, is found and skipped or refused).
"""

from __future__ import annotations

import glob
import os
import posixpath

from screamcast.ingest.errors import IngestError


def canonical(url: str) -> str:
    """One spelling per location, to compare inputs with the output: ``file://``, relative
    paths, ``..``, ``~`` and symlinks resolved for local paths; ``s3://`` keys normalised
    (repeated and trailing slashes, ``.`` and ``..``)."""
    url = str(url)
    if url.startswith("file://"):
        url = url[len("file://") :]
    if "://" not in url:
        return os.path.realpath(os.path.expanduser(url))
    scheme, rest = url.split("://", 1)
    bucket, _, key = rest.partition("/")
    key = posixpath.normpath("/" + key).lstrip("/") if key.strip("/") else ""
    return f"{scheme}://{bucket}/{key}".rstrip("/")


def local_path(url: str) -> str:
    """A ``file://`` URL as the plain path zarr and netCDF take; anything else as it is."""
    return url[len("file://") :] if str(url).startswith("file://") else str(url)


def within(inner: str, outer: str) -> bool:
    """Canonical ``inner`` is ``outer`` or lies inside it."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def _below_base(output: str, pattern: str) -> bool:
    """The canonical ``output`` lies strictly inside the folder a glob ``pattern`` searches
    (the part before its first wildcard): an output beside the inputs, not their folder."""
    parts = pattern.split("/")
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    base = canonical("/".join(parts[:fixed]) or ".")
    return output != base and within(output, base)


def expand_sources(
    sources: list[str], storage_options: dict | None = None, exclude: str | None = None
) -> list[str]:
    """Local paths, globs and ``s3://`` URLs (globs too) -> the files, unordered. A glob's
    hit that is the canonical ``exclude`` (the ingestion's output) or lies inside it is
    skipped: an output written beside its inputs is not an input of the next run."""
    out: list[str] = []
    for src in sources:
        src = local_path(src)
        if src.startswith("s3://"):
            import s3fs

            fs = s3fs.S3FileSystem(**(storage_options or {}))
            hits = ["s3://" + p for p in fs.glob(src)] if glob.has_magic(src) else [src]
        else:
            hits = sorted(glob.glob(src)) if glob.has_magic(src) else [src]
        if glob.has_magic(src) and exclude is not None and _below_base(exclude, src):
            hits = [h for h in hits if not within(canonical(h), exclude)]
        if not hits:
            raise IngestError(f"{src}: no file matches")
        out += hits
    return out
