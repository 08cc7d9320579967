"""The simulated judge: labelled, deterministic by identity, and faithful to its knobs."""

from __future__ import annotations

from engine.checklists import Dimension
from engine.generation import Family, TaskBrief
from engine.judge.comparison import Candidate, ComparisonKind, Winner
from engine.judge.simulated import SimulatedJudge
from tests.engine.judge.conftest import ALICE, BOB

# Sample sizes for the rate checks; tolerances are about four binomial standard errors.
MANY = 400


def equal(model: str, words: int = 10) -> Candidate:
    text = " ".join(["word"] * words)
    return Candidate(model=model, response_id=f"r-{model}", core_idea=text, visual_description=text)


def many_requests(comparison, a=ALICE, b=BOB, **kwargs):
    tasks = [TaskBrief(task_id=f"t{n}", family=Family.ABSTRACTION, brief=f"Brief {n}.") for n in range(MANY)]
    return [comparison(a=a, b=b, task=task, **kwargs) for task in tasks]


def share(judgements, winner):
    return sum(j.winner is winner for j in judgements) / len(judgements)


def test_every_judgement_is_labelled_simulated(comparison):
    (judgement,) = SimulatedJudge().judge_pairs([comparison()])
    assert judgement.judge_name == "simulated"
    assert "Simulated" in judgement.overall_rationale


def test_same_seed_and_identity_give_the_same_judgement_in_any_batch(comparison):
    requests = [comparison(repeat=n, kind=ComparisonKind.DUPLICATE) for n in range(20)]
    judge = SimulatedJudge(seed=7, malformed_rate=0.2)
    together = judge.judge_pairs(requests)
    one_by_one = [SimulatedJudge(seed=7, malformed_rate=0.2).judge_pairs([r])[0] for r in reversed(requests)]
    assert [(j.winner, j.confidence, j.ok, j.repaired) for j in together] == [
        (j.winner, j.confidence, j.ok, j.repaired) for j in reversed(one_by_one)
    ]


def test_another_seed_changes_the_draws(comparison):
    requests = many_requests(comparison, a=equal("m1"), b=equal("m2"))
    first = [j.winner for j in SimulatedJudge(seed=1, skills={"m1": {}, "m2": {}}).judge_pairs(requests)]
    second = [j.winner for j in SimulatedJudge(seed=2).judge_pairs(requests)]
    assert first != second


def test_the_stronger_model_wins_most_decisive_comparisons(comparison):
    judge = SimulatedJudge(skills={"alice-model": {"usefulness": 2.0}, "bob-model": {"usefulness": -2.0}})
    judgements = judge.judge_pairs(many_requests(comparison))
    decisive = [j for j in judgements if j.winner is not Winner.TIE]
    assert sum(j.winner_model == "alice-model" for j in decisive) / len(decisive) > 0.9


def test_position_bias_favours_response_a(comparison):
    judge = SimulatedJudge(
        position_bias=1.0, length_bias=0.0, tie_rate=0.0, skills={"m1": {}, "m2": {}}, skill_spread=0.0
    )
    judgements = judge.judge_pairs(many_requests(comparison, a=equal("m1"), b=equal("m2")))
    assert abs(share(judgements, Winner.A) - 0.731) < 0.09  # sigmoid(1.0)


def test_no_bias_and_equal_skill_is_a_fair_coin(comparison):
    judge = SimulatedJudge(position_bias=0.0, length_bias=0.0, tie_rate=0.0, skill_spread=0.0)
    judgements = judge.judge_pairs(many_requests(comparison, a=equal("m1"), b=equal("m2")))
    assert abs(share(judgements, Winner.A) - 0.5) < 0.1


def test_length_bias_favours_the_longer_inspected_field(comparison):
    judge = SimulatedJudge(position_bias=0.0, length_bias=0.5, tie_rate=0.0, skill_spread=0.0)
    requests = many_requests(
        comparison, a=equal("m1", words=10), b=equal("m2", words=30), dimension=Dimension.NOVELTY
    )
    assert share(judge.judge_pairs(requests), Winner.B) > 0.6  # sigmoid(1.0) = 0.73


def test_tie_rate_is_respected(comparison):
    judgements = SimulatedJudge(tie_rate=0.25).judge_pairs(many_requests(comparison))
    assert abs(share(judgements, Winner.TIE) - 0.25) < 0.09


