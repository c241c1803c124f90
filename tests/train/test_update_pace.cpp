// The pacing rule every time-limited trainer (Doppler's stages, Placeto, GDP) follows, on a
// hand-driven clock: each decision below is computed by hand from the rule in update_pace.hpp.
#include <gtest/gtest.h>

#include "train/update_pace.hpp"

namespace doppler {
namespace {

using detail::UpdatePace;

TEST(UpdatePace, TheFirstUpdateAlwaysStartsThenThePaceOfTheLastDecides) {
  double now = 0;
  UpdatePace pace(10, [&] { return now; });
  now = 50;  // already far past the limit: a run still needs one batch
  EXPECT_TRUE(pace.may_start_update());
  now = 0;
  pace.record(2, 1);  // an update of 3 s
  now = 7;
  EXPECT_TRUE(pace.may_start_update());  // 7 + 3 = 10 <= 10
  pace.expect_greedy(0.5);
  EXPECT_FALSE(pace.may_start_update());  // 7 + 3 + 0.5 > 10
  now = 6.5;
  EXPECT_TRUE(pace.may_start_update());
}

TEST(UpdatePace, TheFirstLearningStepIsGuessedFromItsRolloutsThenMeasured) {
  double now = 1;
  UpdatePace pace(10, [&] { return now; });
  // No ratio yet: kFirstLearnRatio (8) x 1 s of rollouts from 1 s ends at 9 s, 2 s ends at 17 s.
  EXPECT_FALSE(pace.learning_overruns(1));
  EXPECT_TRUE(pace.learning_overruns(2));
  pace.record(2, 1);                        // measured: learning takes half its rollouts
  EXPECT_FALSE(pace.learning_overruns(2));  // 1 + 0.5 x 2 = 2 <= 10
  now = 9.2;
  EXPECT_TRUE(pace.learning_overruns(2));     // 9.2 + 1 > 10
  pace.record(4, 0);                          // a cut update learns nothing: the ratio stands
  EXPECT_FALSE(pace.learning_overruns(1.5));  // 9.2 + 0.75 = 9.95
}

TEST(UpdatePace, OnceLearningDoesNotFitTheRunOnlySamples) {
  double now = 1;
  UpdatePace pace(10, [&] { return now; });
  EXPECT_TRUE(pace.may_learn(1));  // 1 + 8 x 1 = 9 <= 10
  pace.record(1, 2);               // measured: learning takes twice its rollouts
  now = 6;
  EXPECT_FALSE(pace.may_learn(3));  // 6 + 2 x 3 = 12 > 10
  pace.record(3, 0);
  now = 6.5;
  EXPECT_TRUE(pace.may_start_update());  // a batch of sampling fits: 6.5 + 3 <= 10
  EXPECT_FALSE(pace.may_learn(0.1));     // though this one's step would (6.5 + 0.2): less is left
}

TEST(UpdatePace, TheGreedyPlacementFitsOnlyInWhatIsLeft) {
  double now = 9;
  UpdatePace pace(10, [&] { return now; });
  pace.expect_greedy(0.9);
  EXPECT_TRUE(pace.may_place_greedily());
  pace.expect_greedy(1.1);
  EXPECT_FALSE(pace.may_place_greedily());
  EXPECT_TRUE(pace.within_limit());
  now = 10.01;
  EXPECT_FALSE(pace.within_limit());
}

TEST(UpdatePace, AResumedRunsNextUpdateIsNotExempt) {
  double now = 12;  // a stage resumed from a checkpoint past its 10 s
  EXPECT_FALSE(UpdatePace(
                   10, [&] { return now; }, 3)
                   .may_start_update());
  EXPECT_TRUE(UpdatePace(10, [&] { return now; }).may_start_update());
}

TEST(UpdatePace, WithoutALimitEveryQuestionAnswersGoOn) {
  double now = 1e9;
  UpdatePace pace(
      0, [&] { return now; }, 5);
  pace.record(1, 100);
  pace.expect_greedy(1e6);
  EXPECT_TRUE(pace.may_start_update());
  EXPECT_FALSE(pace.learning_overruns(1e6));
  EXPECT_TRUE(pace.may_place_greedily());
  EXPECT_TRUE(pace.within_limit());
}

}  // namespace
}  // namespace doppler
