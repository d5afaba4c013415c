"""An evaluation harness for LLM agents on time-series analysis (TraceBench, Dr-CiK)."""

__version__ = "0.1.0"
