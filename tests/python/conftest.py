"""pytest set-up for the hbg module's tests: the examples' folder."""
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture
def examples():
    return os.path.join(SOURCE, "examples")
