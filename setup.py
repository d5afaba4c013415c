"""Packages: the core ``harness`` and the built-in plugins, whose folder ``plugins/`` installs as
``tsagent_plugins`` so that it cannot collide with another project's top-level ``plugins``."""

from setuptools import find_namespace_packages, setup

BUILTINS = "tsagent_plugins"

setup(
    packages=find_namespace_packages(include=["harness*"], exclude=["*__pycache__*"])
    + [BUILTINS + name[len("plugins"):]
       for name in find_namespace_packages(include=["plugins*"], exclude=["*__pycache__*"])],
    package_dir={BUILTINS: "plugins"},
)
