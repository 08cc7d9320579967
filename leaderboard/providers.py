"""Provider plumbing every part of the leaderboard needs — judging, TIG builds, task construction, EASEL
agents, C² subjects and raters: which stored model a name selects, the engine's provider client of a stored
model, and the code version pinned into every run. It sits below all of them (it imports no service), so
none has to reach into another's module for it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from django.conf import settings

from engine.judge.simulated import SIMULATED_JUDGE_NAME
from leaderboard.models import SubjectModel
from leaderboard.runs.errors import RunConfigurationError

__all__ = [
    "UnknownJudge", "code_version", "judge_choices", "judge_is_simulated", "judge_model_for", "provider_client_for",
    "provider_config_for", "provider_model_names",
]


def code_version() -> str:
    """The commit the code runs at (pinned into every snapshot), or the package version."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=Path(settings.BASE_DIR),
            capture_output=True, text=True, timeout=5, check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"atelier-{version('atelier')}"
        except PackageNotFoundError:
            return "unknown"


class UnknownJudge(ValueError):
    pass


def judge_is_simulated(name: str) -> bool:
    return name == SIMULATED_JUDGE_NAME or name.startswith(f"{SIMULATED_JUDGE_NAME}-")


def judge_choices() -> list[str]:
    names = list(SubjectModel.objects.filter(role=SubjectModel.Role.JUDGE).values_list("display_name", flat=True))
    return [SIMULATED_JUDGE_NAME, *names]


def judge_model_for(name: str) -> SubjectModel | None:
    if judge_is_simulated(name):
        return None
    try:
        return SubjectModel.objects.get(display_name=name, role=SubjectModel.Role.JUDGE)
    except SubjectModel.DoesNotExist as exc:
        raise UnknownJudge(f"no judge model named {name!r}; known: {', '.join(judge_choices())}") from exc


def provider_config_for(model: SubjectModel, *, temperature: float = 0.0):
    """The engine's provider configuration of a stored model (the key stays in the environment)."""
    from engine.providers.client import ProviderConfig

    if not model.base_url:
        raise UnknownJudge(f"{model} has no base URL configured")
    return ProviderConfig(
        base_url=model.base_url,
        model=model.provider_id or model.display_name,
        api_key_env=model.api_key_env or None,
        temperature=model.temperature if model.temperature is not None else temperature,
        max_tokens=model.max_tokens,
        reasoning=model.reasoning,
        price_input_per_mtok=model.price_input_per_mtok,
        price_output_per_mtok=model.price_output_per_mtok,
        max_retries=settings.ATELIER_PROVIDER_MAX_RETRIES,
        backoff_base_s=settings.ATELIER_PROVIDER_BACKOFF_BASE_MS / 1000,
    )


def provider_client_for(model: SubjectModel, *, temperature: float = 0.0, cache_name: str | None = "provider"):
    """The provider client of a stored model: its endpoint, the site's concurrency cap, a persistent
    request cache ``<ATELIER_PROVIDER_CACHE_DIR>/<cache_name>.sqlite3`` (none when ``cache_name`` is None,
    for callers that keep their own) and a fresh usage ledger."""
    from engine.providers.cache import RequestCache
    from engine.providers.client import OpenAICompatibleClient
    from engine.providers.usage import UsageLedger

    cache = None
    if cache_name is not None:
        cache_dir = Path(settings.ATELIER_PROVIDER_CACHE_DIR)
        cache_dir.mkdir(parents=True, exist_ok=True)
        cache = RequestCache(cache_dir / f"{cache_name}.sqlite3")
    return OpenAICompatibleClient(
        provider_config_for(model, temperature=temperature),
        concurrency=settings.ATELIER_PROVIDER_CONCURRENCY, cache=cache, usage=UsageLedger(),
    )


def provider_model_names(role: str) -> list[str]:
    """Display names of the models of ``role`` that have an endpoint to call."""
    return list(SubjectModel.objects.filter(role=role).exclude(base_url="").values_list("display_name", flat=True))


#: The offline text embedder: all-MiniLM-L6-v2 run in numpy (engine.embed). Any other name is an embedder-role model.
OFFLINE_EMBEDDER = "minilm"


def embedder_model_for(name: str) -> SubjectModel:
    """The embedder-role model of that display name; a :class:`RunConfigurationError` naming the choices otherwise."""
    model = SubjectModel.objects.filter(display_name=name, role=SubjectModel.Role.EMBEDDER).first()
    if model is None:
        known = provider_model_names(SubjectModel.Role.EMBEDDER)
        raise RunConfigurationError(f"no embedder-role model named {name!r}; choose {OFFLINE_EMBEDDER!r} or one of: "
                                    f"{', '.join(known) or '(none configured)'}")
    return model


def text_embedder_named(name: str):
    """The engine embedder a name selects: ``"minilm"`` (offline) or an embedder-role model (TIG builds, C² Originality)."""
    from engine.embed import text_embedder

    if name == OFFLINE_EMBEDDER:
        return text_embedder(OFFLINE_EMBEDDER, cache_dir=settings.ATELIER_EMBED_CACHE_DIR)
    model = embedder_model_for(name)
    # the embedding cache (keyed by backend, model and text) is the one persistent store of vectors
    return text_embedder(
        "openai", cache_dir=settings.ATELIER_EMBED_CACHE_DIR, client=provider_client_for(model, cache_name=None),
        model=model.provider_id or model.display_name,
    )
