"""Python stacks are captured from a native thread while the main thread is
blocked inside a ctypes call and another Python thread waits on an Event.

usage: python_capture_test.py HELPER_SO REPORT_PATH EXPECTED_METHOD

EXPECTED_METHOD is how the library must have taken the Python stacks:
dump_traceback_threads, or faulthandler (the fallback, forced with
NCCLWATCH_PYTHON_STACKS=faulthandler). With faulthandler_unarmed the library
is not armed before the main thread blocks, so the fallback cannot register
in time and the report must say why Python stacks are missing.
"""
import ctypes
import os
import sys
import threading


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


def check_unarmed(report):
    expected_error = "python stacks unavailable: faulthandler not registered yet"
    ok = (report.get("python_method") == "faulthandler" and not report["pythreads"]
          and report.get("python_error", "").startswith(expected_error))
    print(("unarmed fallback reported: %r" if ok else "FAIL: unexpected report %r")
          % {k: report.get(k) for k in ("python_method", "python_error", "pythreads")})
    return 0 if ok else 1


def main():
    helper_path, report_path, expected_method = sys.argv[1], sys.argv[2], sys.argv[3]
    helper = ctypes.CDLL(helper_path)
    # Arming early lets the faulthandler fallback register: its pending call
    # runs on this thread as soon as it executes Python code again.
    unarmed = expected_method == "faulthandler_unarmed"
    if not unarmed and helper.stacks_arm() != 0:
        print("FAIL: arming failed")
        return 1
    event = threading.Event()
    sleeper = threading.Thread(target=sleeping_python_thread, args=(event,))
    sleeper.start()
    try:
        if helper.stacks_start_capture(report_path.encode()) != 0:
            print("FAIL: could not start the capture thread")
            return 1
        released = outer_python_function(helper)
    finally:
        event.set()
        sleeper.join()
        helper.stacks_finish()
    failures = []
    if released != 1:
        failures.append("main thread was not released by the capture thread")
    report = read_report(report_path)
    this_file = os.path.abspath(__file__)
    if report.get("is_python") != "1":
        failures.append("process not recognised as Python")
    if unarmed:
        return check_unarmed(report)
    if report.get("python_method") != expected_method:
        failures.append("python stacks taken by %r, expected %r"
                        % (report.get("python_method"), expected_method))
    if report.get("python_error"):
        failures.append("python_error: " + report["python_error"])

    def thread_with(function):
        for frames in report["pythreads"]:
            if any(f[0] == function and os.path.abspath(f[2]) == this_file for f in frames):
                return [f[0] for f in frames]
        return None

    main_frames = thread_with("wait_inside_native_call")
    if main_frames is None:
        failures.append("no Python thread in wait_inside_native_call")
    elif main_frames[:3] != ["wait_inside_native_call", "outer_python_function", "main"]:
        failures.append("main thread frames out of order: %r" % main_frames)
    if thread_with("sleeping_python_thread") is None:
        failures.append("no Python thread in sleeping_python_thread")
    main_native = report["native"].get(os.getpid())
    if main_native is None or not main_native["answered"]:
        failures.append("main thread did not answer the native capture")
    elif not any("stacks_block_until_captured" in f for f in main_native["frames"]):
        failures.append("main thread native frames lack stacks_block_until_captured: %r"
                        % main_native["frames"])
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print("python stacks captured: %d threads" % len(report["pythreads"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
