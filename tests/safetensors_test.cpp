// The safetensors container: round trips, every rejection, checked typed
// access, atomic writes, and files exchanged with the numpy reader/writer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

#include "dsa/dataset/safetensors.hpp"
#include "dsa/error.hpp"
#include "test_support.hpp"

namespace dsa::dataset {
namespace {

namespace fs = std::filesystem;
using test::python_with_numpy;

// A scratch folder per test, removed afterwards.
class TempDir {
public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("dsa_st_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

private:
  fs::path path_;
};

// The fixture shared with python/test_safetensors_io.py.
Safetensors fixture(const std::string& writer) {
  Safetensors st;
  const std::vector<float> f32 = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f};
  const std::vector<int32_t> i32 = {-2, -1, 0, 2147483647};
  const std::vector<uint8_t> u8 = {0, 127, 255}, e4m3 = {0x38, 0x7e, 0x01, 0xb8};
  const std::vector<uint16_t> bf16 = {0x3f80, 0xc000};
  const std::vector<int64_t> i64 = {-1, int64_t(1) << 40};
  const std::vector<double> f64 = {0.1};
  st.put_f32("f32", {2, 3}, f32);
  st.put_i32("i32", {4}, i32);
  st.put_u8("u8", {3}, u8);
  st.put_f8_e4m3("e4m3", {2, 2}, e4m3);
  st.put_bf16("bf16", {2}, bf16);
  st.put_i64("i64", {2}, i64);
  st.put_f64("f64", {}, f64);
  st.put_f32("empty", {0, 3}, std::vector<float>{});
  st.metadata = {{"schema", "dsa-oracle-test/1"}, {"writer", writer}, {"text", "h\xc3\xa9llo, \"quoted\""}};
  return st;
}

void expect_same(const Safetensors& a, const Safetensors& b) {
  EXPECT_EQ(a.metadata, b.metadata);
  ASSERT_EQ(a.names(), b.names());
  for (const auto& [name, t] : a.tensors()) {
    const Tensor& u = b.at(name);
    EXPECT_EQ(t.dtype, u.dtype) << name;
    EXPECT_EQ(t.shape, u.shape) << name;
    EXPECT_EQ(t.bytes, u.bytes) << name;
  }
}

std::vector<uint8_t> file_of(const std::string& header, size_t data_bytes = 0) {
  std::vector<uint8_t> out(8 + header.size() + data_bytes, 0);
  for (int i = 0; i < 8; ++i) out[size_t(i)] = uint8_t(uint64_t(header.size()) >> (8 * i));
  std::memcpy(out.data() + 8, header.data(), header.size());
  for (size_t i = 0; i < data_bytes; ++i) out[8 + header.size() + i] = uint8_t(i);
  return out;
}

// The reader's message for a bad file; its argument must be the origin.
std::string rejection(const std::vector<uint8_t>& file) {
  try {
    parse_safetensors(file, "case.safetensors");
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "case.safetensors");
    return e.what();
  }
  return "<accepted>";
}

std::string argument_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.argument();
  }
  return "<no throw>";
}

TEST(Safetensors, RoundTripEveryDtype) {
  const Safetensors st = fixture("cpp");
  const std::vector<uint8_t> bytes = serialize_safetensors(st);
  expect_same(st, parse_safetensors(bytes, "mem"));
  EXPECT_EQ(serialize_safetensors(parse_safetensors(bytes, "mem")), bytes);  // deterministic
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | bytes[size_t(i)];
  EXPECT_EQ(header % 8, 0u);
  EXPECT_EQ(bytes[8], '{');
  const Safetensors back = parse_safetensors(bytes, "mem");
  EXPECT_EQ(back.f32("f32", {2, 3})[5], 1.5f);
  EXPECT_EQ(back.i32("i32")[3], 2147483647);
  EXPECT_EQ(back.i64("i64")[1], int64_t(1) << 40);
  EXPECT_EQ(back.f64("f64", {})[0], 0.1);
  EXPECT_EQ(back.bf16("bf16")[1], 0xc000);
  EXPECT_EQ(back.fp8_bytes("e4m3")[1], 0x7e);
  EXPECT_TRUE(back.f32("empty", {0, 3}).empty());
}

TEST(Safetensors, HeaderLayoutIsTheDocumentedOne) {
  Safetensors st;
  st.metadata["op"] = "decode";
  st.put_i32("b", {1}, std::vector<int32_t>{7});
  st.put_u8("a", {2}, std::vector<uint8_t>{1, 2});
  const std::vector<uint8_t> bytes = serialize_safetensors(st);
  const std::string expected =
      R"({"__metadata__":{"op":"decode"},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
      R"("b":{"dtype":"I32","shape":[1],"data_offsets":[2,6]}})";
  const std::string header(bytes.begin() + 8, bytes.end() - 6);
  EXPECT_EQ(header.substr(0, expected.size()), expected);
  EXPECT_EQ(header.find_first_not_of(' ', expected.size()), std::string::npos);
  EXPECT_EQ(std::vector<uint8_t>(bytes.end() - 6, bytes.end()), (std::vector<uint8_t>{1, 2, 7, 0, 0, 0}));
}

