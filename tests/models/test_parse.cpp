#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <string>

#include "models/core/errors.hpp"
#include "models/core/parse.hpp"

using namespace ringsim;

constexpr std::int64_t kMax = std::int64_t{1} << 62;

TEST(Parse, CountAcceptsPlainAndBinarySuffixes) {
  EXPECT_EQ(parse_count("--x", "4096", 1, 1 << 30), 4096);
  EXPECT_EQ(parse_count("--x", "128K", 1, 1 << 30), 131072);
  EXPECT_EQ(parse_count("--x", "1M", 1, 1 << 30), 1048576);
  // T = 2^40, as K/M/G are binary: 15T = 15 x 1,099,511,627,776.
  EXPECT_EQ(parse_count("--x", "15T", 1, std::int64_t{1} << 50), 16492674416640);
  EXPECT_THROW(parse_count("--x", "1T", 1, (std::int64_t{1} << 40) - 1), InputError);
}

TEST(Parse, CountRejectsJunkSignsExponentsAndRange) {
  for (const char* bad : {"", "abc", "-3", "+3", "1e30", "1.5", "0x10", "12abc", "K", " 5",
                          "99999999999999999999999"})
    EXPECT_THROW(parse_count("--devices", bad, 1, 1 << 20), InputError) << bad;
  EXPECT_THROW(parse_count("--devices", "0", 1, 1 << 20), InputError);
  EXPECT_THROW(parse_count("--devices", "2M", 1, 1 << 20), InputError);
}

TEST(Parse, ErrorNamesFlagAndRange) {
  try {
    parse_count("--devices", "0", 1, 1048576);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "--devices: expected an integer in [1, 1048576] (binary suffix K/M/G/T allowed), got '0'");
  }
}

TEST(Parse, RealRejectsNanInfHexAndRange) {
  EXPECT_DOUBLE_EQ(parse_real("--flops", "1e15", 1, 1e18), 1e15);
  EXPECT_DOUBLE_EQ(parse_real("--e", "0.5", 0, 1), 0.5);
  for (const char* bad : {"nan", "inf", "-inf", "0x1p3", "1e400", "abc", "", "1.5.2", "2"})
    EXPECT_THROW(parse_real("--e", bad, 0, 1), InputError) << bad;
}

TEST(Parse, RateReadsBytesAndBitsUnits) {
  EXPECT_DOUBLE_EQ(parse_rate("--bandwidth", "50e9", 1e3, 1e15), 50e9);
  EXPECT_DOUBLE_EQ(parse_rate("--bandwidth", "50GB/s", 1e3, 1e15), 50e9);
  EXPECT_DOUBLE_EQ(parse_rate("--bandwidth", "2.4TBps", 1e3, 1e15), 2.4e12);
  // A NIC's line rate is quoted in bits: 400 Gb/s carries 50e9 bytes/s.
  for (const char* bits : {"400Gbps", "400Gb/s", "400Gbit/s"})
    EXPECT_DOUBLE_EQ(parse_rate("--bandwidth", bits, 1e3, 1e15), 50e9) << bits;
  for (const char* bad : {"400Gbs", "400 Gbps", "GB/s", "50GiB/s", "-5GB/s", "1e300TB/s"})
    EXPECT_THROW(parse_rate("--bandwidth", bad, 1e3, 1e15), InputError) << bad;
  try {
    parse_rate("--bandwidth", "400Gbits", 1e3, 1e15);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("400Gbps = 5e+10 bytes/s"), std::string::npos) << e.what();
  }
}

TEST(Parse, GroupedCountReadsLargeCounts) {
  EXPECT_EQ(grouped_count(0), "0");
  EXPECT_EQ(grouped_count(999), "999");
  EXPECT_EQ(grouped_count(1000), "1,000");
  EXPECT_EQ(grouped_count(4294770688ULL), "4,294,770,688");
}

