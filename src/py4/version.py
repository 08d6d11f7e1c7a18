"""The toolkit's version, at the bottom layer so that any module can record it without importing
the package's face (``py4.__version__`` is this value; pyproject.toml declares it for installers)."""

__version__ = "0.1.0"
