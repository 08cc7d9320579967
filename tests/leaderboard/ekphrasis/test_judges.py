"""leaderboard/ekphrasis/judges.py: a stored model's provider configuration."""

import pytest

from tests.factories import SubjectModelFactory


@pytest.mark.django_db
def test_a_stored_models_provider_configuration_takes_the_sites_retry_settings(settings):
    from leaderboard.providers import provider_config_for

    settings.ATELIER_PROVIDER_MAX_RETRIES, settings.ATELIER_PROVIDER_BACKOFF_BASE_MS = 2, 250
    model = SubjectModelFactory(display_name="retry-judge", role="judge", base_url="http://127.0.0.1:9/v1",
                                provider_id="fake/judge")
    config = provider_config_for(model)
    assert (config.max_retries, config.backoff_base_s) == (2, 0.25)
    assert (config.base_url, config.model) == ("http://127.0.0.1:9/v1", "fake/judge")
