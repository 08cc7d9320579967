"""Typed Idea Graphs for population-anchored Novelty (Ekphrasis §4.2, App. G).

    R_b^{-q} --EDC--> A_b^{-q} --graph--> G_b^{-q} --cluster+score--> C_{b,N}^q

Extract typed atoms from every reference response (:mod:`engine.tig.offline`, :mod:`engine.tig.llm`),
canonicalise them within each type (:mod:`engine.tig.canonical`), connect them by co-occurrence NPMI,
same-type similarity and typed relations (:mod:`engine.tig.graph`), cluster each same-type subgraph by
hierarchical Leiden (:mod:`engine.tig.clusters`), rank clusters by ClicheScore (:mod:`engine.tig.score`) and
materialise the top ones as Novelty checklist items (:mod:`engine.tig.checklist`) -- for each judged pair on
the leave-two-models-out population (:mod:`engine.tig.population`). No Django here.
"""

from engine.tig.atoms import (
    ATOM_TYPES,
    RELATION_TYPES,
    Atom,
    AtomTable,
    IdeaRecord,
    Relation,
    ResponseAtoms,
    idea_record,
)
from engine.tig.canonical import (
    CanonicalAtom,
    Canonicalisation,
    EmbeddingCanonicaliser,
    canonicalise,
    repair_alias_groups,
)
from engine.tig.checklist import (
    ITEM_TEMPLATE,
    ChecklistItem,
    generic_novelty_items,
    items_from_jsonl,
    items_to_jsonl,
    materialise_items,
)
from engine.tig.clusters import component_clusters, leiden_clusters, same_type_clusters, same_type_labels
from engine.tig.graph import IdeaGraph, build_graph, build_graph_networkx, graph_export, npmi
from engine.tig.llm import LLMCanonicaliser, LLMExtractor
from engine.tig.offline import OFFLINE_EXTRACTOR_NAME, OfflineExtractor
from engine.tig.population import (
    NoveltyContext,
    PopulationIndex,
    TIGWorkspace,
    cliche_clusters,
    pair_context_key,
    population_version,
)
from engine.tig.score import Cluster, ScoredClusters, cliche_score, score_clusters, score_partition

__all__ = [
    "ATOM_TYPES",
    "ITEM_TEMPLATE",
    "OFFLINE_EXTRACTOR_NAME",
    "RELATION_TYPES",
    "Atom",
    "AtomTable",
    "CanonicalAtom",
    "Canonicalisation",
    "ChecklistItem",
    "Cluster",
    "EmbeddingCanonicaliser",
    "IdeaGraph",
    "IdeaRecord",
    "LLMCanonicaliser",
    "LLMExtractor",
    "NoveltyContext",
    "OfflineExtractor",
    "PopulationIndex",
    "Relation",
    "ResponseAtoms",
    "ScoredClusters",
    "TIGWorkspace",
    "build_graph",
    "build_graph_networkx",
    "canonicalise",
    "cliche_clusters",
    "cliche_score",
    "component_clusters",
    "generic_novelty_items",
    "graph_export",
    "idea_record",
    "items_from_jsonl",
    "items_to_jsonl",
    "leiden_clusters",
    "materialise_items",
    "npmi",
    "pair_context_key",
    "population_version",
    "repair_alias_groups",
    "same_type_clusters",
    "same_type_labels",
    "score_clusters",
    "score_partition",
]
