"""Run the Python statements given as the first argument, then print as JSON the
sapwood kernels Numba compiled for them, in order: ``[module, name, constants]``, with
``module`` the kernel's module in ``sapwood._kernels`` and ``constants`` the integers
and booleans a kernel made by a factory closes over (a criterion's code, the random
splitter's flag). For ``test_compile_scope.py``, in a new interpreter."""

import json
import sys

from numba.core import event

compiled = []


class _Recorder(event.Listener):
    def on_start(self, ev):
        function = ev.data["dispatcher"].py_func
        if function.__module__.startswith("sapwood."):
            cells = [cell.cell_contents for cell in function.__closure__ or ()]
            compiled.append([function.__module__.rpartition(".")[2],
                             function.__name__,
                             [value for value in cells if isinstance(value, (bool, int))]])

    def on_end(self, ev):
        pass


event.register("numba:compile", _Recorder())
exec(sys.argv[1])
print(json.dumps(compiled))
