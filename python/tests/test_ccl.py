"""InfiniCCL from Python: the ranks of one process on two CPU devices, ranks in threads joined by
a unique id, and a job of two processes launched with torchrun's variables."""

import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

import infinirt
from infinirt import ccl


def float_buffers(values_per_rank):
    buffers = []
    for device, values in enumerate(values_per_rank):
        buffer = infinirt.Buffer(4 * len(values), device=device)
        buffer.copy_from(np.asarray(values, dtype=np.float32))
        buffers.append(buffer)
    return buffers


def floats(buffer):
    out = np.empty(buffer.nbytes // 4, dtype=np.float32)
    buffer.copy_to(out)
    return out.tolist()


def test_ranks_of_one_process_on_two_devices():
    comms = ccl.init_all([0, 1])
    assert [c.rank for c in comms] == [0, 1]
    assert [c.size for c in comms] == [2, 2]
    assert [c.device.ordinal for c in comms] == [0, 1]
    assert comms[0].engine == "cpu"
    for op, expected in (("sum", [4.0, 6.0]), ("max", [3.0, 4.0]), ("avg", [2.0, 3.0]),
                         ("prod", [3.0, 8.0])):
        buffers = float_buffers([[1, 2], [3, 4]])
        with ccl.group():
            for comm, buffer in zip(comms, buffers):
                comm.all_reduce(buffer, op, dtype="float32")
        infinirt.synchronize(0)
        infinirt.synchronize(1)
        assert [floats(b) for b in buffers] == [expected, expected], op
    data = float_buffers([[5, 6], [0, 0]])
    gathered = [infinirt.Buffer(16, device=d) for d in (0, 1)]
    with ccl.group():
        for comm, buffer in zip(comms, data):
            comm.broadcast(buffer, root=0, dtype="F32")
    with ccl.group():
        for comm, buffer, out in zip(comms, data, gathered):
            comm.all_gather(buffer, out, dtype="float32")
    for d in (0, 1):
        infinirt.synchronize(d)
    assert [floats(b) for b in gathered] == [[5, 6, 5, 6]] * 2
    for comm in comms:
        comm.destroy()


def test_tensors_from_dlpack_carry_their_dtype_and_size():
    comms = ccl.init_all([0, 1])
    arrays = [np.array([1, 2, 3], dtype=np.int32), np.array([10, 20, 30], dtype=np.int32)]
    tensors = [infinirt.from_dlpack(a) for a in arrays]
    buffers = [infinirt.Buffer(12, device=d) for d in (0, 1)]
    for t, b in zip(tensors, buffers):
        b.copy_from(t.buffer)
    with ccl.group():
        for comm, buffer in zip(comms, buffers):
            comm.all_reduce(buffer, "sum", dtype="int32", count=3)
    for d in (0, 1):
        infinirt.synchronize(d)
    out = np.empty(3, dtype=np.int32)
    buffers[1].copy_to(out)
    assert out.tolist() == [11, 22, 33]


def test_ranks_in_threads_joined_by_a_unique_id():
    unique = ccl.get_unique_id()
    assert isinstance(unique, bytes) and len(unique) == 128
    results, failures = {}, []

    def rank(r):
        try:
            infinirt.set_device(r)
            comm = ccl.init_rank(2, unique, r)
            buffer = infinirt.Buffer(8)
            buffer.copy_from(np.array([r + 1, 10 * (r + 1)], dtype=np.float32))
            stream = infinirt.Stream()
            comm.all_reduce(buffer, "sum", dtype="float32", stream=stream)
            stream.synchronize()
            results[r] = floats(buffer)
            comm.destroy()
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=rank, args=(r,)) for r in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert failures == []
    assert results == {0: [3.0, 30.0], 1: [3.0, 30.0]}


