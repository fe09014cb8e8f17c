"""Checks that record a failure and let the test go on, so that one run reports every failure.

A scenario calls check(cond, what) for each fact it expects; runner.run_named fails the test
when any check failed. A check that must stop the scenario raises runner.Failure instead.
"""

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond
