"""Items of a campaign (Ekphrasis App. H): creating them from specs with the identity check and counterbalanced
slots, importing them from JSONL, validation pairs (App. H.5), image pairs behind the faithfulness gate, gold
answers, and the staleness of items whose shown content changed. Reachable from :mod:`annotation.services`
under the same names."""


from __future__ import annotations

import hashlib
import json
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.blinding import (
    IdentityLeak,
    blinding_refusals_record,
    catalogue_identities,
    item_identity_problems,
)
from annotation.choices import CampaignKind, Dimension
from annotation.errors import (
    ItemsInvalid,
)
from annotation.item_records import META_FIELDS, item_records, unknown_field_problems
from annotation.kinds import kind_for
from annotation.locking import row_locks_available
from annotation.models import Assignment, Campaign, Item, ItemSlot
from annotation.progress import annotator_progress_add, campaign_progress_add
from annotation.slot_queue import slots_freed
from leaderboard.models import Render, Response, Task, TaskSet

# ---------------------------------------------------------------------------------------------------
# Items
# ---------------------------------------------------------------------------------------------------


@dataclass
class ItemSpec:
    """What an item references; ``key`` defaults to a digest of the references."""

    task: Task
    dimension: str = ""
    response_a: Response | None = None
    response_b: Response | None = None
    render_a: Render | None = None
    render_b: Render | None = None
    #: EASEL/C² validation kinds (annotation.validation_items): the sample or canvases shown.
    c2_sample: Any = None
    easel_step_a: Any = None
    easel_step_b: Any = None
    payload: dict[str, Any] = field(default_factory=dict)
    key: str = ""
    sampling_stratum: str = ""
    is_gold: bool = False
    gold_answer: Any = None
    line: int = 0

    def default_key(self) -> str:
        parts = [self.task.external_id, self.dimension]
        for obj in (self.response_a, self.response_b, self.render_a, self.render_b):
            parts.append(str(obj.pk) if obj is not None else "-")
        for obj in (self.c2_sample, self.easel_step_a, self.easel_step_b):
            if obj is not None:
                parts.append(f"{type(obj).__name__}{obj.pk}")
        if self.payload:
            parts.append(hashlib.sha256(json.dumps(self.payload, sort_keys=True).encode()).hexdigest()[:16])
        return ":".join(parts)


def items_create(
    *, campaign: Campaign, specs: Sequence[ItemSpec], rng: random.Random | None = None, update_existing: bool = False
) -> tuple[list[Item], list[Item]]:
    """Create items (and their ``k`` slots) from specs, all or nothing.

    Returns (created, updated). An existing key is left alone unless ``update_existing`` — then its
    shown content is replaced, which marks earlier labels stale (never silently mixed). Raises
    :class:`ItemsInvalid` listing every problem with its line. An item that would show a model's
    name anywhere (:func:`annotation.blinding.item_identity_problems`) is refused and kept in the
    admin's report of refused items.
    """
    rng = rng or random.SystemRandom()
    kind = kind_for(campaign.kind)
    identities = catalogue_identities()
    errors: list[tuple[int, str, str]] = []
    refused: list[tuple[str, int, IdentityLeak]] = []
    with transaction.atomic():
        # Race prevented: the same file imported twice at once (two admins, a re-sent upload). Locking
        # the existing items left the new ones unlocked (and an empty campaign had nothing to lock): both
        # imports created the same keys and the second broke the unique key (an IntegrityError, a 500).
        # The campaign's row lock orders them; the second then reads the first's items (READ COMMITTED).
        if row_locks_available():
            list(Campaign.objects.select_for_update().filter(pk=campaign.pk).values_list("pk"))
        existing = {i.key: i for i in Item.objects.select_for_update().filter(campaign=campaign)}
        next_position = max((i.position for i in existing.values()), default=-1) + 1
        created, updated, seen = [], [], set()
        new_slots = 0
        for spec in specs:
            key = spec.key or spec.default_key()
            if key in seen:
                errors.append((spec.line, "key", f"duplicate item key {key!r}"))
                continue
            seen.add(key)
            if spec.task.task_set_id != campaign.task_set_id:
                errors.append((spec.line, "task", f"task {spec.task.external_id!r} is not in {campaign.task_set}"))
                continue
            item = existing.get(key) or Item(campaign=campaign, key=key, position=next_position, orientation=rng.random() < 0.5)
            item.task, item.dimension, item.payload = spec.task, spec.dimension, spec.payload
            item.response_a, item.response_b = spec.response_a, spec.response_b
            item.render_a, item.render_b = spec.render_a, spec.render_b
            item.c2_sample, item.easel_step_a, item.easel_step_b = spec.c2_sample, spec.easel_step_a, spec.easel_step_b
            item.sampling_stratum = spec.sampling_stratum
            item.task_set_version = campaign.task_set.version
            item.campaign = campaign
            problems = kind.check_item(item)
            if spec.is_gold:
                try:
                    item.is_gold, item.gold_answer = True, kind.parse_answer(spec.gold_answer)
                except ValueError as exc:
                    problems.append(("gold", str(exc)))
            if not problems:
                try:
                    content_hash = kind.shown_content(item).digest
                except (OSError, ValueError) as exc:
                    problems.append(("content", f"cannot read what the item shows: {exc}"))
            if not problems:
                leaks = item_identity_problems(item=item, kind=kind, matcher=identities)
                refused.extend((key, spec.line, leak) for leak in leaks)
                problems.extend((leak.field, leak.message) for leak in leaks)
            errors.extend((spec.line, f, m) for f, m in problems)
            if problems:
                continue
            item.blinding_revision = max(item.blinding_revision, identities.revision)  # checked just now
            if item.pk is None:
                item.content_hash = content_hash
                item.save()
                new_slots += _slots_create(item, range(0 if item.is_gold else campaign.k))
                created.append(item)
                next_position += 1
            elif update_existing and content_hash != item.content_hash:
                item.save()
                _item_content_changed(item=item, new_hash=content_hash, now=timezone.now())
                updated.append(item)
        if errors:
            transaction.set_rollback(True)  # the block ends without an exception: nothing is written
        elif created or updated:
            campaign_progress_add(campaign_id=campaign.pk, slots=new_slots, items_changed=True)
    if errors:
        # Kept after the items' rollback, so the admin's report of refused items survives it.
        blinding_refusals_record(campaign=campaign, refused=refused)
        raise ItemsInvalid(errors)
    return created, updated


