# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Every command line of screamcast: thin shells over library calls, errors worded as flags."""
