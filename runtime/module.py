"""Load a vmfb with iree.runtime and run a function on numpy inputs."""

from __future__ import annotations

import numpy as np

import iree.runtime as rt

# fp8 tensors travel as uint8 arrays of their bits (numpy has no fp8 type)
_ELEM = {"f16": rt.HalElementType.FLOAT_16, "bf16": rt.HalElementType.BFLOAT_16,
         "f32": rt.HalElementType.FLOAT_32, "i8": rt.HalElementType.SINT_8, "i32": rt.HalElementType.SINT_32,
         "f8E4M3FN": rt.HalElementType.FLOAT_8_E4M3_FN, "f8E5M2": rt.HalElementType.FLOAT_8_E5M2}


# convc-record-once marks the async functions it rewrote in their reflection: their command
# buffer has no binding table, which IREE's CUDA HAL replays as one CUDA graph in graph mode
FIXED_BUFFERS_KEY, FIXED_BUFFERS = "convc.command_buffer", "fixed-buffers"
CUDA_GRAPHS_FLAG = "--cuda_use_streams=false"

# How a record-once build is run on CUDA, as IREE's tools spell it. Graph mode replays the
# recorded inference as one CUDA graph launch. A record-once call allocates only its result;
# IREE's default stream-ordered allocation takes it from a CUDA memory pool (and, read in IREE's
# memory_pools.c, frees it with cuMemFree when the caller drops it): 132 us per call against 38
# for a one-dispatch program that takes it from IREE's caching allocator instead (H200, iree-benchmark-module,
# bench/experiments/call_overhead.py --sweep; docs/runtime.md).
CUDA_ALLOCATOR = "caching"
RECORD_ONCE_FLAGS = (CUDA_GRAPHS_FLAG, "--cuda_async_allocations=false", f"--device_allocator={CUDA_ALLOCATOR}")
_CUDA_DEFAULT_FLAGS = ("--cuda_use_streams=true", "--cuda_async_allocations=true")


def records_once(vmfb_path: str) -> bool:
    """Whether the vmfb's programs execute command buffers recorded once against fixed buffers
    (convc-record-once): run them with IREE's CUDA HAL in graph mode (CUDA_GRAPHS_FLAG)."""
    m = rt.VmModule.mmap(rt.VmInstance(), vmfb_path)
    fns = [m.lookup_function(n) for n in m.function_names if not n.startswith("__")]
    return any(f.reflection.get(FIXED_BUFFERS_KEY) == FIXED_BUFFERS for f in fns)


class ModuleError(ValueError):
    """A call the loaded module cannot serve (an unknown function, no single entry function)."""


def user_functions(names) -> list[str]:
    """A module's exported functions a user calls: not its initializer, not the `$async`
    variants the ONNX and PyTorch imports export beside each function."""
    return [n for n in names if not n.startswith("__") and not n.endswith("$async")]


def require_driver(driver: str) -> None:
    """Raises ModuleError, in one line, when this machine cannot create a device of `driver`
    (a GPU tool run where there is no GPU), before any work is done."""
    try:
        rt.get_device(driver, cache=False)
    except Exception as e:      # IREE raises ValueError / RuntimeError with its driver's diagnostics
        first = next((x.strip() for x in str(e).splitlines() if x.strip()), type(e).__name__)
        why = first.split("; ", 1)[-1].split(";")[0] if "UNAVAILABLE" in first else first
        raise ModuleError(f"no {driver} device on this machine ({why})") from None


_RECORD_ONCE_DEVICE = None


def cuda_config(record_once: bool) -> "rt.Config":
    """A CUDA device run as RECORD_ONCE_FLAGS say (record_once), else IREE's default device.
    IREE's CUDA driver reads its options from process-wide flags when it is created, and
    iree.runtime caches drivers by name, so a record-once device gets a driver of its own,
    created with those flags set; IREE's defaults are restored after. Like iree.runtime's
    cached default device, that device is made once per process and shared."""
    global _RECORD_ONCE_DEVICE
    if not record_once:
        return rt.Config("cuda")
    if _RECORD_ONCE_DEVICE is not None:
        return rt.Config(device=_RECORD_ONCE_DEVICE)
    from iree.runtime import _binding
    rt.flags.parse_flags(*(f for f in RECORD_ONCE_FLAGS if f.startswith("--cuda_")))
    try:
        device = _binding.create_hal_driver("cuda").create_default_device(allocators=[CUDA_ALLOCATOR])
    finally:
        rt.flags.parse_flags(*_CUDA_DEFAULT_FLAGS)
    _RECORD_ONCE_DEVICE = device
    return rt.Config(device=device)


