// The RAII Stream and Event wrappers.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "infinirt/runtime.hpp"

namespace infinirt {
namespace {

TEST(HandlesTest, AStreamIsCreatedUsedAndDestroyed) {
  infinirtStream_t raw = nullptr;
  {
    Stream stream;
    raw = stream.get();
    ASSERT_NE(raw, nullptr);
    std::vector<char> from(256, 1), to(256, 0);
    ASSERT_EQ(infinirtMemcpyAsync(to.data(), from.data(), from.size(), infinirtMemcpyHostToHost,
                                  stream.get()),
              infinirtSuccess);
    stream.synchronize();
    EXPECT_TRUE(stream.query());
    EXPECT_EQ(to, from);
  }
  EXPECT_EQ(infinirtStreamQuery(raw), infinirtErrorContextIsDestroyed);
  infinirtGetLastError();
}

TEST(HandlesTest, MovingAStreamMovesOwnership) {
  Stream first;
  infinirtStream_t raw = first.get();
  Stream second(std::move(first));
  EXPECT_EQ(first.get(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(second.get(), raw);
  Stream third;
  infinirtStream_t replaced = third.get();
  third = std::move(second);
  EXPECT_EQ(third.get(), raw);
  EXPECT_EQ(infinirtStreamQuery(replaced), infinirtErrorContextIsDestroyed);
  EXPECT_EQ(infinirtStreamQuery(raw), infinirtSuccess);
  infinirtGetLastError();
}

TEST(HandlesTest, UnknownFlagsAreAnError) {
  try {
    Stream stream(0x80);
    FAIL() << "no infinirt::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), infinirtErrorInvalidValue);
    EXPECT_NE(std::string(error.what()).find("flags=128"), std::string::npos) << error.what();
  }
}

TEST(HandlesTest, EventsRecordAndTime) {
  Stream stream;
  Event start, end;
  start.record(stream.get());
  std::vector<char> from(1 << 20, 3), to(1 << 20, 0);
  ASSERT_EQ(infinirtMemcpyAsync(to.data(), from.data(), from.size(), infinirtMemcpyHostToHost,
                                stream.get()),
            infinirtSuccess);
  end.record(stream.get());
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_GE(end.elapsedSince(start), 0.0f);
  stream.waitEvent(end.get());
  Event moved(std::move(end));
  EXPECT_EQ(end.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(moved.query());
}

TEST(HandlesTest, AnEventNeverRecordedCannotBeTimed) {
  Event start, end;
  end.record();
  end.synchronize();
  try {
    end.elapsedSince(start);
    FAIL() << "no infinirt::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), infinirtErrorInvalidResourceHandle);
  }
}

}  // namespace
}  // namespace infinirt