def test_malformed_replies_take_the_repair_path(comparison):
    judgements = SimulatedJudge(malformed_rate=0.3).judge_pairs(many_requests(comparison))
    repaired = sum(j.repaired for j in judgements) / MANY
    failed = sum(not j.ok for j in judgements) / MANY
    assert abs(repaired - 0.3 * 0.7) < 0.09
    assert abs(failed - 0.3 * 0.3) < 0.07
    assert all(j.calls == 2 for j in judgements if j.repaired or not j.ok)
    assert all(j.error for j in judgements if not j.ok)


def test_without_malformed_rate_nothing_is_repaired(comparison):
    judgements = SimulatedJudge(malformed_rate=0.0).judge_pairs(many_requests(comparison))
    assert all(j.ok and not j.repaired and j.calls == 1 for j in judgements)


def test_a_retry_draws_its_format_afresh(comparison):
    judge = SimulatedJudge(malformed_rate=0.5)
    requests = many_requests(comparison)
    failed = [j.request for j in judge.judge_pairs(requests) if not j.ok]
    retried = judge.judge_pairs([comparison(a=r.a, b=r.b, task=r.task, retry=1) for r in failed])
    assert failed and any(j.ok for j in retried)


def test_unknown_models_get_a_skill_from_the_skill_seed_not_the_run_seed():
    assert SimulatedJudge(seed=3).skill("new-model", "novelty") == SimulatedJudge(seed=4).skill(
        "new-model", "novelty"
    )
    assert SimulatedJudge(skill_seed=3).skill("new-model", "novelty") != SimulatedJudge(skill_seed=4).skill(
        "new-model", "novelty"
    )

def test_an_answer_better_than_its_model_wins_more_often_on_its_task(comparison):
    # equal skills: with answer_spread, who wins a task follows the two answers' own qualities q
    judge = SimulatedJudge(position_bias=0.0, length_bias=0.0, tie_rate=0.0, skill_spread=0.0, answer_spread=2.0)
    requests = many_requests(comparison, a=equal("m1"), b=equal("m2"))
    q_gap = [judge.answer_quality(r.task.task_id, "m1", r.dimension)
             - judge.answer_quality(r.task.task_id, "m2", r.dimension) for r in requests]
    a_won = [j.winner is Winner.A for j in judge.judge_pairs(requests)]
    better = [won for won, gap in zip(a_won, q_gap) if gap > 1]
    worse = [won for won, gap in zip(a_won, q_gap) if gap < -1]
    assert better and worse
    assert sum(better) / len(better) > 0.7 and sum(worse) / len(worse) < 0.3


def test_answer_quality_depends_on_the_answer_not_on_the_run_seed_and_is_off_by_default():
    one, other = SimulatedJudge(seed=1, answer_spread=1.0), SimulatedJudge(seed=2, answer_spread=1.0)
    assert one.answer_quality("t1", "m1", "novelty") == other.answer_quality("t1", "m1", "novelty")
    assert one.answer_quality("t1", "m1", "novelty") != one.answer_quality("t2", "m1", "novelty")
    assert SimulatedJudge().answer_quality("t1", "m1", "novelty") == 0.0


def test_a_models_skill_is_drawn_once_per_dimension_and_stays_the_same(monkeypatch):
    import engine.judge.simulated as simulated

    fresh = [SimulatedJudge(seed=7).skill(m, d) for m in ("m1", "m2") for d in ("usefulness", "novelty")]
    drawn = []
    real_draws = simulated._draws
    monkeypatch.setattr(simulated, "_draws", lambda *parts: drawn.append(parts) or real_draws(*parts))
    judge = SimulatedJudge(seed=7)
    for _ in range(3):
        assert [judge.skill(m, d) for m in ("m1", "m2") for d in ("usefulness", "novelty")] == fresh
    assert len([parts for parts in drawn if "skill" in parts]) == 4


#: SHA-256 of every field of the judgements below, as the code before issue 30's cuts to the simulated judge's
#: path (commit f04372a) gave them: those cuts change how a reply is written and read, never what it says.
PINNED_JUDGEMENTS = "70770c1149f9debdc0547e86af5e4ae2384c440fd55f0307fda1aca7d1a2f69e"


