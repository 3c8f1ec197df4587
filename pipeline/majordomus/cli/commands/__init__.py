"""One module per top-level command: `add_parsers(subparsers)` and the implementations."""
