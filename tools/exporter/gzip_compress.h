// gzip (RFC 1952) of a response body, with zlib (Debian zlib1g-dev): Prometheus asks for it
// on every scrape (Accept-Encoding: gzip). The exporter's 1.1 MiB exposition of 8 ranks x 256
// communicators compresses to about a tenth (bench/runner/exporter_scrape.py).
#ifndef NCCLWATCH_TOOLS_EXPORTER_GZIP_COMPRESS_H_
#define NCCLWATCH_TOOLS_EXPORTER_GZIP_COMPRESS_H_

#include <optional>
#include <string>
#include <string_view>

namespace ncclwatch::tools {

// `data` as one gzip member, at zlib's fastest level (an exposition is repetitive text:
// level 1 already takes most of the gain, at a fraction of the CPU of the default level 6).
// nullopt when zlib fails (out of memory); never throws but std::bad_alloc.
std::optional<std::string> GzipCompress(std::string_view data);

}  // namespace ncclwatch::tools

#endif  // NCCLWATCH_TOOLS_EXPORTER_GZIP_COMPRESS_H_
