"""The base every layer may import: the frozen model base, token usage, config loading and the
command-line dispatcher. It imports nothing of the project, so the layers above it point one way:

    core ◄── models ◄── pipelines ◄── eval ◄── serve
"""
