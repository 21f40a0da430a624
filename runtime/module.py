"""Load a vmfb with iree.runtime and run a function on numpy inputs."""

from __future__ import annotations

import numpy as np

import iree.runtime as rt

_ELEM = {"f16": rt.HalElementType.FLOAT_16, "bf16": rt.HalElementType.BFLOAT_16,
         "f32": rt.HalElementType.FLOAT_32}


class LoadedModule:
    """A vmfb loaded on one device ('local-task' for llvm-cpu, 'cuda', 'hip')."""

    def __init__(self, vmfb_path: str, driver: str = "local-task", config=None, parameters: dict | None = None,
                 parameter_scope: str = "model", mmap: bool = True):
        """config: share an rt.Config (one device, one CUDA context) between modules.
        parameters: {name: array} for a module compiled with named parameters (the PyTorch
        route's `parameters=`), served from host memory through an IREE parameter index.
        mmap=False loads a heap copy instead of mapping the file read-only (the CUDA HAL's
        attempt to register a read-only mapping fails with an API error that compute-sanitizer
        reports, although the runtime then falls back to copying the constants)."""
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

    def function(self, name: str = "main"):
        return self.context.modules.module[name]

    def to_device(self, a: np.ndarray, dtype: str):
        """A device buffer view of `a` tagged with convc's element type (bf16 arrives as
        uint16 bits; asdevicearray would tag it ui16)."""
        return self.device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
            device=self.device, buffer=np.ascontiguousarray(a), element_type=_ELEM[dtype])

    def call(self, name: str, inputs: list[tuple[np.ndarray, str]], output: tuple[np.ndarray, str] | None = None):
        """Runs `name`; inputs are (array, element type). With `output` (a poisoned array and
        its element type), the result is written into that caller buffer (iree.abi.output)."""
        args = [self.to_device(a, t) for a, t in inputs]
        if output is not None:
            args.append(self.to_device(*output))
        res = self.function(name)(*args)
        if isinstance(res, (list, tuple)):
            res = res[0]
        # copy: a mapped result can alias device memory that later calls reuse
        host = np.array(res.to_host() if hasattr(res, "to_host") else np.asarray(res), copy=True)
        if output is not None and host.dtype != output[0].dtype:
            host = host.view(output[0].dtype)
        return host


def run_vmfb(vmfb_path: str, inputs, output=None, name: str = "main", driver: str = "local-task"):
    return LoadedModule(vmfb_path, driver).call(name, inputs, output)