def test_judgements_are_the_ones_the_code_gave_before_its_speed_changes():
    import hashlib

    from engine.checklists import template_checklist
    from engine.judge.comparison import PairJudgeRequest
    from tests.engine.judge.conftest import CHARLIE, TASK

    requests = [PairJudgeRequest(run_id="run-1", task=TASK, dimension=d, checklist=template_checklist(TASK, d), a=a, b=b,
                                 kind=kind, repeat=repeat, retry=retry)
                for d in Dimension for a, b in ((ALICE, BOB), (BOB, ALICE), (ALICE, CHARLIE)) for kind in ComparisonKind
                for repeat in range(3) for retry in range(2)]
    judgements = SimulatedJudge(seed=5, malformed_rate=0.3, skills={"alice-model": {"novelty": 0.7}}).judge_pairs(requests)
    digest = hashlib.sha256()
    for j in judgements:
        digest.update(repr((j.key, j.ok, j.winner, j.confidence, j.overall_rationale, j.per_item_outcomes, j.repaired,
                            j.automatic, j.calls, j.cached, j.raw_output, j.repair_output, j.error, j.prompt_tokens,
                            j.completion_tokens, j.cost_usd)).encode())
    assert any(j.repaired for j in judgements) and any(not j.ok for j in judgements)  # every path was taken
    assert digest.hexdigest() == PINNED_JUDGEMENTS


def test_a_reply_validated_from_the_object_its_text_encodes_is_judged_exactly_as_when_read_from_its_text(monkeypatch):
    """An unbroken reply hands its JSON object to validation instead of its text being read back (EncodedReply):
    every field of every judgement is the one the text path gives, on responses quoting NULs, lone surrogates,
    control characters, escapes and non-ASCII text (a NUL or a surrogate keeps its reply on the text path, whose
    strict reading refuses it: repaired, then failed)."""
    from engine.checklists import template_checklist
    from engine.judge import repair, simulated
    from engine.judge.comparison import PairJudgeRequest
    from tests.engine.judge.conftest import TASK

    texts = ["A lantern folding time.", "Quote \"this\" and back\\slash\ttab\u0001bell", "Ünïcödé “curly” — 🎨 ok",
             "nul \x00 inside", "lone \ud800 surrogate", "   padded   ", "x" * 50]
    candidates = [Candidate(model=f"m{k}", response_id=f"r{k}", core_idea=text, visual_description=text[::-1] + " words")
                  for k, text in enumerate(texts)]
    requests = [PairJudgeRequest(run_id="run-9", task=TASK, dimension=d, checklist=template_checklist(TASK, d), a=a, b=b,
                                 kind=kind, repeat=repeat)
                for d in Dimension for a in candidates for b in candidates if a is not b
                for kind in (ComparisonKind.PRIMARY, ComparisonKind.SWAP) for repeat in range(2)]

    def fields(judgements):
        return [(j.key, j.ok, j.winner, j.confidence, j.overall_rationale, j.per_item_outcomes, j.repaired, j.automatic,
                 j.calls, j.cached, j.raw_output, j.repair_output, j.error, j.prompt_tokens, j.completion_tokens,
                 j.cost_usd, j.provider_unreachable) for j in judgements]

    encoded = []
    real = repair.validate_judge_payload
    monkeypatch.setattr(repair, "validate_judge_payload", lambda payload, **kw: encoded.append(payload) or real(payload, **kw))
    judge = dict(seed=3, malformed_rate=0.2)
    fast = fields(SimulatedJudge(**judge).judge_pairs(requests))
    monkeypatch.setattr(simulated, "storable_text", lambda text: False)  # every reply read from its text
    assert fields(SimulatedJudge(**judge).judge_pairs(requests)) == fast
    assert 100 < len(encoded) < len(requests)  # both paths were taken
    refused = [row for row in fast if not row[1]]
    assert any("NUL" in row[12] for row in refused) and any("surrogate" in row[12] for row in refused)