def _slots_create(item: Item, indexes: Iterable[int]) -> int:
    """Create the item's slots (free, in the campaign's queue at the item's position); how many."""
    slots = ItemSlot.objects.bulk_create(
        [ItemSlot(item=item, index=i, campaign_id=item.campaign_id, position=item.position) for i in indexes]
    )
    return len(slots)


def items_create_validation_pairs(
    *,
    campaign: Campaign,
    dimensions: Sequence[str] = (Dimension.USEFULNESS, Dimension.EXPRESSIVENESS, Dimension.NOVELTY),
    rankings: Mapping[str, Mapping[int, float]] | None = None,
    pairs_per_task: int = 6,
    tasks: Sequence[Task] | None = None,
    checklists: Mapping[tuple[str, str], list[str]] | None = None,
    rng: random.Random | None = None,
    plans: Mapping[str, Mapping[int, Sequence[Any]]] | None = None,
) -> list[Item]:
    """Text pairwise items from the catalogue by the App. H.5 sampler: per task and dimension,
    ``pairs_per_task`` pairs of primary responses (top–bottom, top–middle, middle–middle and trade-off
    pairs from ``rankings[dimension]`` = subject model id -> θ of the current judge ranking; random
    order, labelled as such, when there is none). ``checklists[(task external id, dimension)]`` are
    the reference cues shown with the pair. ``plans[dimension][task pk]``: the pairs the
    ``calibration`` rule chose for that task (:mod:`annotation.calibration_sampling`), used instead
    of the H.5 strata for the dimensions it covers."""
    from annotation.pair_sampling import validation_pairs_sample

    if campaign.kind != CampaignKind.TEXT_PAIRWISE:
        raise ItemsInvalid([(0, "campaign", "validation pairs are for text pairwise campaigns")])
    # Which pairs are sampled is reproducible (seeded by the campaign); the blinding draws — the canonical A/B
    # order, the queue order and each item's orientation — come from the system's randomness: drawn from
    # random.Random(campaign.pk), they could be replayed by anyone who reads this code and the campaign's id
    # in the labelling page's URL, telling which side (and which stratum) the judge ranks higher. A caller's
    # own ``rng`` (the demo, tests) is used for both, as given.
    sampling = rng or random.Random(campaign.pk)
    draws = rng or random.SystemRandom()
    rankings = rankings or {}
    checklists = checklists or {}
    tasks = list(tasks if tasks is not None else campaign.task_set.tasks.order_by("position", "external_id"))
    primaries: dict[int, dict[int, Response]] = defaultdict(dict)
    responses = Response.objects.filter(task__in=tasks, is_primary=True).exclude(
        normalisation_method=Response.Normalisation.PENDING)  # unsplit: no Core Idea to show yet
    for response in responses.select_related("subject_model"):
        primaries[response.task_id][response.subject_model_id] = response
    specs = []
    for task in tasks:
        by_model = primaries.get(task.pk, {})
        for dimension in dimensions:
            others = [rankings[d] for d in rankings if d != dimension and rankings[d]]
            planned = (plans or {}).get(dimension)
            if planned is not None:
                sampled = [p for p in planned.get(task.pk, []) if p.model_a in by_model and p.model_b in by_model]
            else:
                sampled = validation_pairs_sample(
                    models=sorted(by_model), ranking=rankings.get(dimension), other_rankings=others,
                    n_pairs=pairs_per_task, rng=sampling,
                )
            for pair in sampled:
                # The sampler lists the better-ranked model first; the canonical A/B order must not
                # carry the judge's ranking, so it is randomised here (shown order is then
                # counterbalanced per annotator on top of it).
                first, second = (pair.model_a, pair.model_b) if draws.random() < 0.5 else (pair.model_b, pair.model_a)
                payload = {"checklist": list(checklists.get((task.external_id, dimension), []))}
                # The key names the pair as sampled, not as drawn: sampling again adds no second copy of it.
                key = ItemSpec(task=task, dimension=dimension, response_a=by_model[pair.model_a],
                               response_b=by_model[pair.model_b], payload=payload).default_key()
                specs.append(ItemSpec(
                    task=task, dimension=dimension, response_a=by_model[first], response_b=by_model[second],
                    payload=payload, sampling_stratum=pair.stratum, key=key,
                ))
    draws.shuffle(specs)  # spread tasks and dimensions over the queue
    created, _ = items_create(campaign=campaign, specs=specs, rng=draws)
    return created


