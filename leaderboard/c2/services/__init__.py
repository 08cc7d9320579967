"""Writes of the C² sub-app: imports (:mod:`.imports`), runs (:mod:`.runs`) and their stages —
generation (:mod:`.generation`), grading and clustering (:mod:`.grading`), rating (:mod:`.rating`),
scoring (:mod:`.scoring`)."""
