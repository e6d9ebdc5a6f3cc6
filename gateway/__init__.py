"""The browser gateway: the front door of the Redis runtime for browsers and agents (`iui gateway`).

An ASGI application (Starlette, sse-starlette, uvicorn) that maps HTTP onto the same input
entries the Python client writes, with identities from verified tokens, and streams a
session's frames, receipts and answers as server-sent events that resume exactly where a
dropped connection left off.  Its Redis access is one small interface (`gateway.backend`).
"""
