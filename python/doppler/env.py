"""A Gymnasium-style environment for placement research: ``doppler.env.PlacementEnv``.

One episode places every op of a ``doppler.Problem``, an op at a time, each after all its
predecessors (the C++ ``PlacementEnv`` of policy/placement_env.hpp does the work):

* ``mode="sel_plc"``: two actions per op, as Doppler's SEL and PLC policies: in the select phase
  (``obs["phase"] == 0``) the action is a candidate op (an op whose predecessors are all placed),
  in the place phase (``obs["phase"] == 1``) a device for ``obs["op"]``. The action space is
  ``Discrete(max(N, P))``; ``obs["action_mask"]`` marks the valid actions of the current phase.
* ``mode="plc"``: the ops come in critical-path order (highest b-level first, ties lowest id) and
  every action is a device: ``Discrete(P)``, N steps per episode.

Observations (a dict):

* ``node_features`` (N x 5 float32, static): z-scored compute cost, b-level, t-level, total
  incoming and total outgoing transfer cost of every op (the Doppler policy's node features);
* ``edge_index`` (2 x E int64, static): the graph's edges (src row, dst row);
* ``placed`` (N int32): each op's device, -1 while unplaced;
* ``candidates`` (N int8): ops that may be selected now (zeros outside the select phase);
* ``op`` (int64 scalar): the op awaiting its device, -1 in the select phase;
* ``device_features`` (P x 5 float32, raw, problem units): for ``op`` on each device, the total
  compute already there, the compute of op's parents there, the earliest start and latest finish
  of op's parents there (0 when none), and op's earliest start there; zeros in the select phase;
* ``phase`` (int64 scalar): 0 select, 1 place;
* ``action_mask`` (int8, one per action): 1 where the action is valid now.

Rewards: 0 until the last op is placed; then ``-makespan / reference``, where ``makespan`` is the
simulated makespan of the final assignment and ``reference`` the critical-path placer's makespan
on the same problem (so -1.0 ties critical-path, above -1.0 beats it). ``info`` holds
``assignment``, ``makespan``, ``reference_makespan`` and ``order`` at the end. An invalid action
raises ValueError. Works without gymnasium; when it is installed the class is a
``gymnasium.Env`` and is registered as ``doppler/Placement-v0``.
"""
import numpy as np

from . import _doppler

try:  # pragma: no cover - depends on what is installed
    import gymnasium as _gym
    from gymnasium import spaces as _spaces

    _Base = _gym.Env
except ImportError:  # gymnasium is optional
    _gym = None
    from . import spaces as _spaces

    _Base = object


class PlacementEnv(_Base):
    """Place the ops of ``problem`` one step at a time (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, problem, mode="sel_plc", defer_inputs=False):
        self._core = _doppler.EnvCore(problem, mode, defer_inputs)
        self.problem = problem
        self.mode = mode
        n, p = problem.graph.num_ops, problem.devices
        self._n, self._p = n, p
        node, edges = self._core.static_features()
        node.setflags(write=False)
        edges.setflags(write=False)
        self._node, self._edges = node, edges
        self._actions = p if mode == "plc" else max(n, p)
        self._no_candidates = np.zeros(n, dtype=np.int8)
        self._no_devices = np.zeros((p, 5), dtype=np.float32)
        self.action_space = _spaces.Discrete(self._actions)
        big = np.finfo(np.float32).max
        self.observation_space = _spaces.Dict({
            "node_features": _spaces.Box(-big, big, node.shape, np.float32),
            "edge_index": _spaces.Box(0, max(n - 1, 0), edges.shape, np.int64),
            "placed": _spaces.Box(-1, p - 1, (n,), np.int32),
            "candidates": _spaces.Box(0, 1, (n,), np.int8),
            "op": _spaces.Box(-1, n - 1, (), np.int64),
            "device_features": _spaces.Box(-big, big, (p, 5), np.float32),
            "phase": _spaces.Box(0, 1, (), np.int64),
            "action_mask": _spaces.Box(0, 1, (self._actions,), np.int8),
        })

    def __repr__(self):
        return (f"<doppler.env.PlacementEnv mode={self.mode!r}: {self._n} ops on {self._p} "
                f"devices, {self._actions} actions, {self._core.steps} steps taken>")

    @property
    def reference_makespan(self):
        """The critical-path placer's makespan: the reward's reference."""
        return self._core.reference_makespan

    def reset(self, seed=None, options=None):
        """Start an episode. ``seed`` seeds ``action_space.sample``; the environment itself is
        deterministic. Returns ``(obs, info)``."""
        if seed is not None:
            self.action_space.seed(seed)
        self._core.reset()
        return self._observation(), {}

    def step(self, action):
        """Take one action. Returns ``(obs, reward, terminated, truncated, info)``."""
        core = self._core
        if core.done:
            raise ValueError("step: the episode is over (call reset)")
        a = int(action)
        if core.selecting:
            core.select(a)
        else:
            core.place(a)
        done = core.done
        info = {}
        if done:
            info = {"assignment": core.device_of(), "makespan": core.makespan,
                    "reference_makespan": core.reference_makespan, "order": core.order()}
        return self._observation(), core.reward, done, False, info

    def action_masks(self):
        """The valid actions now (int8, one per action), as MaskablePPO-style agents expect."""
        core = self._core
        if core.done:
            return np.zeros(self._actions, dtype=np.int8)
        if core.selecting:
            mask = np.zeros(self._actions, dtype=np.int8)
            mask[: self._n] = core.candidate_mask()
            return mask
        mask = np.zeros(self._actions, dtype=np.int8)
        mask[: self._p] = 1
        return mask

    def _observation(self):
        core = self._core
        selecting = core.selecting
        return {
            "node_features": self._node,
            "edge_index": self._edges,
            "placed": core.device_of(),
            "candidates": core.candidate_mask() if selecting else self._no_candidates,
            "op": np.int64(core.op),
            "device_features": self._no_devices if selecting or core.done else core.device_features(),
            "phase": np.int64(0 if selecting or core.done else 1),
            "action_mask": self.action_masks(),
        }

    def render(self):
        """No rendering (``render_modes`` is empty)."""
        return None

    def close(self):
        """Nothing to release."""


if _gym is not None:  # pragma: no cover - depends on what is installed
    try:
        _gym.register(id="doppler/Placement-v0", entry_point="doppler.env:PlacementEnv")
    except Exception:  # already registered (module reloaded)
        pass
