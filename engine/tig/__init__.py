"""Typed Idea Graphs for population-anchored Novelty (Ekphrasis §4.2, App. G).

    R_b^{-q} --EDC--> A_b^{-q} --graph--> G_b^{-q} --cluster+score--> C_{b,N}^q

Extract typed atoms from every reference response (:mod:`engine.tig.offline`, :mod:`engine.tig.llm`),
canonicalise them within each type (:mod:`engine.tig.canonical`), connect them by co-occurrence NPMI,
same-type similarity and typed relations (:mod:`engine.tig.graph`), cluster each same-type subgraph by
hierarchical Leiden (:mod:`engine.tig.clusters`), rank clusters by ClicheScore (:mod:`engine.tig.score`) and
materialise the top ones as Novelty checklist items (:mod:`engine.tig.checklist`) -- for each judged pair on
the leave-two-models-out population (:mod:`engine.tig.population`). No Django here.

The package re-exports nothing: import each name from the module it lives in.
"""
