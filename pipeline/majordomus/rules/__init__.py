"""Rules as data, their validators, dispatch (doctor, check, watch) and the vendored package."""
