"""Component streaming (seed 000 section 12): frames, patches and the receiver's state.

`lifecycle` holds `UIStreamState` and the pure transitions `start_ui_stream`,
`advance_ui_stream`, `accept_checkpoint`, `resume_ui_stream` and `restore_ui_stream` (with its two
halves `restore_snapshot` and `restore_envelope`, for a host that shares a restored snapshot).  Private parts: the
checkpoint envelope, what is kept between checkpoints (digests, freeze rules, shared
subtrees) and the mutation events.
"""
