"""InfiniOP's new operators against ONNX Runtime's CPU provider computing the same operator, in
one process, at LLM sizes (hidden 4096, sequence 512, FFN 11008, 32 heads): median time per call
of each, and their ratio (infinirt / ONNX Runtime; below 1 is faster). InfiniOP's calls go through
``infinirt.ops`` on NumPy arrays and include a synchronize; ONNX Runtime runs a one-node (or
few-node) model with its outputs bound, so that neither side allocates per call.

    PYTHONPATH=build/python-dev python bench/onnxruntime_ops.py [--threads N] [--markdown]

It needs onnxruntime and onnx from PyPI (the model tests' environment has them: tests/models/
requirements.txt).
"""

from __future__ import annotations

import argparse
import os
from typing import Callable, Dict, List, Tuple

import numpy as np

from timing import paired_median_seconds

HIDDEN, SEQ, FFN, HEADS, VOCAB = 4096, 512, 11008, 32, 32000


def onnx_runner(nodes, inputs: Dict[str, np.ndarray], outputs: Dict[str, np.ndarray], threads: int,
                opset: int = 20, domains=()) -> Callable[[], None]:
    """A session of the graph `nodes`, its inputs and outputs bound to these arrays."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    def info(name, array):
        elem = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
                np.dtype(np.int32): TensorProto.INT32}
        return helper.make_tensor_value_info(name, elem[array.dtype], list(array.shape))

    graph = helper.make_graph(nodes, "bench", [info(n, a) for n, a in inputs.items()],
                              [info(n, a) for n, a in outputs.items()])
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=imports)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    for name, array in inputs.items():
        binding.bind_cpu_input(name, array)
    for name, array in outputs.items():
        binding.bind_output(name, "cpu", 0, array.dtype, list(array.shape), array.ctypes.data)
    # The binding holds the arrays' addresses, not the arrays: the runner keeps them alive (a
    # temporary input, TopK's k, would otherwise be freed and its memory reused).
    kept = (inputs, outputs)

    def run() -> None:
        assert kept
        session.run_with_iobinding(binding)

    return run


def first_operators(threads: int, ours: Callable, rng: np.random.Generator) -> List[Tuple[str, Callable, Callable]]:
    """The first operators' rows whose gaps to ONNX Runtime were measured before: Gemm's shapes,
    RMSNorm, CausalSoftmax, RoPE, Add and Mul of 16 M floats, RandomSample's arg max."""
    from infinirt import ops
    from onnx import helper

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    rows = []
    a, b = f32(1, HIDDEN), f32(HIDDEN, HIDDEN)
    c = np.empty((1, HIDDEN), np.float32)
    rows.append((f"Gemm 1x{HIDDEN}x{HIDDEN}", ours(lambda: ops.gemm(c, a, b)),
                 onnx_runner([helper.make_node("MatMul", ["a", "b"], ["c"])], {"a": a, "b": b},
                             {"c": c}, threads)))
    ba, bb = f32(32, 128, 64), f32(32, 64, 128)
    bc = np.empty((32, 128, 128), np.float32)
    rows.append(("Gemm batched 32x128x64x128", ours(lambda: ops.gemm(bc, ba, bb)),
                 onnx_runner([helper.make_node("MatMul", ["a", "b"], ["c"])], {"a": ba, "b": bb},
                             {"c": bc}, threads)))
    ta, tb = f32(SEQ, HIDDEN), f32(HIDDEN, HIDDEN)  # tb [n, k]: b is its transpose
    tc = np.empty((SEQ, HIDDEN), np.float32)
    rows.append((f"Gemm {SEQ}x{HIDDEN}x{HIDDEN}, b transposed", ours(lambda: ops.gemm(tc, ta, tb.T)),
                 onnx_runner([helper.make_node("Gemm", ["a", "b"], ["c"], transB=1)],
                             {"a": ta, "b": tb}, {"c": tc}, threads)))
    x, w = f32(SEQ, HIDDEN), np.ones(HIDDEN, np.float32)
    y = np.empty_like(x)
    rows.append((f"RMSNorm {SEQ}x{HIDDEN}", ours(lambda: ops.rms_norm(y, x, w, epsilon=1e-6)),
                 onnx_runner([helper.make_node("SimplifiedLayerNormalization", ["x", "w"], ["y"],
                                               axis=-1, epsilon=1e-6)],
                             {"x": x, "w": w}, {"y": y}, threads)))
    seq, total = 128, 512
    scores, probs = f32(HEADS, seq, total), np.empty((HEADS, seq, total), np.float32)
    visible = np.arange(total)[None, :] <= np.arange(seq)[:, None] + (total - seq)
    mask = np.where(visible, 0.0, -np.inf).astype(np.float32)
    rows.append((f"CausalSoftmax {HEADS}x{seq}x{total}", ours(lambda: ops.causal_softmax(probs, scores)),
                 onnx_runner([helper.make_node("Add", ["x", "mask"], ["m"]),
                              helper.make_node("Softmax", ["m"], ["y"], axis=-1)],
                             {"x": scores, "mask": mask}, {"y": probs}, threads)))
    head = HIDDEN // HEADS
    q = f32(SEQ, HEADS, head)
    rotated = np.empty_like(q)
    positions = np.arange(SEQ, dtype=np.int64)
    angles = rng.uniform(-np.pi, np.pi, (SEQ, head // 2)).astype(np.float32)
    sin, cos = np.sin(angles), np.cos(angles)
    rows.append((f"RoPE {SEQ}x{HEADS}x{head}",
                 ours(lambda: ops.rope(rotated, q, positions, sin, cos, algo=0)),
                 onnx_runner([helper.make_node("RotaryEmbedding", ["x", "p", "cos", "sin"], ["y"],
                                               domain="com.microsoft", interleaved=1,
                                               num_heads=HEADS)],
                             {"x": q.reshape(1, SEQ, HIDDEN), "p": positions.reshape(1, SEQ),
                              "cos": cos, "sin": sin},
                             {"y": rotated.reshape(1, SEQ, HIDDEN)}, threads,
                             domains=("com.microsoft",))))
    n = 16 * 1024 * 1024
    ea, eb, ec = f32(n), f32(n), np.empty(n, np.float32)
    for name, onnx_op, our_op in (("Add", "Add", ops.add), ("Mul", "Mul", ops.mul)):
        rows.append((f"{name} 16M floats", ours(lambda op=our_op: op(ec, ea, eb)),
                     onnx_runner([helper.make_node(onnx_op, ["a", "b"], ["c"])],
                                 {"a": ea, "b": eb}, {"c": ec}, threads)))
    vocab = 128256
    logits = f32(vocab)
    result, their_result = np.empty((), np.int64), np.empty((), np.int64)
    rows.append((f"RandomSample arg max of {vocab}",
                 ours(lambda: ops.random_sample(result, logits, 0.0, 1.0, 1, 1.0)),
                 onnx_runner([helper.make_node("ArgMax", ["x"], ["i"], axis=0, keepdims=0)],
                             {"x": logits}, {"i": their_result}, threads)))
    return rows


def cases(threads: int) -> List[Tuple[str, Callable[[], None], Callable[[], None]]]:
    import infinirt
    from infinirt import ops
    from onnx import helper

    rng = np.random.default_rng(0)
    x = rng.standard_normal((SEQ, HIDDEN)).astype(np.float32)
    y = rng.standard_normal((SEQ, HIDDEN)).astype(np.float32)
    out = np.empty_like(x)

    def ours(call):
        def run():
            call()
            infinirt.synchronize()
        return run

    def unary(onnx_op: str, our_op) -> Tuple[Callable, Callable]:
        return (ours(lambda: our_op(out, x)),
                onnx_runner([helper.make_node(onnx_op, ["x"], ["y"])], {"x": x}, {"y": out},
                            threads))

    rows = []
    for name, onnx_op, our_op in (("Relu", "Relu", ops.relu), ("Sigmoid", "Sigmoid", ops.sigmoid),
                                  ("Gelu", "Gelu", ops.gelu)):
        rows.append((f"{name} {SEQ}x{HIDDEN}", *unary(onnx_op, our_op)))
    rows.append((f"Silu {SEQ}x{HIDDEN}", ours(lambda: ops.silu(out, x)),
                 onnx_runner([helper.make_node("Sigmoid", ["x"], ["s"]),
                              helper.make_node("Mul", ["x", "s"], ["y"])], {"x": x}, {"y": out},
                             threads)))
    rows.append((f"Sub {SEQ}x{HIDDEN}", ours(lambda: ops.sub(out, x, y)),
                 onnx_runner([helper.make_node("Sub", ["a", "b"], ["y"])], {"a": x, "b": y},
                             {"y": out}, threads)))
    w, b = np.ones(HIDDEN, np.float32), np.zeros(HIDDEN, np.float32)
    standardized, deviation = np.empty_like(x), np.empty(SEQ, np.float32)
    rows.append((f"LayerNorm {SEQ}x{HIDDEN}",
                 ours(lambda: ops.layer_norm(out, standardized, deviation, x, w, b, eps=1e-5)),
                 onnx_runner([helper.make_node("LayerNormalization", ["x", "w", "b"], ["y"],
                                               axis=-1, epsilon=1e-5)],
                             {"x": x, "w": w, "b": b}, {"y": out}, threads)))
    scores = rng.standard_normal((HEADS, SEQ, SEQ)).astype(np.float32)
    probs = np.empty_like(scores)
    rows.append((f"Softmax {HEADS}x{SEQ}x{SEQ}", ours(lambda: ops.softmax(probs, scores, axis=-1)),
                 onnx_runner([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], {"x": scores},
                             {"y": probs}, threads)))
    rows.append((f"LogSoftmax {SEQ}x{HIDDEN}", ours(lambda: ops.log_softmax(out, x, dim=-1)),
                 onnx_runner([helper.make_node("LogSoftmax", ["x"], ["y"], axis=-1)], {"x": x},
                             {"y": out}, threads)))
    table = rng.standard_normal((VOCAB, HIDDEN)).astype(np.float32)
    ids = rng.integers(0, VOCAB, SEQ).astype(np.int64)
    rows.append((f"Embedding {SEQ} of {VOCAB}x{HIDDEN}", ours(lambda: ops.embedding(out, ids, table)),
                 onnx_runner([helper.make_node("Gather", ["w", "i"], ["y"], axis=0)],
                             {"w": table, "i": ids}, {"y": out}, threads)))
    gate_up = rng.standard_normal((SEQ, 2 * FFN)).astype(np.float32)
    hidden = np.empty((SEQ, FFN), np.float32)
    split = np.array([FFN, FFN], np.int64)
    rows.append((f"SiluAndMul {SEQ}x{2 * FFN}", ours(lambda: ops.silu_and_mul(hidden, gate_up)),
                 onnx_runner([helper.make_node("Split", ["x", "split"], ["g", "u"], axis=-1),
                              helper.make_node("Sigmoid", ["g"], ["s"]),
                              helper.make_node("Mul", ["g", "s"], ["a"]),
                              helper.make_node("Mul", ["a", "u"], ["y"])],
                             {"x": gate_up, "split": split}, {"y": hidden}, threads)))
    rows.append((f"GeluTanh {SEQ}x{HIDDEN}", ours(lambda: ops.gelutanh(out, x)),
                 onnx_runner([helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")],
                             {"x": x}, {"y": out}, threads)))
    rows.append((f"MulScalar {SEQ}x{HIDDEN}", ours(lambda: ops.mul_scalar(out, x, 0.125)),
                 onnx_runner([helper.make_node("Mul", ["x", "alpha"], ["y"])],
                             {"x": x, "alpha": np.array(0.125, np.float32)}, {"y": out},
                             threads)))
    residual = np.empty_like(x)
    rows.append((f"AddRMSNorm {SEQ}x{HIDDEN}",
                 ours(lambda: ops.add_rms_norm(out, residual, x, y, w, epsilon=1e-6)),
                 onnx_runner([helper.make_node("SkipSimplifiedLayerNormalization",
                                               ["x", "skip", "w"], ["y", "", "", "sum"],
                                               domain="com.microsoft", epsilon=1e-6)],
                             {"x": x, "skip": y, "w": w}, {"y": out, "sum": residual}, threads,
                             domains=("com.microsoft",))))
    logits = rng.standard_normal((SEQ, VOCAB)).astype(np.float32)
    top_values, top_indices = np.empty((SEQ, 50), np.float32), np.empty((SEQ, 50), np.int64)
    rows.append((f"TopK 50 of {SEQ}x{VOCAB}",
                 ours(lambda: ops.topk(top_values, top_indices, logits, 50, 1)),
                 onnx_runner([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1)],
                             {"x": logits, "k": np.array([50], np.int64)},
                             {"v": top_values, "i": top_indices}, threads)))
    experts = rng.standard_normal((SEQ, 64)).astype(np.float32)
    route_values = np.empty((SEQ, 8), np.float32)
    route_indices, their_indices = np.empty((SEQ, 8), np.int32), np.empty((SEQ, 8), np.int64)
    rows.append((f"Topksoftmax 8 of {SEQ}x64",
                 ours(lambda: ops.topksoftmax(route_values, route_indices, experts, 8, 0)),
                 onnx_runner([helper.make_node("Softmax", ["x"], ["p"], axis=-1),
                              helper.make_node("TopK", ["p", "k"], ["v", "i"], axis=-1)],
                             {"x": experts, "k": np.array([8], np.int64)},
                             {"v": route_values, "i": their_indices}, threads)))
    return rows + first_operators(threads, ours, rng)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2,
                        help="ONNX Runtime's intra-op threads (InfiniOP's: INFINIOP_CPU_THREADS)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    print(f"| operator | infinirt (ms) | ONNX Runtime (ms) | infinirt / ORT |" if args.markdown
          else f"{'operator':36s} {'infinirt ms':>12s} {'ORT ms':>10s} {'ratio':>7s}")
    if args.markdown:
        print("| --- | ---: | ---: | ---: |")
    for name, our_call, their_call in cases(args.threads):
        ours_s, theirs_s = paired_median_seconds(our_call, their_call)
        if args.markdown:
            print(f"| {name} | {ours_s * 1e3:.3f} | {theirs_s * 1e3:.3f} | {ours_s / theirs_s:.2f} |")
        else:
            print(f"{name:36s} {ours_s * 1e3:12.3f} {theirs_s * 1e3:10.3f} {ours_s / theirs_s:7.2f}")


if __name__ == "__main__":
    main()
