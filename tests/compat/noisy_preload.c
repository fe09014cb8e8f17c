/* A preload that is not transparent: it adds a line to the job's stdout, as a hook that
 * changed a result would change the probe's output. scripts/compat must call it a
 * difference (tests/compat/self_check.sh). */
#include <stdio.h>

__attribute__((constructor)) static void SayHello(void) { printf("noisy preload was here\n"); }
