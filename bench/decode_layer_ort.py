"""One decode step of a Llama decoder layer through ``infinirt.ops`` against ONNX Runtime computing
the same layer from standard operators, same weights, same run: hidden 2048, 32 heads of 64 (as
many KV heads), FFN 5632, one token after 511 cached, F32 (TinyLlama's sizes but for its grouped
KV heads). Median time per step of each, their ratio (infinirt / ONNX Runtime; below 1 is
faster), and the largest difference of the outputs.

    PYTHONPATH=build/python-dev python bench/decode_layer_ort.py [--threads N]

InfiniOP's step: RMSNorm, three Gemms (the weights' transposes as strided views), RoPE (GPT-NeoX),
KVCaching into [1, 32, 512, 64] caches, FlashAttention over them, Gemm, Add, RMSNorm, two Gemms,
SwiGLU, Gemm, Add: 14 calls, then a synchronize. ONNX Runtime's: SimplifiedLayerNormalization,
MatMul, com.microsoft's RotaryEmbedding, Concat of the past keys and values with the new ones,
MatMul, Softmax, MatMul, ..., with its inputs and output bound (the weights are initializers).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from timing import paired_median_seconds

HIDDEN, HEADS, HEAD, FFN, PAST = 2048, 32, 64, 5632, 511
EPS = 1e-6


def weights(rng: np.random.Generator):
    def w(*shape, scale=0.02):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    return dict(wq=w(HIDDEN, HIDDEN), wk=w(HIDDEN, HIDDEN), wv=w(HIDDEN, HIDDEN),
                wo=w(HIDDEN, HIDDEN), wg=w(FFN, HIDDEN), wu=w(FFN, HIDDEN), wd=w(HIDDEN, FFN),
                n1=(1 + w(HIDDEN, scale=0.1)), n2=(1 + w(HIDDEN, scale=0.1)))


def rope_tables(positions: int):
    inverse = 1.0 / (10000.0 ** (np.arange(0, HEAD, 2, dtype=np.float64) / HEAD))
    angles = np.outer(np.arange(positions, dtype=np.float64), inverse)
    return np.sin(angles).astype(np.float32), np.cos(angles).astype(np.float32)


class InfinirtStep:
    """The layer's decode step through infinirt.ops on NumPy arrays (host memory, CPU device)."""

    def __init__(self, w, x, past_k, past_v, sin, cos) -> None:
        from infinirt import ops
        self.ops, self.w, self.x = ops, w, x
        self.sin, self.cos = sin, cos
        self.k_cache = np.zeros((1, HEADS, PAST + 1, HEAD), np.float32)
        self.v_cache = np.zeros_like(self.k_cache)
        self.k_cache[:, :, :PAST] = past_k
        self.v_cache[:, :, :PAST] = past_v
        self.pos = np.array([PAST], np.int64)
        self.past = np.array([PAST], np.int64)
        self.total = np.array([PAST + 1], np.int64)
        f = lambda *shape: np.empty(shape, np.float32)  # noqa: E731
        self.h, self.q, self.k, self.v = f(1, HIDDEN), f(1, HIDDEN), f(1, HIDDEN), f(1, HIDDEN)
        self.attn, self.o, self.x2 = f(1, HIDDEN), f(1, HIDDEN), f(1, HIDDEN)
        self.gate, self.up, self.act = f(1, FFN), f(1, FFN), f(1, FFN)
        self.down, self.y = f(1, HIDDEN), f(1, HIDDEN)

    def __call__(self) -> None:
        ops, w = self.ops, self.w
        ops.rms_norm(self.h, self.x, w["n1"], EPS)
        for out, name in ((self.q, "wq"), (self.k, "wk"), (self.v, "wv")):
            ops.gemm(out, self.h, w[name].T, 1.0, 0.0)
        q3, k3 = self.q.reshape(1, HEADS, HEAD), self.k.reshape(1, HEADS, HEAD)
        ops.rope(q3, q3, self.pos, self.sin, self.cos, 1)
        ops.rope(k3, k3, self.pos, self.sin, self.cos, 1)
        ops.kv_caching(self.k_cache, self.v_cache, self.k.reshape(1, HEADS, 1, HEAD),
                       self.v.reshape(1, HEADS, 1, HEAD), self.past)
        ops.flash_attention(self.attn.reshape(1, HEADS, 1, HEAD), self.q.reshape(1, HEADS, 1, HEAD),
                            self.k_cache, self.v_cache, self.total, 1.0 / np.sqrt(HEAD), 0)
        ops.gemm(self.o, self.attn, w["wo"].T, 1.0, 0.0)
        ops.add(self.x2, self.x, self.o)
        ops.rms_norm(self.h, self.x2, w["n2"], EPS)
        ops.gemm(self.gate, self.h, w["wg"].T, 1.0, 0.0)
        ops.gemm(self.up, self.h, w["wu"].T, 1.0, 0.0)
        ops.swiglu(self.act, self.up, self.gate)
        ops.gemm(self.down, self.act, w["wd"].T, 1.0, 0.0)
        ops.add(self.y, self.x2, self.down)
        import infinirt
        infinirt.synchronize()


