#include "costs/signature_text.h"

#include "gtest/gtest.h"

namespace taso::profiler {
namespace {

// Every key the profiler prints parses back to a signature with that key.
TEST(SignatureTextTest, KeysRoundTrip) {
  for (const char* key : {
           "conv2d[stride=2x2,pad=valid,act=relu](f32[1,64,56,56],f32[64,64,3,3])",
           "conv2d[stride=2x2,pad=explicit:1,1,1,1,act=none](f32[1,64,56,56],f32[128,64,3,3])",
           // The optional per-output-channel bias, plain and grouped.
           "conv2d[stride=1x1,pad=same,act=relu](f32[1,64,56,56],f32[64,64,3,3],f32[64])",
           "conv2d[stride=2x2,pad=valid,act=none](f32[1,64,56,56],f32[128,32,3,3],f32[128])",
           "matmul[act=none](f32[64,128],f32[128,256]{strides=1,128})",
           "poolavg[kernel=3x3,stride=1x1,pad=same,count_pad=0](f32[1,8,7,7])",
           "poolmax[kernel=3x3,stride=2x2,pad=same](f32[1,64,112,112])",
           "transpose[perm=0,2,1,shuffle=0](f32[2,3,4])",
           "concat[axis=1](f32[1,2,4,4],f32[1,3,4,4])",
           "split[axis=1,sizes=2,3](f32[2,5])->[2,3]",
           "reshape[shape=6](f32[2,3])",
           "batchnorm[eps=0.001](f32[1,3,4,4],f32[3],f32[3],f32[3],f32[3])",
           "merge_gconv[groups=4,count=2](f32[8,3,3,3])",
           "const_pool[shape=4,1,3,3]()[4,1,3,3]",
           "smul(f32[2,5],f32[])",
           "ewadd(f32[2,3],f32[3])",
       }) {
    auto sig = ParseSignature(key);
    ASSERT_TRUE(sig.ok()) << key << ": " << sig.status();
    auto canonical = Canonicalize(*sig);
    ASSERT_TRUE(canonical.ok()) << key << ": " << canonical.status();
    EXPECT_EQ(canonical->key, key);
  }
}

TEST(SignatureTextTest, DefaultsAndSpaces) {
  auto sig = ParseSignature("conv2d ( f32[1,3,8,8], f32[4,3,3,3] )");
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_EQ(sig->params.stride_h, 1);
  EXPECT_EQ(sig->params.padding, Padding::kSame);
  EXPECT_EQ(sig->inputs.size(), 2u);
}

TEST(SignatureTextTest, ConvBiasIsTheThirdInput) {
  auto sig = ParseSignature("conv2d[act=relu](f32[1,3,8,8],f32[4,3,3,3],f32[4])");
  ASSERT_TRUE(sig.ok()) << sig.status();
  ASSERT_EQ(sig->inputs.size(), 3u);
  EXPECT_EQ(sig->inputs[2].dims, std::vector<int64_t>{4});
  auto canonical = Canonicalize(*sig);
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  EXPECT_EQ(canonical->outputs[0].dims, (std::vector<int64_t>{1, 4, 8, 8}));
  // The bias is one more addition per output element, and 4 * 4 bytes more.
  auto plain = Canonicalize(Signature{sig->kind, sig->params, {sig->inputs[0], sig->inputs[1]}});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(SignatureFlops(*canonical), SignatureFlops(*plain) + 1 * 4 * 8 * 8);
  EXPECT_EQ(SignatureBytes(*canonical), SignatureBytes(*plain) + 4 * 4);
}

// A bias of the wrong shape parses (it is a well-formed type) but does not
// canonicalise; shape inference says why.
TEST(SignatureTextTest, ConvBiasOfTheWrongShapeIsRejected) {
  for (const auto& [text, what] : std::vector<std::pair<const char*, const char*>>{
           {"conv2d(f32[1,3,8,8],f32[4,3,3,3],f32[3])", "bias must be 1-D"},
           {"conv2d(f32[1,3,8,8],f32[4,3,3,3],f32[1,4])", "bias must be 1-D"},
           {"conv2d(f32[1,3,8,8],f32[4,3,3,3],i32[4])", "bias element type"},
           {"conv2d(f32[1,3,8,8],f32[4,3,3,3],f32[4],f32[4])", "inputs, got 4"},
       }) {
    auto sig = ParseSignature(text);
    ASSERT_TRUE(sig.ok()) << text << ": " << sig.status();
    auto canonical = Canonicalize(*sig);
    ASSERT_FALSE(canonical.ok()) << text;
    EXPECT_EQ(canonical.status().code(), absl::StatusCode::kInvalidArgument) << canonical.status();
    EXPECT_NE(canonical.status().message().find(what), std::string::npos) << canonical.status();
  }
}

TEST(SignatureTextTest, ErrorsSayWhat) {
  for (const auto& [text, what] : std::vector<std::pair<const char*, const char*>>{
           {"relu", "expected OP[params](TYPE,...)"},
           {"frobnicate(f32[2])", "unknown operator 'frobnicate'"},
           {"conv2d[stride=2](f32[1,3,8,8],f32[4,3,3,3])", "'2' is not HxW"},
           {"conv2d[bogus=1](f32[1,3,8,8],f32[4,3,3,3])", "unknown parameter 'bogus'"},
           {"relu(f64[2])", "element type 'f64'"},
           {"relu(f32[2,x])", "not a list of integers"},
           {"relu(f32[2,3]{strides=1})", "has 2 dims but 1 strides"},
           // Found by fuzz/signature_text_fuzz: the strides' product overflowed.
           {"matmul(f32[6,5555555555555555128],f32[128,256])", "elements"},
       }) {
    auto sig = ParseSignature(text);
    ASSERT_FALSE(sig.ok()) << text;
    EXPECT_EQ(sig.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(sig.status().message().find(what), std::string::npos) << sig.status();
  }
}

}  // namespace
}  // namespace taso::profiler
