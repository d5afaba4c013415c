"""The agent runtime image: one pinned environment every containerised agent runs in.

- :mod:`harness.image.recipe`: what goes in (pinned Python packages, uv, system tools,
  the pinned agent CLIs, agents' ``install`` contributions, extra recipe files).
- :mod:`harness.image.dockerfile`: the Dockerfile and the ``harness-agent:<hash12>`` tag.
- :mod:`harness.image.bootstrap`: a base image without a registry (debootstrap + ``docker import``).
- :mod:`harness.image.build`: host-side downloads and ``docker build``; :func:`build.find_agent_image`.
"""
