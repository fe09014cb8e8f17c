"""show.py DIR: per rank, Flight Recorder's entries and ncclwatch's records side by side."""
import glob, json, os, pickle, sys

d = sys.argv[1]
for fr_path in sorted(glob.glob(os.path.join(d, "fr_rank*.json"))):
    rank = int(fr_path.split("fr_rank")[1].split(".")[0])
    raw = open(fr_path, "rb").read()
    fr = pickle.loads(raw) if raw[:1] == b"\x80" else json.loads(raw)
    print(f"==== rank {rank}: FR keys {sorted(fr)}")
    for e in fr.get("entries", []):
        print("FR pg=%s %-28s coll=%s p2p=%s op_id=%s p2p=%s sizes=%s state=%s" % (
            e.get("pg_id"), e.get("profiling_name"), e.get("collective_seq_id"), e.get("p2p_seq_id"),
            e.get("op_id"), e.get("is_p2p"), e.get("input_sizes"), e.get("state")))
    for nw in glob.glob(os.path.join(d, "nw", f"rank{rank}-*.json")):
        dump = json.load(open(nw))
        for c in dump["comms"]:
            print(f"NW comm {c['comm']} rank {c['rank']}/{c['nranks']} last_enq={c['last_enqueued_seq']}")
            for r in c["records"]:
                print(f"NW   #{r['seq']} {r['op']} count={r['count']} peer={r['peer']} group={r['group']}")
