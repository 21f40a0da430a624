"""The trace record layout shared by the kernel (lower/nvidia/trace.py) and the device-side
reader (tools/gpu/trace.py); plain data, importable without the compiler."""

TRACE_ENV = "CONVC_TRACE"
RECORD_BYTES = 256
EVENTS = (
    "start",              # thread 0 enters the kernel
    "descriptors",        # thread 0 wrote, released and acquired the tensor maps
    "barriers",           # every thread past the barrier-init __syncthreads
    "first_issue",        # producer issued the first k-tile's TMA
    "producer_done",      # producer issued every TMA of this CTA
    "c0_first_data",      # consumer warpgroup 0: first stage's data arrived
    "c0_mainloop",        # ... its first tile's main loop finished (wgmma wait 0)
    "c0_residual",        # ... its first tile's residual arrived (res_full)
    "c0_staged",          # ... its first tile's outputs are in the staging slot
    "c0_stored",          # ... its first tile's TMA store issued
    "c0_done",            # ... its last store has read its slot
    "c1_first_data",      # consumer warpgroup 1: the same four
    "c1_mainloop",
    "c1_residual",
    "c1_staged",
    "c1_stored",
    "c1_done",
    "tiles",              # number of tiles (stream-K: segments) this CTA computed (not a time)
    "partial",            # stream-K: this CTA's partial tile published
    "c0_fixed",           # stream-K: warpgroup 0 added the other CTAs' partials (last tile)
    "c1_fixed",
)
