// The CUDA profile document must be what models/core/profile.cpp reads: build one from
// made-up timings (no GPU needed) and read it back through the simulator's parser.
#include <gtest/gtest.h>

#include "kernels/cuda/profile_cuda.hpp"
#include "models/core/errors.hpp"
#include "models/core/profile.hpp"

namespace ringsim::kernels::cuda {
namespace {

TEST(GpuApi, ProfileDocumentReadsBackThroughModelsParser) {
  DeviceInfo dev;
  dev.name = "NVIDIA H200";
  dev.driver = 13000;
  dev.runtime = 13000;
  dev.cc_major = 9;
  std::vector<CudaProfilePoint> pts;
  for (std::int64_t b : {128, 1024})
    for (const char* k : {"fwd", "bwd"})
      for (const char* m : {"full", "causal_diagonal"}) {
        const std::uint64_t e = std::string(m) == "full" ? b * b * 16 : b * (b + 1) / 2 * 16;
        const double s =
            1e-9 * static_cast<double>(e) * (k[0] == 'b' ? 2.5 : 1.0) / (b == 128 ? 100 : 400);
        pts.push_back({k, "bf16", m, 128, 16, b, e, {s, 0.9 * s, 1.2 * s, 10}});
      }
  const std::string text = cuda_profile_document(dev, pts, "2026-11-29T00:00:00Z");
  const Profile p = parse_profile(text, "test");
  EXPECT_EQ(p.device_kind, "cuda");
  EXPECT_EQ(p.device_name, "NVIDIA H200");
  ASSERT_EQ(p.points.size(), pts.size());
  const ProfileModel model(p, "bf16", "test");
  // At a measured block the model's time is entries x (measured time / entries).
  const std::uint64_t entries = 1024 * 1024 * 16;
  EXPECT_NEAR(model.seconds(entries, 1024, 128, false, false), pts[4].time.median_s,
              1e-12 * pts[4].time.median_s + 1e-18);
  EXPECT_THROW(ProfileModel(p, "fp16", "test"), InputError);  // no fp16 points in it
}

}  // namespace
}  // namespace ringsim::kernels::cuda
