"""Minimal Gymnasium-compatible spaces, used when the gymnasium package is not installed.

They implement what agents and checkers use: ``shape``, ``dtype``, ``contains``, ``seed`` and
``sample`` (Discrete.sample accepts an int8 action mask like gymnasium's).
"""
import numpy as np


class Space:
    """Base class: a seeded NumPy generator, ``shape`` and ``dtype``."""

    def __init__(self, shape=None, dtype=None, seed=None):
        self.shape = shape
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        """Reseed the sampling generator."""
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def __contains__(self, x):
        return self.contains(x)


class Discrete(Space):
    """Integers 0..n-1."""

    def __init__(self, n, seed=None):
        super().__init__((), np.int64, seed)
        self.n = int(n)

    def sample(self, mask=None):
        if mask is None:
            return int(self.np_random.integers(self.n))
        valid = np.flatnonzero(np.asarray(mask))
        if valid.size == 0:
            raise ValueError("Discrete.sample: the mask allows no action")
        return int(self.np_random.choice(valid))

    def contains(self, x):
        try:
            v = int(x)
        except (TypeError, ValueError):
            return False
        return v == x and 0 <= v < self.n

    def __repr__(self):
        return f"Discrete({self.n})"


class Box(Space):
    """Arrays of a fixed shape with every element in [low, high]."""

    def __init__(self, low, high, shape, dtype=np.float32, seed=None):
        super().__init__(tuple(shape), dtype, seed)
        self.low, self.high = low, high

    def sample(self, mask=None):
        lo = max(self.low, -1e6)
        hi = min(self.high, 1e6)
        x = self.np_random.uniform(lo, hi, self.shape)
        return x.astype(self.dtype) if np.issubdtype(self.dtype, np.floating) else np.floor(x).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low)) and bool(np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.low}, {self.high}, {self.shape}, {self.dtype})"


class Dict(Space):
    """A dict of named spaces."""

    def __init__(self, spaces, seed=None):
        super().__init__(None, None, seed)
        self.spaces = dict(spaces)

    def __getitem__(self, key):
        return self.spaces[key]

    def keys(self):
        return self.spaces.keys()

    def sample(self, mask=None):
        return {k: s.sample() for k, s in self.spaces.items()}

    def contains(self, x):
        return isinstance(x, dict) and x.keys() == self.spaces.keys() and all(
            self.spaces[k].contains(v) for k, v in x.items())

    def __repr__(self):
        return "Dict(" + ", ".join(f"{k}: {s}" for k, s in self.spaces.items()) + ")"
