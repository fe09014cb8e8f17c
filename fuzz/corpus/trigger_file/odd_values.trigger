ncclwatch.trigger 1
incident=a=b
comm=zz
seq=-1
culprits=1,,x,99999999999,-3
others=
partial=2
pid=99999999999
summary=
unknown=1
no equals sign
