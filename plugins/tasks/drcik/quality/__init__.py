"""Quality control of generated Dr-CiK environments (Section 4.1 "Quality Control", Appendix D.1-D.2, L.3-L.4):
difficulty labels, the cloze audit, the distractor distinguishability audit."""
