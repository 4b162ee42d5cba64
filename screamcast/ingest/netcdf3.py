# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The size a classic netCDF file (CDF1, CDF2, EAM's CDF5) must have, from its header.

The netCDF library reads a classic file cut short (its header intact, its data not) as if the
missing bytes were fill: no error, zeros or fill values. The header says where every
variable's data begins and how large it is, so the file's expected length is known before a
byte of data is read; a shorter file is truncated. Format: the netCDF classic and 64-bit
offset format specification and its CDF5 extension (Unidata).
"""

from __future__ import annotations

import struct

_ABSENT, _DIMENSION, _VARIABLE, _ATTRIBUTE = 0, 10, 11, 12
# nc_type -> bytes per value (byte, char, short, int, float, double, ubyte, ushort, uint,
# int64, uint64)
_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 1, 8: 2, 9: 4, 10: 8, 11: 8}
_STREAMING = 0xFFFFFFFF


class _Header:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 4
        self.version = data[3]  # 1 classic, 2 64-bit offset, 5 64-bit data (CDF5)
        self.wide = self.version == 5  # counts and lengths are 8 bytes

    def _read(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise EOFError
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def count(self) -> int:
        return self._read(">Q" if self.wide else ">I")

    def offset(self) -> int:
        return self._read(">Q" if self.version in (2, 5) else ">I")

    def name(self) -> None:
        length = self.count()
        self.pos += (length + 3) // 4 * 4

    def attributes(self) -> None:
        tag, n = self._read(">I"), self.count()
        if tag not in (_ABSENT, _ATTRIBUTE):
            raise ValueError("bad attribute list")
        for _ in range(n):
            self.name()
            kind, values = self._read(">I"), self.count()
            self.pos += (values * _SIZES[kind] + 3) // 4 * 4


def expected_size(head: bytes) -> int | None:
    """The length in bytes a classic netCDF file with this ``head`` (its first bytes, enough
    to hold the header) must have; None when ``head`` is not a classic netCDF header or is too
    short to hold it (the caller reads more, or cannot tell)."""
    if len(head) < 4 or head[:3] != b"CDF" or head[3] not in (1, 2, 5):
        return None
    h = _Header(head)
    try:
        records = h.count()
        tag, ndims = h._read(">I"), h.count()
        if tag not in (_ABSENT, _DIMENSION):
            return None
        dims = []
        for _ in range(ndims):
            h.name()
            dims.append(h.count())  # 0: the record (unlimited) dim
        h.attributes()  # global
        tag, nvars = h._read(">I"), h.count()
        if tag not in (_ABSENT, _VARIABLE):
            return None
        ends, record_size, record_vars = [h.pos], 0, []
        for _ in range(nvars):
            h.name()
            ids = [h.count() for _ in range(h.count())]
            h.attributes()
            kind = h._read(">I")
            vsize, begin = h.count(), h.offset()
            if ids and dims[ids[0]] == 0:  # a record variable: one slab per record
                exact = _SIZES[kind]
                for i in ids[1:]:
                    exact *= dims[i]
                record_size += vsize
                record_vars.append((begin, vsize, exact))
            else:
                ends.append(begin + vsize)
    except (EOFError, ValueError, KeyError, IndexError):
        return None
    if record_vars and records != _STREAMING and records > 0:
        if len(record_vars) == 1:  # a single record variable's records are not padded
            record_size = record_vars[0][2]
        begin = min(b for b, _, _ in record_vars)
        last = max(b - begin + e for b, _, e in record_vars)
        ends.append(begin + (records - 1) * record_size + last)
    return max(ends)
