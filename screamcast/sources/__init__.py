# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Where data comes from: the dynamical core (Held-Suarez on dinosaur, an optional extra) and
the coarsening of any store into a nudging reference."""
