"""Dr-CiK Level 2, deep research (paper Sections 5.3-5.4, Appendix G, H.1): research episodes (:mod:`.episodes`),
the agent's outputs and the release's files (:mod:`.outputs`, :mod:`.submissions`), the DR metrics
(:mod:`.metrics`) and their inputs (:mod:`.inputs`), judging a run (:mod:`.scoring`; the command
``harness dr-score``, which also prints Table 3, is the plugin's :mod:`tsagent_plugins.tasks.drcik.cli`) and a
research run as the input of the DR context conditions (:mod:`.as_context`)."""
