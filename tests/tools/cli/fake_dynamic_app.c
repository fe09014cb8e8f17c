/* Links "libnccl.so.2" dynamically. With the argument "wait" it blocks until its stdin
 * closes, so that a test can inspect it as a running process. */
#include <string.h>
#include <unistd.h>

int ncclAllReduce(void);

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "wait") == 0) {
    char c;
    while (read(0, &c, 1) > 0) {
    }
  }
  return ncclAllReduce();
}
