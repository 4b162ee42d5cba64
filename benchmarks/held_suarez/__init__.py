# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""The Held-Suarez benchmark: the emulator on a dynamical core's climate, judged against
persistence, climatology and the dycore itself at T21 (docs/held-suarez.md)."""
