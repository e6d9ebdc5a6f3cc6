"""The documentation site (MkDocs pages) and the generator of its reference pages (`python -m docs.generate`)."""
