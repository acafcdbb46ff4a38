"""The PyTorch trainer (extra `torch`), single process or DistributedDataParallel under torchrun.

Under `torchrun --nproc_per_node K` (RANK/WORLD_SIZE in the environment) it joins a gloo process
group; every rank draws the same global batch from the shared seed, trains on its own 1/K slice, and
DDP averages the gradients, so a step is the same Adam step on the global batch whatever K is. All
ranks evaluate the full (small) evaluation split with identical weights, so all agree on when the
target is reached; only rank 0 writes the log (the harness is rank-aware).
"""

from __future__ import annotations

import os

import numpy as np

from proctor.workloads.digits_train import HIDDEN_UNITS, LEARNING_RATE
from proctor.workloads.digits_train.data import NUM_CLASSES, Split


def _distributed_env() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1") or 1) > 1


class TorchBackend:
    name = "torch"
    precision = "fp32"

    def __init__(
        self,
        split: Split,
        *,
        seed: int,
        batch_size: int,
        learning_rate: float = LEARNING_RATE,
        hidden: int = HIDDEN_UNITS,
    ) -> None:
        try:
            import torch
        except ImportError as exc:  # the extra is missing
            raise ImportError("the torch backend needs PyTorch: pip install 'proctor[torch]'") from exc
        import torch.distributed as dist

        self._torch = torch
        torch.set_num_threads(1)  # a 64x32 MLP: threads cost more than they give
        self._owns_group = False
        if _distributed_env() and not dist.is_initialized():
            dist.init_process_group("gloo")
            self._owns_group = True
        self.rank = dist.get_rank() if dist.is_initialized() else 0
        self.world_size = dist.get_world_size() if dist.is_initialized() else 1
        if batch_size % self.world_size:
            raise ValueError(f"global batch size {batch_size} must divide among {self.world_size} ranks")
        self.micro_batch = batch_size // self.world_size

        torch.manual_seed(seed)  # same initial weights on every rank
        net = torch.nn.Sequential(
            torch.nn.Linear(64, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, NUM_CLASSES)
        )
        self._net = net
        self._model = torch.nn.parallel.DistributedDataParallel(net) if self.world_size > 1 else net
        self._opt = torch.optim.Adam(self._model.parameters(), lr=learning_rate)
        self._x = torch.from_numpy(np.array(split.x_train))  # a writable copy
        self._y = torch.from_numpy(np.array(split.y_train))  # a writable copy
        self._xe = torch.from_numpy(np.array(split.x_eval))  # a writable copy
        self._ye = torch.from_numpy(np.array(split.y_eval))  # a writable copy
        self._loss = torch.nn.CrossEntropyLoss()

    def train_step(self, batch: np.ndarray) -> None:
        mine = self._torch.from_numpy(
            batch[self.rank * self.micro_batch : (self.rank + 1) * self.micro_batch]
        )
        self._opt.zero_grad(set_to_none=True)
        loss = self._loss(self._model(self._x[mine]), self._y[mine])
        loss.backward()  # DDP all-reduces (averages) the gradients here
        self._opt.step()

    def evaluate(self) -> float:
        with self._torch.no_grad():
            pred = self._net(self._xe).argmax(dim=1)
        return float((pred == self._ye).double().mean().item())

    def close(self) -> None:
        if self._owns_group:
            import torch.distributed as dist

            dist.destroy_process_group()
            self._owns_group = False
