"""The EASEL environment (engine/easel/episode.py, EASEL §3.1)."""

import json

import numpy as np
import pytest

from engine.easel.episode import Environment, extract_json_object
from engine.easel.metrics import similarity
from engine.easel.painter import SearchPainter
from engine.easel.references import generate_suite
from engine.easel.semantic import semantic_tasks
from engine.easel.simulated import SimulatedAgent
from engine.easel.task import task_from_record, task_to_record


@pytest.fixture(scope="module")
def task():
    return generate_suite(2, per_category={"programmatic": 1})[0]


def test_each_step_reports_s_equal_to_the_full_recompute(task):
    env = Environment(task, budget=6)
    outcomes = env.run(SimulatedAgent(0.8, seed=1, invalid=0.0))
    assert len(outcomes) == 6 and env.done
    assert abs(outcomes[-1].similarity.s - similarity(env.canvas, task.reference).s) < 1e-9


def test_the_budget_ends_the_episode(task):
    env = Environment(task, budget=2)
    env.step(json.dumps({"action": "brush_stroke", "xs": 1.5}))
    env.step("no json here")
    assert env.done
    with pytest.raises(RuntimeError):
        env.step("{}")


def test_unparseable_output_is_invalid_and_keeps_the_raw_text(task):
    env = Environment(task)
    outcome = env.step("I would paint a red circle here.")
    assert outcome.kind == "invalid" and not outcome.valid and outcome.action is None
    assert outcome.raw == "I would paint a red circle here."


def test_json_inside_prose_or_fences_is_found(task):
    text = 'Sure:\n```json\n{"action": "brush_stroke", "note": "{not a brace}"}\n```'
    assert extract_json_object(text) == {"action": "brush_stroke", "note": "{not a brace}"}


def test_replay_rebuilds_the_same_state(task):
    first = Environment(task, budget=8)
    first.run(SearchPainter(seed=3, candidates=6, refinements=2))
    actions = [o.raw for o in first.outcomes]
    resumed = Environment(task, budget=8)
    resumed.replay(actions[:5])
    resumed.run(SearchPainter(seed=3, candidates=6, refinements=2))
    np.testing.assert_array_equal(resumed.canvas, first.canvas)
    assert resumed.s_values() == first.s_values()
    assert [o.raw for o in resumed.outcomes] == actions


@pytest.mark.parametrize("which", ["reconstruction", "semantic"])
def test_task_records_round_trip_exactly(task, which):
    original = task if which == "reconstruction" else semantic_tasks(0)[4]
    record, png = task_to_record(original)
    rebuilt = task_from_record(json.loads(json.dumps(record)), png)
    np.testing.assert_array_equal(rebuilt.reference, original.reference)
    assert (rebuilt.id, rebuilt.kind, rebuilt.category, rebuilt.size, rebuilt.budget, rebuilt.spec) == (
        original.id, original.kind, original.category, original.size, original.budget, original.spec)


def test_a_record_missing_a_field_is_rejected_by_name(task):
    record, png = task_to_record(task)
    del record["budget"]
    with pytest.raises(ValueError, match="budget"):
        task_from_record(record, png)


def test_semantic_observation_keeps_a_three_turn_window_and_collision_feedback():
    maze = semantic_tasks(0)[3]
    env = Environment(maze)
    wall_hit = json.dumps({"action": "brush_stroke", "xs": 0.0, "ys": 0.5, "xc": 0.5, "yc": 0.5, "xe": 1.0, "ye": 0.5})
    for _ in range(5):
        env.step(wall_hit)
    observation = env.observation()
    assert len(observation.history) == 3 and [t.step for t in observation.history] == [2, 3, 4]
    assert "wall" in observation.feedback


def test_reconstruction_observations_carry_no_history(task):
    env = Environment(task)
    env.step("nonsense")
    observation = env.observation()
    assert observation.history == () and observation.feedback is None


# --- hostile replies: a reply is parsed in time linear in its length and never crashes the step ----------

