"""One chunk of a judge run: one task judged to completion (Ekphrasis App. D, E, F.1).

For each dimension the chunk spends the task's budget in rounds — warm start, then active selection
(:func:`engine.active_sampling.select_pairs`) — and then adds the diagnostic layers (order swaps,
duplicate repeats, auxiliary judges). The resumability rules are those of
:mod:`leaderboard.ekphrasis.judge_runs`: a call is written as a planned comparison before it is made, and
a plan depends only on the task's stored comparisons and on seeds derived from identities.

**What the chunk keeps in memory.** The comparisons of the task and dimension are read once (a resumed
chunk finds its pending calls and failures there) and then kept in a :class:`_Ledger` in step with every
write the chunk makes, so a round reads nothing: planning, the pending calls and the retries all come from
the ledger. A round's verdicts are written in the same transaction as the chunk's next write — the next
round's plan; for a dimension's last verdicts, the next dimension's first plan (:meth:`_Ledger.carry`), or
the end of the chunk — which always comes before its next call is made, so the rule above still holds; a
worker killed before that write judges those calls again on resume, as it would had it been killed during
the call. If another worker wrote part of a plan first (a chunk delivered twice), the insert keeps the
stored rows and the ledger is read again.

Per round the database sees one transaction: the verdicts, the run's call counter and the next plan (on
PostgreSQL one statement). The statements and the rows they write are
:mod:`leaderboard.ekphrasis.ledger_statements`'s. The calls are plain objects (:class:`_Call`), not model
instances.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from engine.active_sampling import ActiveState, select_pairs
from engine.empty_responses import empty_response_outcome, is_empty_response
from engine.seeding import derived_seed, unit_interval
from evalsite.precompiled import read_instances, read_rows
from leaderboard.ekphrasis.ledger_statements import (
    INSERT_BATCH,
    STORED_COLUMNS,
    Plan,
    Stored,
    calls_done_sql,
    finish_sql,
    insert_sql,
    prepared_value,
    verdict_params,
    verdict_sql,
    write_sql,
)
from leaderboard.ekphrasis.models import Comparison, JudgeRun, JudgeRunTask
from leaderboard.ekphrasis.selectors import subject_models_of
from leaderboard.ekphrasis.tig import ideas_of
from leaderboard.models import Response, SubjectModel, Task
from leaderboard.runs.errors import ProviderStopped
from leaderboard.runs.lifecycle import run_claim_finalise, run_counting_finished_units

#: Field each dimension inspects (normalisation invariant, Ekphrasis App. C.3).
INSPECTED_FIELD = {"U": "core_idea", "E": "visual_description", "N": "core_idea"}
#: Attempts of one call (first try + retries of a call that failed validation and repair).
MAX_CALL_ATTEMPTS = 3


# ---------------------------------------------------------------- the task's pool

#: The fields of a response a chunk reads from its pool (:func:`_pool`); any other is left in the database.
POOL_FIELDS = ("id", "task", "subject_model", "sample", "is_primary", "core_idea", "visual_description")


@dataclass
class _Pool:
    models: list[SubjectModel]
    index: dict[int, int]  # subject model pk -> position
    responses: dict[int, Response]  # position -> primary response of this task
    by_pk: dict[int, Response] = field(default_factory=dict)  # every response a comparison showed, by pk
    # what every planning round of a dimension reads of the pool, worked out once per chunk (the pool is fixed)
    _eligible: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False)

    @cached_property
    def position_of(self) -> dict[int, int]:
        """Primary response pk -> the position of its model."""
        return {r.pk: p for p, r in self.responses.items()}

    def eligible(self, dimension: str) -> list[int]:
        """The positions whose inspected field is not empty (the others get automatic records, App. F.2)."""
        if dimension not in self._eligible:
            self._eligible[dimension] = [
                p for p, r in self.responses.items() if not is_empty_response(_inspected(r, dimension))
            ]
        return self._eligible[dimension]

    def shown(self, pks: set[int]) -> dict[int, Response]:
        """Responses by pk with their subject model attached (no query per candidate name); the ones
        not in the pool (a fixed pair's other samples) are loaded once."""
        missing = pks - self.by_pk.keys()
        if missing:
            for response in Response.objects.filter(pk__in=missing).select_related("subject_model"):
                self.by_pk[response.pk] = response
        return self.by_pk


def _pool(run: JudgeRun, task: Task, models: list[SubjectModel] | None = None,
          ideas: dict[int, list[dict]] | None = None) -> _Pool:
    """The task's pool: ``models`` (the run's, :func:`subject_models_of` its task set, read here when not given)
    and their primary responses on ``task``.

    ``ideas``, when given and the run builds Novelty contexts from the TIG, gets the task's TIG ideas
    (:func:`leaderboard.ekphrasis.tig.task_ideas`, by task pk) from the same read: every response of a subject
    model on the task, of which the pool keeps the primaries of its models (the run's models are subject models).
    The TIG population read them again, one more statement a chunk, for 28 more rows here."""
    if models is None:
        models = subject_models_of(run.task_set)
    index = {m.pk: i for i, m in enumerate(models)}
    by_model = {m.pk: m for m in models}
    responses = {}
    with_ideas = ideas is not None and run.novelty_anchor == "tig" and "N" in run.dimensions
    # only what a chunk reads of its pool's responses (the judges are shown candidates made of the two fields):
    # not raw_text, which is most of a row and was read for every primary response of every chunk
    if with_ideas:
        rows = _subject_responses(task.pk)
    else:
        rows = list(Response.objects.filter(task=task, is_primary=True, subject_model_id__in=index).only(*POOL_FIELDS))
    for r in rows:
        if r.is_primary and r.subject_model_id in index:
            r.subject_model = by_model[r.subject_model_id]
            responses[index[r.subject_model_id]] = r
    if with_ideas:
        ideas[task.pk] = ideas_of(task, [(r.id, r.subject_model_id, r.sample, r.core_idea) for r in rows])
    return _Pool(models, index, responses, {r.pk: r for r in responses.values()})


def _subject_responses_queryset(task_id):
    """Every subject model's response on the task, with only :data:`POOL_FIELDS`."""
    return Response.objects.filter(task=task_id, subject_model__role=SubjectModel.Role.SUBJECT).only(*POOL_FIELDS)


def _subject_responses_params(task_id) -> list:
    """The parameters :func:`_subject_responses_queryset` binds, in its statement's order."""
    return [SubjectModel.Role.SUBJECT, task_id]


def _subject_responses(task_id: int) -> list[Response]:
    """The responses :func:`_subject_responses_queryset` gives, read by its statement compiled once a process
    (:func:`evalsite.precompiled.read_instances`): a chunk built and compiled the queryset anew for every task."""
    return read_instances(_subject_responses_queryset, _subject_responses_params, (-1,), (task_id,))


# ---------------------------------------------------------------- the ledger of one task and dimension


def _stored(run, task, dimensions: str) -> dict[str, list[Stored]]:
    """Every comparison of (run, task) on each of ``dimensions``, by dimension: pending calls, failures to
    retry, the active state and the next sequence number all come from this one read (one for the chunk's
    every dimension, not one a dimension). Its statement is compiled once a process
    (:func:`evalsite.precompiled.read_rows`): a chunk built and compiled the queryset anew every time, more of
    this process's work than the rest of the read."""
    out: dict[str, list[Stored]] = {d: [] for d in dimensions}
    one = len(dimensions) == 1
    marks = (-1, -2, "?") if one else (-1, -2, None)  # the marks choose the statement: one dimension's, or all
    for dimension, *row in read_rows(_stored_queryset, _stored_params, marks,
                                     (run.pk, task.pk, dimensions if one else None)):
        if dimension in out:
            out[dimension].append(Stored(*row))
    return out


def _stored_queryset(run_id, task_id, dimension: str | None):
    """The comparisons :func:`_stored` reads: of (run, task), on ``dimension`` unless None."""
    rows = Comparison.objects.filter(run=run_id, task=task_id)
    if dimension is not None:
        rows = rows.filter(dimension=dimension)
    return rows.order_by().values_list("dimension", "pk", *STORED_COLUMNS[1:])


def _stored_params(run_id, task_id, dimension: str | None) -> list:
    """The parameters :func:`_stored_queryset` binds, in its statement's order."""
    return [run_id, task_id] if dimension is None else [run_id, task_id, dimension]


@dataclass(slots=True)
class _Call:
    """A planned call as the judges read it: the fields of its comparison they use, and the responses shown."""

    pk: int
    model_x_id: int
    model_y_id: int
    kind: str
    repeat: int
    judge_name: str
    sequence: int
    attempts: int
    winner: str
    shown_a: Response
    shown_b: Response


class _Ledger:
    """The comparisons of one (run, task, dimension) as this chunk knows them (see the module docstring)."""

    def __init__(self, run: JudgeRun, task: Task, dimension: str, stored: list[Stored] | None = None) -> None:
        """``stored``: the dimension's comparisons as the chunk read them (:func:`_stored`), else read here."""
        self.run, self.task, self.dimension = run, task, dimension
        self.rows: dict[int, Stored] = {}
        # verdict parameter rows not yet written, by pk: a retried call's last verdict replaces its first
        self.unsaved: dict[int, list] = {}
        # on PostgreSQL the checklists the unsaved verdicts showed, each once: a verdict row names its by position
        self.unsaved_checklists: list = []
        # each checklist the rounds showed, by id: the value (kept, so its id is not reused) and its JSON, encoded
        # once for the ledger, not once a round (every round of U and E shows the same one, verdict_params)
        self.encoded_checklists: dict[int, tuple[object, str]] = {}
        self.unsaved_calls = 0
        self.insert_defaults: list | None = None  # the planned rows' prepared defaults (insert_defaults)
        self.carried = False  # whether the unsaved verdicts hold the previous dimension's (carry)
        if stored is None:
            self.read()
        else:
            self.rows = {r.pk: r for r in stored}

    def read(self) -> None:
        self.rows = {r.pk: r for r in _stored(self.run, self.task, self.dimension)[self.dimension]}

    def carry(self, previous: _Ledger) -> None:
        """Take over the unsaved verdicts of ``previous``, the ledger of the chunk's dimension just done: they go
        with this ledger's first write, which is its first plan (one statement at each change of dimension, not
        two), or before its first call when it starts with calls to make (a resumed chunk's pending calls or
        retries: :meth:`write_carried`). Verdict rows name comparisons by pk, so they go with any ledger's write."""
        self.unsaved, self.unsaved_checklists, self.unsaved_calls = (
            previous.unsaved, previous.unsaved_checklists, previous.unsaved_calls)
        previous.unsaved, previous.unsaved_checklists, previous.unsaved_calls = {}, [], 0
        self.carried = bool(self.unsaved)

    def write_carried(self) -> None:
        """Store the verdicts taken over from the previous dimension, if not yet stored: before any call."""
        if self.carried:
            self.write()

    @property
    def stored(self) -> list[Stored]:
        return list(self.rows.values())

    def next_sequence(self) -> int:
        return max((r.sequence for r in self.rows.values()), default=0) + 1

    def pending(self) -> list[Stored]:
        return sorted((r for r in self.rows.values() if r.status == Comparison.Status.PLANNED), key=lambda r: r.sequence)

    def retry_failed(self) -> bool:
        """A failed call goes back to the plan until it has used its attempts (never silently dropped).
        Only in memory: the retry's verdict overwrites the row, and a resumed chunk finds the failure and
        retries it the same way."""
        retried = False
        for pk, r in self.rows.items():
            if r.status == Comparison.Status.FAILED and r.attempts < MAX_CALL_ATTEMPTS:
                self.rows[pk] = r._replace(status=Comparison.Status.PLANNED)
                retried = True
        return retried

    def judged(self, calls: list[_Call], verdicts: list) -> None:
        """Record the verdicts of ``calls`` (written with the next :meth:`write`)."""
        as_json = connection.vendor == "postgresql"  # the round goes as one JSON document (see verdict_sql)
        json_value = (lambda value: value) if as_json else partial(prepared_value, "per_item_outcomes")
        now = timezone.now().isoformat() if as_json else prepared_value("judged_at", timezone.now())
        shown: dict[int, object] = {}  # most calls of a round show the same checklist: prepare it once

        def checklist(value):
            key = id(value)  # the values are alive for the whole call, so no id is reused in it
            if key not in shown:
                if as_json:  # sent once, named by its position (see verdict_sql)
                    shown[key] = len(self.unsaved_checklists)
                    self.unsaved_checklists.append(value)
                else:
                    shown[key] = json_value(value)
            return shown[key]

        for call, verdict in zip(calls, verdicts, strict=True):
            attempts = call.attempts + 1
            if verdict.ok:
                status, winner = Comparison.Status.OK, verdict.winner
                values = [status, winner, verdict.confidence, verdict.rationale, json_value(verdict.per_item_outcomes),
                          verdict.repaired, ""]
            else:
                # a failure keeps the planned row's other fields at their defaults, as it always did
                status, winner = Comparison.Status.FAILED, call.winner
                values = [status, winner, None, "", json_value([]), False, verdict.error[:2000]]
            self.unsaved[call.pk] = [*values, attempts, now, checklist(verdict.checklist), call.pk]
            self.rows[call.pk] = self.rows[call.pk]._replace(status=status, winner=winner, attempts=attempts)
        self.unsaved_calls += len(calls)

    def write(self, planned: list[Plan | Comparison] = ()) -> None:
        """One transaction: the unsaved verdicts, the run's call counter and the ``planned`` rows (on
        PostgreSQL one statement,
        :func:`leaderboard.ekphrasis.ledger_statements.write_sql`)."""
        if not self.unsaved and not planned:
            return
        returned: list[tuple] = []
        if connection.vendor == "postgresql" and all(type(row) is Plan for row in planned):
            with connection.cursor() as cursor:
                cursor.execute(*write_sql(self, planned))
                if planned:
                    returned = cursor.fetchall()
        else:
            with transaction.atomic(), connection.cursor() as cursor:
                if self.unsaved and connection.vendor == "postgresql":
                    cursor.execute(verdict_sql(), verdict_params(self))
                elif self.unsaved:
                    cursor.executemany(verdict_sql(), list(self.unsaved.values()))
                if self.unsaved:
                    cursor.execute(calls_done_sql(), [self.unsaved_calls, self.run.pk])
                for start in range(0, len(planned), INSERT_BATCH):
                    cursor.execute(*insert_sql(self, planned[start:start + INSERT_BATCH]))
                    returned += cursor.fetchall()
        self.unsaved, self.unsaved_checklists, self.unsaved_calls, self.carried = {}, [], 0, False
        if len(returned) < len(planned):
            # Another worker planned (some of) these first: its stored rows are the plan.
            self.read()
            return
        for row in returned:
            stored = Stored(*row)
            self.rows[stored.pk] = stored


# ---------------------------------------------------------------- the chunk


def task_execute(run: JudgeRun, chunk: JudgeRunTask, task: Task, judges, progress: Callable[[int], None] | None,
                 models: list[SubjectModel] | None = None) -> bool:
    """Judge every dimension of ``task``; True when this finished the run's last chunk. ``models``: the run's
    pool when the caller has read it (an inline run reads it once for all its chunks)."""
    pool = _pool(run, task, models, judges.ideas)
    # A fixed-pair run plans its given pairs (and their automatic records); any other run samples actively.
    fixed = bool(run.config.get("fixed_pairs"))
    plan_round = _plan_fixed_pairs if fixed else _plan_next_round
    if not fixed:
        for dimension in run.dimensions:
            _automatic_outcomes(run, task, dimension, pool)
    # The task's comparisons of every dimension in one read, after its automatic records are stored: a resumed
    # chunk finds its pending calls and failures there. A worker that plans a dimension's round another worker
    # stored first since this read reads that dimension again (_Ledger.write), as it would had it read it later.
    stored = _stored(run, task, run.dimensions)
    calls = 0  # the task's judge calls, as its ledgers hold them once every dimension is done
    previous: _Ledger | None = None
    for dimension in run.dimensions:
        ledger = _Ledger(run, task, dimension, stored.pop(dimension))
        if previous is not None:
            ledger.carry(previous)  # the last dimension's last verdicts go with this one's first write
        while True:
            pending = ledger.pending()
            if pending:
                ledger.write_carried()
                _judge(run, task, dimension, pending, pool, judges, progress, ledger)
                continue
            if ledger.retry_failed():
                continue
            if not plan_round(run, task, dimension, pool, ledger):
                break
        if _plan_diagnostics(run, task, dimension, pool, ledger):
            _judge(run, task, dimension, ledger.pending(), pool, judges, progress, ledger)
            while ledger.retry_failed():
                _judge(run, task, dimension, ledger.pending(), pool, judges, progress, ledger)
        calls += sum(r.kind != Comparison.Kind.AUTOMATIC for r in ledger.rows.values())
        previous = ledger
    if previous is not None:
        previous.write()  # the last dimension's last verdicts
    return _chunk_finish(run, chunk, calls)


def _judge(run, task, dimension, pending: list[Stored], pool: _Pool, judges, progress, ledger: _Ledger) -> None:
    from leaderboard.ekphrasis import judges as judges_module

    responses = pool.shown({pk for r in pending for pk in (r.shown_a_id, r.shown_b_id)})
    calls = [
        _Call(r.pk, r.model_x_id, r.model_y_id, r.kind, r.repeat, r.judge_name, r.sequence, r.attempts, r.winner,
              responses[r.shown_a_id], responses[r.shown_b_id])
        for r in pending
    ]
    verdicts = judges_module.judge_comparisons(judges, run=run, task=task, dimension=dimension, comparisons=calls)
    unanswered = sum(verdict.provider_unreachable for verdict in verdicts)
    if unanswered:
        # A provider outage outlasted the client's retries: keep what was answered, leave the rest planned
        # (same attempt number, so the same request and seed when resumed) and stop the run resumable.
        answered = [(call, verdict) for call, verdict in zip(calls, verdicts) if not verdict.provider_unreachable]
        if answered:
            ledger.judged([call for call, _ in answered], [verdict for _, verdict in answered])
        ledger.write()
        raise ProviderUnreachable(run=run, unanswered=unanswered,
                                  error=next(v.error for v in verdicts if v.provider_unreachable))
    ledger.judged(calls, verdicts)
    if progress:  # in the unit of the run's planned total (calls_planned): primary comparisons
        progress(sum(call.kind == Comparison.Kind.PRIMARY for call in calls))


class ProviderUnreachable(ProviderStopped):
    """The judge's provider did not answer past the retry bound; the run stops resumable (issue 28)."""

    def __init__(self, *, run: JudgeRun, unanswered: int, error: str) -> None:
        run.refresh_from_db(fields=["calls_planned", "calls_done"])
        super().__init__(who="judge", error=error, still_needed=max(run.calls_planned - run.calls_done, unanswered))


def _inspected(response: Response, dimension: str) -> str:
    return getattr(response, INSPECTED_FIELD[dimension])


def _automatic_outcomes(run, task, dimension, pool: _Pool) -> None:
    """Empty responses get automatic records without a call (Ekphrasis App. F.2)."""
    positions = sorted(pool.responses)
    empties = {p for p in positions if is_empty_response(_inspected(pool.responses[p], dimension))}
    if not empties:
        return
    rows = []
    for a_pos in positions:
        for b_pos in positions:
            if a_pos >= b_pos or (a_pos not in empties and b_pos not in empties):
                continue
            ra, rb = pool.responses[a_pos], pool.responses[b_pos]
            outcome = empty_response_outcome(_inspected(ra, dimension), _inspected(rb, dimension))
            rows.append(_automatic_record(run, task, dimension, ra, rb, outcome))
    Comparison.objects.bulk_create(rows, ignore_conflicts=True)


def _automatic_record(run, task, dimension, shown_a: Response, shown_b: Response, outcome) -> Comparison:
    """The judged-without-a-call record of a pair with an empty response (Ekphrasis App. F.2)."""
    x, y = sorted((shown_a.subject_model_id, shown_b.subject_model_id))
    return Comparison(
        run=run, task=task, dimension=dimension, model_x_id=x, model_y_id=y, kind=Comparison.Kind.AUTOMATIC,
        repeat=0, judge_name="automatic", sequence=0, shown_a=shown_a, shown_b=shown_b,
        status=Comparison.Status.OK, winner=outcome.winner, confidence=outcome.confidence,
        rationale=f"automatic: {outcome.reason}", judged_at=timezone.now(),
    )


# ---------------------------------------------------------------- planning


def _task_state(pool: _Pool, stored: list[Stored], dimension: str) -> tuple[ActiveState, Counter]:
    """The dimension's active state from its stored comparisons: the decisive wins and the judged counts of
    each pair of positions, the primary calls made, and each pair's primary repeats so far.

    The counts are gathered as flat cell numbers and counted by ``np.bincount`` (whole numbers, so the float
    matrices are exactly those that adding 1 to a zero matrix cell by cell made: the same bits), not by
    indexing the matrices once per row: a chunk rebuilds the state at every round."""
    n = len(pool.models)
    index, position_of = pool.index, pool.position_of
    primary, ok = Comparison.Kind.PRIMARY, Comparison.Status.OK
    repeats: Counter = Counter()
    judged: list[int] = []  # the cells (i, j) and (j, i) of each judged call, as i * n + j
    won: list[int] = []  # the cell (winner, loser) of each decisive one
    calls = 0
    for c in stored:
        if c.kind != primary:
            continue
        i, j = index[c.model_x_id], index[c.model_y_id]
        calls += 1
        # by the pair's positions in order, as select_pairs names a pair: a row's model_x is the lower pk and the
        # pool is in name order, so keyed (i, j) a pair whose names sort against their pks was planned again at a
        # repeat it already had; the identity constraint dropped that row, and a round of that one call was
        # planned again without end
        repeats[(i, j) if i < j else (j, i)] += 1
        if c.status != ok:
            continue
        judged.append(i * n + j)
        judged.append(j * n + i)
        winner = c.winner
        if winner == "A" or winner == "B":
            winner_pos = position_of[c.shown_a_id if winner == "A" else c.shown_b_id]
            won.append(winner_pos * n + (j if winner_pos == i else i))
    cells = n * n
    counts = np.bincount(judged, minlength=cells).reshape(n, n).astype(float)
    wins = np.bincount(won, minlength=cells).reshape(n, n).astype(float)
    state = ActiveState(n_models=n, wins=wins, pair_counts=counts, calls_made=calls, models=pool.eligible(dimension))
    return state, repeats


def _plan_next_round(run, task, dimension, pool: _Pool, ledger: _Ledger) -> bool:
    """Plan the next round of primary calls; False when the task's budget is spent."""
    state, repeats = _task_state(pool, ledger.stored, dimension)
    if len(state.models or []) < 2:
        return False
    round_seed = derived_seed(run.seed, task.external_id, dimension, state.calls_made)
    kwargs = {"rule": run.config["rule"]} if run.config.get("rule") else {}
    pairs = select_pairs(
        state, run.budget_per_task, seed=round_seed, batch_size=run.config.get("active_batch") or None, **kwargs
    )
    if not pairs:
        return False
    sequence = ledger.next_sequence()
    rows = []
    for i, j in pairs:
        repeat = repeats[(i, j)]
        repeats[(i, j)] += 1
        rows.append(_planned(run, task, dimension, pool, i, j, Comparison.Kind.PRIMARY, repeat, run.judge_name, sequence))
        sequence += 1
    ledger.write(rows)
    return True


def _planned(run, task, dimension, pool: _Pool, i: int, j: int, kind: str, repeat: int, judge_name: str,
             sequence: int, *, reverse_of: Stored | None = None) -> Plan:
    if reverse_of is not None:
        # the reversed presentation of a judged pair (also of a fixed pair that is not the primaries)
        shown_a_id, shown_b_id = reverse_of.shown_b_id, reverse_of.shown_a_id
        x, y = reverse_of.model_x_id, reverse_of.model_y_id
    else:
        ri, rj = pool.responses[i], pool.responses[j]
        # A/B order randomised per call and recorded (Ekphrasis App. E, Algorithm 2 line 6).
        flip = unit_interval(run.seed, "order", task.external_id, dimension, i, j, kind, repeat, judge_name) < 0.5
        # .id, not the pk property (see RunJudges.candidate): the same value, read for every planned call
        shown_a_id, shown_b_id = (rj.id, ri.id) if flip else (ri.id, rj.id)
        x, y = sorted((ri.subject_model_id, rj.subject_model_id))
    return Plan(x, y, kind, repeat, judge_name, sequence, shown_a_id, shown_b_id)


def _plan_fixed_pairs(run, task, dimension, pool: _Pool, ledger: _Ledger) -> bool:
    """Plan every given pair of this task once (primary, repeat 0), in the given order and shown as
    given (x as A); False when all are planned. A pair with an empty inspected field gets its
    automatic record instead of a call (Ekphrasis App. F.2)."""
    wanted = [(x, y) for task_id, x, y in run.config["fixed_pairs"] if task_id == task.pk]
    planned = {
        (r.model_x_id, r.model_y_id) for r in ledger.stored
        if r.kind in (Comparison.Kind.PRIMARY, Comparison.Kind.AUTOMATIC)
    }
    responses = Response.objects.in_bulk([r for pair in wanted for r in pair])
    sequence = ledger.next_sequence()
    rows = []
    for x_id, y_id in wanted:
        shown_a, shown_b = responses[x_id], responses[y_id]
        x, y = sorted((shown_a.subject_model_id, shown_b.subject_model_id))
        if (x, y) in planned:
            continue
        outcome = empty_response_outcome(_inspected(shown_a, dimension), _inspected(shown_b, dimension))
        if outcome is not None:
            rows.append(_automatic_record(run, task, dimension, shown_a, shown_b, outcome))
        else:
            rows.append(Plan(x, y, Comparison.Kind.PRIMARY, 0, run.judge_name, sequence, shown_a.pk, shown_b.pk))
            sequence += 1
    ledger.write(rows)
    return bool(rows)


def _plan_diagnostics(run, task, dimension, pool: _Pool, ledger: _Ledger) -> bool:
    """Swaps, duplicates and auxiliary calls on deterministic samples of the primary pairs (App. D),
    from the task and dimension's comparisons as they are now (nothing planned since)."""
    config = run.config
    stored = ledger.stored
    firsts = sorted((r for r in stored if r.kind == Comparison.Kind.PRIMARY and r.repeat == 0), key=lambda r: r.sequence)
    existing = {
        (r.model_x_id, r.model_y_id, r.kind, r.repeat, r.judge_name) for r in stored
        if r.kind not in (Comparison.Kind.PRIMARY, Comparison.Kind.AUTOMATIC)
    }
    sequence = ledger.next_sequence()
    rows = []
    for first in firsts:
        i, j = pool.index[first.model_x_id], pool.index[first.model_y_id]
        identity = (run.seed, task.external_id, dimension, i, j)
        wanted = []
        if unit_interval(*identity, "swap") < config["swap_share"]:
            wanted.append((Comparison.Kind.SWAP, 0, run.judge_name, first))
        if dimension in config["duplicate_dimensions"] and unit_interval(*identity, "duplicate") < config["duplicate_share"]:
            wanted += [(Comparison.Kind.DUPLICATE, r, run.judge_name, None) for r in (1, 2)]
        for aux in config["auxiliary_judges"]:
            if unit_interval(*identity, "auxiliary") < config["auxiliary_share"]:
                wanted.append((Comparison.Kind.AUXILIARY, 0, aux, None))
        for kind, repeat, judge_name, reverse in wanted:
            if (first.model_x_id, first.model_y_id, kind, repeat, judge_name) in existing:
                continue
            # Duplicates repeat the primary presentation exactly; swaps reverse it.
            rows.append(
                _planned(run, task, dimension, pool, i, j, kind, repeat, judge_name, sequence, reverse_of=reverse)
                if reverse is not None else _same_order(first, kind, repeat, judge_name, sequence)
            )
            sequence += 1
    if rows:  # a plan of nothing leaves the verdicts to go with the chunk's next write (_Ledger.carry)
        ledger.write(rows)
    return bool(rows)


def _same_order(first: Stored, kind: str, repeat: int, judge_name: str, sequence: int) -> Plan:
    return Plan(first.model_x_id, first.model_y_id, kind, repeat, judge_name, sequence, first.shown_a_id,
                 first.shown_b_id)


# ---------------------------------------------------------------- finishing


def _chunk_finish(run: JudgeRun, chunk: JudgeRunTask, calls: int) -> bool:
    """Mark the chunk done with its ``calls`` (counted from the ledgers, which hold every stored comparison of
    the task: no query counts them again); True for exactly one caller: the one that finished the run's last
    chunk."""
    with run_counting_finished_units(JudgeRun, run.pk):
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                running, finalising = JudgeRun.Status.RUNNING.value, JudgeRun.Status.FINALISING.value
                cursor.execute(finish_sql(), [calls, chunk.pk, run.pk, running, finalising, run.pk, run.pk, running])
                row = cursor.fetchone()
            return bool(row and row[0])
        updated = JudgeRunTask.objects.filter(pk=chunk.pk, done=False).update(done=True, calls_done=calls)
        if not updated:
            return False
        done = JudgeRunTask.objects.filter(run=run, done=True).count()
        JudgeRun.objects.filter(pk=run.pk).update(tasks_done=done)
        if done < run.tasks_total:
            return False
        return run_claim_finalise(JudgeRun, run.pk)
