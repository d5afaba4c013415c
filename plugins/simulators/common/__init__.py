"""Building blocks shared by the table-specified simulators (BounceBall, MassSlide).

:mod:`.sampling`: marginals fitted to a ranges table and intervention draws on signed ranges;
:mod:`.noise`: the component observation model (base, drift, event, post-event, heteroscedastic,
bias, quantisation) with an exact Monte-Carlo noise power; :mod:`.base`: the Simulator plumbing
(time grid, validation, Latin-hypercube baselines, interventions) both simulators share.
"""
