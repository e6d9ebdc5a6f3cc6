"""Built-in host capabilities (named by the admin catalog, run as RQ jobs)."""
