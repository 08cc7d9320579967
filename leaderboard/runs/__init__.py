"""One contract for resumable background jobs (judge runs, EASEL runs, C² runs, TIG builds, task-set
builds): the abstract job model (:mod:`.models`), the lifecycle services (:mod:`.lifecycle`), the one
generic Celery task pair (:mod:`.tasks`) and the base API views (:mod:`.api`). Each protocol writes only
its units: plan them, execute one, finalise."""
