"""compare.py FR_TRACE NCCLWATCH_DUMP_JSON: Flight Recorder's entries of one rank next to
ncclwatch's records of the same rank, one line each, for the experiment in tools/README.md
("Matching Flight Recorder"). FR_TRACE is the pickle FR writes on a timeout
(TORCH_FR_DUMP_TEMP_FILE<rank>)."""
import json
import pickle
import sys

if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
    sys.exit(__doc__)
fr = pickle.load(open(sys.argv[1], "rb"))
print("FR process groups:", fr.get("pg_config"))
for e in fr.get("entries", []):
    print(f"FR pg {e.get('pg_id')} collective_seq_id {e.get('collective_seq_id')} p2p_seq_id {e.get('p2p_seq_id')} "
          f"{e.get('profiling_name')} {e.get('input_sizes')} {e.get('state')}")
for c in json.load(open(sys.argv[2]))["comms"]:
    print(f"ncclwatch comm {c['comm']} rank {c['rank']}/{c['nranks']}")
    for r in c["records"]:
        print(f"ncclwatch #{r['seq']} {r['op']} count={r['count']} peer={r['peer']} group={r['group']}")
