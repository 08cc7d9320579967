"""Task-level tables shared by a task's leave-two-models-out populations (Ekphrasis App. G.5, Algorithm 3).

Every judged pair of a task has its own reference population -- the task's responses less the two
candidates' -- and each population is canonicalised and built into a graph on its own (``population.py``).
The populations differ only by which responses they keep, so what depends on the task's atoms alone is
found once per task here and each population reads its share by slicing, with integer counts and boolean
masks only: nothing computed here is a floating-point sum, so a population's canonicalisation and graph are
the same, bit for bit, as when built from its own table (``tests/engine/tig/test_leaveout.py`` compares both
paths on every pair of several tasks).

* **Pairs** (:meth:`LeaveOutBasis.pair_table`): the task's distinct ``(key, surface form)`` pairs, sorted
  by the key's content rank and then the label id, with every mention's pair. A population keeps the pairs
  its mentions use, counted by ``bincount`` over its mentions (whole numbers). Its dense key indices are
  increasing in the task's key ranks, so sorting its own ``(key, label)`` codes (what
  :func:`~engine.tig.canonical.pair_table` does) gives the same pairs in the same order.
* **Apart types**: the pairs of one type whose label cosines are at or above the canonicalisation
  threshold, listed once per task (App. G.2 canonicalisation; the threshold is
  :data:`~engine.tig.canonical.CANONICAL_MERGE_THRESHOLD` or the canonicaliser's). When a population
  keeps no two of a type's close pairs, and every label's self-cosine passes the threshold, the offline
  canonicaliser's test ``count(cos >= threshold) > n`` on that type's key cosines (the labels' own cosines
  where every key has one form) is false -- the same comparisons of the same float values, read from the
  list instead of the matrix.
"""

from __future__ import annotations

import numpy as np

from engine.tig.atoms import ATOM_TYPES, AtomTable
from engine.tig.canonical import PairTable
from engine.tig.distinct import run_starts

__all__ = ["LeaveOutBasis"]

_ALL_TYPES = frozenset(range(len(ATOM_TYPES)))


class LeaveOutBasis:
    """The task-level tables of one task's :class:`~engine.tig.atoms.AtomTable` (see the module docstring);
    ``threshold`` is the canonicaliser's merge threshold."""

    def __init__(self, table: AtomTable, threshold: float) -> None:
        self.table = table
        self.threshold = float(threshold)
        order = table.key_order
        width = max(len(table.label_names), 1)
        # the task's (key rank, label) pairs, sorted: a population's pairs are a subsequence of these
        codes, pair_of_mention = np.unique(order.rank[table.key_ids] * width + table.label_ids,
                                           return_inverse=True)
        self.pair_of_mention = pair_of_mention.reshape(-1)
        self.pair_rank, self.pair_label = np.divmod(codes, width)
        self.n_pairs = len(codes)
        pair_type = order.type_code[order.by_rank[self.pair_rank]] if len(codes) else np.zeros(0, np.int64)
        # close pairs of one type: the comparisons merges_nothing makes, on the same float values
        sim = table.label_similarity[self.pair_label[:, None], self.pair_label] if len(codes) else np.zeros((0, 0))
        close = sim >= self.threshold
        self.self_close = bool(np.diagonal(close).all())
        close &= pair_type[:, None] == pair_type[None, :]
        p, q = np.nonzero(close)
        upper = p < q
        self.close_p, self.close_q = p[upper], q[upper]
        self.close_type = pair_type[self.close_p]

    def pair_table(self, keep_mentions: np.ndarray) -> PairTable | None:
        """The :class:`~engine.tig.canonical.PairTable` of the population made of the task's mentions where
        ``keep_mentions`` (bool per task mention) is true, in their order (as :meth:`AtomTable.subset`
        keeps them); ``None`` for an empty population."""
        rows = keep_mentions.nonzero()[0]
        if not len(rows):
            return None
        order = self.table.key_order
        task_pair = self.pair_of_mention[rows]
        count = np.bincount(task_pair, minlength=self.n_pairs)
        present = count > 0
        kept = present.nonzero()[0]
        pair_count = count[kept]
        ranks = self.pair_rank[kept]
        new_key = run_starts(ranks)
        keys = order.by_rank[ranks[new_key]]
        both = present[self.close_p] & present[self.close_q]
        apart = _ALL_TYPES - set(self.close_type[both].tolist()) if self.self_close else frozenset()
        return PairTable(
            keys=keys,
            # whole numbers; a key's only pair's count when every key has one
            key_count=pair_count if len(keys) == len(kept) else np.add.reduceat(pair_count, new_key.nonzero()[0]),
            key_type=order.type_code[keys],
            pair_key=new_key.cumsum() - 1,
            pair_label=self.pair_label[kept],
            pair_count=pair_count,
            pair_of_mention=(present.cumsum() - 1)[task_pair],
            apart_types=frozenset(apart),
            apart_threshold=self.threshold,
        )