TEST(Safetensors, RejectsTruncatedAndOversizedFiles) {
  EXPECT_NE(rejection({1, 2, 3}).find("truncated: 3 bytes"), std::string::npos);
  std::vector<uint8_t> beyond = file_of("{}");
  beyond[0] = 50;
  EXPECT_NE(rejection(beyond).find("header length 50 but only 2 bytes"), std::string::npos);
  std::vector<uint8_t> huge = file_of("{}");
  const uint64_t length = 200'000'000;
  for (int i = 0; i < 8; ++i) huge[size_t(i)] = uint8_t(length >> (8 * i));
  EXPECT_NE(rejection(huge).find("exceeds the limit"), std::string::npos);
  const std::vector<uint8_t> whole = serialize_safetensors(fixture("cpp"));
  EXPECT_NE(rejection(std::vector<uint8_t>(whole.begin(), whole.end() - 1)).find("run past"), std::string::npos);
  EXPECT_NE(rejection(std::vector<uint8_t>(whole.begin(), whole.begin() + 40)).find("truncated"), std::string::npos);
}

TEST(Safetensors, RejectsBadOffsets) {
  const std::string a8 = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8)).find("reversed"),
            std::string::npos);
  EXPECT_NE(rejection(file_of("{" + a8 + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12))
                .find("'b' data_offsets [4, 12) overlap"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                              12))
                .find("gap of 4 bytes before tensor 'b'"),
            std::string::npos);
  EXPECT_NE(rejection(file_of("{" + a8 + "}", 12)).find("4 data bytes after the last tensor"), std::string::npos);
  EXPECT_NE(rejection(file_of("{" + a8 + "}", 4)).find("'a' data_offsets [0, 8) run past the 4 data bytes"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4.0]}})", 4))
                .find("data_offsets end is not a non-negative integer"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4)).find("not a pair"),
            std::string::npos);
}

TEST(Safetensors, RejectsBadTensorsAndMetadata) {
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})", 8))
                .find("tensor 'a': dtype: unsupported dtype 'F16'"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8))
                .find("'a' shape [3] of F32 disagrees with its 8 data bytes"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8)).find("shape extent"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,8]}})", 8))
                .find("disagrees"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F32","shape":[2]}})", 8)).find(R"(no "data_offsets")"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"__metadata__":{"seed":7}})")).find("metadata 'seed' is not a string: 7"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"__metadata__":"x"})")).find("__metadata__ is not an object"), std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                              8))
                .find("duplicate key 'a'"),
            std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"__metadata__":{"k":"1","k":"2"}})")).find("duplicate key 'k'"), std::string::npos);
  EXPECT_NE(rejection(file_of(R"({"a": )")).find("not valid JSON"), std::string::npos);
  EXPECT_NE(rejection(file_of("[1, 2]")).find("not a JSON object"), std::string::npos);
}

// Issue 11 §1: nesting a few hundred thousand levels deep, huge values and
// sizes that wrap around are refused with a short message, never a crash.
TEST(Safetensors, RefusesDeepNestingHugeValuesAndWrappingSizes) {
  for (const std::string& open : {std::string("["), std::string("{\"a\":")}) {
    std::string deep;
    for (int i = 0; i < 300000; ++i) deep += open;
    for (const std::string& header : {deep, "{\"__metadata__\":{\"k\":" + deep + "}}", "{\"t\":" + deep + "}"}) {
      const std::string message = rejection(file_of(header));
      EXPECT_NE(message.find("nested deeper than"), std::string::npos) << message.substr(0, 200);
      EXPECT_LT(message.size(), 300u);
    }
  }
  // A megabyte metadata value of the wrong type, and a megabyte tensor name.
  const std::string mega(1 << 20, 'x');
  std::string message = rejection(file_of("{\"__metadata__\":{\"k\":[\"" + mega + "\"]}}"));
  EXPECT_NE(message.find("metadata 'k' is not a string"), std::string::npos) << message.substr(0, 200);
  EXPECT_LT(message.size(), 300u);
  message = rejection(file_of("{\"" + mega + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8));
  EXPECT_NE(message.find("disagrees with its 8 data bytes"), std::string::npos) << message.substr(0, 200);
  EXPECT_LT(message.size(), 400u);
  // 2^32 x 2^32 x 4 bytes wraps to 0 in 64 bits: it must not match an empty tensor.
  message = rejection(file_of(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})"));
  EXPECT_NE(message.find("disagrees with its 0 data bytes"), std::string::npos) << message;
  message = rejection(file_of(R"({"a":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,0]}})"));
  EXPECT_NE(message.find("past a 64-bit size"), std::string::npos) << message;
}

