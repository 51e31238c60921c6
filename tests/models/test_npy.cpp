// .npy reading and writing (models/core/npy.hpp): round trips, the float16
// conversion, integer arrays, every malformed-file case (one InputError naming
// the file), and a mutation fuzz.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "models/core/errors.hpp"
#include "models/core/npy.hpp"

namespace ringsim {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ringsim_npy_" + name;
}

// Normal values rounded to float (exact in float32 and float64).
std::vector<double> randn(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(n);
  for (auto& x : v) x = static_cast<double>(static_cast<float>(normal(rng)));
  return v;
}

// A hand-built file, so the malformed cases do not depend on encode_npy.
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1,
                      int minor = 0) {
  std::string h = dict + "\n";
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  if (major == 1) {
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>(h.size() >> 8);
  } else {
    for (int b = 0; b < 4; ++b) out += static_cast<char>((h.size() >> (8 * b)) & 0xff);
  }
  return out + h + data;
}

std::string f32_data(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

const std::string kDict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 2), }";

// Expects an InputError whose message starts with the label and contains `what`.
void expect_bad(const std::string& bytes, const std::string& what, int rank = 3) {
  try {
    parse_npy(bytes, "--q q.npy", rank);
    ADD_FAILURE() << "accepted a file that should fail with: " << what;
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("--q q.npy: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nwanted: " << what;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
  }
}

TEST(Npy, RoundTripEveryDtype) {
  const std::vector<std::int64_t> shape{3, 2, 5};
  auto vals = randn(30, 1);
  for (auto t : {NpyDType::F16, NpyDType::F32, NpyDType::F64}) {
    const auto bytes = encode_npy(shape, t, vals);
    EXPECT_EQ((bytes.size() - 30 * static_cast<std::size_t>(npy_item_bytes(t))) % 64, 0u)
        << "data should start on a 64-byte boundary";
    const auto a = parse_npy(bytes, "x", 3);
    EXPECT_EQ(a.shape, shape);
    EXPECT_EQ(a.dtype, t);
    ASSERT_EQ(a.data.size(), vals.size());
    for (std::size_t i = 0; i < vals.size(); ++i) {
      const double want = t == NpyDType::F16   ? half_to_double(double_to_half(vals[i]))
                          : t == NpyDType::F32 ? static_cast<float>(vals[i])
                                               : vals[i];
      EXPECT_EQ(a.data[i], want) << i;
    }
  }
}

TEST(Npy, FileRoundTripAndRanks) {
  const auto path = temp_path("rt.npy");
  write_npy(path, "--out " + path, {4, 3}, NpyDType::F64, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const auto a = read_npy(path, "x");
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(a.data[11], 12.0);
  // One-dimensional shapes carry Python's trailing comma: "(5,)".
  const auto b = encode_npy({5}, NpyDType::F32, {1, 2, 3, 4, 5});
  EXPECT_NE(b.find("(5,)"), std::string::npos);
  EXPECT_EQ(parse_npy(b, "x").shape, (std::vector<std::int64_t>{5}));
}

// int32 and int64 (cu_seqlens): exact, sign-extended, beyond 2^53 for int64.
TEST(Npy, IntegerRoundTrip) {
  const std::vector<std::int64_t> i32{0, 1, -1, 2147483647, -2147483648LL, 42};
  const auto a = parse_npy_ints(encode_npy_ints({2, 3}, NpyDType::I32, i32), "x", 2);
  EXPECT_EQ(a.dtype, NpyDType::I32);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.data, i32);
  const std::vector<std::int64_t> i64{0, (std::int64_t{1} << 53) + 1,
                                      std::numeric_limits<std::int64_t>::min(),
                                      std::numeric_limits<std::int64_t>::max()};
  const auto bytes = encode_npy_ints({4}, NpyDType::I64, i64);
  EXPECT_NE(bytes.find("'descr': '<i8'"), std::string::npos);
  EXPECT_EQ((bytes.size() - 4 * 8) % 64, 0u);
  const auto b = parse_npy_ints(bytes, "x", 1);
  EXPECT_EQ(b.dtype, NpyDType::I64);
  EXPECT_EQ(b.data, i64);
  // Hand-built little-endian bytes, independent of the encoder.
  const auto c =
      parse_npy_ints(npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                               std::string("\x05\x00\x00\x00\xfe\xff\xff\xff", 8)),
                     "x", 1);
  EXPECT_EQ(c.data, (std::vector<std::int64_t>{5, -2}));
  EXPECT_THROW(encode_npy_ints({1}, NpyDType::I32, {std::int64_t{1} << 31}), std::invalid_argument);
  EXPECT_THROW(encode_npy_ints({1}, NpyDType::F32, {1}), std::invalid_argument);
  EXPECT_THROW(encode_npy({1}, NpyDType::I64, {1.0}), std::invalid_argument);
}

