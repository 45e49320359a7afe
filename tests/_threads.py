"""Counting the threads that run a function: a test hook for parallelism claims."""

from __future__ import annotations

import functools
import threading


class ThreadCounter:
    """Wraps functions so that every call records the thread it runs on.

    The first call waits (up to ``patience`` seconds) for a call on a second thread, so a
    pool of two or more threads is seen as two threads whatever the scheduling; work
    done on one thread pays the wait once.
    """

    def __init__(self, patience=2.0):
        self.threads = set()
        self._lock = threading.Lock()
        self._second = threading.Event()
        self._waited = False
        self.patience = patience

    def wrap(self, function):
        @functools.wraps(function)
        def counted(*args, **kwargs):
            with self._lock:
                self.threads.add(threading.get_ident())
                if len(self.threads) >= 2:
                    self._second.set()
                first, self._waited = not self._waited, True
            if first:
                self._second.wait(self.patience)
            return function(*args, **kwargs)
        return counted

    def __len__(self):
        return len(self.threads)