def test_whether_a_reply_text_is_storable_is_told_from_its_strings_without_writing_it():
    """``_storable_encoded`` of a string is :func:`storable_text` of its JSON string as the judge writes it, for
    every character up to U+FFFF (surrogates and controls included) alone and after a backslash, and for escapes
    written out; and a verdict's storable flag is that of its written text."""
    from engine.checklists import template_checklist
    from engine.judge import simulated
    from engine.judge.comparison import PairJudgeRequest
    from engine.strict_json import storable_text
    from tests.engine.judge.conftest import TASK

    texts = [chr(code) for code in range(0x10000)] + [f"\\{chr(code)}" for code in range(0x80)]
    texts += ["\\u0041", "\\\\u", "a\\", "\\\\", 'q"u', "\\\"u", "ok \U0001f3a8", "\x7f", "\u2028"]
    for text in texts:
        assert simulated._storable_encoded(text) == storable_text(simulated._ENCODER.encode(text)), repr(text)
    quoting = ["A lantern.", "nul \x00", "bell \x07 and tab \t", "lone \ud800", "back\\u0041slash", "Ünïcödé “curly”"]
    judge = SimulatedJudge(seed=1)
    for k, text in enumerate(quoting):
        a = Candidate(model="m-a", response_id="r-a", core_idea=text, visual_description=text)
        request = PairJudgeRequest(run_id="run-2", task=TASK, dimension=Dimension.USEFULNESS,
                                   checklist=template_checklist(TASK, Dimension.USEFULNESS), a=a, b=ALICE,
                                   kind=ComparisonKind.PRIMARY, repeat=k)
        payload, storable = judge._verdict_payload(request)
        assert storable == storable_text(simulated._ENCODER.encode(payload)), text
        assert storable == (k in (0, 5))
    # the verdict checks its strings one a line: a backslash ending one and a "u" starting the next make no "\\u"
    assert simulated._storable_encoded("\n".join(["ends in \\", "u starts"]))
    assert storable_text(simulated._ENCODER.encode(["ends in \\", "u starts"]))


def test_an_unbroken_replys_text_is_written_only_when_read(monkeypatch):
    """A judge run stores verdicts, not reply texts: an unbroken reply's JSON is not written while judging (it
    was, then its outcomes written again for the store), and reading ``raw_output`` writes exactly that text."""
    from engine.checklists import template_checklist
    from engine.judge import simulated
    from engine.judge.comparison import PairJudgeRequest
    from tests.engine.judge.conftest import TASK

    written = []
    encoder = simulated._ENCODER

    class Counting:
        def encode(self, payload):
            written.append(payload)
            return encoder.encode(payload)

    monkeypatch.setattr(simulated, "_ENCODER", Counting())
    requests = [PairJudgeRequest(run_id="run-3", task=TASK, dimension=d, checklist=template_checklist(TASK, d),
                                 a=ALICE, b=BOB, kind=ComparisonKind.PRIMARY, repeat=r)
                for d in Dimension for r in range(4)]
    judgements = SimulatedJudge(seed=2).judge_pairs(requests)
    assert all(j.ok for j in judgements) and written == []
    texts = [j.raw_output for j in judgements]
    assert len(written) == len(requests) and texts == [encoder.encode(payload) for payload in written]
    assert [j.raw_output for j in judgements] == texts and len(written) == len(requests)  # written once


class _JudgeBeforeItsMemos(SimulatedJudge):
    """The judge's ``_ask`` and ``_verdict_payload`` as they were before the verdict's generators were re-seeded
    in place and its candidates' and checklists' pieces memoised (commit e83b1c2), kept verbatim as the oracle."""

    def _ask(self, requests, on_reply):
        from engine.judge import simulated
        from engine.providers.client import ChatResult

        replies = []
        for request in requests:
            payload, storable = self._verdict_payload(request)
            if simulated._draws(self.seed, request.key, "format", request.retry).random() < self.malformed_rate:
                text = simulated._ENCODER.encode(payload)
                replies.append(ChatResult(text=self._break(text, simulated._draws(self.seed, request.key, "break",
                                                                                  request.retry)),
                                          model=self.name, attempts=1))
            else:
                replies.append(self._reply(payload, storable))
        return replies

    def _verdict_payload(self, request, rng=None):
        from engine.judge import simulated
        from engine.judge.comparison import WINNER_TEXT

        rng = simulated._draws(self.seed, request.key, "verdict")
        inspected = request.inspected_field
        words_a, words_b = request.a.field_text(inspected).split(), request.b.field_text(inspected).split()
        task = request.task.task_id  # the preference as the judge before its memos wrote it
        p_a = simulated._sigmoid(
            self.skill(request.a.model, request.dimension)
            - self.skill(request.b.model, request.dimension)
            + self.answer_quality(task, request.a.model, request.dimension)
            - self.answer_quality(task, request.b.model, request.dimension)
            + self.position_bias
            + self.length_bias * (len(words_a) - len(words_b)) / 10.0
        )
        if rng.random() < self.tie_rate:
            winner = Winner.TIE
            confidence = round(0.5 + 0.4 * (1.0 - abs(2.0 * p_a - 1.0)) * rng.random(), 2)
        else:
            winner = Winner.A if rng.random() < p_a else Winner.B
            confidence = round(0.5 + abs(p_a - 0.5), 2)
        evidence_a = " ".join(words_a[:12]) or None
        evidence_b = " ".join(words_b[:12]) or None
        others = simulated._OTHER_WINNERS[winner]
        outcomes = []
        strings = [evidence_a or "", evidence_b or "", str(request.dimension)]
        for item in request.checklist.items:
            strings += (item.text, f"{item.slot}")
            if rng.random() < self.item_agreement:
                item_winner = winner
            else:
                item_winner = rng.choice(others)
            outcomes.append({"item_index": item.index, "item": item.text, "winner": WINNER_TEXT[item_winner],
                             "confidence": round(rng.uniform(0.5, 0.95), 2), "evidence_a": evidence_a,
                             "evidence_b": evidence_b, "rationale": f"Simulated item outcome ({item.slot})."})
        payload = {
            "dimension": str(request.dimension),
            "winner": WINNER_TEXT[winner],
            "confidence": confidence,
            "overall_rationale": (f"Simulated judgment: P(A preferred | decisive) = {p_a:.2f} from latent skills, "
                                  "position bias and length bias."),
            "per_item_outcomes": outcomes,
        }
        return payload, simulated._storable_encoded("\n".join(strings))


