"""ncclwatch's Python test library (tests/lib, on PYTHONPATH for every ctest entry).

checks   check(): record a failure and go on; the failures of this run
runner   run_named(): the main() of every scenario file; Failure, SKIP
sim_job  Job (a simulated job under the preload), its dumps, analyze, and the checks of an incident
exit_checks  the checks of the dump of a rank that left its job
"""