#: engine.tig audit-record count fields -> the provenance fields shown to auditors (counts only).
TIG_COUNT_FIELDS = (("n_models", "models_sharing"), ("population_models", "models_in_population"),
                    ("n_samples", "responses_sharing"), ("population_samples", "responses_in_population"))


def _tig_payload(record: Mapping[str, Any]) -> dict[str, Any]:
    """A TIG audit item from an App. G.7 record — either with a ``provenance`` object of counts, or
    in the shape :meth:`engine.tig.checklist.ChecklistItem.audit_record` exports (n_models, …).
    Identifiers (checklist_item_id, comparison_key, cluster_id) are kept under ``meta``, never shown."""
    provenance = record.get("provenance")
    if provenance is None:
        provenance = {new: record[old] for old, new in TIG_COUNT_FIELDS if record.get(old) is not None}
    return {
        "checklist_text": record.get("checklist_text", ""),
        "cluster_summary": record.get("cluster_summary") or record.get("cluster_label") or "",
        "provenance": provenance,
        "meta": {k: record[k] for k in META_FIELDS if k in record},
    }


class _Resolver:
    """Looks up the catalogue objects a JSONL item names (task id, model name, sample, renderer, seed)."""

    def __init__(self, task_set: TaskSet):
        self.tasks = {t.external_id: t for t in task_set.tasks.all()}
        self.responses = {
            (r.task.external_id, r.subject_model.display_name, r.sample): r
            for r in Response.objects.filter(task__task_set=task_set).select_related("task", "subject_model")
        }

    def task(self, record: Mapping[str, Any]) -> Task:
        task = self.tasks.get(str(record.get("task_id", "")))
        if task is None:
            raise LookupError("task_id", f"unknown task {record.get('task_id')!r}")
        return task

    def response(self, task: Task, ref: Any, field_name: str) -> Response:
        if not isinstance(ref, Mapping) or "model" not in ref:
            raise LookupError(field_name, "must be an object with a model (and optionally a sample)")
        sample = ref.get("sample")
        if sample is None:
            found = [r for (t, m, _), r in self.responses.items() if t == task.external_id and m == ref["model"] and r.is_primary]
            response = found[0] if found else None
        else:
            response = self.responses.get((task.external_id, ref["model"], int(sample)))
        if response is None:
            raise LookupError(field_name, f"no response of {ref['model']!r} (sample {sample or 'primary'}) to {task.external_id!r}")
        return response

    def render(self, task: Task, ref: Any, field_name: str) -> Render:
        response = self.response(task, ref, field_name)
        renders = Render.objects.filter(response=response)
        if "renderer" in ref:
            renders = renders.filter(renderer=ref["renderer"])
        if "seed" in ref:
            renders = renders.filter(seed=int(ref["seed"]))
        found = list(renders.order_by("pk")[:2])
        if len(found) != 1:
            raise LookupError(field_name, f"{len(found) or 'no'} renders match; name the renderer and seed")
        return found[0]


def items_import_jsonl(*, campaign: Campaign, name: str, raw: bytes, replace_changed: bool = False) -> tuple[list[Item], list[Item]]:
    """Items from a JSONL file, one per line, all or nothing (errors name the line and field).

    Fields by kind (``key``, ``gold`` optional everywhere):
    text_pairwise: task_id, dimension, a {model, sample?}, b {…}, checklist [..], stratum;
    tig_audit: task_id, checklist_text, cluster_summary, provenance {models_sharing, …}, checklist_item_id,
    comparison_key, cluster_id; faithfulness: task_id, render {model, sample?, renderer?, seed?};
    image_preference: task_id, a {model, sample?, renderer?, seed?}, b {…};
    strategy: task_id, response {model, sample?}.
    """
    records = item_records(name, raw)  # the import contract: decoding, types and column limits
    resolver = _Resolver(campaign.task_set)
    specs, errors = [], []
    for line, record in ((r.line, r.values) for r in records):
        unknown = unknown_field_problems(campaign.kind, record)
        if unknown:
            errors.extend((line, field_name, message) for field_name, message in unknown)
            continue
        try:
            task = resolver.task(record)
            spec = ItemSpec(task=task, key=str(record.get("key", "")), line=line,
                            is_gold="gold" in record, gold_answer=record.get("gold"))
            kind = campaign.kind
            if kind == CampaignKind.TEXT_PAIRWISE:
                spec.dimension = str(record.get("dimension", ""))
                spec.response_a = resolver.response(task, record.get("a"), "a")
                spec.response_b = resolver.response(task, record.get("b"), "b")
                spec.payload = {"checklist": record.get("checklist", [])}
                spec.sampling_stratum = str(record.get("stratum", ""))[:40]
            elif kind == CampaignKind.TIG_AUDIT:
                spec.payload = _tig_payload(record)
            elif kind == CampaignKind.FAITHFULNESS:
                spec.render_a = resolver.render(task, record.get("render"), "render")
            elif kind == CampaignKind.IMAGE_PREFERENCE:
                spec.dimension = Dimension.OVERALL
                spec.render_a = resolver.render(task, record.get("a"), "a")
                spec.render_b = resolver.render(task, record.get("b"), "b")
            else:
                spec.response_a = resolver.response(task, record.get("response"), "response")
        except LookupError as exc:
            errors.append((line, exc.args[0], exc.args[1]))
            continue
        except (TypeError, ValueError) as exc:
            errors.append((line, "record", str(exc)))
            continue
        specs.append(spec)
    if errors:
        raise ItemsInvalid(errors, file=name)
    try:
        if campaign.kind == CampaignKind.IMAGE_PREFERENCE:
            _image_pairs_gate_check(campaign, specs)
        return items_create(campaign=campaign, specs=specs, update_existing=replace_changed)
    except ItemsInvalid as exc:
        raise ItemsInvalid(exc.errors, file=name) from exc


def _image_pairs_gate_check(campaign: Campaign, specs: Sequence[ItemSpec]) -> None:
    """Only renders that passed the faithfulness gate may be compared (App. I.2–I.3)."""
    from annotation.selectors import gate_passing_renders

    passing = gate_passing_renders(task_set=campaign.task_set)
    errors = []
    for spec in specs:
        for side, render in (("a", spec.render_a), ("b", spec.render_b)):
            if render is not None and render.pk not in passing:
                errors.append((spec.line, side, "this render has not passed the faithfulness gate (majority of its annotators)"))
    if errors:
        raise ItemsInvalid(errors)


def items_create_image_pairs(
    *, campaign: Campaign, pairs: Sequence[tuple[Render, Render]], rng: random.Random | None = None
) -> list[Item]:
    """Image preference items; both renders of every pair must have passed the faithfulness gate."""
    if campaign.kind != CampaignKind.IMAGE_PREFERENCE:
        raise ItemsInvalid([(0, "campaign", "image pairs are for image preference campaigns")])
    rng = rng or random.SystemRandom()
    # The canonical A/B order is randomised so that it never carries how the pair was listed.
    specs = [ItemSpec(task=a.response.task, dimension=Dimension.OVERALL, render_a=first, render_b=second, line=i)
             for i, (a, b) in enumerate(pairs, start=1)
             for first, second in [(a, b) if rng.random() < 0.5 else (b, a)]]
    _image_pairs_gate_check(campaign, specs)
    created, _ = items_create(campaign=campaign, specs=specs, rng=rng)
    return created


