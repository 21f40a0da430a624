# Sourced by the device scripts, from the repository root: installs the iree-base-runtime wheel
# (from .whl/) and this checkout of convc into /tmp/site (no network needed; --upgrade so a warm
# machine never keeps an earlier checkout) and puts them on PYTHONPATH.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --upgrade --target /tmp/site . >/dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
