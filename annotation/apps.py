from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Human annotation"

    def ready(self) -> None:
        from annotation.dashboard_cache import connect_invalidation_signals

        connect_invalidation_signals()
        # A snapshot's reproducibility bundle carries the human labels of its calibrated views; the
        # bundle exporter may not import this app, so the contents are registered with it from here.
        from annotation.bundle_labels import ekphrasis_human_labels
        from leaderboard.bundles.extensions import register_extension

        register_extension("ekphrasis", ekphrasis_human_labels)
        # A model's profile shows its human-validation figures; the profile may not import this app either.
        from annotation.model_validation import model_validation_figures
        from leaderboard.overview import validation_source_register

        validation_source_register(model_validation_figures)
        # After a model is added or renamed, the items checked against the old names are checked again;
        # the catalogue may not import this app, so it is told whom to call from here.
        from annotation.tasks import recheck_blinding_send
        from leaderboard.services.catalogue import catalogue_revision_listener_register

        catalogue_revision_listener_register(recheck_blinding_send)
        # Who may hold an API token is everyone but a crowd participant, whose account only this app can name.
        from annotation.participant_accounts import participant_accounts_filter
        from leaderboard.roles import participant_accounts_rule_register

        participant_accounts_rule_register(participant_accounts_filter)
        # Pillow's own decompression-bomb guard (a warning over MAX_IMAGE_PIXELS, a refusal at open over
        # twice that) at the site's pixel budget, for any decoding that does not check the budget itself.
        from PIL import Image

        from engine.image_limits import PIXEL_BUDGET

        Image.MAX_IMAGE_PIXELS = PIXEL_BUDGET