TEST(Safetensors, TypedAccessChecksDtypeAndShape) {
  const Safetensors st = fixture("cpp");
  EXPECT_EQ(argument_of([&] { st.i32("f32"); }), "f32");
  EXPECT_EQ(argument_of([&] { st.f32("f32", {3, 2}); }), "f32");
  EXPECT_EQ(argument_of([&] { st.f32("f32", {6}); }), "f32");
  EXPECT_EQ(argument_of([&] { st.u8("e4m3"); }), "e4m3");
  EXPECT_EQ(argument_of([&] { st.at("logits"); }), "logits");
  EXPECT_EQ(argument_of([&] { st.meta("seed"); }), "seed");
  EXPECT_EQ(argument_of([&] { st.fp8_bytes("i32"); }), "i32");
  EXPECT_EQ(st.f32("f32", {-1, 3}).size(), 6u);
  EXPECT_EQ(st.fp8_bytes("u8", {3}), (std::vector<uint8_t>{0, 127, 255}));  // U8 is accepted for e4m3fn bytes
  EXPECT_EQ(st.meta("writer"), "cpp");
  try {
    st.bf16("bf16", {3});
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("shape is [2], expected [3]"), std::string::npos);
  }
}

TEST(Safetensors, PutRejectsInconsistentTensors) {
  Safetensors st;
  st.put_f32("x", {2}, std::vector<float>{1, 2});
  EXPECT_EQ(argument_of([&] { st.put_f32("x", {2}, std::vector<float>{1, 2}); }), "x");
  EXPECT_EQ(argument_of([&] { st.put_f32("y", {3}, std::vector<float>{1, 2}); }), "y");
  EXPECT_EQ(argument_of([&] { st.put_u8("z", {-1}, std::vector<uint8_t>{}); }), "z");
  EXPECT_EQ(argument_of([&] { st.put_u8("__metadata__", {0}, std::vector<uint8_t>{}); }), "__metadata__");
  EXPECT_THROW(parse_dtype("Q4"), InvalidInput);
  for (Dtype d : {Dtype::F8_E4M3, Dtype::U8, Dtype::BF16, Dtype::F32, Dtype::I32, Dtype::I64, Dtype::F64}) {
    EXPECT_EQ(parse_dtype(to_string(d)), d);
  }
}

TEST(Safetensors, WritesAtomically) {
  TempDir dir;
  const std::string path = (dir / "case.safetensors").string();
  write_safetensors(path, fixture("cpp"));
  write_safetensors(path, fixture("cpp"));  // over an existing file
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"case.safetensors"});
  expect_same(read_safetensors(path), fixture("cpp"));
  const std::string missing = (dir / "no/such/folder/case.safetensors").string();
  EXPECT_EQ(argument_of([&] { write_safetensors(missing, fixture("cpp")); }), missing);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"case.safetensors"});
  EXPECT_EQ(argument_of([&] { read_safetensors(missing); }), missing);
  // A corrupted file names itself.
  std::vector<uint8_t> bytes = serialize_safetensors(fixture("cpp"));
  bytes.erase(bytes.end() - 3, bytes.end());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  EXPECT_EQ(argument_of([&] { read_safetensors(path); }), path);
}

// A python3 that has numpy, or "" (DSA_PYTHON first, then python3, then Debian's).
TEST(Safetensors, ExchangesFilesWithTheNumpyReader) {
  const std::string py = python_with_numpy();
  if (py.empty()) GTEST_SKIP() << "no python3 with numpy";
  TempDir dir;
  const std::string from_cpp = (dir / "from_cpp.safetensors").string();
  const std::string from_py = (dir / "from_py.safetensors").string();
  write_safetensors(from_cpp, fixture("cpp"));
  const std::string script = std::string(DSA_SOURCE_DIR) + "/python/test_safetensors_io.py";
  const std::string command = "'" + py + "' '" + script + "' --check-cpp '" + from_cpp + "' --write-fixture '" +
                              from_py + "' > '" + (dir / "log.txt").string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream log(dir / "log.txt");
  const std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("ok   check_cpp"), std::string::npos) << output;
  const Safetensors theirs = read_safetensors(from_py);
  expect_same(theirs, fixture("python"));
  // Same content, same bytes: the two writers agree on the layout.
  std::ifstream in(from_py, std::ios::binary);
  const std::vector<uint8_t> written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, serialize_safetensors(fixture("python")));
}

}  // namespace
}  // namespace dsa::dataset
