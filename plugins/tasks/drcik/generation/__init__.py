"""``harness dr-generate``: Dr-CiK's task-generation pipeline (Section 4.1, Figure 2, Appendix D.2, prompts of
Appendix L) turning context-aided forecasting (CAF) tasks into deep-research environments."""
