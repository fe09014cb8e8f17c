#include <nlohmann/json.hpp>

#include "core/analyze/report.h"
#include "core/format/hex.h"

namespace ncclwatch::analyze {
namespace {

using nlohmann::json;

json VerdictJson(const ReportedVerdict& v) {
  return json{{"kind", detect::ToString(v.kind)},
              {"comm", v.comm_hash ? json(format::FormatHex(v.comm_hash)) : json(nullptr)},
              {"nranks", v.nranks},
              {"seq", v.seq},
              {"op", v.op},
              {"ranks", v.ranks},
              {"other_ranks", v.other_ranks},
              {"summary", v.summary},
              {"source", v.source},
              {"resolved", v.resolved},
              {"resolved_after_ns", v.resolved_after_ns}};
}

// One object per rank, built in one go: a communicator may have 2^20 ranks.
json RanksJson(const Analysis& a) {
  json rows = json::array();
  rows.get_ref<json::array_t&>().reserve(a.ranks.size());
  for (const auto& r : a.ranks) {
    if (!r.has_dump) {
      rows.push_back(json{{"rank", r.rank}, {"has_dump", false}, {"state", r.state}});
      continue;
    }
    rows.push_back(json{{"rank", r.rank},
                        {"has_dump", true},
                        {"state", r.state},
                        {"global_rank", r.global_rank},
                        {"host", r.host},
                        {"pid", r.pid},
                        {"init_done", r.init_done},
                        {"last_joined", r.last_joined},
                        {"last_completed", r.last_completed},
                        {"async_error", r.async_error}});
  }
  return rows;
}

json FingerprintsJson(const Analysis& a) {
  json rows = json::array();
  for (const auto& row : a.fingerprints) {
    json cells = json::array();
    for (const auto& c : row.cells) {
      cells.push_back(c.known ? json{{"rank", c.rank}, {"op", c.op}, {"count", c.count}, {"datatype", c.datatype},
                                     {"redop", c.redop}, {"root", c.root}}
                              : json{{"rank", c.rank}, {"op", nullptr}});
    }
    rows.push_back(json{{"seq", row.seq}, {"differs", row.differs}, {"by_rank", std::move(cells)}});
  }
  return rows;
}

json P2PJson(const Analysis& a) {
  json rows = json::array();
  for (const auto& r : a.p2p) {
    rows.push_back(json{{"rank", r.rank}, {"op", r.op}, {"peer", r.peer}, {"seq", r.seq}, {"posted", r.posted},
                        {"complete", r.complete}, {"count", r.count}, {"datatype", r.datatype}});
  }
  return rows;
}

json StacksJson(const Analysis& a) {
  json groups = json::array();
  for (const auto& g : a.stacks) {
    json threads = json::array();
    for (const auto& t : g.threads) {
      threads.push_back(json{{"title", t.title},
                             {"python", t.python},
                             {"frames", t.frames},
                             {"hidden_frames", t.hidden_frames}});
    }
    groups.push_back(json{{"ranks", g.ranks},
                          {"where", g.where},
                          {"threads", std::move(threads)},
                          {"python_unavailable", g.python_unavailable}});
  }
  return groups;
}

}  // namespace

nlohmann::json RenderJsonReport(const Analysis& a) {
  json hints = json::array();
  for (const auto& h : a.hints) hints.push_back(json{{"id", h.id}, {"advice", h.advice}, {"evidence", h.evidence}});
  return json{{"schema", kAnalysisSchemaName},
              {"version", kAnalysisSchemaVersion},
              {"verdict", VerdictJson(a.verdict)},
              {"dumps_read", a.dumps_read},
              {"rejected", a.rejected},
              {"hosts", a.hosts},
              {"missing_ranks", a.missing_ranks},
              {"ranks", RanksJson(a)},
              {"fingerprints", FingerprintsJson(a)},
              {"p2p", P2PJson(a)},
              {"stacks", StacksJson(a)},
              {"culprits_without_stacks", a.culprits_without_stacks},
              {"hints", std::move(hints)},
              {"notes", a.notes}};
}

}  // namespace ncclwatch::analyze
