"""A Llama-architecture decoder generating text greedily with InfiniOP's operators only.

The model is Hugging Face transformers' ``LlamaForCausalLM`` made from a small configuration with
random weights (seeded; drawn with a standard deviation of 0.2 rather than 0.02, so that the
greedy tokens vary instead of settling on one): several layers, grouped-query attention (fewer KV heads than query
heads), GPT-NeoX rotary embeddings, SwiGLU MLPs, RMSNorm. Its weights are read out of PyTorch and
the same model is run with ``infinirt.ops`` on NumPy arrays: the prompt in one prefill
(PagedCaching, PagedAttentionPrefill), then one token at a time (PagedCaching, PagedAttention)
over a paged KV cache whose block table is not in order, each token picked by RandomSample's arg
max.

    python examples/python/llama.py            # prints the tokens
    python examples/python/llama.py --check    # fails unless they are exactly PyTorch's

With ``--check`` the same prompt goes through transformers' ``generate`` (greedy, its own KV
cache) and the script fails unless every one of the 32 generated tokens is the same.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Dict, List

import numpy as np

import infinirt
from infinirt import ops

CONFIG = dict(vocab_size=512, hidden_size=256, intermediate_size=688, num_hidden_layers=3,
              num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=256,
              initializer_range=0.2, rms_norm_eps=1e-6, rope_theta=10000.0, hidden_act="silu", attention_bias=False,
              mlp_bias=False, tie_word_embeddings=False)
PROMPT = [1, 17, 305, 42, 8, 99, 250, 3, 77, 460, 12, 5]
NEW_TOKENS = 32
BLOCK_SIZE = 16


def make_model(seed: int):
    """transformers' LlamaForCausalLM with random weights (seeded), in float32 on the CPU."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    return LlamaForCausalLM(LlamaConfig(**CONFIG)).float().eval()


