"""One module per ``domino-hub`` subcommand."""
