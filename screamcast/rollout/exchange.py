# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The screamcast authors
"""Point-to-point exchanges between a rank and its neighbours over ``torch.distributed``
(gloo on CPU, NCCL on GPUs), every byte sent counted.

The counter is how the benchmark checks the exchanges against the halo arithmetic
(:class:`~screamcast.rollout.domain.ExchangePlan`): it wraps every call that moves the step's
data (:meth:`Exchange.collect`, which hands rank 0 the blocks to score, is not the step's).
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from screamcast.step.reduction import LocalReduction


class Exchange:
    def __init__(self, rank: int, world: int, device: torch.device | str = "cpu"):
        self.rank, self.world, self.device = rank, world, torch.device(device)
        self.sent_bytes = 0  # since construction (or the last reset)

    def reset(self) -> None:
        self.sent_bytes = 0

    def swap(self, send: dict[int, torch.Tensor], recv: dict[int, tuple]) -> dict:
        """Send ``send[q]`` to each rank ``q`` and receive from each ``q`` in ``recv`` a tensor
        of ``recv[q] = (shape, dtype, device)``; every transfer in flight at once. Tensors
        travel on this exchange's device (NCCL moves device tensors only: a nudging
        increment's host tensors go through the GPU) and come back on the device asked for."""
        return self.start(send, recv).wait()

    def start(self, send: dict[int, torch.Tensor], recv: dict[int, tuple]) -> Transfers:
        """:meth:`swap` posted, not waited for: the caller computes what needs none of it
        (the interior tiles' forwards) and then calls ``wait()``."""
        out = {
            q: torch.empty(shape, dtype=t, device=self.device) for q, (shape, t, _) in recv.items()
        }
        requests = [dist.irecv(out[q], src=q) for q in sorted(out)]
        for q in sorted(send):
            tensor = send[q].to(self.device).contiguous()
            requests.append(dist.isend(tensor, dst=q))
            self.sent_bytes += tensor.numel() * tensor.element_size()
        return Transfers(requests, out, {q: spec[2] for q, spec in recv.items()})

    def any(self, flag: bool) -> bool:
        """True on every rank when ``flag`` is true on any (a state turned non-finite)."""
        t = torch.tensor([int(flag)], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item())

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor`` summed over the ranks, in place (the nudging's group sums that straddle
        ranks): small, and counted."""
        on = tensor.to(self.device)  # NCCL reduces device tensors only
        dist.all_reduce(on)
        self.sent_bytes += on.numel() * on.element_size()
        return tensor.copy_(on)

    def max_(self, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor``'s element-wise maximum over the ranks, in place (the guard's extremes)."""
        on = tensor.to(self.device)
        dist.all_reduce(on, op=dist.ReduceOp.MAX)
        self.sent_bytes += on.numel() * on.element_size()
        return tensor.copy_(on)

    def barrier(self) -> None:
        dist.barrier()

    def gather(self, value) -> list:
        """Every rank's ``value`` (a few numbers), in rank order, on every rank."""
        every = [None] * self.world
        dist.all_gather_object(every, value)
        return every

    def collect(self, value) -> list | None:
        """Every rank's ``value`` in rank order on rank 0, None on the others (a step's blocks
        for the scores; not counted in ``sent_bytes``, the exchanges' arithmetic)."""
        every = [None] * self.world if self.rank == 0 else None
        dist.gather_object(value, every, dst=0)
        return every


class LocalExchange(LocalReduction):
    """The exchange of one rank that holds the whole globe: nothing to send, every
    reduction its own value (the rollout's driver is the same for 1 and N ranks)."""

    rank, world, sent_bytes = 0, 1, 0

    def reset(self) -> None:
        pass

    def swap(self, send: dict[int, torch.Tensor], recv: dict[int, tuple]) -> dict:
        return self.start(send, recv).wait()

    def start(self, send: dict[int, torch.Tensor], recv: dict[int, tuple]) -> Transfers:
        """Nothing to post: one block holds the globe, so a plan of one rank sends nothing."""
        if send or recv:
            raise ValueError(
                f"one rank has no neighbours; asked to send to {sorted(send)}, "
                f"receive from {sorted(recv)}"
            )
        return Transfers([], {}, {})

    def barrier(self) -> None:
        pass

    def gather(self, value) -> list:
        return [value]

    def collect(self, value) -> list:
        return [value]


class Transfers:
    """A :meth:`Exchange.start`'s messages in flight; ``wait()`` returns what was received."""

    def __init__(self, requests: list, out: dict[int, torch.Tensor], devices: dict):
        self.requests, self.out, self.devices = requests, out, devices

    def wait(self) -> dict[int, torch.Tensor]:
        for request in self.requests:
            request.wait()
        return {q: t.to(self.devices[q]) for q, t in self.out.items()}