class Llama:
    """The decoder's weights as float32 NumPy arrays, and its forward pass through infinirt.ops
    over a paged KV cache."""

    def __init__(self, weights: Dict[str, np.ndarray], max_tokens: int) -> None:
        self.w = weights
        self.hidden = CONFIG["hidden_size"]
        self.heads = CONFIG["num_attention_heads"]
        self.kv_heads = CONFIG["num_key_value_heads"]
        self.head = self.hidden // self.heads
        self.layers = CONFIG["num_hidden_layers"]
        self.eps = CONFIG["rms_norm_eps"]
        # GPT-NeoX rotary tables [positions, head / 2].
        inverse = CONFIG["rope_theta"] ** (-np.arange(0, self.head, 2, dtype=np.float64) / self.head)
        angles = np.outer(np.arange(CONFIG["max_position_embeddings"]), inverse)
        self.sin = np.sin(angles).astype(np.float32)
        self.cos = np.cos(angles).astype(np.float32)
        # The paged caches: one sequence, its blocks taken from the pool in reverse order.
        blocks = (max_tokens + BLOCK_SIZE - 1) // BLOCK_SIZE + 2
        shape = (blocks, self.kv_heads, BLOCK_SIZE, self.head)
        self.k_cache = [np.zeros(shape, np.float32) for _ in range(self.layers)]
        self.v_cache = [np.zeros(shape, np.float32) for _ in range(self.layers)]
        self.block_table = np.arange(blocks - 1, 0, -1, dtype=np.int64)[None, :]
        self.length = 0  # tokens in the cache

    def linear(self, x: np.ndarray, name: str) -> np.ndarray:
        weight = self.w[name if name.endswith(".weight") else name + ".weight"]
        out = np.empty((x.shape[0], weight.shape[0]), np.float32)
        ops.gemm(out, x, weight.T)
        return out

    def norm(self, x: np.ndarray, name: str) -> np.ndarray:
        out = np.empty_like(x)
        ops.rms_norm(out, x, self.w[name], epsilon=self.eps)
        return out

    def attention(self, x: np.ndarray, layer: int, positions: np.ndarray) -> np.ndarray:
        tokens = x.shape[0]
        prefix = f"model.layers.{layer}.self_attn"
        q = self.linear(x, f"{prefix}.q_proj").reshape(tokens, self.heads, self.head)
        k = self.linear(x, f"{prefix}.k_proj").reshape(tokens, self.kv_heads, self.head)
        v = self.linear(x, f"{prefix}.v_proj").reshape(tokens, self.kv_heads, self.head)
        for tensor in (q, k):
            ops.rope(tensor, tensor, positions, self.sin, self.cos, algo=1)  # GPT-NeoX pairs
        slots = np.array([self.block_table[0, p // BLOCK_SIZE] * BLOCK_SIZE + p % BLOCK_SIZE
                          for p in positions], np.int64)
        ops.paged_caching(self.k_cache[layer], self.v_cache[layer], k, v, slots)
        total = np.array([positions[-1] + 1], np.int64)
        out = np.empty_like(q)
        scale = self.head ** -0.5
        if tokens == 1:
            ops.paged_attention(out, q, self.k_cache[layer], self.v_cache[layer], self.block_table,
                                total, None, scale=scale)
        else:
            cumulative = np.array([0, tokens], np.int64)
            ops.paged_attention_prefill(out, q, self.k_cache[layer], self.v_cache[layer],
                                        self.block_table, total, cumulative, None, scale=scale)
        return self.linear(out.reshape(tokens, self.hidden), f"{prefix}.o_proj")

    def forward(self, ids: List[int]) -> int:
        """Runs the tokens after those in the cache; the arg max of the last one's logits."""
        tokens = len(ids)
        positions = np.arange(self.length, self.length + tokens, dtype=np.int64)
        x = np.empty((tokens, self.hidden), np.float32)
        ops.embedding(x, np.asarray(ids, np.int64), self.w["model.embed_tokens.weight"])
        residual = x
        h = self.norm(x, "model.layers.0.input_layernorm.weight")
        for layer in range(self.layers):
            prefix = f"model.layers.{layer}"
            attended = self.attention(h, layer, positions)
            # residual += attended; h = norm(residual), in one operator.
            h, summed = np.empty_like(x), np.empty_like(x)
            ops.add_rms_norm(h, summed, residual, attended,
                             self.w[f"{prefix}.post_attention_layernorm.weight"], epsilon=self.eps)
            residual = summed
            gate = self.linear(h, f"{prefix}.mlp.gate_proj")
            up = self.linear(h, f"{prefix}.mlp.up_proj")
            ops.swiglu(up, up, gate)  # up * silu(gate)
            mlp = self.linear(up, f"{prefix}.mlp.down_proj")
            next_norm = (f"model.layers.{layer + 1}.input_layernorm.weight"
                         if layer + 1 < self.layers else "model.norm.weight")
            h, summed = np.empty_like(x), np.empty_like(x)
            ops.add_rms_norm(h, summed, residual, mlp, self.w[next_norm], epsilon=self.eps)
            residual = summed
        logits = self.linear(h[-1:], "lm_head.weight")
        token = np.zeros((), np.int64)
        ops.random_sample(token, logits[0], random_val=0.0, topp=1.0, topk=1, temperature=1.0)
        infinirt.synchronize()
        self.length += tokens
        return int(token)


def generate(model: Llama) -> List[int]:
    generated = [model.forward(PROMPT)]
    while len(generated) < NEW_TOKENS:
        generated.append(model.forward([generated[-1]]))
    return generated


def reference(torch_model) -> List[int]:
    """transformers' greedy generation of the same model."""
    import torch

    with torch.no_grad():
        output = torch_model.generate(torch.tensor([PROMPT]), max_new_tokens=NEW_TOKENS,
                                      do_sample=False, min_new_tokens=NEW_TOKENS,
                                      pad_token_id=0, eos_token_id=None)
    return output[0, len(PROMPT):].tolist()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with transformers' greedy generation; fail on any difference")
    parser.add_argument("--seed", type=int, default=0, help="the weights' seed (default 0)")
    args = parser.parse_args()
    torch_model = make_model(args.seed)
    weights = {name: value.detach().numpy().astype(np.float32, copy=True)
               for name, value in torch_model.state_dict().items()}
    model = Llama(weights, len(PROMPT) + NEW_TOKENS)
    start = time.perf_counter()
    tokens = generate(model)
    elapsed = time.perf_counter() - start
    print(f"prefill of {len(PROMPT)} tokens and {NEW_TOKENS - 1} decode steps in "
          f"{elapsed * 1e3:.1f} ms: {tokens}")
    if not args.check:
        return 0
    expected = reference(torch_model)
    same = sum(a == b for a, b in zip(tokens, expected))
    print(f"against PyTorch: {same} of {NEW_TOKENS} tokens the same")
    if tokens != expected:
        print(f"llama: FAILED, PyTorch generated {expected}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
