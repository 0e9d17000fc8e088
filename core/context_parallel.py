"""Context parallelism (Ring Attention): one long sequence's KV cache split over N hosts.

Liu, Zaharia & Abbeel, "Ring Attention with Blockwise Transformers for
Near-Infinite Context", arXiv:2310.01889 (2023), section 3: the sequence is cut
into N blocks of ``c = S/N`` tokens, one per host; each host keeps its block's
queries and passes its key/value block to the next host around a ring, computing
attention of its queries against the block it holds while the next one arrives.
Article 004, section 07: "KV blocks rotate around a ring, overlapped with
attention compute. Enables contexts scaling with device count — the direct answer
to the KV capacity wall."

Per GPU of a host (a host is the scenario's model copy per GPU: its TP share of heads and
layers, all of its layers' KV for its own block):

* **largest context**: each GPU holds ``S/N`` tokens of KV, plus one layer's incoming block
  (the receive buffer), so ``S_max(N) = floor(N · free / (kv_token · (1 + 1/L_kv)))`` with
  ``free`` the memory beside the weights and reserve and ``kv_token`` one token's KV bytes
  per GPU (the scenario's ``kv_bytes_per_token_per_gpu``), both of the pipeline stage that runs
  out of memory first, and ``L_kv`` that stage's layers with a KV cache;
* **overlap**: attending a query block of c tokens to a key/value block of c tokens costs
  ``c² · f_key`` FLOP (``f_key`` = attention FLOP per (query, key) pair summed over layers, per
  GPU: 4·h_q·d_head per layer) and the block's transfer ``c · kv_token`` bytes, so it hides
  under the compute when ``c² f_key / P_peak >= c · kv_token / link``, ``P_peak`` the BF16 roof
  (attention runs in BF16, as the expected step's attention term has it, whatever the weights' format):

      c >= c_min = (P_peak / link) · kv_token / f_key

  With multi-head attention in BF16 (``kv_token / f_key = 2·2·d / (4·d) = 1`` per layer) this is
  the paper's condition ``c >= F/B`` (Table 2: minimal block ``c = FLOPS/Bandwidth``, e.g. about
  1K tokens for an A100 over NVLink, 24.5K over InfiniBand); grouped-query attention shrinks the
  bytes a block carries by ``h_kv/h_q`` and the block needed with it.  For a context S the ring
  hides its transfer up to ``N = floor(S / c_min)`` hosts and stops hiding beyond.

Assumptions: the link is the scale-up link's per-direction bandwidth of the catalogue (one
neighbour send per step); causal masking, which leaves about half the block pairs empty and
unbalances the hosts (Striped Attention, Brandon et al. 2023), is not modelled; every attention
layer is counted as global.  In decode a host has one query token, so a block's compute is
``c · f_key`` against the same ``c · kv_token`` bytes: the transfer hides only if
``f_key / P_peak >= kv_token / link``, which no current part meets — the ring pays off in prefill.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .scenario import Scenario, ScenarioResult, evaluate_levers
from .units import split_words

__all__ = ["HOSTS", "RingAttention", "min_block_tokens", "ring_attention"]

#: Hosts in the ring the sweep visits by default.
HOSTS = (1, 2, 4, 8, 16, 32, 64, 128)


def min_block_tokens(peak_flop_per_s: float, link_bandwidth: float, kv_bytes_per_token: float,
                     attention_flop_per_key: float) -> float:
    """The smallest block c (tokens) whose attention compute hides its KV transfer.

    ``c_min = (P_peak / link) · kv_bytes_per_token / attention_flop_per_key`` (see the module docstring;
    Liu et al. 2023, section 3 and Table 2).

    Args:
        peak_flop_per_s: the host's compute, FLOP/s.
        link_bandwidth: bytes/s to the next host, one direction.
        kv_bytes_per_token: KV bytes one token's block carries (summed over the layers counted).
        attention_flop_per_key: attention FLOP per (query, key) pair over the same layers.

    Raises:
        ValueError: a value <= 0.
    """
    if min(peak_flop_per_s, link_bandwidth, kv_bytes_per_token, attention_flop_per_key) <= 0:
        raise ValueError("the compute, link bandwidth, KV bytes and FLOP per key must all be > 0")
    return peak_flop_per_s / link_bandwidth * kv_bytes_per_token / attention_flop_per_key


@dataclass(frozen=True)
class RingAttention:
    """Ring attention of one scenario against the number of hosts.

    Attributes:
        hosts: N per row, int array.
        context: the sequence S the overlap rows are for, tokens.
        max_context: ``S_max(N)``, tokens, int array.
        block_tokens: ``c = S/N``, tokens, float array.
        compute_time_s: one block pair's attention, ``c² f_key / P_peak``, seconds (all layers, one GPU).
        transfer_time_s: one block's send, ``c · kv_token / link``, seconds (None: no link in the catalogue).
        hidden: transfer <= compute, bool array (all False without a link figure).
        min_block: ``c_min``, tokens (None without a link figure).
        hosts_hidden: the most hosts that still hide the transfer at ``context`` (None without a link figure).
        free_bytes, kv_bytes_per_token, attention_flop_per_key: per GPU, as used.
        peak_flop_per_s: the BF16 roof attention runs at, FLOP/s.  link_bandwidth: as used (None when the catalogue
            has none).
        gpus_per_host: GPUs of one host (the scenario's TP · PP).
        kv_layers: L, the layers with a KV cache on the GPU (its pipeline stage's): a GPU also holds one layer's
            incoming block, ``1/L`` of its own.
    """

    hosts: np.ndarray
    context: int
    max_context: np.ndarray
    block_tokens: np.ndarray
    compute_time_s: np.ndarray
    transfer_time_s: np.ndarray | None
    hidden: np.ndarray
    min_block: float | None
    hosts_hidden: int | None
    free_bytes: float
    kv_bytes_per_token: float
    attention_flop_per_key: float
    peak_flop_per_s: float
    link_bandwidth: float | None
    gpus_per_host: int
    kv_layers: int = 1

    @property
    def decode_hides(self) -> bool:
        """Whether a decode step (one query token per host) would hide a block's transfer: ``c_min <= 1``."""
        return self.min_block is not None and self.min_block <= 1.0

    def hiding_text(self) -> str:
        """Where the transfer hides at ``context``, in words: "while S/N >= c_min tokens (N <= M)", or that it hides
        at no N when S is shorter than one block (a context of 1 had printed "N <= 0").  "" without a link figure."""
        if self.min_block is None:
            return ""
        if not self.hosts_hidden:
            return (f"transfer hides at no N: S = {self.context:,} tokens is shorter than one block of "
                    f"c_min = {self.min_block:,.0f} tokens")
        return f"transfer hides while S/N >= {self.min_block:,.0f} tokens (N <= {self.hosts_hidden:,})"

    def block_text(self, i: int) -> str:
        """Row ``i``'s block ``S/N`` in tokens, as printed: whole tokens, or the fraction and why where N > S (a
        context of 1 had printed "block 0" for every ring of 2 hosts or more)."""
        c = float(self.block_tokens[i])
        return f"{c:,.0f}" if c >= 1 else f"{c:.2g} (S < N: a host holds no whole token)"

    def to_json(self) -> dict:
        """The fields as a strict-JSON-ready dict (SI units: seconds, bytes, FLOP, tokens)."""
        return {
            "hosts": self.hosts.tolist(), "context": self.context, "max_context": self.max_context.tolist(),
            "block_tokens": self.block_tokens.tolist(), "compute_time_s": self.compute_time_s.tolist(),
            "transfer_time_s": None if self.transfer_time_s is None else self.transfer_time_s.tolist(),
            "hidden": self.hidden.tolist(), "min_block_tokens": self.min_block, "hosts_hidden": self.hosts_hidden,
            "decode_hides": self.decode_hides, "free_bytes_per_gpu": self.free_bytes,
            "kv_bytes_per_token_per_gpu": self.kv_bytes_per_token,
            "attention_flop_per_key_per_gpu": self.attention_flop_per_key,
            "peak_flop_per_s": self.peak_flop_per_s, "link_bandwidth": self.link_bandwidth,
            "kv_layers": self.kv_layers,
            "gpus_per_host": self.gpus_per_host,
            "source": "Liu, Zaharia & Abbeel 2023 (Ring Attention), section 3 and Table 2: c >= FLOPS/Bandwidth",
        }


def _flop_per_key_per_gpu(r: ScenarioResult) -> float:
    """Attention FLOP per (query, key) pair of a prompt over the model's attention layers, one GPU's share: its
    query heads (a sparse-attention indexer whole, as each TP rank runs it) and its layers (prefill's kernels: MLA's
    uncompressed form)."""
    plan, model = r.deployment.plan, r.model
    heads = 1.0 if plan.identity else plan.query_heads_per_gpu() / model.n_heads
    layers = 1.0 if plan.identity else plan.layers_per_gpu / model.n_layers
    return float(sum(flop for flop, _window, _chunk in model.attention_terms(head_share=heads).prefill)) * layers


def _kv_layers_on_gpu(r: ScenarioResult) -> int:
    """Layers with a KV cache on one GPU of the stage that runs out of memory first (the stage whose KV bytes per
    token the result gives): all of the model's on one stage (an engineer's trial: DeepSeek-V3 at PP = 2 divided
    stage 1's 31 layers of KV by 1 + 1/61)."""
    model, plan = r.model, r.deployment.plan
    if plan.pp == 1:
        return max(model.n_kv_layers, 1)
    stages = plan.stage_layers()
    first = sum(stages[: r.memory_stage])
    between = model.stack.groups_between(first, first + stages[r.memory_stage])
    return max(sum(n for kind, n in between if kind.allocates_kv), 1)


def ring_host(scenario: Scenario) -> tuple[Scenario, str]:
    """The host a ring is made of for ``scenario``, and a note where it is not the scenario's own split.

    A ring splits one sequence, so a host need hold only its weights (and reserve) with room for a block: the
    scenario's split where its weights fit at B = 1 and S = 1, else the smallest split that holds them (as the
    lab's "use TP = 2" suggestion finds it).  The scenario's batch and context do not move the host: a host grown
    until one of them held the whole context (the ladder's start) would leave the ring nothing to do.

    >>> host, note = ring_host(Scenario(model="llama-3-70b", gpu="h100-sxm", tp=2, context=1_000_000))
    >>> host.tp, note
    (2, '')
    >>> ring_host(Scenario(model="llama-3-70b", gpu="h100-sxm", tp=1))[1]
    'The weights do not fit at TP = 1: a host is TP = 2, the smallest split that holds them.'
    """
    r = scenario.clone(batch=1, context=1).evaluate()
    approximate = f" {r.model.approximate_sentence}" if r.model.approximate else ""
    if r.fits:
        return scenario, approximate.strip()
    given = split_words(r.tp, r.pp)
    if not r.suggested_tp:
        return scenario, (f"The weights do not fit at {given}, nor on any split up to the node and 1,024 GPUs: no "
                          f"host holds them.{approximate}")
    tp, pp = r.suggested_tp, r.suggested_pp or 1
    return (scenario.clone(tp=tp, pp=pp), f"The weights do not fit at {given}: a host is {split_words(tp, pp)}, the "
                                          f"smallest split that holds them.{approximate}")


def ring_attention(scenario: Scenario, hosts=HOSTS, context: int | None = None) -> RingAttention:
    """How far Ring Attention stretches ``scenario``'s context, and where its transfer stops hiding.

    Args:
        scenario: model, GPU, precisions, TP/PP (a host is one model copy), reserve.
        hosts: ring sizes N to tabulate (>= 1 each).
        context: the sequence S for the overlap rows (default: the scenario's context).

    Raises:
        ValueError: a host count < 1, or a model with no attention layer.
    """
    n = np.asarray(hosts, dtype=np.int64)
    if n.ndim != 1 or len(n) == 0 or np.any(n < 1):
        raise ValueError("hosts must be a non-empty list of whole numbers >= 1")
    r = evaluate_levers({**scenario.levers(), "phase": "decode", "batch": 1}, scenario.catalogue)
    s = int(context or scenario.context)
    kv = r.kv_bytes_per_token_per_gpu
    f_key = _flop_per_key_per_gpu(r)
    if kv <= 0 or f_key <= 0:
        raise ValueError(f"{r.model.name} has no attention KV cache to split over a ring")
    layers = _kv_layers_on_gpu(r)
    free = r.free_for_kv_bytes
    max_context = np.floor(n * free / (kv * (1 + 1 / layers))).astype(np.int64)
    c = s / n
    peak = r.gpu.dense_flop_per_s["bf16"]  # attention's roof (an engineer's trial: FP8 weights had put it at FP8's)
    compute = c * c * f_key / peak
    link = r.link_bandwidth or None
    if link:
        transfer = c * kv / link
        c_min = min_block_tokens(peak, link, kv, f_key)
        hidden = transfer <= compute
        most = int(s // c_min) if c_min > 0 else None
    else:
        transfer, c_min, most = None, None, None
        hidden = np.zeros(len(n), dtype=bool)
    return RingAttention(n, s, max_context, c, compute, transfer, hidden, c_min, most, free, kv, f_key,
                         peak, link, r.gpus_per_replica, layers)