def ort_step(w, x, past_k, past_v, sin, cos, threads: int):
    """The same step as one ONNX model of standard operators (and RotaryEmbedding), its inputs and
    output bound."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    def init(name, array):
        return numpy_helper.from_array(np.ascontiguousarray(array), name)

    initializers = [init("wqT", w["wq"].T), init("wkT", w["wk"].T), init("wvT", w["wv"].T),
                    init("woT", w["wo"].T), init("wgT", w["wg"].T), init("wuT", w["wu"].T),
                    init("wdT", w["wd"].T), init("n1", w["n1"]), init("n2", w["n2"]),
                    init("cos", cos), init("sin", sin),
                    init("pos", np.array([[PAST]], np.int64)),
                    init("heads_shape", np.array([1, 1, HEADS, HEAD], np.int64)),
                    init("hidden_shape", np.array([1, HIDDEN], np.int64)),
                    init("seq_shape", np.array([1, 1, HIDDEN], np.int64)),
                    init("scale", np.array(1.0 / np.sqrt(HEAD), np.float32))]
    n = helper.make_node
    nodes = [
        n("SimplifiedLayerNormalization", ["x", "n1"], ["h"], axis=-1, epsilon=EPS),
        n("MatMul", ["h", "wqT"], ["q"]), n("MatMul", ["h", "wkT"], ["k"]),
        n("MatMul", ["h", "wvT"], ["v"]),
        n("Reshape", ["q", "seq_shape"], ["q3"]), n("Reshape", ["k", "seq_shape"], ["k3"]),
        n("RotaryEmbedding", ["q3", "pos", "cos", "sin"], ["qr"], domain="com.microsoft",
          interleaved=0, num_heads=HEADS),
        n("RotaryEmbedding", ["k3", "pos", "cos", "sin"], ["kr"], domain="com.microsoft",
          interleaved=0, num_heads=HEADS),
        n("Reshape", ["qr", "heads_shape"], ["q4"]), n("Reshape", ["kr", "heads_shape"], ["k4"]),
        n("Reshape", ["v", "heads_shape"], ["v4"]),
        n("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        n("Transpose", ["k4"], ["kh"], perm=[0, 2, 1, 3]),
        n("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        n("Concat", ["past_k", "kh"], ["K"], axis=2), n("Concat", ["past_v", "vh"], ["V"], axis=2),
        n("Transpose", ["K"], ["KT"], perm=[0, 1, 3, 2]),
        n("MatMul", ["qh", "KT"], ["s"]), n("Mul", ["s", "scale"], ["ss"]),
        n("Softmax", ["ss"], ["p"], axis=-1), n("MatMul", ["p", "V"], ["ah"]),
        n("Transpose", ["ah"], ["a4"], perm=[0, 2, 1, 3]),
        n("Reshape", ["a4", "hidden_shape"], ["a"]),
        n("MatMul", ["a", "woT"], ["o"]), n("Add", ["x", "o"], ["x2"]),
        n("SimplifiedLayerNormalization", ["x2", "n2"], ["h2"], axis=-1, epsilon=EPS),
        n("MatMul", ["h2", "wgT"], ["g"]), n("MatMul", ["h2", "wuT"], ["u"]),
        n("Sigmoid", ["g"], ["sg"]), n("Mul", ["g", "sg"], ["silu"]), n("Mul", ["silu", "u"], ["m"]),
        n("MatMul", ["m", "wdT"], ["d"]), n("Add", ["x2", "d"], ["y"]),
    ]

    def info(name, shape):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))

    graph = helper.make_graph(nodes, "decode", [info("x", x.shape), info("past_k", past_k.shape),
                                                info("past_v", past_v.shape)],
                              [info("y", (1, HIDDEN))], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                    helper.make_opsetid("com.microsoft", 1)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    y = np.empty((1, HIDDEN), np.float32)
    binding = session.io_binding()
    for name, array in (("x", x), ("past_k", past_k), ("past_v", past_v)):
        binding.bind_cpu_input(name, array)
    binding.bind_output("y", "cpu", 0, np.float32, [1, HIDDEN], y.ctypes.data)
    kept = (x, past_k, past_v, y)

    def run() -> None:
        assert kept
        session.run_with_iobinding(binding)

    return run, y


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2,
                        help="threads of both (INFINIOP_CPU_THREADS, ONNX Runtime's intra-op)")
    args = parser.parse_args()
    os.environ["INFINIOP_CPU_THREADS"] = str(args.threads)
    rng = np.random.default_rng(7)
    w = weights(rng)
    x = rng.standard_normal((1, HIDDEN)).astype(np.float32)
    past_k = rng.standard_normal((1, HEADS, PAST, HEAD)).astype(np.float32)
    past_v = rng.standard_normal((1, HEADS, PAST, HEAD)).astype(np.float32)
    sin, cos = rope_tables(PAST + 1)
    ours = InfinirtStep(w, x, past_k, past_v, sin, cos)
    theirs, their_y = ort_step(w, x, past_k, past_v, sin, cos, args.threads)
    ours()
    theirs()
    difference = float(np.abs(ours.y - their_y).max())
    ours_s, theirs_s = paired_median_seconds(ours, theirs, min_time=0.3, runs=7)
    print(f"decode step, hidden {HIDDEN}, {HEADS} heads of {HEAD}, FFN {FFN}, {PAST} cached, F32, "
          f"{args.threads} threads: infinirt {ours_s * 1e3:.3f} ms, ONNX Runtime "
          f"{theirs_s * 1e3:.3f} ms, infinirt / ORT {ours_s / theirs_s:.2f}; largest output "
          f"difference {difference:.2e}")
    return 0 if difference < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
