"""The proto: the model of schemas/knowledge.v1.proto and the generator of schema and allow-list from it."""