def test_send_and_recv_between_two_ranks():
    comms = ccl.init_all([0, 1])
    source = float_buffers([[1.5, 2.5, 3.5]])[0]
    target = infinirt.Buffer(12, device=1)
    target.fill(0)
    with ccl.group():  # one thread issues both ranks' halves
        comms[0].send(source, peer=1, dtype="float32")
        comms[1].recv(target, peer=0, dtype="float32")
    infinirt.synchronize()
    with infinirt.Device(1):
        infinirt.synchronize()
    assert floats(target) == [1.5, 2.5, 3.5]
    # Only part of a buffer: count elements.
    sender = infinirt.Buffer(8, device=1)
    sender.copy_from(np.array([7.0, 9.0], dtype=np.float32))
    with ccl.group():
        comms[1].send(sender, peer=0, dtype="float32", count=1)
        comms[0].recv(source, peer=1, dtype="float32", count=1)
    for device in (0, 1):
        with infinirt.Device(device):
            infinirt.synchronize()
    assert floats(source) == [7.0, 2.5, 3.5]
    for comm in comms:
        comm.destroy()


def test_abort_fails_the_calls_waiting_for_the_aborted_rank():
    comms = ccl.init_all([0, 1])
    buffer = infinirt.Buffer(8, device=1)
    outcome = []

    def waiting():  # rank 1's all-reduce waits for rank 0, which never calls
        try:
            comms[1].all_reduce(buffer, "sum", dtype="float32")
            outcome.append("returned")
        except ccl.CclError as error:
            outcome.append(error)

    thread = threading.Thread(target=waiting)
    thread.start()
    thread.join(0.5)
    assert thread.is_alive(), "the call did not wait for the other rank"
    comms[0].abort()
    thread.join(60)  # the communicator's timeout is 300 s: only the abort ends the wait this soon
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], ccl.CclError), outcome
    with pytest.raises(ValueError, match="destroyed"):
        comms[0].all_reduce(infinirt.Buffer(8), "sum")
    with pytest.raises(ccl.CclError):  # the clique failed: every later call answers an error
        comms[1].all_reduce(buffer, "sum", dtype="float32")
    comms[1].abort()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_job_of_two_processes_launched_with_torchruns_variables(python):
    code = (
        "import os, numpy as np, infinirt, infinirt.ccl as ccl\n"
        "comm = ccl.init_from_env()\n"
        "buffer = infinirt.Buffer(4)\n"
        "buffer.copy_from(np.array([comm.rank + 1], dtype=np.float32))\n"
        "comm.all_reduce(buffer, 'sum')\n"
        "infinirt.synchronize()\n"
        "out = np.empty(1, dtype=np.float32); buffer.copy_to(out)\n"
        "print('rank', comm.rank, 'of', comm.size, comm.engine, out[0])\n"
        "assert comm.async_error() is None\n"
        "comm.destroy()\n"
    )
    port = str(free_port())
    import os

    processes = []
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, INFINIRT_CPU_DEVICES="1")
        processes.append(subprocess.Popen([sys.executable, "-c", code], env=env, text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outputs = [p.communicate(timeout=120) for p in processes]
    for p, (out, err) in zip(processes, outputs):
        assert p.returncode == 0, err
    assert "rank 0 of 2 cpu 3.0" in outputs[0][0]
    assert "rank 1 of 2 cpu 3.0" in outputs[1][0]


def test_bad_input_is_refused_clearly():
    comms = ccl.init_all([0])
    comm = comms[0]
    buffer = infinirt.Buffer(8)
    with pytest.raises(ValueError, match="reduction"):
        comm.all_reduce(buffer, "median")
    with pytest.raises(ValueError, match="dtype"):
        comm.all_reduce(buffer, "sum", dtype="complex256")
    with pytest.raises(TypeError):
        comm.all_reduce(b"bytes", "sum")
    with pytest.raises(ValueError, match="count"):
        comm.all_reduce(buffer, "sum", count=3)  # 8 bytes hold 2 floats
    with pytest.raises(ccl.CclError) as error:
        ccl.init_rank(2, bytes(128), 5)
    assert error.value.status == 3 and error.value.name == "INFINI_STATUS_BAD_PARAM"
    with pytest.raises(ValueError):
        ccl.init_rank(2, b"short", 0)
    with pytest.raises(ValueError):
        ccl.init_all([])
    comm.destroy()
    with pytest.raises(ValueError, match="destroyed"):
        comm.all_reduce(buffer, "sum")