// Each reader takes its own kind and names what it allows.
TEST(Npy, IntegerAndFloatReadersRefuseEachOther) {
  const auto ints = encode_npy_ints({2}, NpyDType::I64, {0, 4});
  const auto floats = encode_npy({2}, NpyDType::F64, {0, 4});
  const auto message = [](auto&& parse) {
    try {
      parse();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message([&] { parse_npy(ints, "--q q.npy"); }),
            "--q q.npy: unsupported dtype '<i8'; use float16, float32 or float64 (little-endian)");
  EXPECT_EQ(message([&] { parse_npy_ints(floats, "--documents c.npy"); }),
            "--documents c.npy: unsupported dtype '<f8'; use int32 or int64 (little-endian)");
  const auto dict = [](const std::string& descr) {
    return npy_bytes("{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }",
                     std::string(8, '\0'));
  };
  EXPECT_EQ(message([&] { parse_npy_ints(dict("'>i8'"), "f"); }),
            "f: big-endian dtype '>i8' is not supported; save it little-endian");
  EXPECT_EQ(message([&] { parse_npy_ints(dict("'<u8'"), "f"); }),
            "f: unsupported dtype '<u8'; use int32 or int64 (little-endian)");
  EXPECT_EQ(message([&] { parse_npy_ints(dict("[('a', '<i8')]"), "f"); }),
            "f: bad .npy header: structured dtypes are not supported; use int32 or int64");
  const auto path = temp_path("ints.npy");
  {
    std::ofstream out(path, std::ios::binary);
    out << encode_npy_ints({5}, NpyDType::I32, {0, 1, 2, 3, 4});
  }
  EXPECT_EQ(read_npy_ints(path, "f", 1, 5, "why").data.size(), 5u);
  EXPECT_EQ(message([&] { read_npy_ints(path, "f", 1, 4, "at most 3 things"); }),
            "f: shape (5,) has more than 4 elements (at most 3 things)");
  EXPECT_EQ(message([&] { read_npy_ints(path, "f", 2, 5, ""); }),
            "f: expected a 2-d array, got shape (5,)");
}

TEST(Npy, HalfConversionKnownValues) {
  EXPECT_EQ(double_to_half(1.0), 0x3c00);
  EXPECT_EQ(double_to_half(-2.0), 0xc000);
  EXPECT_EQ(double_to_half(65504.0), 0x7bff);                     // largest finite half
  EXPECT_EQ(double_to_half(65519.0), 0x7bff);                     // below the halfway point
  EXPECT_EQ(double_to_half(65520.0), 0x7c00);                     // halfway: ties to even = inf
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -24)), 0x0001);        // smallest subnormal
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -25)), 0x0000);        // tie between 0 and 2^-24: even
  EXPECT_EQ(double_to_half(std::ldexp(3.0, -25)), 0x0002);        // 1.5 units: tie, to even (2)
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11)), 0x3c00);  // tie, to even
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(3.0, -11)), 0x3c02);  // tie, to even (up)
  EXPECT_EQ(double_to_half(std::ldexp(1023.0, -24)), 0x03ff);     // largest subnormal
  EXPECT_EQ(double_to_half(std::ldexp(2047.0, -25)), 0x0400);     // rounds up into the normals
  EXPECT_EQ(double_to_half(-0.0), 0x8000);
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::quiet_NaN()) & 0x7c00, 0x7c00);
  EXPECT_EQ(half_to_double(0x3555), 0.333251953125);
  EXPECT_TRUE(std::isinf(half_to_double(0xfc00)));
  EXPECT_TRUE(std::isnan(half_to_double(0x7e00)));
}

