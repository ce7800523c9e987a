"""The leaderboard document's schema version: a leaf module, so the modules that write (``merge``),
upgrade (``migrate``) and validate (``schema``) documents read it without importing each other."""

#: MAJOR.MINOR written into every document. Bump MINOR for additive changes, MAJOR otherwise (and
#: teach :mod:`.migrate` to read the old major version: old boards stay readable).
SCHEMA_VERSION = "3.1"