TEST(Parse, ChoiceListsTheChoices) {
  try {
    parse_choice("--layout", "nope", {"ring", "striped"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--layout: unknown value 'nope'; choose one of: ring, striped");
  }
}

TEST(Parse, HumanTokensUsesTheBinaryKThatParseCountReads) {
  EXPECT_EQ(human_tokens(1040), "1.0K");    // 1040 / 1024 = 1.016
  EXPECT_EQ(human_tokens(24960), "24.4K");  // 24960 / 1024 = 24.375
  EXPECT_EQ(human_tokens(1536), "1.5K");    // 1.5 x 1024
  EXPECT_EQ(human_tokens(131072), "128K");  // whole multiples print without decimals
  EXPECT_EQ(human_tokens(2097152), "2M");   // 2 x 2^20
  EXPECT_EQ(human_tokens(512), "512");
}

TEST(Parse, DecimalTokensPrintAsThePaperPrintsTable2) {
  EXPECT_EQ(decimal_tokens(24500), "24.5K");  // the paper's A100 InfiniBand row
  EXPECT_EQ(decimal_tokens(24960), "25.0K");  // its own F/B, 312e12 / 12.5e9
  EXPECT_EQ(decimal_tokens(1040), "1.0K");
  EXPECT_EQ(decimal_tokens(149500), "149.5K");
  EXPECT_EQ(decimal_tokens(1.2e6), "1.2M");
  EXPECT_EQ(decimal_tokens(15e12), "15.0T");
  EXPECT_EQ(decimal_tokens(999), "999");
}

TEST(Parse, DecimalCountReadsTokenTotalsAsQuoted) {
  EXPECT_EQ(parse_decimal_count("--t", "15T", 1, kMax), 15'000'000'000'000);
  EXPECT_EQ(parse_decimal_count("--t", "1.5T", 1, kMax), 1'500'000'000'000);
  EXPECT_EQ(parse_decimal_count("--t", "300B", 1, kMax), 300'000'000'000);
  EXPECT_EQ(parse_decimal_count("--t", "300G", 1, kMax), 300'000'000'000);
  EXPECT_EQ(parse_decimal_count("--t", "2M", 1, kMax), 2'000'000);
  EXPECT_EQ(parse_decimal_count("--t", "0.5k", 1, kMax), 500);
  EXPECT_EQ(parse_decimal_count("--t", "123", 1, kMax), 123);
  for (const char* bad : {"", "T", ".", ".T", "1.5", "1.0005K", "1e12", "-1T", "+1T", "1..5T",
                          "1.5.T", "15X", " 15T", "0", "2000T"}) {
    try {
      parse_decimal_count("--t", bad, 1, 1'000'000'000'000'000);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--t: expected a whole number in [1, ", 0), 0u)
          << e.what();
    }
  }
}

// Numbers read the same under a locale whose decimal separator is ',' (an
// embedding Python may call setlocale(LC_ALL, "de_DE.UTF-8"); strtod then read
// "0.5" as 0 and "2.5e-6" as 2). de_DE is compiled from the locales package's
// sources into a scratch folder (no root needed) and selected with LOCPATH.
TEST(Parse, DecimalsIgnoreACommaDecimalLocale) {
  const std::string dir = ::testing::TempDir() + "ringsim_locale";
  const std::string cmd =
      "mkdir -p " + dir + " && localedef -i de_DE -f UTF-8 " + dir + "/de_DE.UTF-8 >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0)
    GTEST_SKIP() << "SKIPPED: localedef could not compile de_DE (scripts/setup.sh installs "
                    "the locales package that holds its sources)";
  ::setenv("LOCPATH", dir.c_str(), 1);
  const char* was = std::setlocale(LC_ALL, nullptr);
  const std::string before = was ? was : "C";
  ASSERT_NE(std::setlocale(LC_ALL, "de_DE.UTF-8"), nullptr);
  // The locale really is the trap: the C library reads the comma.
  EXPECT_EQ(std::strtod("0,5", nullptr), 0.5);
  EXPECT_EQ(parse_real("--x", "0.5", 0, 1), 0.5);
  EXPECT_EQ(parse_real("--x", "2.5e-6", 0, 1), 2.5e-6);
  EXPECT_EQ(parse_real("--x", "+1.25", 0, 2), 1.25);
  EXPECT_EQ(parse_rate("--x", "2.4TB/s", 0, 1e13), 2.4e12);
  EXPECT_THROW(parse_real("--x", "0,5", 0, 1), InputError);
  double v = 0;
  EXPECT_TRUE(read_decimal("1e-3", v));
  EXPECT_EQ(v, 1e-3);
  std::setlocale(LC_ALL, before.c_str());
  ::unsetenv("LOCPATH");
}

TEST(Parse, ReadDecimalTakesOnlyPlainDecimals) {
  double v = 7;
  for (const char* bad :
       {"", "inf", "nan", "0x1p3", "1e999", "+-1", "++1", "+", "1.5.2", " 1", "1 ", "1,5"})
    EXPECT_FALSE(read_decimal(bad, v)) << bad;
  EXPECT_EQ(v, 7);  // untouched on failure
  EXPECT_TRUE(read_decimal("-0.25", v));
  EXPECT_EQ(v, -0.25);
  EXPECT_TRUE(read_decimal("3E2", v));
  EXPECT_EQ(v, 300);
}
