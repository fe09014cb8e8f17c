// Rule for kind "mismatch": see comm_rules.h.
#include <algorithm>
#include <set>

#include "core/detect/comm_rules.h"
#include "core/detect/evidence.h"

namespace ncclwatch::detect {
namespace {

// Ranks that issued the same thing at one #N, in rank order.
struct Faction {
  Fingerprint fingerprint;
  std::vector<int> ranks;
  uint64_t first_enqueue_ns = 0;
};

std::vector<Faction> FactionsAt(const CommGroup& group, uint64_t seq) {
  std::vector<Faction> factions;
  for (const CommMember& member : group.members) {
    const CollectiveRecordView* record = FindRecord(*member.comm, seq);
    if (record == nullptr) continue;
    Fingerprint fingerprint = FingerprintOf(*record);
    auto it = std::find_if(factions.begin(), factions.end(),
                           [&](const Faction& f) { return f.fingerprint == fingerprint; });
    if (it == factions.end()) {
      factions.push_back({fingerprint, {}, record->enqueue_ns});
      it = factions.end() - 1;
    }
    it->ranks.push_back(member.rank());
    if (record->enqueue_ns != 0 &&
        (it->first_enqueue_ns == 0 || record->enqueue_ns < it->first_enqueue_ns)) {
      it->first_enqueue_ns = record->enqueue_ns;
    }
  }
  return factions;
}

// The lowest #N on which visible ranks disagree, or 0.
uint64_t FirstDisputedSeq(const CommGroup& group) {
  std::set<uint64_t> seqs;
  for (const CommMember& member : group.members) {
    for (const CollectiveRecordView& record : member.comm->records) seqs.insert(record.seq);
  }
  for (uint64_t seq : seqs) {
    if (FactionsAt(group, seq).size() > 1) return seq;
  }
  return 0;
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
    text += "ranks " + FormatRanks(faction.ranks) + " " + FormatFingerprint(faction.fingerprint);
  }
  return text;
}

}  // namespace

std::optional<Verdict> CheckMismatch(const RuleContext& context) {
  uint64_t seq = FirstDisputedSeq(context.group);
  if (seq == 0) return std::nullopt;
  std::vector<Faction> factions = FactionsAt(context.group, seq);
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
  verdict.summary = "mismatch on comm " + FormatHash(context.group.comm_hash) + " at #" +
                    std::to_string(seq) + ": " + DescribeFactions(factions);
  if (!clear_majority) verdict.notes.push_back("no majority: every rank is named");
  return verdict;
}

}  // namespace ncclwatch::detect
