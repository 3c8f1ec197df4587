"""The doit task creators: derive, render, generate, drain. They read as the data flow; the
work they do lives in plain functions elsewhere, which tests call directly."""