def item_gold_set(*, item: Item, answer: Any) -> Item:
    """Mark an item gold with its known answer (canonical order), or ``answer=None`` to unmark.

    A gold item is shown to every annotator once (it has no slots) and is kept out of agreement
    statistics; it measures each annotator's accuracy.
    """
    kind = kind_for(item.campaign.kind)
    if item.withheld_at is not None:
        raise ItemsInvalid([(0, "gold", "this item is withheld (it shows a model's name); it is not shown again")])
    with transaction.atomic():
        if answer is None:
            if item.is_gold and Assignment.objects.filter(item=item).exists():
                raise ItemsInvalid([(0, "gold", "this gold item has been shown already; its labels cannot become regular ones")])
            item.is_gold, item.gold_answer = False, None
            missing = range(item.campaign.k)
            have = set(item.slots.values_list("index", flat=True))
            slots_delta = _slots_create(item, [i for i in missing if i not in have])
        else:
            try:
                item.gold_answer = kind.parse_answer(answer)
            except ValueError as exc:
                raise ItemsInvalid([(0, "gold_answer", str(exc))]) from exc
            if Assignment.objects.filter(item=item, slot__isnull=False).exists():
                raise ItemsInvalid([(0, "gold", "this item already has labels as a regular item")])
            item.is_gold = True
            slots_delta = -item.slots.all().delete()[1].get(ItemSlot._meta.label, 0)
        item.save(update_fields=["is_gold", "gold_answer"])
        campaign_progress_add(campaign_id=item.campaign_id, slots=slots_delta, items_changed=True)
    return item


# ---------------------------------------------------------------------------------------------------
# Content staleness
# ---------------------------------------------------------------------------------------------------


def _item_content_changed(*, item: Item, new_hash: str, now: datetime) -> None:
    """The item now shows something else: earlier labels become stale and free their slots."""
    # The item's row first, as withholding takes it (annotation.blinding_recheck): the two never wait
    # on each other's assignment rows in opposite orders, and a withheld item is seen as withheld.
    row = Item.objects.filter(pk=item.pk)
    if row_locks_available():
        row = row.select_for_update()
    withheld = next(iter(row.values_list("withheld_at", flat=True)), None) is not None
    label_model = kind_for(item.campaign.kind).label_model
    label_model.objects.filter(item=item, is_stale=False).exclude(content_hash=new_hash).update(is_stale=True)
    ending = Assignment.objects.filter(item=item, status__in=Assignment.LIVE).exclude(content_hash=new_hash)
    if row_locks_available():
        ending = ending.select_for_update()
    ended = list(ending.values_list("pk", "slot_id", "status", "annotator_id"))
    Assignment.objects.filter(pk__in=[pk for pk, *_ in ended]).update(status=Assignment.Status.STALE, finished_at=now)
    # The ended live assignments free their slots; their labels stop counting as progress. A withheld
    # item's slots stay out of the queue, and its labels were taken out of the campaign's count already.
    if not withheld:
        slots_freed(slot_ids=[slot for _, slot, _, _ in ended])
    submitted = [(slot, annotator) for _, slot, status, annotator in ended if status == Assignment.Status.SUBMITTED]
    for annotator_id, n in Counter(annotator for _, annotator in submitted).items():
        annotator_progress_add(campaign_id=item.campaign_id, annotator_id=annotator_id, done=-n)
    counted = 0 if withheld else sum(slot is not None for slot, _ in submitted)
    campaign_progress_add(campaign_id=item.campaign_id, labels=-counted, items_changed=True)
    Item.objects.filter(pk=item.pk).update(content_hash=new_hash)
    item.content_hash = new_hash


def campaign_content_refresh(*, campaign: Campaign, now: datetime | None = None) -> list[Item]:
    """Recompute what every item shows now (response texts, checklist items, image bytes); items
    whose content changed get their earlier labels marked stale. Returns the changed items."""
    kind = kind_for(campaign.kind)
    changed = []
    items = Item.objects.filter(campaign=campaign).select_related("campaign", *kind.content_relations)
    for item in items:
        digest = kind.shown_content(item).digest
        if digest != item.content_hash:
            with transaction.atomic():
                _item_content_changed(item=item, new_hash=digest, now=(now or timezone.now()))
            changed.append(item)
    return changed
