"""Agents of an EASEL run: which policy a run's agent names, built from the engine's one contract
(:class:`engine.easel.policy.Policy`), and the anchors of Table 2.

``simulated`` selects the labelled simulated agent and ``painter`` the search painter (a stand-in for
the paper's Learning-to-Paint data policy, whose weights we do not have); the three anchors are named
by their engine function; any other name must be a ``SubjectModel`` with role *subject*, reached
through its OpenAI-compatible endpoint by the one provider client
(:func:`leaderboard.providers.provider_client_for`), with the API key read from the environment variable
the model row names. Nothing else selects a simulated component.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.easel.painter import ANCHOR_LABELS
from engine.easel.simulated import skill_check
from leaderboard.easel.models import EaselRun
from leaderboard.models import SubjectModel

SIMULATED = "simulated"
PAINTER = "painter"
ANCHORS = ("blank_fill", "mean_colour_fill", "dominant_colour_fill")
PAINTER_LABEL = "Search painter (stand-in for Learning-to-Paint)"
#: The simulated agent's skill when none is given (its range is the engine's).
DEFAULT_SIMULATED_SKILL = 0.5
#: Behaviour knobs of the simulated agent a run may set in ``config["simulated"]`` (engine.easel.simulated).
SIMULATED_KNOBS = ("saturation", "repeat", "drift", "invalid")


class UnknownAgent(ValueError):
    pass


@dataclass(frozen=True)
class AgentChoice:
    """What a run's ``--agent`` resolved to."""

    kind: str
    name: str
    subject_model: SubjectModel | None
    is_simulated: bool


def agent_choices() -> list[str]:
    """Names a researcher may pick: the simulated agent, the painter, the anchors and the subject models with an
    endpoint."""
    names = list(
        SubjectModel.objects.filter(role=SubjectModel.Role.SUBJECT).exclude(base_url="")
        .order_by("display_name").values_list("display_name", flat=True)
    )
    return [SIMULATED, PAINTER, *ANCHORS, *names]


def agent_resolve(name: str, *, skill: float | None = None, label: str = "") -> AgentChoice:
    """The agent a name selects; ``skill``/``label`` apply to the simulated agent only."""
    if name == SIMULATED:
        value = DEFAULT_SIMULATED_SKILL if skill is None else skill
        try:  # the engine's range, checked before any row is written (the page and the API share this)
            skill_check(value)
        except ValueError as exc:
            raise UnknownAgent(str(exc)) from exc
        return AgentChoice(EaselRun.AgentKind.SIMULATED, label or f"simulated (skill {value:.2f})", None, True)
    if skill is not None:
        raise UnknownAgent("--skill applies to the simulated agent only")
    if name == PAINTER:
        return AgentChoice(EaselRun.AgentKind.PAINTER, label or PAINTER_LABEL, None, False)
    if name in ANCHORS:
        return AgentChoice(EaselRun.AgentKind.ANCHOR, ANCHOR_LABELS[name], None, False)
    try:
        model = SubjectModel.objects.get(display_name=name, role=SubjectModel.Role.SUBJECT)
    except SubjectModel.DoesNotExist as exc:
        raise UnknownAgent(
            f"no agent {name!r}: use simulated, painter, an anchor ({', '.join(ANCHORS)}) "
            f"or a subject model ({', '.join(agent_choices()[2 + len(ANCHORS):]) or 'none configured'})"
        ) from exc
    if not model.base_url:
        raise UnknownAgent(f"subject model {name!r} has no base URL: set one in the admin to run it")
    return AgentChoice(EaselRun.AgentKind.MODEL, model.display_name, model, model.is_simulated)


def anchor_canvas(anchor: str, reference):
    """The canvas of a Table 2 anchor for ``reference`` (engine.easel.painter)."""
    from engine.easel import painter

    return getattr(painter, anchor)(reference)


def model_chat(run: EaselRun) -> tuple[Callable[[list[dict]], str], object]:
    """The ``chat(messages) -> text`` callable the MLLM agent talks through, and its provider client.

    Requests go through the persistent request cache under a sample index naming the run's seed, so that
    a resumed episode asks exactly what the interrupted one asked and gets the stored answer back (the
    resumed episode is identical even for a sampling model), while another seed asks afresh."""
    from leaderboard.providers import provider_client_for

    client = provider_client_for(run.subject_model, temperature=0.0, cache_name="easel")
    sample_index = f"easel:seed={run.seed}"

    def chat(messages: list[dict]) -> str:
        return client.chat(messages, sample_index=sample_index).text

    return chat, client


def policy_for(run: EaselRun):
    """The engine policy of a run (anchors have none), and the provider client behind it (or None)."""
    if run.agent_kind == EaselRun.AgentKind.SIMULATED:
        from engine.easel.simulated import SimulatedAgent

        knobs = {k: run.config["simulated"][k] for k in SIMULATED_KNOBS if k in run.config.get("simulated", {})}
        return SimulatedAgent(skill=float(run.config.get("skill", DEFAULT_SIMULATED_SKILL)), seed=run.seed,
                              name=run.agent_name, **knobs), None
    if run.agent_kind == EaselRun.AgentKind.PAINTER:
        from engine.easel.painter import SearchPainter

        return SearchPainter(seed=run.seed, **run.config.get("painter", {})), None
    if run.agent_kind == EaselRun.AgentKind.MODEL:
        from engine.easel.agent import MLLMAgent

        chat, client = model_chat(run)
        # The label names the policy in our records only; the engine never puts it in a prompt.
        return MLLMAgent(chat, model_label=run.agent_name), client
    raise UnknownAgent(f"a {run.agent_kind} run has no policy")


def recogniser_for(run: EaselRun):
    """Who reads the handwriting task (easel.txt §3.3): the model named in ``run.config["recogniser"]`` (a
    judge- or subject-role model, through the provider client) or, by default, Tesseract offline. The
    recogniser's name is stored with every score."""
    from engine.easel.semantic import MultimodalRecogniser, TesseractRecogniser

    name = run.config.get("recogniser") or "tesseract"
    if name == "tesseract":
        return TesseractRecogniser()
    from leaderboard.providers import provider_client_for

    try:
        model = SubjectModel.objects.get(display_name=name)
    except SubjectModel.DoesNotExist as exc:
        raise UnknownAgent(f"no recogniser model named {name!r}") from exc
    client = provider_client_for(model, temperature=0.0, cache_name="easel")
    return MultimodalRecogniser(lambda messages: client.chat(messages).text, label=model.display_name)