TEST(Npy, HalfConversionRoundTripsEveryPattern) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const double d = half_to_double(static_cast<std::uint16_t>(h));
    if (std::isnan(d)) continue;
    ASSERT_EQ(double_to_half(d), h) << std::hex << h;
  }
}

TEST(Npy, AcceptsWhatPythonWrites) {
  const auto data = f32_data({1, 2, 3, 4});
  // Version 2.0 and 3.0 headers, double quotes, other key order, no trailing comma.
  for (int major : {1, 2, 3}) {
    const auto a = parse_npy(npy_bytes(kDict, data, major), "x", 3);
    EXPECT_EQ(a.data[3], 4.0);
  }
  const auto b = parse_npy(
      npy_bytes("{\"shape\": (2,1,2), \"fortran_order\": False, \"descr\": \"<f4\"}   ", data), "x",
      3);
  EXPECT_EQ(b.shape, (std::vector<std::int64_t>{2, 1, 2}));
}

TEST(Npy, RejectsEveryMalformedFile) {
  const auto data = f32_data({1, 2, 3, 4});
  expect_bad("hello, world: this is a text file", "not a .npy file");
  expect_bad("\x93NUM", "not a .npy file");
  expect_bad(npy_bytes(kDict, data, 4), "unsupported .npy format version 4.0");
  expect_bad(npy_bytes(kDict, data, 1, 1), "version 1.1");
  auto cut = npy_bytes(kDict, data);
  cut.resize(20);
  expect_bad(cut, "truncated .npy header");
  expect_bad(std::string("\x93NUMPY\x02\x00\x01\x00\x00", 11), "truncated .npy header");
  auto huge = npy_bytes(kDict, data, 2);
  huge[10] = '\x7f';  // header length ~2^30: rejected before anything is read
  expect_bad(huge, "implausible");
  expect_bad(npy_bytes("['descr', '<f4']", data), "bad .npy header: expected '{'");
  expect_bad(npy_bytes("{'descr': '<f4', 'shape': (2, 1, 2)}", data), "needs the keys");
  expect_bad(
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 2), 'x': 1}", data),
      "unexpected key 'x'");
  expect_bad(
      npy_bytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", data),
      "appears twice");
  expect_bad(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 2), } junk", data),
             "unexpected text");
  expect_bad(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 2", data),
             "in 'shape'");
  expect_bad(npy_bytes("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 1, 2)}", data),
             "bad .npy header");
  expect_bad(npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1, 2), }", data),
             "unsupported dtype '<i4'");
  expect_bad(npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 1, 2), }", data),
             "unsupported dtype");
  expect_bad(npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 1, 2), }", data),
             "big-endian");
  expect_bad(npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data),
             "structured dtypes");
  expect_bad(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 2), }", data),
             "fortran_order is True");
  expect_bad(npy_bytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 1, 2), }", data),
             "True or False");
  expect_bad(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 1, 2], }", data),
             "expected '('");
  expect_bad(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1, 2), }", data),
             "non-negative integers");
  expect_bad(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", data),
             "expected a 3-d array");
  expect_bad(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0, 2), }", ""),
             "empty array");
  expect_bad(
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000, 100000), }",
                data),
      "more than 2^31 elements");
  expect_bad(
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 1, 1), }",
                data),
      "too large");
  expect_bad(npy_bytes(kDict, data.substr(0, 10)), "truncated data");
  expect_bad(npy_bytes(kDict, data + "xx"), "2 unexpected bytes");
  expect_bad(npy_bytes(kDict, f32_data({1, std::numeric_limits<float>::quiet_NaN(), 3, 4})),
             "value at [0, 0, 1] is NaN");
  expect_bad(npy_bytes(kDict, f32_data({1, 2, 3, -std::numeric_limits<float>::infinity()})),
             "value at [1, 0, 1] is -Inf");
  expect_bad(npy_bytes("{'descr': '<f4',\x01 'fortran_order': False, 'shape': (2, 1, 2), }", data),
             "control characters");
  // float16 infinity is caught too (0x7c00).
  expect_bad(npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 2), }",
                       std::string("\x00\x3c\x00\x7c", 4)),
             "is Inf");
}

