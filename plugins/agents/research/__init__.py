"""Deep-research (DR) agents of Dr-CiK (paper Section 5, Appendix G "Deep-research agents").

Kept empty on purpose: this package is imported inside the sandbox (``python -m
tsagent_plugins.agents.research.retrieval``), where neither the harness nor the other plugins
exist.  The harness side (agent adapters, plugin registration) is :mod:`.adapters`;
the in-sandbox side is :mod:`.tools`, :mod:`.client`, :mod:`.retrieval`, and the iterative
agents :mod:`.drbench`, :mod:`.opendr` and :mod:`.bench2future` on their shared :mod:`.episode` layer.
"""
