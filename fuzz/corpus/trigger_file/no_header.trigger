incident=x
kind=hang
