"""Python stacks are captured from a native thread while the main thread is
blocked inside a ctypes call and another Python thread waits on an Event.

Run by pytest in the process under test: test_python_stacks[METHOD], with the helper
library's path in STACKS_PYTHON_HELPER (tests/core/stacks/CMakeLists.txt). METHOD is how the library
must have taken the Python stacks: dump_traceback_threads, or faulthandler (the fallback,
forced with NCCLWATCH_PYTHON_STACKS=faulthandler in the entry's environment). With
faulthandler_unarmed the library is not armed before the main thread blocks, so the fallback
cannot register in time and the report must say why Python stacks are missing. pytest's own
faulthandler plugin stays off (-p no:faulthandler): the process must be as a job's.
"""
import ctypes
import os
import threading

import pytest


def sleeping_python_thread(event):
    event.wait(30)


def wait_inside_native_call(helper):
    return helper.stacks_block_until_captured(20000)


def outer_python_function(helper):
    return wait_inside_native_call(helper)


def read_report(path):
    report = {"pythreads": [], "native": {}}
    current_native = None
    with open(path) as f:
        for line in f:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind in ("is_python", "python_error", "python_method"):
                report[kind] = rest
            elif kind == "pythread":
                report["pythreads"].append([])
            elif kind == "pyframe":
                function, line_number, file = rest.split(" ", 2)
                report["pythreads"][-1].append((function, int(line_number), file))
            elif kind == "native":
                tid, answered = rest.split(" ")
                current_native = int(tid)
                report["native"][current_native] = {"answered": answered == "1", "frames": []}
            elif kind == "frame":
                report["native"][current_native]["frames"].append(rest)
    return report


def capture(helper, report_path, armed):
    """Blocks the main thread in a native call while the helper's thread captures every stack;
    returns what the helper's blocking call returned (1: released by the capture)."""
    # Arming early lets the faulthandler fallback register: its pending call
    # runs on this thread as soon as it executes Python code again.
    if armed:
        assert helper.stacks_arm() == 0, "arming failed"
    event = threading.Event()
    sleeper = threading.Thread(target=sleeping_python_thread, args=(event,))
    sleeper.start()
    try:
        assert helper.stacks_start_capture(report_path.encode()) == 0, "could not start the capture thread"
        return outer_python_function(helper)
    finally:
        event.set()
        sleeper.join()
        helper.stacks_finish()


@pytest.mark.parametrize("method", ["dump_traceback_threads", "faulthandler", "faulthandler_unarmed"])
def test_python_stacks(method, tmp_path):
    helper = ctypes.CDLL(os.environ["STACKS_PYTHON_HELPER"])
    report_path = str(tmp_path / "report.txt")
    unarmed = method == "faulthandler_unarmed"
    released = capture(helper, report_path, armed=not unarmed)
    assert released == 1, "main thread was not released by the capture thread"
    report = read_report(report_path)
    assert report.get("is_python") == "1", "process not recognised as Python"
    if unarmed:
        expected_error = "python stacks unavailable: faulthandler not registered yet"
        seen = {k: report.get(k) for k in ("python_method", "python_error", "pythreads")}
        assert report.get("python_method") == "faulthandler", f"unexpected report {seen}"
        assert not report["pythreads"], f"unexpected report {seen}"
        assert report.get("python_error", "").startswith(expected_error), f"unexpected report {seen}"
        return
    assert report.get("python_method") == method, \
        f"python stacks taken by {report.get('python_method')!r}, expected {method!r}"
    assert not report.get("python_error"), f"python_error: {report.get('python_error')}"
    this_file = os.path.abspath(__file__)

    def thread_with(function):
        for frames in report["pythreads"]:
            if any(f[0] == function and os.path.abspath(f[2]) == this_file for f in frames):
                return [f[0] for f in frames]
        return None

    main_frames = thread_with("wait_inside_native_call")
    assert main_frames is not None, "no Python thread in wait_inside_native_call"
    assert main_frames[:4] == ["wait_inside_native_call", "outer_python_function", "capture",
                               "test_python_stacks"], f"main thread frames out of order: {main_frames}"
    assert thread_with("sleeping_python_thread") is not None, "no Python thread in sleeping_python_thread"
    main_native = report["native"].get(os.getpid())
    assert main_native is not None and main_native["answered"], "main thread did not answer the native capture"
    assert any("stacks_block_until_captured" in f for f in main_native["frames"]), \
        f"main thread native frames lack stacks_block_until_captured: {main_native['frames']}"
    print("python stacks captured: %d threads" % len(report["pythreads"]))
