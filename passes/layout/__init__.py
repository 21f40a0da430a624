"""The pieces of convc-channels-last (passes/layout/channels_last.py): IR builders, the per-op rewrites, the
sinking of transposes, and the report of the transposes IREE keeps."""
