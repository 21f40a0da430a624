"""Splice stage: convc-splice-dispatch (splice_dispatch.py), convc-drop-barriers (drop_barriers.py),
and the hal-phase convc-record-once (record_once.py)."""
