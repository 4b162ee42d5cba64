# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""One banded layout's exchanges and accumulator pinned to a hand count: an extra row of
overlap or an accumulator one tile too big gives the same outputs (the bit-for-bit tests in
test_block_operator.py cannot see them) but more bytes and memory per step."""

import numpy as np

from screamcast.grid import PhysicsGrid, TileLayout
from screamcast.rollout.exchange_plan import ExchangePlan


def test_two_bands_of_a_face_exchange_and_accumulate_what_a_hand_count_gives():
    # n = 32, tile T = 8, halo H = 4, window S = 16, padded P = 40; 12 ranks: each face in
    # two bands of 2 tile rows (m = 4). Band 0 reassembles padded rows [0, 2T + H) = [0, 20),
    # band 1 rows [20, 40).
    layout = TileLayout(PhysicsGrid.for_face_size(32), tile=8, halo=4)
    top, bottom = (ExchangePlan.build(layout, r, 12) for r in (0, 1))
    channels = 3

    # accumulator: the tile rows whose windows [8 t, 8 t + 16) reach the band's rows; every
    # tile column (the band is face wide)
    assert (top.acc_rows, top.acc_cols) == (range(0, 3), range(0, 4))  # t = 2 starts at 16 < 20
    assert (bottom.acc_rows, bottom.acc_cols) == (range(1, 4), range(0, 4))  # t = 1 ends at 24
    # the block's first interior pixel in the accumulator: padded (top + H) less its start
    assert top.out_origin == (4, 4) and bottom.out_origin == (16 + 4 - 8, 4)

    # overlap: band 0's tile row 1 windows cover padded rows [8, 24), of which [20, 24) are
    # band 1's: H = 4 rows x S = 16 columns x 4 tiles; band 1's tile row 2 the same upwards
    assert {q: v.size for q, v in top.send_overlap.items()} == {1: 4 * 16 * 4}
    assert {q: v.size for q, v in bottom.send_overlap.items()} == {0: 4 * 16 * 4}
    assert top.overlap_bytes(channels) == 256 * channels * 4
    assert bottom.overlap_bytes(channels, itemsize=2) == 256 * channels * 2
    # the rows band 0 sends: window rows 12..15 of its tile row 1 (tiles 4..7 of its 8)
    tile, rows = np.divmod(top.send_overlap[1] // 16, 16)
    assert np.unique(tile).tolist() == [4, 5, 6, 7] and np.unique(rows).tolist() == [12, 13, 14, 15]
    # both sides agree on where the values land
    assert bottom.recv_overlap[0].size == top.send_overlap[1].size

    # halo inside the face: H rows of the face's width to the other band, no more
    assert top.send_halo[1].size == 4 * 32 and bottom.send_halo[0].size == 4 * 32
    # the rest of the halo is the KNN sources of other faces' rings on this band's pixels
    # (to the faces beside it, never to the other band of its own face)
    others = {q for q in top.send_halo if q != 1}
    assert others and all(q >= 2 for q in others)
    assert top.halo_bytes(channels) == sum(v.size for v in top.send_halo.values()) * channels * 4
