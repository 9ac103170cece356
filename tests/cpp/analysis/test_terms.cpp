// The shared engine's terms, one per equation (analysis/src/rta_terms.hpp, join_wait.hpp,
// workload.hpp), each against a value computed by hand (the arithmetic is in the comments),
// and the fixed-point search of fixed_point.hpp against its brute-force cross-check.
#include <gtest/gtest.h>

#include <random>
#include <vector>

// This file's searches are cross-checked whatever the build type.
#ifndef CHAINRT_CHECK_FIXED_POINT
#define CHAINRT_CHECK_FIXED_POINT 1
#endif
#include "fixed_point.hpp"
#include "join_wait.hpp"
#include "rta_terms.hpp"
#include "workload.hpp"

using namespace chainrt;
using namespace chainrt::detail;

TEST(Terms, CarryInWorkloadBertognaCirineiAndMelani) {
  // span = x + R − C = 50 + 20 − 10 = 60: N = 2 whole jobs, rest 0: 2·10 + min(10, 0) = 20.
  EXPECT_EQ(carry_in_workload(50, 10, 20, 30), 20);
  // x = 55: span 65, N = 2, rest 5: 20 + 5 = 25.
  EXPECT_EQ(carry_in_workload(55, 10, 20, 30), 25);
  // p = 2: span = 55 + 20 − ⌊10/2⌋ = 70, N = 2, rest 10: 20 + min(10, 2·10) = 30.
  EXPECT_EQ(carry_in_workload(55, 10, 20, 30, 2), 30);
  // A window shorter than the job's room: span = 2 + 3 − 10 < 0: nothing.
  EXPECT_EQ(carry_in_workload(2, 10, 3, 30), 0);
}

TEST(Terms, EdfInterferenceBertognaCiriniLipari) {
  // Dk = 100, T = 30: q = 3, r = 10; slack D − R = 30 − 20 = 10: r − 10 = 0, not > 0: 3 jobs.
  EXPECT_EQ(edf_jobs(100, 30, 30, 20), 3);
  // R = 25: slack 5, r − 5 = 5 > 0: the earliest job counts too: 4.
  EXPECT_EQ(edf_jobs(100, 30, 30, 25), 4);
  // Its work: 3·5 + min(5, 1·5) = 20.
  EXPECT_EQ(edf_interference(5, 100, 30, 30, 25), 20);
  // C = 8 on p = 2 threads: 3·8 + min(8, 2·5) = 32.
  EXPECT_EQ(edf_interference(8, 100, 30, 30, 25, 2), 32);
}

TEST(Terms, EdfPaperTheoremOneAndTwo) {
  EXPECT_EQ(rta_eq9_response(100, 7), 106);                 // Eq. 9: x − 1 + e_last
  EXPECT_EQ(rta_eq4_5_room(50, 2, 30), 50);                 // Eq. 4/5: min(w·(x − E' − S), W) = min(60, 50)
  EXPECT_EQ(rta_eq4_5_room(kUnbounded, 2, 30), 60);         // no workload bound: the cap
  EXPECT_EQ(rta_eq6_psi(10, 7, 5), 15);                     // Eq. 6: hp + min(LP_cross, room)
  const PsiShare s = rta_eq6_share(10, 8, 15);              // min(I, M) = 10, min(L, M − 10) = 5
  EXPECT_EQ(s.hp, 10);
  EXPECT_EQ(s.room, 5);
  EXPECT_EQ(rta_eq10_group_blocking({1, 2}, {5, 3}), 11);   // Eq. 10: 1·5 + 2·3
  EXPECT_EQ(rta_eq11_start_demand(10, 2, 3, 4, 21, 4), 25); // Eq. 11: 10+2+3+4 + ⌊21/4⌋ + 1
  EXPECT_EQ(rta_phase_start_demand(10, 2, 3, 4, 6, 7), 33); // 10+2+3+4+6+7+1
  EXPECT_EQ(lame_thm1_demand(2, 10, 1, 2, 3, 4), 33);       // LaME Thm 1: 2·(10+1+2) + 3 + 4
}

TEST(Terms, CountedWorkThroughTheGroupOrTheReadyQueue) {
  // (group_outranks, only_own_group, on_segment_threads, queue_outranks)
  EXPECT_TRUE(counted_work(true, false, false, false));   // outranks J inside one of J's groups
  EXPECT_TRUE(counted_work(true, true, true, false));     // ... J's only group
  // A group-mate ranked below J's callbacks of the group that outranks J's lowest callback in
  // the ready queue, on J's threads: it runs ahead of J's earlier callbacks (picas-st
  // counterexample) — counted, although the group does not count it.
  EXPECT_TRUE(counted_work(false, false, true, true));
  EXPECT_FALSE(counted_work(false, true, true, true));    // all of J's segment in its group: time (3) only
  EXPECT_FALSE(counted_work(false, false, false, true));  // on other threads: never time (4)
  EXPECT_FALSE(counted_work(false, false, true, false));  // ranked below J: blocking only
}

