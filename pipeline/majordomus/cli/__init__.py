"""The command line: one parser, one dispatcher, one module per command."""
