"""Support for tests and benchmarks only: random-weight models and the real-browser machinery.

Nothing a page or a CLI command calls lives here (the bench command excepted, which measures).
"""
