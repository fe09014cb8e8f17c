// Rule for kind "mismatch": see comm_rules.h.
#include <algorithm>

#include "core/detect/comm_rules.h"
#include "core/detect/evidence.h"

namespace ncclwatch::detect {
namespace {

// Ranks that issued the same thing at one #N, in rank order.
struct Faction {
  Fingerprint fingerprint;
  std::vector<int> ranks;
  uint64_t first_enqueue_ns = 0;
  bool captured = false;  // some rank captured its op into a CUDA graph
};

// One rank's record of one #N: its first record of that number (a hostile dump repeating a
// number a million times counts once).
struct Entry {
  uint64_t seq;
  int rank;
  const RecordFacts* record;
};

// Every member's records, first of each number, sorted by (seq, rank): O(R log R) for R
// records in all, so a dump of millions of records cannot make the rule quadratic.
std::vector<Entry> EntriesBySeq(const CommGroup& group) {
  std::vector<Entry> entries;
  for (const CommMember& member : group.members) {
    const size_t first = entries.size();
    for (const RecordFacts& record : member.comm->records) entries.push_back({record.seq, member.rank(), &record});
    auto begin = entries.begin() + static_cast<std::ptrdiff_t>(first);
    std::stable_sort(begin, entries.end(), [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
    entries.erase(std::unique(begin, entries.end(), [](const Entry& a, const Entry& b) { return a.seq == b.seq; }),
                  entries.end());
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
  return entries;
}

// The factions of entries [begin, end), which all hold one #N, in rank order.
std::vector<Faction> FactionsOf(std::vector<Entry>::const_iterator begin, std::vector<Entry>::const_iterator end) {
  std::vector<Faction> factions;
  for (auto entry = begin; entry != end; ++entry) {
    const RecordFacts& record = *entry->record;
    Fingerprint fingerprint = FingerprintOf(record);
    auto it = std::find_if(factions.begin(), factions.end(),
                           [&](const Faction& f) { return f.fingerprint == fingerprint; });
    if (it == factions.end()) {
      factions.push_back({fingerprint, {}, record.enqueue_ns});
      it = factions.end() - 1;
    }
    it->ranks.push_back(entry->rank);
    it->captured = it->captured || record.captured;
    if (record.enqueue_ns != 0 && (it->first_enqueue_ns == 0 || record.enqueue_ns < it->first_enqueue_ns)) {
      it->first_enqueue_ns = record.enqueue_ns;
    }
  }
  for (Faction& faction : factions) std::sort(faction.ranks.begin(), faction.ranks.end());
  return factions;
}

// The factions at the lowest #N on which ranks disagree; empty when they never do.
std::vector<Faction> FirstDispute(const CommGroup& group, uint64_t* seq) {
  const std::vector<Entry> entries = EntriesBySeq(group);
  for (auto begin = entries.begin(); begin != entries.end();) {
    auto end = std::find_if(begin, entries.end(), [&](const Entry& e) { return e.seq != begin->seq; });
    const bool disputed = std::any_of(begin, end, [&](const Entry& e) {
      return !(FingerprintOf(*e.record) == FingerprintOf(*begin->record));
    });
    if (disputed) {
      *seq = begin->seq;
      return FactionsOf(begin, end);
    }
    begin = end;
  }
  return {};
}

uint64_t EarliestEnqueue(const std::vector<Faction>& factions) {
  uint64_t earliest = 0;
  for (const Faction& faction : factions) {
    uint64_t t = faction.first_enqueue_ns;
    if (t != 0 && (earliest == 0 || t < earliest)) earliest = t;
  }
  return earliest;
}

std::string DescribeFactions(const std::vector<Faction>& factions) {
  std::string text;
  for (const Faction& faction : factions) {
    if (!text.empty()) text += " vs ";
    text += FormatRanks(faction.ranks) + " " + FormatFingerprint(faction.fingerprint);
  }
  return text;
}

}  // namespace

std::optional<Verdict> CheckMismatch(const RuleContext& context) {
  uint64_t seq = 0;
  std::vector<Faction> factions = FirstDispute(context.group, &seq);
  if (factions.empty()) return CheckCaptureMismatch(context);
  // Largest faction first; ties keep rank order, so the faction holding the lowest rank
  // is the reference.
  std::stable_sort(factions.begin(), factions.end(), [](const Faction& a, const Faction& b) {
    return a.ranks.size() > b.ranks.size();
  });
  bool clear_majority = factions[0].ranks.size() > factions[1].ranks.size();

  Verdict verdict = StartVerdict(VerdictKind::kMismatch, context.group, seq);
  for (size_t i = 0; i < factions.size(); ++i) {
    bool blamed = i > 0 || !clear_majority;
    auto& target = blamed ? verdict.culprit_ranks : verdict.other_ranks;
    target.insert(target.end(), factions[i].ranks.begin(), factions[i].ranks.end());
  }
  std::sort(verdict.culprit_ranks.begin(), verdict.culprit_ranks.end());
  // The op is what the lowest culprit issued (an extra Broadcast reads as "Broadcast"), the
  // same convention as `ncclwatch analyze`.
  for (const Faction& faction : factions) {
    if (std::find(faction.ranks.begin(), faction.ranks.end(), verdict.culprit_ranks.front()) != faction.ranks.end()) {
      verdict.op = faction.fingerprint.op;
    }
  }
  verdict.since_ns = EarliestEnqueue(factions);
  // An op captured into a CUDA graph disagrees at capture, and at every replay after it.
  const bool captured = std::any_of(factions.begin(), factions.end(), [](const Faction& f) { return f.captured; });
  verdict.summary = std::string(captured ? "mismatch at capture on comm " : "mismatch on comm ") +
                    FormatHash(context.group.comm_hash) + " at #" + std::to_string(seq) + ": " +
                    DescribeFactions(factions);
  if (captured) {
    verdict.notes.push_back("captured into a CUDA graph: every replay of the graph runs different collectives on "
                            "different ranks");
  }
  if (!clear_majority) verdict.notes.push_back("no majority: every rank is named");
  return verdict;
}

}  // namespace ncclwatch::detect
