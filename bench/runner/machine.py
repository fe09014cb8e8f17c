"""The machine a run's figures came from."""

import datetime
import os
import platform


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def describe():
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{os.cpu_count()} CPUs ({len(os.sched_getaffinity(0))} usable), {cpu_model()}, "
            f"Linux {platform.release()}, {now}, load average {load}")
