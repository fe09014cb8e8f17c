/* An empty library standing in for libncclwatch.so in `ncclwatch run` tests. */
int ncclwatch_fake_preload_marker(void) { return 0; }