class LoadedModule:
    """A vmfb loaded on one device ('local-task' for llvm-cpu, 'cuda', 'hip')."""

    def __init__(self, vmfb_path: str, driver: str = "local-task", config=None, parameters: dict | None = None,
                 parameter_scope: str = "model", mmap: bool = True, cuda_graphs: bool | None = None):
        """config: share an rt.Config (one device, one CUDA context) between modules.
        parameters: {name: array} for a module compiled with named parameters (the PyTorch
        route's `parameters=`), served from host memory through an IREE parameter index.
        mmap=False loads a heap copy instead of mapping the file read-only (the CUDA HAL's
        attempt to register a read-only mapping fails with an API error that compute-sanitizer
        reports, although the runtime then falls back to copying the constants).
        cuda_graphs: create the CUDA device as RECORD_ONCE_FLAGS say (graph mode, results from
        IREE's caching allocator); None: when the vmfb records its inference once against fixed
        buffers (records_once), so that each call is one graph launch."""
        if config is None and driver == "cuda":
            config = cuda_config(records_once(vmfb_path) if cuda_graphs is None else cuda_graphs)
        self.config = config or rt.Config(driver)
        self.context = rt.SystemContext(config=self.config)
        if parameters:
            index = rt.ParameterIndex()
            for name, value in parameters.items():
                index.add_buffer(name, np.ascontiguousarray(value).tobytes())
            self.context.add_vm_module(rt.create_io_parameters_module(
                self.config.vm_instance, index.create_provider(scope=parameter_scope)))
        if mmap:
            self.vm_module = rt.VmModule.mmap(self.config.vm_instance, vmfb_path)
        else:       # a heap copy: the CUDA HAL can register it as host memory for constants
            with open(vmfb_path, "rb") as f:
                self.vm_module = rt.VmModule.copy_buffer(self.config.vm_instance, f.read())
        self.context.add_vm_module(self.vm_module)
        self.device = self.config.device

    @property
    def entry(self) -> str:
        """The module's one user function (an ONNX model exports its graph's name, a PyTorch
        or MLIR model its function's)."""
        names = user_functions(self.vm_module.function_names)
        if len(names) != 1:
            raise ModuleError(f"the module exports {len(names)} functions ({', '.join(names) or 'none'}): "
                              "name the one to run")
        return names[0]

    def function(self, name: str | None = None):
        """The callable of exported function `name` (default: the module's one entry function)."""
        name = name or self.entry
        if name not in self.vm_module.function_names:
            raise ModuleError(f"the module has no function {name!r} (it exports: "
                              f"{', '.join(user_functions(self.vm_module.function_names))})")
        return self.context.modules.module[name]

    def to_device(self, a: np.ndarray, dtype: str):
        """A device buffer view of `a` tagged with convc's element type (bf16 arrives as
        uint16 bits; asdevicearray would tag it ui16)."""
        return self.device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
            device=self.device, buffer=np.ascontiguousarray(a), element_type=_ELEM[dtype])

    def call(self, name: str | None, inputs: list[tuple[np.ndarray, str]],
             output: tuple[np.ndarray, str] | None = None, all_results: bool = False):
        """Runs `name` (None: the module's entry function); inputs are (array, element type).
        With `output` (a poisoned array and its element type), the result is written into that
        caller buffer (iree.abi.output). Returns the first result, or all as a list."""
        args = [self.to_device(a, t) for a, t in inputs]
        if output is not None:
            args.append(self.to_device(*output))
        res = self.function(name)(*args)
        results = list(res) if isinstance(res, (list, tuple)) else [res]
        # copy: a mapped result can alias device memory that later calls reuse
        hosts = [np.array(r.to_host() if hasattr(r, "to_host") else np.asarray(r), copy=True) for r in results]
        if output is not None and hosts[0].dtype != output[0].dtype:
            hosts[0] = hosts[0].view(output[0].dtype)
        return hosts if all_results else hosts[0]


def run_vmfb(vmfb_path: str, inputs, output=None, name: str | None = None, driver: str = "local-task"):
    return LoadedModule(vmfb_path, driver).call(name, inputs, output)
