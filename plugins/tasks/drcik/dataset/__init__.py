"""Dr-CiK, the release read in: task files and the flat layout (:mod:`.loader`, :mod:`.flat`), frequencies
and seasonal periods (:mod:`.frequency`), difficulty labels (:mod:`.difficulty`), the shared corpus as agents see
it (:mod:`.corpus`) and the context conditions (:mod:`.contexts`)."""
