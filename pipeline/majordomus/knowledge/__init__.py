"""The knowledge acts and judgements: review (promote, reject), the queue, integrity, references, freshness, review ages, the graph."""
