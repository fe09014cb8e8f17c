#!/usr/bin/env python3
"""The README's example output keeps the shape of what the tool prints.

Runs the README's first command, `scripts/demo` (a 4-rank ddp_loop straggler under `ncclwatch
run`, then `ncclwatch analyze`), and compares what it printed with the README's two example
blocks: the WARN line every rank logs, and the analyze report. Golden-free: numbers, hex, paths,
host names and pids are normalised away; what must agree is the wording, the sections and their
order, and the shape of each line of the verdict and of the culprit's first thread.

Run by pytest: pytest readme_shape_test.py.
"""
import os
import re
import subprocess

from ncclwatch_test.paths import BUILD, SOURCE


def normalise(line, hosts=()):
    line = line.rstrip()
    for host in hosts:
        line = re.sub(r"(?<![\w.-])" + re.escape(host) + r"(?![\w.-])", "HOST", line)
    line = re.sub(r"/[^\s:;,)]+", "PATH", line)
    line = re.sub(r"0x[0-9a-f]+", "HEX", line)
    line = re.sub(r"\d+(\.\d+)?", "N", line)
    line = re.sub(r"N(-N)?(,N(-N)?)+", "N", line)  # rank lists: "0-1,3" and "2" read alike
    line = re.sub(r"N-N", "N", line)
    line = re.sub(r"N(s|ms|min|h)-N(s|ms|min|h)", r"N\1", line)  # an age range reads as one age
    return line


def readme_blocks():
    text = open(os.path.join(SOURCE, "README.md")).read()
    blocks = re.findall(r"```\n(.*?)```", text, flags=re.S)
    warn = next((b.strip() for b in blocks if "NCCLWATCH WARN" in b), None)
    analyze = next((b for b in blocks if b.startswith("$ ncclwatch analyze")), None)
    return warn, analyze


def sections(report):
    """{heading: [lines]} in order, for the lines of an analyze report."""
    out, current = [], None
    for line in report.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            current = (line, [])
            out.append(current)
        elif current is not None:
            current[1].append(line)
    return out


def without_teardown(lines):
    """The verdict's lines without what followed it. The demo stops the job with SIGTERM: a rank
    whose own dump is over 2 s old by then (the last of 4 ranks can dump seconds after the
    first on a loaded machine) adds a last gasp, which the report tells as "then torn down:
    SIGTERM to rank 0 ..." and counts on its "read" line. Like the related verdicts of the WARN
    line, that depends on timing, not on the wording."""
    return [re.sub(r"; \d+ later dumps? told under then$", "", l) for l in lines if not l.startswith("  then")]


def host_names(report):
    m = re.search(r"from \d+ hosts?: ([^;]+);", report)
    return m.group(1).split() if m else []


def test_readme_shape():
    readme_warn, readme_analyze = readme_blocks()
    assert readme_warn and readme_analyze, "README.md has the WARN line and the analyze block"
    env = dict(os.environ, BUILD_DIR=BUILD)
    demo = subprocess.run([os.path.join(SOURCE, "scripts", "demo"), "--stall", "2"], capture_output=True, text=True,
                          timeout=180, env=env)
    print(demo.stdout[-4000:])
    assert demo.returncode == 0, f"scripts/demo exits 0 (got {demo.returncode}): {demo.stderr[-2000:]}"
    out = demo.stdout

    # The WARN line: one per rank; the README shows rank 1's. The related verdicts depend on
    # timing, so they are compared as "present or not", not one by one.
    warns = [line for line in (out + demo.stderr).splitlines() if "NCCLWATCH WARN" in line and "[rank 1]" in line]
    assert warns, "the demo printed rank 1's WARN line"
    strip_related = lambda s: re.sub(r" \(related: [^)]*\)", " (related: ...)", s)
    ours = normalise(strip_related(warns[0]), [warns[0].split(":")[0]])
    theirs = normalise(strip_related(readme_warn), [readme_warn.split(":")[0]])
    assert ours.replace(" (related: ...)", "") == theirs.replace(" (related: ...)", ""), \
        f"the WARN line has the README's shape:\n  tool:   {ours}\n  README: {theirs}"

    # The analyze report.
    start = out.find("$ ncclwatch analyze ")
    assert start >= 0, "the demo printed the analyze report"
    report = out[start:].split("\n", 1)[1]
    readme_report = readme_analyze.split("\n", 1)[1]
    ours, theirs = sections(report), sections(readme_report)
    ours_hosts, theirs_hosts = host_names(report), host_names(readme_report)
    assert [h for h, _ in ours] == [h for h, _ in theirs], \
        f"the same sections in the same order:\n  tool:   {[h for h, _ in ours]}\n  README: {[h for h, _ in theirs]}"
    for (heading, lines), (_, readme_lines) in zip(ours, theirs):
        if heading.startswith("VERDICT") or heading.startswith("EVIDENCE: each rank"):
            a = [normalise(l, ours_hosts) for l in without_teardown(lines)]
            b = [normalise(l, theirs_hosts) for l in without_teardown(readme_lines)]
            assert a == b, f"section {heading!r} reads as the README shows:\n  tool:   {a}\n  README: {b}"
        elif heading.startswith("EVIDENCE: culprit stacks"):
            # The group line, the first thread's header and its innermost frame.
            a = [normalise(l, ours_hosts) for l in lines[:3]]
            b = [normalise(l, theirs_hosts) for l in readme_lines[:3]]
            assert a == b, f"the culprit's first thread reads as the README shows:\n  tool:   {a}\n  README: {b}"
        elif heading.startswith("WHAT TO TRY"):
            assert lines and readme_lines and normalise(lines[0]) == normalise(readme_lines[0]), \
                "the first hint reads as the README shows"
