"""The agent runtime image (TraceBench Section 4.4, Appendix C.3-C.5).

- :mod:`harness.image.recipe`: what goes in (Table 20 pins, uv, system tools,
  the pinned agent CLIs, agents' ``install`` contributions, extra recipe files).
- :mod:`harness.image.dockerfile`: the Dockerfile and the ``harness-agent:<hash12>`` tag.
- :mod:`harness.image.bootstrap`: a base image without a registry (debootstrap + ``docker import``).
- :mod:`harness.image.build`: host-side downloads and ``docker build``; :func:`build.find_agent_image`.
"""
