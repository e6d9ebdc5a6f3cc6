"""The remote-action and capability records: strict parsers into immutable values.

`records` parses document references, action reservations, queries, receipts,
capability descriptors and catalogs, and action results.
"""
