"""boa commands (being built)."""


def register(app):
    pass
