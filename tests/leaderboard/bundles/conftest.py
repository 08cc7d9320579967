import pytest

from tests.leaderboard.bundles.demo_bundles import demo_bundles_once


@pytest.fixture(scope="session")
def demo_bundles():
    return demo_bundles_once()