def _reference_extract(text):
    """extract_json_object as first written (one scan per '{', each to its closing brace or the end)."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        pass
    start = stripped.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for end in range(start, len(stripped)):
            ch = stripped[end]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    try:
                        return json.loads(stripped[start:end + 1])
                    except (ValueError, RecursionError):
                        break
        start = stripped.find("{", start + 1)
    raise ValueError("no JSON object found")


def _outcome(function, text):
    try:
        return ("value", function(text))
    except ValueError:
        return ("refused",)


def test_the_json_found_in_a_reply_is_the_one_the_first_scan_found():
    # Every stored reply must replay to the same action: the scan's result is unchanged on any text.
    rng = np.random.default_rng(0)
    alphabet = list('{}{}""\\\\[]:,a1 ') + ['{"a":', '"x"', '{"action": "undo"}', '"\\"', 'NaN', '\n']
    texts = ['{"a": 1} {"b": 2}', 'say {"a": "}"} then {"b": 1}', '{"a": "\\"{"} {"c": 3}', '{"a": {"b": }} {"d": 4}',
             '"{" {"e": 5}', '\\" {"f": 6}', '{ {"g": 7}', '{"h": 1}}', '{}', '{{}}', '"{"a": 1}"']
    texts += ["".join(rng.choice(alphabet, size=int(rng.integers(1, 40)))) for _ in range(20000)]
    for text in texts:
        assert _outcome(extract_json_object, text) == _outcome(_reference_extract, text), text


@pytest.mark.parametrize("reply", ['{"a": ' * 3000, "[" * 3000, '{"a": ' * 3000 + "1" + "}" * 3000],
                         ids=["open objects", "open arrays", "closed objects"])
def test_deeply_nested_json_is_read_as_far_as_json_can_not_a_crash(reply):
    # json raised RecursionError (not a ValueError), which escaped parse_raw_action and failed the episode;
    # a model's cached reply then failed it again on every resume. Too deep is no JSON: the first balanced
    # {...} that json can read is the answer, as for any other text (how deep json reads depends on the
    # caller's stack, so the closed case is some inner object, never a brush stroke). The closed case is now
    # searched no further than the reading bound: 3,000 nested objects read the text 3,000 times over.
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object(reply)


def test_a_deeply_nested_reply_is_an_invalid_step(task):
    env = Environment(task, budget=3)
    outcome = env.step('{"action": ' * 5000)
    assert not outcome.valid and outcome.kind == "invalid" and "not JSON" in outcome.error
    outcome = env.step('{"action": ' * 5000 + '"submit"' + "}" * 5000)
    assert not outcome.valid and outcome.kind == "invalid"


@pytest.mark.parametrize("unit", ["{", "{[", '{"a": [1, "\\\\", {"b": "}", ', '{"\\"": '],
                         ids=["braces", "braces and brackets", "nested objects", "escaped quotes"])
def test_a_long_reply_of_unclosed_braces_is_parsed_in_linear_time(unit):
    # Each '{' was scanned to the end of the text: 16,000 '{' took 5.6 s, '{[' * 16,000 12.6 s; a reply
    # (or a bundle's stored raw action) of 10^5 of them took minutes.
    import time

    reply = "I will paint now. " + unit * (200_000 // len(unit)) + ' {"action": "submit"}'
    started = time.perf_counter()
    assert extract_json_object(reply) == {"action": "submit"}
    assert time.perf_counter() - started < 5.0


def _called_deeper(frames, function):
    return function() if frames == 0 else _called_deeper(frames - 1, function)


@pytest.mark.parametrize("depth", [300, 600, 900, 950])
def test_a_replys_action_does_not_depend_on_how_deep_the_caller_stands(depth):
    # How deep json reads depends on the Python stack left to it: a reply whose first object nests 900 levels
    # was an invalid step from a shallow caller (json read that object, not an action) and a valid stroke from
    # one 150 frames deeper (json gave up on it, the stroke after it came next) — a Celery worker and a resume
    # or a bundle's replay could read one stored reply two ways. Past a fixed depth an object is no JSON here.
    stroke = {"action": "brush_stroke", "xs": 0.1, "ys": 0.1, "xc": 0.5, "yc": 0.5, "xe": 0.9, "ye": 0.9, "rs": 0.5,
              "alpha_s": 1.0, "re": 0.5, "alpha_e": 1.0, "cr": 0.2, "cg": 0.3, "cb": 0.4}
    reply = '{"x": ' + "[" * depth + "]" * depth + "} " + json.dumps(stroke)
    found_here = extract_json_object(reply) == stroke  # booleans: a failing assert cannot print 900 levels
    found_deeper = _called_deeper(150, lambda: extract_json_object(reply)) == stroke
    assert found_here and found_deeper


def test_an_object_within_the_depth_limit_is_read_as_before():
    shallow = '{"x": ' + "[" * 100 + "]" * 100 + '} {"action": "submit"}'
    assert extract_json_object(shallow) == {"x": json.loads("[" * 100 + "]" * 100)}


def test_the_search_for_a_replys_json_reads_a_bounded_multiple_of_the_reply(monkeypatch):
    # Every balanced {...} was read from its { to its }: 900 objects nested around a 200 KB list read the list
    # 900 times (9 s a step; a larger reply, minutes). Counted here in characters handed to json, not seconds.
    import engine.easel.episode as episode

    read = []
    decoder = json.JSONDecoder

    class Counting(decoder):
        def raw_decode(self, s, idx=0):
            read.append(len(s) - idx)
            return super().raw_decode(s, idx)

    monkeypatch.setattr(episode.json, "JSONDecoder", Counting)
    reply = '{"a": ' * 900 + "[" + "1, " * 50_000 + "1]" + " x" + "}" * 900
    with pytest.raises(ValueError, match="no JSON object found"):
        extract_json_object(reply)
    # raw_decode is handed the text from the candidate on; what it reads is at most the candidate itself
    assert len(read) <= 40
    wrapped = "Thinking {about {the {canvas}}} first. " * 50 + '{"action": "submit"}'
    assert extract_json_object(wrapped) == {"action": "submit"}  # ordinary prose braces: searched as before


def _maze_walk(task) -> list[str]:
    """Strokes from each route cell's centre to the next: along open passages, never across a wall."""
    cells = task.spec["cells"]
    centres = [((col + 0.5) / cells, (row + 0.5) / cells) for row, col in task.spec["route"]]
    return [json.dumps({"action": "brush_stroke", "xs": x0, "ys": y0, "xc": (x0 + x1) / 2, "yc": (y0 + y1) / 2,
                        "xe": x1, "ye": y1}) for (x0, y0), (x1, y1) in zip(centres, centres[1:])]


