"""Shared fixtures of the Python tests: a seeded generator, so every test is reproducible."""
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
