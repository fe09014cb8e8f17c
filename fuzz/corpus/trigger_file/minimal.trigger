ncclwatch.trigger 1
incident=x
