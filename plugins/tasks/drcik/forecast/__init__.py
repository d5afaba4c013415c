"""Dr-CiK Level 1, forecasting (paper Section 5.2, Appendix H.2): one forecast and the forecasters x conditions
experiment (:mod:`.experiment`), batched chunks (:mod:`.chunks`), sMAE/sRMSE/sCRPS (:mod:`.metrics`) and the
release's submission files (:mod:`.exports`)."""
