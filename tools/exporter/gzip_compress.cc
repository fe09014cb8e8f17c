#include "tools/exporter/gzip_compress.h"

#include <zlib.h>

namespace ncclwatch::tools {

std::optional<std::string> GzipCompress(std::string_view data) {
  // zlib counts in 32 bits; an exposition is megabytes.
  if (data.size() > (1u << 30)) return std::nullopt;
  z_stream stream{};
  // windowBits 15 + 16: the gzip wrapper rather than zlib's own.
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return std::nullopt;
  std::string out(deflateBound(&stream, data.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  // deflateBound is enough for one Z_FINISH call over the whole input.
  const int status = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) return std::nullopt;
  return out;
}

}  // namespace ncclwatch::tools
