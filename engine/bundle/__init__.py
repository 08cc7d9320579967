"""Reproducibility bundles: one leaderboard's evidence as files, and its recomputation from them alone.

A bundle is a directory (or a ``.tar.gz`` of one) with a ``manifest.json`` naming every file with its
SHA-256, the board as the site stored it (``board/board.json``, with CSV and LaTeX beside it), and the
plain records the board was computed from (``records/*.jsonl``; media under ``media/`` named by hash).

* :mod:`engine.bundle.manifest` — writing and checking the files and their hashes;
* :mod:`engine.bundle.numbers` — a number-by-number comparison of a stored and a recomputed board;
* :mod:`engine.bundle.ekphrasis`, :mod:`engine.bundle.easel`, :mod:`engine.bundle.c2` — each protocol's
  recomputation, calling the same engine functions the site calls;
* :mod:`engine.bundle.board_files` — the board's CSV, LaTeX and viewer written from the board and the
  records, and rebuilt and compared byte for byte by the verifier;
* :mod:`engine.bundle.layout` — the files each protocol's bundle holds, so that a missing or unread one is named;
* :mod:`engine.bundle.verify` — the whole check (hashes, the rebuilt files, then every number), offline,
  no database;
* :mod:`engine.bundle.secrets` — keys and secrets kept out of every file;
* :mod:`engine.bundle.viewer` — the static ``index.html`` a reviewer opens from disk.
"""
