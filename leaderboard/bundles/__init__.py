"""Reproducibility bundles of the site's leaderboards (issue 29): export a board with its evidence,
verify it offline, import it into another site as a read-only labelled board.

The recomputation and the file format are the engine's (:mod:`engine.bundle`); this package reads the
database into the bundle's records (one module per protocol: :mod:`.ekphrasis`, :mod:`.easel`,
:mod:`.c2`, each with the same ``bundle_contents(obj, writer)`` contract), writes archives
(:mod:`.export`) and loads them (:mod:`.imports`).
"""
