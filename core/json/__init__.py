"""JSON exactly as the TypeScript client sees it.

`safe` checks untrusted decoded JSON (types, depth, byte budgets, JS-safe numbers) and
measures its compact UTF-8 size; `canonical` is RFC 8785 (JCS) with its SHA-256 hash;
`_number` formats and computes numbers as JS does (`String(n)`, `**`, `toFixed`);
`_text` measures strings in UTF-16 code units; `_equality` compares values as `===`
does; `_frozen` holds the deep-immutable containers every parsed value is made of.
"""