TEST(Terms, EligibilityEventsAndBlockers) {
  EXPECT_EQ(full_eligibility_events(4, 1, false), 2);       // release + one delayed hop
  EXPECT_EQ(full_eligibility_events(4, 1, true, 2), 4);     // completion form on 2 threads: every callback
  EXPECT_EQ(full_eligibility_events(4, 1, true, 1), 2);     // ... on one: release + the delay's end
  EXPECT_EQ(quiet_boundaries(4, 1, false), 2);              // 4 − 1 − 1
  EXPECT_EQ(quiet_boundaries(4, 1, true, 2), 0);
  EXPECT_EQ(quiet_boundaries(4, 1, true, 1), 2);
  EXPECT_EQ(charged_eligibility_events(2, 3, 4), 4);        // min(2 + 3, 4)
  EXPECT_EQ(charged_eligibility_events(2, 3, 10), 5);
  EXPECT_EQ(blocker_slots(2, 3, 4), 17);                    // 2·4 + 3·3

  const std::vector<Duration> b{5, 3}, pre = prefix_sums(b), c{4}, cpre = prefix_sums(c);
  EXPECT_EQ(pre, (std::vector<Duration>{0, 5, 8}));
  BlockerRun r1{&b, &pre, 2, 3};  // 5, 5, 3
  EXPECT_EQ(r1.at(0), 5);
  EXPECT_EQ(r1.at(1), 5);
  EXPECT_EQ(r1.at(2), 3);
  EXPECT_EQ(r1.sum(), 13);        // 2·5 + 1·3
  BlockerRun r2{&c, &cpre, 1, 1};  // 4
  std::vector<Duration> heads;
  EXPECT_EQ(largest_blockers_sum({r1, r2}, 3, 1'000, heads), 14);  // 5 + 5 + 4
  EXPECT_EQ(largest_blockers_sum({r1, r2}, 3, 6, heads), 10);      // stops once >= 6: 5 + 5
  std::vector<Duration> firsts{1, 7, 3, 5};
  EXPECT_EQ(mth_largest_blocker(firsts, 2), 5);
  EXPECT_EQ(mth_largest_blocker(firsts, 5), 0);  // fewer than m
}

TEST(Terms, ConcaveEnvelopeOfTheCarryInWorkload) {
  // At x0 = 55 (C 10, R 20, T 30): v0 = W(55) = 25; span 65, 65 mod 30 = 5: room 10 − 5 = 5.
  const EnvelopePiece p = envelope_piece(55, 10, 20, 30, 0, false, 0);
  EXPECT_EQ(p.v0, 25);
  EXPECT_EQ(p.room, 5);
  EXPECT_EQ(p.at(3), 28);                   // = W(58): span 68, 2·10 + 8
  EXPECT_EQ(carry_in_workload(58, 10, 20, 30), 28);
  EXPECT_EQ(p.at(10), 30);                  // capped by the room
  EXPECT_LE(p.at(40), carry_in_workload(95, 10, 20, 30));  // below the workload beyond it
  // The least point of an up-set: x >= 37 from 10 within 100; none within 30: 31.
  auto ok = [](Duration x) { return x >= 37; };
  EXPECT_EQ(least_in_upset(ok, 10, 100, 1), 37);
  EXPECT_EQ(least_in_upset(ok, 10, 30, 1), 31);
}

TEST(Terms, JoinWaitAndFusionRounds) {
  EXPECT_EQ(join_own_overwrite(100, 12), 112);      // J1: T + Rpre
  EXPECT_EQ(join_other_arrival(100, 15, 4), 111);   // J2: T' + R'pre − B'pre
  EXPECT_EQ(member_gap(100, 12, 4), 92);            // G: T − (Rpre − Bpre)
  EXPECT_TRUE(rounds_pair(30, 5, 100));             // P: 30 − 5 < 100
  EXPECT_FALSE(rounds_pair(105, 5, 100));           // 100, not < 100
  EXPECT_EQ(round_chain_bound(24, 10), 14);         // from the chain's own release, 10 after ρ
}

TEST(Terms, OffsetBasedInterference) {
  // Equal periods: one relative release; 60 ms against 100 ms: gcd 20, so 0, 20, 40 (mod 60).
  EXPECT_EQ(relative_phases(0, 100, 0, 100), (std::vector<Duration>{0}));
  EXPECT_EQ(relative_phases(30, 100, 0, 100), (std::vector<Duration>{30}));
  EXPECT_EQ(relative_phases(0, 60, 0, 100), (std::vector<Duration>{0, 20, 40}));
  EXPECT_EQ(relative_phases(10, 60, 0, 100), (std::vector<Duration>{10, 30, 50}));
  EXPECT_EQ(relative_phases(5, 100, 0, 100), (std::vector<Duration>{5}));
  EXPECT_TRUE(relative_phases(0, 1'000'003, 0, 1'000'033).empty());  // gcd 1: a million phases
  // C 10, R 20, T 100 in J's window [0, 30): released with J (δ 0): its first instance, 10;
  // δ 50: none of its windows [50, 70], [-50, -30] meets [0, 30): 0; δ 90: the one released at
  // -10 runs in [-10, 10], 10 of it inside.
  EXPECT_EQ(phased_workload(30, 10, 20, 100, 1, {0}), 10);
  EXPECT_EQ(phased_workload(30, 10, 20, 100, 1, {50}), 0);
  EXPECT_EQ(phased_workload(30, 10, 20, 100, 1, {90}), 10);
  EXPECT_EQ(phased_workload(30, 10, 20, 100, 1, {0, 50}), 10);  // the worst phase
  // [0, 200): the instances at 0 and 100, 20 — the carry-in workload counts 30 (span 210: 2 + rest).
  EXPECT_EQ(phased_workload(200, 10, 20, 100, 1, {0}), 20);
  EXPECT_EQ(carry_in_workload(200, 10, 20, 100), 30);
  // On p = 2 threads: the instance at -10 may do 2·10 inside [0, 10): min(15, 20) = 15.
  EXPECT_EQ(phased_workload(30, 15, 20, 100, 2, {90}), 15);
}

TEST(Terms, PhasedWorkloadClosedFormByHand) {
  // C 10, R 20, T 100, δ 30, window [0, 450): no carry-in (the release at −70 ends at −50);
  // body: h − R = 430 >= δ, n_body = ⌊(430 − 30)/100⌋ + 1 = 5 (releases 30 … 430, each window
  // inside [0, 450]) → 5·10 = 50; no carry-out (the next release, 530, is after h).
  EXPECT_EQ(phased_workload_at(450, 10, 20, 100, 1, 30), 50);
  // h 445: 430's window [430, 450] meets [0, 445) for 15: min(10, 15) = 10 — still 50; h 435:
  // 5 of it: 45.
  EXPECT_EQ(phased_workload_at(445, 10, 20, 100, 1, 30), 50);
  EXPECT_EQ(phased_workload_at(435, 10, 20, 100, 1, 30), 45);
  // R 250 > T (three instances may overlap), C 30, p 2, δ 0, h 300: carry-in releases -100
  // ([−100, 150]: 150 inside → min(30, 300) = 30) and -200 ([−200, 50]: 50 → 30); body: 0, and
  // h − R = 50 < 100: only release 0 ([0, 250]) → 30; carry-out 100 ([100, 350]: 200 → 30) and
  // 200 ([200, 450]: 100 → 30): 150 in all.
  EXPECT_EQ(phased_workload_at(300, 30, 250, 100, 2, 0), 150);
  // δ outside [0, T) is the same phase: δ −70 ≡ 30.
  EXPECT_EQ(phased_workload_at(435, 10, 20, 100, 1, -70), 45);
  EXPECT_EQ(phased_workload_at(0, 10, 20, 100, 1, 0), 0);
}

// The closed form is the walk over every instance, term by term (the same sum, grouped): equal on
// random inputs, including windows shorter than R, R > T, p > 1 and C > p·R.
namespace {
// A random offset-based workload term: period in [1, max_T], R up to r_mult·T, C up to R + 10
// (at least c_min), 1-3 threads, a window up to h_mult·T (at least h_min), 1-4 phases.
struct PhasedInput {
  Duration T, R, C, p, h;
  std::vector<Duration> deltas;
};
PhasedInput random_phased_input(std::mt19937_64& rng, Duration max_T, Duration r_mult, Duration h_mult, Duration c_min,
                                Duration h_min) {
  auto u = [&](Duration lo, Duration hi) { return std::uniform_int_distribution<Duration>(lo, hi)(rng); };
  PhasedInput in;
  in.T = u(1, max_T);
  in.R = u(0, r_mult * in.T);
  in.C = u(c_min, in.R + 10);
  in.p = u(1, 3);
  in.h = u(h_min, h_mult * in.T);
  for (Duration n = u(1, 4); n > 0; --n) in.deltas.push_back(u(0, in.T - 1));
  return in;
}
}  // namespace

TEST(Terms, PhasedWorkloadClosedFormEqualsTheWalkOverEveryInstance) {
  std::mt19937_64 rng(27);
  for (int i = 0; i < 200000; ++i) {
    const PhasedInput x = random_phased_input(rng, 1000, 4, 30, 0, 0);
    ASSERT_EQ(phased_workload(x.h, x.C, x.R, x.T, x.p, x.deltas), phased_workload_walk(x.h, x.C, x.R, x.T, x.p, x.deltas))
        << "h " << x.h << " C " << x.C << " R " << x.R << " T " << x.T << " p " << x.p;
  }
}

TEST(Terms, PhasedPieceByHand) {
  // C 10, R 20, T 100, δ 30, h0 435: 45 (above); the instance released at 430 straddles 435 with
  // 5 of its 10 done: room 5 at slope 1 — 46 at +1, 50 from +5 on (its window ends at 450).
  const EnvelopePiece e = phased_piece(435, 10, 20, 100, 1, {30});
  EXPECT_EQ(e.v0, 45);
  EXPECT_EQ(e.room, 5);
  EXPECT_EQ(e.at(1), 46);
  EXPECT_EQ(e.at(100), 50);
  // Between two instances (h0 460: 430's window over, the next release at 530): no growth.
  EXPECT_EQ(phased_piece(460, 10, 20, 100, 1, {30}).room, 0);
  // min_piece: (10 + min(5, d)) and (12 + min(1, 2d)) → 10 + min(3, d).
  const EnvelopePiece m = min_piece(EnvelopePiece{10, 5, 1}, EnvelopePiece{12, 1, 2});
  EXPECT_EQ(m.v0, 10);
  EXPECT_EQ(m.room, 3);
  EXPECT_EQ(m.par, 1);
}

// The jump's envelopes (chain_rta.cpp) must stay below the terms they stand for: phased_piece
// below the offset-based workload, min_piece below both of its pieces, each equal at d = 0.
TEST(Terms, PhasedPieceAndMinPieceStayBelowTheirTerms) {
  std::mt19937_64 rng(271);
  auto u = [&](Duration lo, Duration hi) { return std::uniform_int_distribution<Duration>(lo, hi)(rng); };
  for (int i = 0; i < 20000; ++i) {
    const PhasedInput x = random_phased_input(rng, 200, 3, 10, 1, 1);
    const Duration T = x.T, R = x.R, C = x.C, p = x.p, h0 = x.h;
    const std::vector<Duration>& deltas = x.deltas;
    const EnvelopePiece e = phased_piece(h0, C, R, T, p, deltas);
    const EnvelopePiece c = envelope_piece(h0, C, R, T, 0, false, 0, p);
    const EnvelopePiece m = min_piece(e, c);
    ASSERT_EQ(e.at(0), phased_workload(h0, C, R, T, p, deltas));
    ASSERT_EQ(m.at(0), std::min(e.at(0), c.at(0)));
    for (Duration d = 0; d <= 3 * T; d += u(1, 7)) {
      const Duration w = phased_workload(h0 + d, C, R, T, p, deltas);
      ASSERT_LE(e.at(d), w) << "h0 " << h0 << " d " << d << " C " << C << " R " << R << " T " << T;
      ASSERT_LE(m.at(d), std::min(w, c.at(d)));
    }
  }
}

TEST(FixedPoint, LeastFixedPointAndItsBruteForceCheck) {
  // f(x) = 10 + ⌊x/4⌋: the least x >= 1 with f(x) <= x is 13 (f(12) = 13 > 12, f(13) = 13).
  auto f = [](Duration x) { return 10 + x / 4; };
  const auto r = least_fixed_point(1, 1'000, f);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r.value, 13);
  EXPECT_EQ(brute_force_fixed_point(1, 1'000, f), 13);
  // None below 12: the limit is exceeded (and the cross-check agrees: none in [1, 12]).
  const auto none = least_fixed_point(1, 12, f);
  EXPECT_FALSE(none);
  EXPECT_EQ(none.failure, SearchFailure::ExceedsLimit);
  // A sampled scan (range beyond kBruteForceExhaustive) still finds a fixed point near the end.
  auto g = [](Duration x) { return x < 5'000'000 ? x + 1 : x; };
  EXPECT_EQ(*least_fixed_point(1, 10'000'000, g, [](Duration, Duration) { return Duration{5'000'000}; }).value,
            5'000'000);
}

TEST(FixedPointDeathTest, AJumpThatSkipsAFixedPointIsCaught) {
  // The jump claims nothing in [fx, 500) is a fixed point, but 13 is: the cross-check aborts.
  auto f = [](Duration x) { return 10 + x / 4; };
  EXPECT_DEATH(least_fixed_point(1, 1'000, f, [](Duration, Duration) { return Duration{500}; }), "brute force");
}
