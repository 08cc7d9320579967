"""Two boards side by side, one shape for every protocol's compare page (Ekphrasis snapshots, EASEL runs,
C² runs): per name its value with interval and rank on board A and on board B, the rank change and whether
the two intervals overlap; and the configuration settings of A and B with those that differ marked."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["Side", "board_headline", "configuration_differences", "side_by_side"]

#: name → (value, low, high, rank); any of them may be None
Side = Mapping[str, tuple[float | None, float | None, float | None, int | None]]


def side_by_side(left: Side, right: Side, *, keep_order: bool = False) -> list[dict]:
    """Rows ordered by rank on A (names only on B after them; with ``keep_order``, A's names as given, then
    B's others): ``name``, ``left_rank``, ``left_overall``,
    ``left_low``, ``left_high``, the same for ``right_``, ``rank_change`` (A rank − B rank: positive = B
    ranks it higher) and ``overlap`` (both intervals known and overlapping: a rank change may be noise)."""
    if keep_order:
        names = list(left) + [n for n in right if n not in left]
    else:
        names = sorted(set(left) | set(right), key=lambda n: (left[n][3] if n in left and left[n][3] else 10**6, n))
    rows = []
    for name in names:
        lv, rv = left.get(name), right.get(name)
        row = {"name": name}
        for side, v in (("left", lv), ("right", rv)):
            row[f"{side}_overall"], row[f"{side}_low"], row[f"{side}_high"], row[f"{side}_rank"] = v or (None,) * 4
        row["rank_change"] = (lv[3] - rv[3]) if lv and rv and lv[3] is not None and rv[3] is not None else None
        row["overlap"] = bool(lv and rv and None not in (lv[1], lv[2], rv[1], rv[2])
                              and lv[1] <= rv[2] and rv[1] <= lv[2])
        rows.append(row)
    return rows


def configuration_differences(left: Mapping[str, object], right: Mapping[str, object]) -> list[dict]:
    """Each setting of A (then those only B has) with both values and whether they differ."""
    keys = list(left) + [k for k in right if k not in left]
    return [{"what": k, "left": left.get(k, "–"), "right": right.get(k, "–"), "differs": left.get(k) != right.get(k)}
            for k in keys]


def board_headline(comparison: Mapping | None) -> dict | None:
    """Who is best, by how much and how sure, from a paired bootstrap (engine.paired_bootstrap.bootstrap_payload):
    the best agent with its interval, the runner-up, the margin with the interval of the paired difference,
    and P(best > runner-up). None with fewer than two agents."""
    if not comparison or len(comparison["agents"]) < 2:
        return None
    best, second = comparison["agents"][0], comparison["agents"][1]
    pair = next((p for p in comparison["pairs"] if p["a"] == best["name"] and p["b"] == second["name"]), None)
    if pair is None:
        return None
    return {"best": best["name"], "value": best["value"], "low": best["low"], "high": best["high"],
            "second": second["name"], "margin": pair["difference"], "margin_low": pair["low"],
            "margin_high": pair["high"], "p": pair["p_a_better"], "level": comparison["level"]}
