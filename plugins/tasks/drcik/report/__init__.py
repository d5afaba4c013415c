"""Dr-CiK in ``harness report`` (paper Section 5, Appendices D, H, I), as ``tracebench/report/`` is: Table 2 and
the section builder (:mod:`.table2`), the deep-research tables (:mod:`.research_tables`), the figures
(:mod:`.figures`), the tables by stratum (:mod:`.strata`) and, with ``--paper``, the values and findings the
paper's text states beside them (:mod:`.paper`).  In every table a value that does not exist is a dash whose
footnote says why (the shared cell formats and reasons: :mod:`.cells`)."""