@pytest.fixture(scope="module")
def maze():
    from engine.easel.semantic import MAZE, semantic_tasks

    return next(t for t in semantic_tasks(0) if t.id == MAZE)


def test_undoing_every_stroke_of_a_maze_walk_gives_back_each_earlier_canvas_and_ink_exactly(maze):
    env = Environment(maze)
    before = [(env.canvas.copy(), env.ink.copy())]
    walk = _maze_walk(maze)[:10]
    for raw in walk + walk[:3]:  # the last three cross strokes already drawn
        outcome = env.step(raw)
        assert outcome.valid and not outcome.collision
        before.append((env.canvas.copy(), env.ink.copy()))
    before.pop()
    while before:
        canvas, ink = before.pop()
        assert env.step(json.dumps({"action": "undo"})).kind == "undo"
        np.testing.assert_array_equal(env.canvas, canvas)  # |ΔS| = 0: the very pixels
        np.testing.assert_array_equal(env.ink, ink)
    assert not env.step(json.dumps({"action": "undo"})).valid  # nothing left to undo


def test_a_maze_episode_keeps_its_undo_history_without_a_canvas_copy_per_stroke(maze):
    # 128 steps on a 256-pixel maze held a full canvas and ink copy per stroke: 128 · 1.3 MB = 168 MB
    import tracemalloc

    stroke = _maze_walk(maze)[0]
    Environment(maze).replay([stroke])  # the one-time caches (wall mask, compiled kernels) are not history
    tracemalloc.start()
    try:
        env = Environment(maze)
        env.replay([stroke] * (env.budget - 1))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(o.kind == "stroke" and o.valid for o in env.outcomes) == env.budget - 1
    full_copy = env.canvas.nbytes + env.ink.nbytes
    assert held < 8 * full_copy, f"{held / 1e6:.1f} MB held after {env.budget - 1} strokes"


def _random_semantic_actions(rng: np.random.Generator, n: int, walk: list[str] = ()) -> list[str]:
    """Strokes (many on or along an edge, so the brush reaches past the canvas; some zero-length; on a maze
    mostly steps of its walk, which cross no wall) and undos, with runs of undos that empty the stack and go
    past it."""
    actions = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.35:
            actions += [json.dumps({"action": "undo"})] * int(rng.integers(1, 4))
            continue
        if walk and roll < 0.85:
            actions.append(walk[int(rng.integers(len(walk)))])
            continue
        edge = float(rng.choice([0.0, 1.0, 0.001, 0.999]))
        path = [edge if rng.random() < 0.3 else float(rng.random()) for _ in range(6)]
        if rng.random() < 0.1:
            path = path[:2] * 3  # zero length: a dot
        if rng.random() < 0.3:  # the quantised spelling
            path = [int(round(v * 1000)) for v in path]
        actions.append(json.dumps(dict(zip(("action", "xs", "ys", "xc", "yc", "xe", "ye"), ["brush_stroke", *path]))))
    return actions


@pytest.mark.parametrize("seed", range(4))
def test_after_every_step_of_random_strokes_and_undos_the_canvas_and_ink_equal_a_replay_of_the_strokes_left(seed):
    rng = np.random.default_rng(seed)
    for task in semantic_tasks(seed):
        env = Environment(task, budget=10_000)
        left: list[str] = []  # the strokes accepted and not undone, in order
        walk = _maze_walk(task) if "route" in task.spec else []
        for raw in _random_semantic_actions(rng, 60, walk):
            outcome = env.step(raw)
            if outcome.kind == "stroke" and outcome.valid:
                left.append(raw)
            elif outcome.kind == "undo":
                left.pop()
            else:
                assert outcome.collision or (raw == json.dumps({"action": "undo"}) and not left), outcome
            fresh = Environment(task, budget=10_000)
            for stroke in left:
                assert fresh.step(stroke).valid
            np.testing.assert_array_equal(env.canvas, fresh.canvas)
            np.testing.assert_array_equal(env.ink, fresh.ink)
            assert env.observation().extra["strokes_on_canvas"] == len(left)
