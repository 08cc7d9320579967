import pytest

from tests.leaderboard.bundles.demo_bundles import demo_bundles_built


@pytest.fixture(scope="session")
def demo_bundles(tmp_path_factory):
    return demo_bundles_built(tmp_path_factory.getbasetemp() / "demo-bundles")