TEST(Npy, FileErrorsNameTheFile) {
  EXPECT_THROW(read_npy(temp_path("does-not-exist.npy"), "--k nope.npy"), InputError);
  try {
    read_npy(::testing::TempDir(), "--k dir");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--k dir: not a regular file"), std::string::npos);
  }
  EXPECT_THROW(write_npy("/nonexistent-dir/x.npy", "--out x", {1}, NpyDType::F32, {1.0}),
               InputError);
}

// Random byte flips, truncations and insertions of a valid file must either
// parse or raise InputError: never crash, hang or throw anything else.
// A large file is judged by its header before its data is read: a 2 GiB file
// (sparse: it costs no disk) whose magic is wrong, or whose header promises a
// different size, is refused without the process growing by anything like its size.
TEST(Npy, LargeBadFilesAreRefusedFromTheirHeader) {
  const std::uint64_t size = std::uint64_t{2} << 30;
  const auto rss_kib = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<long>(u.ru_maxrss);
  };
  auto sparse = [&](const std::string& name, const std::string& head) {
    const auto path = temp_path(name);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << head;
    }
    std::filesystem::resize_file(path, size);
    return path;
  };
  const long before = rss_kib();
  const auto bad_magic = sparse("big-magic.npy", "NOT A NUMPY FILE");
  const auto good = encode_npy({4, 2, 2}, NpyDType::F32, std::vector<double>(16, 1.0));
  const auto bad_size = sparse("big-size.npy", good);  // header: 64 bytes of data; file: 2 GiB
  for (const auto& [path, words] :
       {std::pair{bad_magic, "missing the"}, std::pair{bad_size, "unexpected bytes"}}) {
    try {
      read_npy(path, "--q", 3);
      ADD_FAILURE() << path << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
  }
  EXPECT_LT(rss_kib() - before, 64 * 1024) << "the reader grew by more than 64 MiB";
}

TEST(Npy, MutationFuzzOnlyThrowsInputError) {
  const auto good = encode_npy({3, 2, 4}, NpyDType::F16, randn(24, 3));
  const auto good_ints = encode_npy_ints({3, 2}, NpyDType::I32, {0, 5, -7, 9, 1 << 30, 3});
  std::mt19937_64 rng(7);
  int parsed = 0, rejected = 0;
  for (int it = 0; it < 3000; ++it) {
    // Even iterations mutate a float16 file, odd ones an int32 file; each
    // goes through the reader of its kind.
    const bool ints = it % 2 == 1;
    std::string b = ints ? good_ints : good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const auto pos = rng() % b.size();
      switch (rng() % 4) {
        case 0:
          b[pos] = static_cast<char>(rng());
          break;
        case 1:
          b.resize(pos);
          break;
        case 2:
          b.insert(pos, 1, static_cast<char>(rng()));
          break;
        default:
          b[pos % 128] = "0123456789(),' TF{}:"[rng() % 20];
          break;
      }
      if (b.empty()) b = "x";
    }
    try {
      if (ints)
        parse_npy_ints(b, "f", -1);
      else
        parse_npy(b, "f", -1);
      ++parsed;
    } catch (const InputError&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000);  // the mutations do reach the checks
}

}  // namespace
}  // namespace ringsim
