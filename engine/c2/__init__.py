"""C²-Eval: convergent and divergent creativity (c2-eval.txt §3–§4). Plain Python, never Django.

Modules (the contract in brief/c2-contract.md, refined here):

* :mod:`engine.c2.tasks` — ``C2TaskType`` (``regime``, ``is_visual``, ``label``), ``C2Item`` (plain
  record: task_type, external_id, prompt, line, answers, tests, starter_code, image_path, reference,
  metadata), ``RecordError(line, field, message)``, parsers ``parse_triviaqa(text)``,
  ``parse_livecodebench(text)``, ``parse_okvqa(questions_text, annotations_text, image_dir)`` (an
  annotations-file error has ``field`` starting ``annotations.``), ``parse_writingprompts(text)``,
  ``parse_macgyver(text)``, ``parse_creation_mmbench(text, image_dir)``.
* :mod:`engine.c2.grading` — ``triviaqa_normalize``, ``triviaqa_exact_match``, ``triviaqa_f1``, ``vqa_accuracy``,
  ``vqa_correct`` (z_i for OK-VQA: accuracy > 0),
  ``extract_code_block`` (``None`` without two fence lines), ``grade_code(code, tests, *, timeout_s=6.0)
  -> CodeVerdict`` (passed, result, tests: tuple[TestOutcome], lcb_results, message, metadata, wall_s),
  ``grade_code_sample(reply, tests)`` (extract + grade), ``grade_code_many(jobs, *, workers=None)``
  (concurrent, input order), ``CodeTests(inputs, outputs, func_name)`` (``as_json``/``from_json``).
  Each sample runs in a fresh sandbox under :mod:`engine.c2.lcb_harness` (the runner: compiled once, then
  one input in, the raw output out, test after test); :mod:`engine.c2.lcb_compare` — LiveCodeBench's
  comparison, in the grader (``stdio_result``, ``call_result``, ``load_json``, ``truncate``).
* :mod:`engine.c2.lcb_private_tests` — ``decode_private_tests(text) -> list`` (base64 → zlib → pickle read
  with no global resolved) raising ``UnsafePickleError`` or ``PickledJSONError``.
* :mod:`engine.c2.sandbox` — ``run_sandboxed(argv | source, *, stdin="", limits=SandboxLimits())
  -> SandboxResult``, ``start_sandboxed(...) -> SandboxSession`` (send, wait_for_lines, line_times,
  stop, finish), ``seccomp_filter()``, ``SandboxUnavailable``, ``sandbox_available()``;
  ``ATELIER_ALLOW_UNSANDBOXED=1``.
* :mod:`engine.c2.uos` — ``usefulness``, ``originality_clusters``, ``cluster_labels`` (per-sample
  cluster index for the drill-down), ``originality_score(k_p, n)`` = 100·K_p/n, ``surprise``,
  ``convergent_prompt_scores(prompt_id, correct, confidence, correct_embeddings, *, accuracy=None,
  tau, none_correct)`` (``accuracy``: OK-VQA's soft accuracy for U) / ``divergent_prompt_scores`` →
  ``PromptScores`` (U, O, S in [0, 100], ``missing_confidences``, ``clusters``),
  ``creativity``, ``combined_creativity``, ``task_type_scores`` → ``TaskTypeScores`` of ``Interval``s,
  ``paired_bootstrap_difference`` → ``PairedDifference``.
* :mod:`engine.c2.rater` — ``RUBRIC``/``RUBRIC_VERSION``, ``build_rater_messages``, ``parse_rating`` →
  ``Rating``, ``repair_messages`` (the one repair turn), ``is_rerate_sample(key)``, ``rater_icc``.
* :mod:`engine.c2.prompts` — ``TEMPLATES``/``TEMPLATE_VERSION``, ``generation_messages(task_type,
  template, prompt, *, starter_code=None, image_data_url=None)``, ``confidence_messages(messages,
  answer)``, ``CONFIDENCE_PROMPT``, ``parse_confidence(text) -> float | None``.
* :mod:`engine.c2.simulated` — ``SimulatedSubject``, ``SimulatedRater`` (labelled simulated).
"""
