ncclwatch.trigger 1
incident=straggler-0xbf80ec3a3c9abaf7-7
kind=straggler
comm=0xbf80ec3a3c9abaf7
seq=7
op=AllReduce
culprits=1
others=0
partial=0
host=vm
pid=13049
summary=straggler on comm 0xbf80ec3a3c9abaf7: rank(s) [1] have not joined #7 AllReduce; rank(s) [0] joined it 1.1 s ago
