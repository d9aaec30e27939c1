"""The command-line layer: thin Typer apps that turn options into calls to the core."""
