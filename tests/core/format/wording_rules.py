"""Grammar and format rules for every text ncclwatch generates (output a person reads).

Golden-free: each rule is a pattern that no correct output contains, so the rules hold for any
job, crafted or real. problems(text) returns one line per violation; hex_forms(texts) finds a
number printed in two hex forms (e.g. 0xfb1 and 0x0fb1) across several outputs.
"""

import re

# (name, pattern). Each pattern matches a mistake.
TEXT_RULES = [
    # Agreement of a rank set with its verb: "rank 1 have", "ranks 0,2 waits".
    ("singular rank, plural verb", re.compile(r"\brank \d+ (have|are|wait|were)\b")),
    ("no rank, plural verb", re.compile(r"\bno rank (have|are|wait|were)\b")),
    ("plural ranks, singular verb", re.compile(r"\branks [\d,\-]+ (has|is|waits|was)\b")),
    ("'left no dump and are' after one rank", re.compile(r"\brank \d+ left no dump and are\b")),
    # Counts and nouns: "1 dumps", "2 culprit", "(s)".
    ("one, plural noun", re.compile(
        r"(?<![\w.#/-])1 (dumps|culprits|hosts|ranks|ops|files|states|frames|pairs|notes|threads|"
        r"collectives|communicators|records|more states|internal/libc frames|visible ranks|other pairs|"
        r"files rejected)\b")),
    ("many, singular noun", re.compile(r"(?<![\w.#/:-])(?:0|[2-9]|\d{2,}) (dump|culprit|host|file|pair|note)\b")),
    ("(s) instead of agreement", re.compile(r"\w\(s\)")),
    # Names, not numbers.
    ("dtype= abbreviation", re.compile(r"\bdtype=")),
    ("numeric datatype", re.compile(r"\bdatatype[=:]\s*\"?-?\d")),
    ("numeric reduction op", re.compile(r"\bredop[=:]\s*\"?-?\d")),
    ("root/peer -1 instead of -", re.compile(r"\b(root|peer)[=:]\s*-1\b")),
    ("stream 0 instead of default stream", re.compile(r"\bstream[= ]0x0\b")),
    ("NCCL version code", re.compile(r"\bnccl \d{4,}\b")),
    ("CUDA version code", re.compile(r"\bcuda (driver|runtime) \d{4,}\b")),
    # ncclResult_t 0..8 have names; an unknown value prints as its number.
    ("numeric async error", re.compile(r"\basync[_ ]error [0-8]\b")),
    # Time: ages, never raw CLOCK_MONOTONIC nanoseconds.
    ("raw monotonic time", re.compile(r"\bmono \d|\b\d+ ns\b|(?<![\w.])\d{10,}(?![\w.])")),
    ("blocked since a raw time", re.compile(r"\bblocked since \d")),
]

HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")


def problems(text, where="output"):
    """One line per rule violation in `text`: where, rule, the offending line."""
    out = []
    for line in text.splitlines():
        for name, pattern in TEXT_RULES:
            if pattern.search(line):
                out.append(f"{where}: {name}: {line.strip()[:200]}")
    return out


def hex_forms(texts):
    """Numbers printed in more than one hex form across `texts` (dict where -> text)."""
    forms = {}
    for where, text in texts.items():
        for token in HEX.findall(text):
            forms.setdefault(int(token, 16), {}).setdefault(token, where)
    return [f"one number in {len(spellings)} hex forms: " + ", ".join(f"{t} ({w})" for t, w in spellings.items())
            for spellings in forms.values() if len(spellings) > 1]


def json_strings(value):
    """Every string inside a JSON value: summaries, notes, titles, advice."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v)


def analysis_json_problems(report):
    """`analyze --json`: names next to every NCCL enum number, and grammar in its texts."""
    out = []
    if report.get("version", 0) < 2:
        out.append(f"analyze --json: schema version {report.get('version')}, expected >= 2 (names and ages)")
    for row in report.get("ranks", []):
        if row.get("has_dump") and "async_error_name" not in row:
            out.append(f"analyze --json: rank {row.get('rank')} has async_error without async_error_name")
    for fp in report.get("fingerprints", []):
        for cell in fp.get("by_rank", []):
            if cell.get("op") is not None and not ("datatype_name" in cell and "redop_name" in cell):
                out.append(f"analyze --json: fingerprint #{fp.get('seq')} rank {cell.get('rank')} without names")
    for row in report.get("p2p", []):
        if "datatype_name" not in row:
            out.append(f"analyze --json: p2p rank {row.get('rank')} without datatype_name")
    for s in json_strings(report):
        out += problems(s, "analyze --json")
    return out


# Each NCCL number of a dump's JSON and the field that must name it beside it.
DUMP_RECORD_NAMES = {"datatype": "datatype_name", "redop": "redop_name"}
DUMP_COMM_NAMES = {"async_error": "async_error_name"}
DUMP_ENVIRONMENT_NAMES = {"cuda_driver_version": "cuda_driver_version_text",
                          "cuda_runtime_version": "cuda_runtime_version_text",
                          "nccl_version": "nccl_version_text"}


def _missing_names(where, obj, names):
    """Numbers of `obj` without a non-empty, non-numeric name string beside them."""
    out = []
    for number, name in names.items():
        if number not in obj:
            continue
        text = obj.get(name)
        # ncclResult_t outside 0..8 has no name: NcclResultName prints its number (as the text does).
        unnamed = number == "async_error" and not 0 <= obj[number] <= 8
        if not isinstance(text, str) or not text or (re.fullmatch(r"-?\d+", text) and not unnamed):
            out.append(f"{where}: {number}={obj[number]!r} without its name in {name} (found {text!r})")
    return out


def dump_json_problems(dump, where="dump"):
    """A dump's `.json`: every datatype, reduction, async error and version has its name beside it,
    and its texts (verdict summary, ...) obey the text rules."""
    out = _missing_names(f"{where} environment", dump.get("environment", {}), DUMP_ENVIRONMENT_NAMES)
    for comm in dump.get("comms", []):
        at = f"{where} comm {comm.get('comm')}"
        out += _missing_names(at, comm, DUMP_COMM_NAMES)
        for record in comm.get("records", []):
            out += _missing_names(f"{at} #{record.get('seq')} {record.get('op')}", record, DUMP_RECORD_NAMES)
    for s in json_strings(dump.get("verdict", {})):
        out += problems(s, where)
    return out


def trace_problems(trace):
    """`trace`: span args name datatypes, ops, roots, peers and streams; labels are grammatical."""
    out = []
    for e in trace.get("traceEvents", []):
        args = e.get("args", {})
        if e.get("ph") == "X" and e.get("cat") == "collective":
            for key in ("datatype", "redop", "root", "peer", "stream"):
                if key in args and not isinstance(args[key], str):
                    out.append(f"trace: {e.get('name')}: args.{key} is {args[key]!r}, expected a name")
        for s in json_strings(args):
            out += problems(s, "trace")
    return out
