"""Assignments given from Python are checked, never cast silently (issue 52).

The rule: an assignment is an array (or list) of integer device ids, one per op, each in
0..P-1; a float array is accepted when every value is a whole number (np.zeros(N) is a valid
all-on-device-0 assignment), anything else raises ValueError naming the first bad op.
"""
import numpy as np
import pytest

# The fork-join DOT graph of conftest (ops a..f): on one device it runs in the sum of the compute
# costs, 3 + 4 + 2 + 6 + 1 + 2 = 18.
SERIAL = 18.0


@pytest.fixture()
def fork(doppler, fork_dot):
    return doppler.Problem(doppler.load_graph(fork_dot), 2)


def test_a_hand_computed_makespan(fork):
    assert fork.simulate(np.zeros(6, dtype=np.int64)) == SERIAL
    # a on 0; b, e on 1; c, d, f on 0. Device 0: a [0,3], then c and d ready at 3; FIFO by
    # ready time then id runs c [3,5], d [5,11]. b needs a's data (5) on device 1: b [8,12];
    # e needs b (same device) and c (transfer 2, arrives 7): e [12,13]; f needs d (same device,
    # 11) and e (transfer 1, arrives 14): f [14,16].
    assert fork.simulate([0, 1, 0, 0, 1, 0]) == 16.0


@pytest.mark.parametrize("call", ["simulate", "schedule"])
@pytest.mark.parametrize("bad, message", [
    ([-1] * 6, r"assignment\[0\] \(op 'a'\) is device -1; devices are 0..1"),
    ([0, -1, 0, 0, 0, 0], r"assignment\[1\] \(op 'b'\) is device -1"),
    ([0, 0, 2, 0, 0, 0], r"assignment\[2\] \(op 'c'\) is device 2"),
    (np.array([0, 0, 0, 2**32, 0, 0], dtype=np.int64), r"assignment\[3\] \(op 'd'\) is device 4294967296"),
    ([0, 1.7, 0, 0, 0, 0], r"assignment\[1\] \(op 'b'\) is 1.7, not a whole number"),
    ([0, float("nan"), 0, 0, 0, 0], r"assignment\[1\] \(op 'b'\) is nan"),
    ([0, 0, 0], r"has 3 entries per assignment; the graph has 6 ops"),
    ([[0] * 6], r"must be 1-D"),
    (np.zeros(6, dtype=bool), r"must hold integer device ids, found dtype bool"),
    (["0"] * 6, r"must hold integer device ids"),
])
def test_bad_assignments_raise_value_error_naming_the_op(fork, call, bad, message):
    with pytest.raises(ValueError, match=message):
        getattr(fork, call)(bad)


def test_whole_floats_and_unsigned_ids_are_accepted(fork):
    a = [0, 1, 0, 0, 1, 0]
    want = fork.simulate(a)
    assert fork.simulate(np.array(a, dtype=np.float64)) == want
    assert fork.simulate(np.array(a, dtype=np.uint8)) == want
    assert fork.schedule(np.array(a, dtype=np.int16))["makespan"] == want


def test_simulate_many_checks_every_row(fork):
    good = np.array([[0] * 6, [0, 1, 0, 0, 1, 0]])
    assert fork.simulate_many(good).tolist() == [SERIAL, 16.0]
    bad = good.copy()
    bad[1, 4] = 5
    with pytest.raises(ValueError, match=r"assignments\[1, 4\] \(op 'e'\) is device 5"):
        fork.simulate_many(bad)
    with pytest.raises(ValueError, match="K x N"):
        fork.simulate_many(good[0])
    assert fork.simulate_many(np.zeros((0, 6), dtype=np.int32)).tolist() == []


def test_large_batches_run_in_watched_chunks_with_the_same_makespans(doppler, dag_json):
    # 2,000 x 120 ops passes the 200,000-op threshold: the batch runs on a watched worker in
    # chunks; each makespan must still equal its own simulate() call, in order.
    problem = doppler.Problem(doppler.load_graph(dag_json), 4)
    batch = np.random.default_rng(1).integers(0, 4, size=(2000, problem.graph.num_ops))
    many = problem.simulate_many(batch, threads=2)
    assert many.shape == (2000,)
    assert many.tolist() == [problem.simulate(a) for a in batch]
