// tools/exporter/gzip_compress.h: a gzip member that inflates back to the input.
#include <zlib.h>

#include <string>

#include <catch2/catch.hpp>

#include "tools/exporter/gzip_compress.h"

namespace ncclwatch::tools {
namespace {

std::string Gunzip(const std::string& gz) {
  z_stream s{};
  REQUIRE(inflateInit2(&s, 15 + 16) == Z_OK);  // gzip wrapper only
  std::string out(1 << 22, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  s.avail_in = static_cast<uInt>(gz.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  const int status = inflate(&s, Z_FINISH);
  out.resize(s.total_out);
  inflateEnd(&s);
  CHECK(status == Z_STREAM_END);
  return out;
}

}  // namespace

TEST_CASE("gzip: inflates back to the input, and an exposition shrinks to a fraction") {
  std::string exposition;
  for (int rank = 0; rank < 8; ++rank) {
    for (int comm = 0; comm < 256; ++comm) {
      exposition += "ncclwatch_comm_last_issued_seq{job=\"j\",host=\"node7\",comm=\"0x" + std::to_string(1000 + comm) +
                    "\",comm_rank=\"" + std::to_string(rank) + "\",rank=\"" + std::to_string(rank) +
                    "\",nranks=\"8\"} " + std::to_string(rank * 1000 + comm) + "\n";
    }
  }
  const auto gz = GzipCompress(exposition);
  REQUIRE(gz);
  CHECK(gz->substr(0, 2) == "\x1f\x8b");  // the gzip magic
  CHECK(Gunzip(*gz) == exposition);
  CHECK(gz->size() * 5 < exposition.size());
  const auto empty = GzipCompress("");
  REQUIRE(empty);
  CHECK(Gunzip(*empty).empty());
}

}  // namespace ncclwatch::tools
