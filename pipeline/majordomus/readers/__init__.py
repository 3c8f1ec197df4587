"""What the reader capabilities read (the knowledge store, through git and the existing modules),
and the projections that carry `pipeline.knowledge_base` to the command line, HTTP with OpenAPI
and MCP. Nothing here declares a capability: `pipeline.knowledge_base` does, once."""
