// cli/small_alloc.cpp, the ringsim program's operator new/delete, linked into
// this test program the same way: small blocks return to their size class's
// list and come back from it, every block is aligned as malloc's, large and
// nothrow allocations pass through, and containers keep their contents
// through heavy churn.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <new>
#include <random>
#include <string>
#include <vector>

namespace {

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

TEST(SmallAlloc, AFreedBlockComesBackForItsSizeClass) {
#ifdef RINGSIM_SANITIZER_BUILD
  GTEST_SKIP() << "sanitizer builds keep the library's operators";
#endif
  void* a = ::operator new(40);
  ::operator delete(a);
  void* b = ::operator new(48);  // 33..48 bytes: the same class
  EXPECT_EQ(a, b);
  void* c = ::operator new(40);  // the list is empty again: a new block
  EXPECT_NE(c, b);
  void* d = ::operator new(49);  // the next class has a list of its own
  ::operator delete(c);
  EXPECT_NE(d, c);
  ::operator delete(b);
  ::operator delete(d);
}

TEST(SmallAlloc, EveryBlockIsAlignedAndWritable) {
  std::vector<char*> blocks;
  for (std::size_t n = 0; n <= 600; ++n) {
    char* p = new char[n + 1];
    EXPECT_TRUE(aligned16(p)) << n;
    for (std::size_t i = 0; i <= n; ++i) p[i] = static_cast<char>(n + i);
    blocks.push_back(p);
  }
  for (std::size_t n = 0; n < blocks.size(); ++n) {
    for (std::size_t i = 0; i <= n; ++i) ASSERT_EQ(blocks[n][i], static_cast<char>(n + i)) << n;
    delete[] blocks[n];
  }
}

TEST(SmallAlloc, LargeAndNothrowBlocks) {
  auto* big = new std::uint64_t[1 << 17];  // 1 MiB: straight from malloc
  EXPECT_TRUE(aligned16(big));
  for (std::size_t i = 0; i < (1 << 17); ++i) big[i] = i * 7;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < (1 << 17); ++i) sum += big[i];
  EXPECT_EQ(sum, 7ull * ((1ull << 17) * ((1ull << 17) - 1) / 2));
  delete[] big;
  void* p = ::operator new(100, std::nothrow);
  ASSERT_NE(p, nullptr);
  ::operator delete(p, std::nothrow);
}

TEST(SmallAlloc, ContainersKeepTheirContentsThroughChurn) {
  std::mt19937 rng(7);
  std::map<int, std::string> m;
  for (int i = 0; i < 200000; ++i) {
    const int k = static_cast<int>(rng() % 5000);
    if (rng() % 3 == 0)
      m.erase(k);
    else
      m[k] = std::string(static_cast<std::size_t>(k % 97), static_cast<char>('a' + k % 26));
  }
  EXPECT_FALSE(m.empty());
  for (const auto& [k, v] : m)
    ASSERT_EQ(v, std::string(static_cast<std::size_t>(k % 97), static_cast<char>('a' + k % 26)));
}

}  // namespace