def _quoting_requests():
    """Requests over responses and checklists quoting what the storable check looks at (NULs, lone surrogates,
    controls, backslashes before a ``u``, non-ASCII), empty fields, long and short ones, every kind, repeat and
    retry: each candidate and checklist object shown many times, as a run's chunk shows them."""
    import dataclasses

    from engine.checklists import template_checklist
    from engine.judge.comparison import PairJudgeRequest
    from tests.engine.judge.conftest import TASK

    texts = ["A lantern folding time.", "ends in \\", "u starts a \\u0041 escape", "bell \x07 and tab \t here",
             "nul \x00 inside", "lone \ud800 surrogate", "Ünïcödé “curly” — 🎨 ok", "   ", " ".join(f"w{k}" for k in range(40)),
             "one", "slot \x1f unit separator"]
    candidates = [Candidate(model=f"m{k % 6}-{k}", response_id=f"r{k}", core_idea=text, visual_description=text[::-1])
                  for k, text in enumerate(texts)]
    checklists = {}
    for d in Dimension:
        plain = template_checklist(TASK, d)
        odd = dataclasses.replace(plain, items=tuple(dataclasses.replace(item, text=item.text + text, slot=f"s\\{k}")
                                                     for k, (item, text) in enumerate(zip(plain.items, texts[1:]))))
        checklists[d] = (plain, odd)
    return [PairJudgeRequest(run_id="run-7", task=TASK, dimension=d, checklist=checklist, a=a, b=b, kind=kind,
                             repeat=repeat, retry=retry)
            for d in Dimension for checklist in checklists[d] for a in candidates for b in candidates[::3] if a.model != b.model
            for kind in (ComparisonKind.PRIMARY, ComparisonKind.DUPLICATE) for repeat in range(2) for retry in range(2)]


def _every_field(judgements):
    return [(j.key, j.ok, j.winner, j.confidence, j.overall_rationale, j.per_item_outcomes, j.repaired, j.automatic,
             j.calls, j.cached, type(j.__dict__["_raw_output"]).__name__, j.raw_output, j.repair_output, j.error,
             j.prompt_tokens, j.completion_tokens, j.cost_usd, j.provider_unreachable) for j in judgements]


def test_verdicts_payloads_and_replies_are_the_memo_free_judges_to_the_bit():
    """Re-seeding one generator per draw and memoising each candidate's words and evidence and each checklist's
    items changes no verdict: the same payloads, storable flags, reply kinds and judgements (every field) as the
    judge before (kept above), under several knob settings (answer qualities, ties, disagreeing items, malformed
    replies and their breaks), one judge judging every batch as a run's chunk does."""
    requests = _quoting_requests()
    settings = [dict(seed=11), dict(seed=3, malformed_rate=0.3, tie_rate=0.3, item_agreement=0.4, answer_spread=0.8),
                dict(seed=-2, skills={"m1-1": {"novelty": 0.4}}, length_bias=0.7, skill_spread=2.0, malformed_rate=0.05)]
    for knobs in settings:
        new, old = SimulatedJudge(**knobs), _JudgeBeforeItsMemos(**knobs)
        for request in requests[:400]:
            assert new._verdict_payload(request) == old._verdict_payload(request)
        batches = [requests[k:k + 37] for k in range(0, len(requests), 37)]
        assert [row for batch in batches for row in _every_field(new.judge_pairs(batch))] == \
            [row for batch in batches for row in _every_field(old.judge_pairs(batch))]
