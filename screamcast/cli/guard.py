# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""What every command does around its work: refuse credentials in URLs, keep secrets out of
logs, and word S3 failures in one sentence instead of a library's traceback."""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from screamcast.data.credentials import CredentialsInURL, redact, refuse, refuse_in
from screamcast.data.remote import s3_message

_S3_LIBRARIES = ("botocore", "aiobotocore", "s3fs", "obstore", "aiohttp")


def _where(args: list[str], i: int) -> tuple[str, str]:
    """``(flag or key, value)`` of argument ``i``: ``--output URL``, ``--output=URL``,
    ``key=URL`` or a bare argument."""
    arg = args[i]
    if arg.startswith("--") and "=" in arg:
        flag, value = arg.split("=", 1)
        return flag, value
    if "=" in arg and not arg.startswith("-") and "://" not in arg.split("=", 1)[0]:
        key, value = arg.split("=", 1)
        return key, value
    if i > 0 and args[i - 1].startswith("--") and "=" not in args[i - 1]:
        return args[i - 1], arg
    return f"argument {i + 1}", arg


def _json_options(args: list[str]) -> dict:
    """The ``--storage-options`` JSON given, or {}."""
    for i, arg in enumerate(args):
        text = arg.split("=", 1)[1] if arg.startswith("--storage-options=") else None
        if arg == "--storage-options" and i + 1 < len(args):
            text = args[i + 1]
        if text:
            try:
                value = json.loads(text)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


def _yaml(text: str):
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def _configs(args: list[str]) -> dict:
    """``{path: contents}`` of each ``--config`` YAML file given (unreadable ones left out:
    the command's own error names the file)."""
    found = {}
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        path = args[i + 1] if arg == "--config" and i + 1 < len(args) else None
        path = value if key == "--config" and eq else path
        if path:
            try:
                with open(path) as f:
                    found[path] = _yaml(f.read())
            except OSError:
                pass
    return found


def _options(args: list[str], configs: dict | None = None) -> dict:
    """Every storage option the command was given, nested (whose secrets are redacted from
    its messages and logs): ``--storage-options`` JSON, ``...storage_options=...``
    overrides (a rollout's ``stores.``, training's ``data.``) and a ``--config`` YAML file's."""
    found = {"flag": _json_options(args)}
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if eq and "storage_options" in key:
            found[f"override {i}"] = _yaml(value)
    configs = _configs(args) if configs is None else configs  # read by the caller once
    for k, config in enumerate(configs.values()):
        found[f"config {k}"] = config
    return {k: v for k, v in found.items() if isinstance(v, dict)}


_REDACTED: list[dict] = []  # every guarded call's storage options, in this process


def _redacting(options: dict) -> None:
    """Every log record's text redacted from here on (handlers are set up later, by Hydra),
    of this call's secrets and of every earlier call's in the same process (a notebook or a
    test that runs several commands)."""
    if options not in _REDACTED:
        _REDACTED.append(options)
    make = logging.getLogRecordFactory()
    if getattr(make, "screamcast_redacts", False):
        return

    def factory(*a, **kw):
        record = make(*a, **kw)
        text = clean = record.getMessage()
        for given in _REDACTED:
            clean = redact(clean, given)
        if clean != text:
            record.msg, record.args = clean, ()
        return record

    factory.screamcast_redacts = True
    logging.setLogRecordFactory(factory)


class _RankErrors:
    """Under ``screamcast-launch``: this rank's ``error: ...`` lines go to the launcher's
    folder (it prints each distinct one once, naming the ranks); the rest of stderr passes."""

    def __init__(self, stream, path: Path):
        self.stream, self.path, self.pending = stream, path, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.startswith("error: "):
                with open(self.path, "a") as f:
                    f.write(line + "\n")
            else:
                self.stream.write(line + "\n")
        if self.pending and not self.pending.startswith("error"):
            self.stream.write(self.pending)  # a progress bar's carriage returns
            self.pending = ""
        return len(text)

    def flush(self) -> None:
        if self.pending:  # an error line without its newline yet
            self.write("\n")
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _collect_errors() -> None:
    """Send this rank's error lines to the launcher when ``screamcast-launch`` started it."""
    from screamcast.cli.launch import ERRORS_ENV

    folder = os.environ.get(ERRORS_ENV)
    rank = os.environ.get("RANK")
    if folder and rank is not None and not isinstance(sys.stderr, _RankErrors):
        sys.stderr = _RankErrors(sys.stderr, Path(folder) / f"rank{rank}.txt")


class _BesideProgressBars(logging.Handler):
    """The package's warnings on their own lines, above any progress bar (tqdm.write), not
    glued to the bar's line as Python's last-resort handler leaves them."""

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers:  # Hydra's (or the user's) own handlers print it
            return
        from tqdm import tqdm

        tqdm.write(self.format(record), file=sys.stderr)


def _console_logging() -> None:
    logger = logging.getLogger("screamcast")
    if not any(isinstance(h, _BesideProgressBars) for h in logger.handlers):
        handler = _BesideProgressBars(logging.WARNING)
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        logger.addHandler(handler)


def _from_s3(err: BaseException) -> bool:
    seen: BaseException | None = err
    while seen is not None:
        if type(seen).__module__.split(".")[0] in _S3_LIBRARIES:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def guarded(main: Callable[..., int | None]) -> Callable[..., int]:
    """``main(argv)`` with credentials in any argument refused (exit 2), log records redacted,
    and S3 failures worded (exit 2); anything else is ``main``'s own to word."""

    @functools.wraps(main)
    def run(argv: list[str] | None = None) -> int:
        _collect_errors()
        _console_logging()
        args = list(sys.argv[1:] if argv is None else argv)
        configs = _configs(args)  # each --config file read once
        options = _options(args, configs)
        try:
            for i in range(len(args)):
                where, value = _where(args, i)
                refuse(value, where)
            for path, config in configs.items():
                refuse_in(config, path)
        except CredentialsInURL as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        _redacting(options)
        try:
            return main(argv) if argv is not None else main()
        except Exception as err:
            if not _from_s3(err):
                raise
            url = next((a for a in args if a.startswith("s3://")), "the S3 store")
            message = s3_message(url, options.get("flag", {}), err)
            message = message or f"{url}: {type(err).__name__}: {err}"
            print(f"error: {redact(message, options)}", file=sys.stderr)
            return 2

    return run
