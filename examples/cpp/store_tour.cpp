// The essentials of the C API from C++ with RAII wrappers: each handle is a unique_ptr with its
// free function as deleter, and failing calls throw with the library's detailed message.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "prollystore.h"

namespace prolly {

// Throws std::runtime_error for any result other than `expected`.
inline void check(prolly_result r, const char *what, prolly_result expected = PROLLY_RESULT_OK) {
  if (r == expected) return;
  char detail[512];
  prolly_last_error_message(detail, sizeof detail);
  throw std::runtime_error(std::string(what) + ": " + prolly_result_message(static_cast<int>(r)) +
                           " (" + detail + ")");
}

template <typename T, void (*Free)(T *)>
struct Deleter {
  void operator()(T *p) const { Free(p); }
};
using Store = std::unique_ptr<prolly_store, Deleter<prolly_store, prolly_store_free>>;
using Schema = std::unique_ptr<prolly_schema, Deleter<prolly_schema, prolly_schema_free>>;
using Map = std::unique_ptr<prolly_map, Deleter<prolly_map, prolly_map_free>>;
using Cursor = std::unique_ptr<prolly_cursor, Deleter<prolly_cursor, prolly_cursor_free>>;
using Diff = std::unique_ptr<prolly_diff, Deleter<prolly_diff, prolly_diff_free>>;
using TupleBuilder =
    std::unique_ptr<prolly_tuple_builder, Deleter<prolly_tuple_builder, prolly_tuple_builder_free>>;
using MapBuilder =
    std::unique_ptr<prolly_map_builder, Deleter<prolly_map_builder, prolly_map_builder_free>>;

// A tuple copied out of a builder (the builder's own buffer is reused by the next build).
using Bytes = std::vector<uint8_t>;

inline Bytes build(prolly_tuple_builder *b) {
  const uint8_t *t = nullptr;
  size_t n = 0;
  check(prolly_tuple_builder_build(b, &t, &n), "build");
  return Bytes(t, t + n);
}

}  // namespace prolly

int main() {
  using namespace prolly;
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("prolly-cpp-" + std::to_string(std::rand()));
  try {
    prolly_type key_types[] = {{PROLLY_ENCODING_INT64, 0}};
    prolly_type value_types[] = {{PROLLY_ENCODING_STRING, 1}};
    prolly_schema *raw_schema = nullptr;
    check(prolly_schema_new(key_types, 1, value_types, 1, &raw_schema), "schema");
    Schema schema(raw_schema);

    prolly_tuple_builder *kraw = nullptr, *vraw = nullptr;
    check(prolly_tuple_builder_new(schema.get(), PROLLY_SIDE_KEY, &kraw), "key builder");
    TupleBuilder kb(kraw);
    check(prolly_tuple_builder_new(schema.get(), PROLLY_SIDE_VALUE, &vraw), "value builder");
    TupleBuilder vb(vraw);
    auto key = [&](int64_t id) {
      check(prolly_tuple_builder_put_int64(kb.get(), 0, id), "put key");
      return build(kb.get());
    };

    prolly_store *sraw = nullptr;
    check(prolly_store_create_file(dir.c_str(), PROLLY_HASH_PROFILE_DOLT, &sraw), "create");
    Store store(sraw);

    prolly_map_builder *mbraw = nullptr;
    check(prolly_map_builder_new(store.get(), schema.get(), &mbraw), "map builder");
    MapBuilder mb(mbraw);
    for (int64_t id = 0; id < 3000; id++) {
      std::string name = "item-" + std::to_string(id);
      check(prolly_tuple_builder_put_int64(kb.get(), 0, id), "put id");
      check(prolly_tuple_builder_put_string(vb.get(), 0, name.data(), name.size()), "put name");
      check(prolly_map_builder_append_row(mb.get(), kb.get(), vb.get()), "append");
    }
    prolly_map *mraw = nullptr;
    check(prolly_map_builder_finish(mb.get(), &mraw), "finish");
    Map map(mraw);
    mb.reset();

    prolly_address root;
    check(prolly_map_root(map.get(), &root), "root");
    prolly_root_update update = {"main", nullptr, &root};
    uint64_t generation = 0;
    check(prolly_store_commit(store.get(), &update, 1, &generation), "commit");

    // Point read (the value points into the store; no copy).
    Bytes k = key(1234);
    const uint8_t *value = nullptr;
    size_t value_len = 0;
    check(prolly_map_get(map.get(), k.data(), k.size(), &value, &value_len), "get");
    const uint8_t *name = nullptr;
    size_t name_len = 0;
    bool is_null = false;
    check(prolly_field_string(schema.get(), PROLLY_SIDE_VALUE, value, value_len, 0, &name,
                              &name_len, &is_null),
          "field");
    std::printf("1234 -> %.*s\n", static_cast<int>(name_len), reinterpret_cast<const char *>(name));
    Bytes missing = key(99999);
    check(prolly_map_get(map.get(), missing.data(), missing.size(), &value, &value_len), "get",
          PROLLY_RESULT_NOT_FOUND);

    // Backward scan of the last five rows.
    Bytes lo = key(2995);
    prolly_bound lower = {PROLLY_BOUND_KIND_INCLUDED, lo.data(), lo.size()};
    prolly_bound upper = {PROLLY_BOUND_KIND_UNBOUNDED, nullptr, 0};
    prolly_cursor *craw = nullptr;
    check(prolly_map_range(map.get(), &lower, &upper, PROLLY_DIRECTION_BACKWARD, &craw), "range");
    Cursor cursor(craw);
    prolly_row row;
    std::printf("last five, descending:");
    while (prolly_cursor_next(cursor.get(), &row) == PROLLY_RESULT_OK) {
      int64_t id = 0;
      check(prolly_field_int64(schema.get(), PROLLY_SIDE_KEY, row.key, row.key_len, 0, &id,
                               &is_null),
            "id");
      std::printf(" %lld", static_cast<long long>(id));
    }
    std::printf("\n");
    cursor.reset();

    // Edit and diff.
    check(prolly_tuple_builder_put_string(vb.get(), 0, "changed", 7), "put");
    Bytes v = build(vb.get());
    Bytes k7 = key(7), k8 = key(8);
    prolly_edit edits[] = {{k7.data(), k7.size(), v.data(), v.size()},
                           {k8.data(), k8.size(), nullptr, 0}};
    prolly_map *eraw = nullptr;
    check(prolly_map_apply(map.get(), edits, 2, &eraw), "apply");
    Map edited(eraw);
    prolly_diff *draw = nullptr;
    check(prolly_map_diff(map.get(), edited.get(), &draw), "diff");
    Diff diff(draw);
    prolly_diff_entry entry;
    int changes = 0;
    while (prolly_diff_next(diff.get(), &entry) == PROLLY_RESULT_OK) changes++;
    std::printf("%d changes\n", changes);
    diff.reset();

    // A stale compare-and-swap is refused.
    prolly_address edited_root;
    check(prolly_map_root(edited.get(), &edited_root), "root");
    prolly_root_update stale = {"main", &edited_root, &edited_root};
    check(prolly_store_commit(store.get(), &stale, 1, &generation), "stale commit",
          PROLLY_RESULT_ERR_ROOT_CONFLICT);
    if (changes != 2) throw std::runtime_error("expected 2 changes");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
