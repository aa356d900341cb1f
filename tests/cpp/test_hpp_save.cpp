/*
 * test_hpp_save.cpp -- saves of any T in include/opool.hpp: serializer<T>,
 * writer and reader, pool<T>::save/load of types with strings and vectors,
 * damaged images that leave nothing constructed, world files of pools and
 * side tables, and a reference model across save/load cycles. Built as
 * C++17, C++20 and C++17 with -fno-exceptions -fno-rtti, plain and under
 * ASan+UBSan (tests/cpp/cpp.cmake).
 */
#include "opool.hpp"

#include "helpers.h"
#include "redirect.h"
#include "test.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#if OPOOL_HPP_EXCEPTIONS
#include <stdexcept>
#endif

/* ---- the example of docs/GUIDE.md ("Saving any T"), as printed ------------ */

struct ship {
    std::string name;
    std::vector<int> cargo;
    float hull = 100;
};

namespace opl {
template <> struct serializer<ship> {
    static bool save(writer &w, const ship &s) {
        return w.value(s.name) && w.value(s.cargo) && w.value(s.hull);
    }
    static bool load(reader &r, ship *mem) { /* construct a ship at mem, or return false */
        ship s;
        if (!r.value(s.name) || !r.value(s.cargo) || !r.value(s.hull)) return false;
        ::new (mem) ship(std::move(s));
        return true;
    }
};
} // namespace opl

static opool_status guide_example(const char *path) {
    opl::options o{};
    o.capacity = 64;
    opl::pool<ship> ships(o);
    auto [h, s] = ships.emplace();
    s->name = "Rocinante";
    s->cargo = {1, 2, 3};
    if (ships.save_file(path) != OPOOL_OK) return OPOOL_EIO;

    opl::pool<ship> again = opl::pool<ship>::load_file(o, path);
    if (!again) return again.status(); /* OPOOL_ECORRUPT, OPOOL_ENOENT, ... */
    return again.get(h)->name == "Rocinante" ? OPOOL_OK : OPOOL_ECORRUPT; /* the same handle */
}

/* ---- helpers ---------------------------------------------------------------- */

struct bytes {
    std::vector<unsigned char> v;
    size_t at = 0;
};
static size_t write_bytes(void *ctx, const void *data, size_t n) {
    auto *b = static_cast<bytes *>(ctx);
    const auto *p = static_cast<const unsigned char *>(data);
    b->v.insert(b->v.end(), p, p + n);
    return n;
}
static size_t read_bytes(void *ctx, void *data, size_t n) {
    auto *b = static_cast<bytes *>(ctx);
    size_t k = std::min(n, b->v.size() - b->at);
    if (k != 0) std::memcpy(data, b->v.data() + b->at, k);
    b->at += k;
    return k;
}
static bool write_file(const char *path, const std::vector<unsigned char> &v) {
    FILE *f = std::fopen(path, "wb");
    if (f == nullptr) return false;
    bool ok = std::fwrite(v.data(), 1, v.size(), f) == v.size();
    return std::fclose(f) == 0 && ok;
}
static std::vector<unsigned char> read_file(const char *path) {
    std::vector<unsigned char> v;
    FILE *f = std::fopen(path, "rb");
    if (f == nullptr) return v;
    int c;
    while ((c = std::fgetc(f)) != EOF) v.push_back(static_cast<unsigned char>(c));
    std::fclose(f);
    return v;
}

static uint64_t get_le(const unsigned char *b, int n) {
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = v << 8 | b[k];
    return v;
}
static void put_le(unsigned char *b, uint64_t v, int n) {
    for (int k = 0; k < n; k++) b[k] = static_cast<unsigned char>(v >> (8 * k));
}
/* The image's checksum made right again (docs/FORMAT.md: FNV-1a 64 of every byte before
 * it), so a damaged record reaches the serializer instead of failing the checksum. */
static void reseal(std::vector<unsigned char> &img) {
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t k = 0; k < img.size() - 8; k++) h = (h ^ img[k]) * 0x100000001b3u;
    put_le(&img[img.size() - 8], h, 8);
}
/* Where the objects of a pool image (or of a world's section starting at `at`) begin and
 * end (docs/FORMAT.md: the header's nslots, count, object_size and flags), and where each
 * record starts (its u64 length) when they are records. */
struct records {
    size_t first, end;
    std::vector<size_t> at;
};
static records records_of(const std::vector<unsigned char> &img, size_t at) {
    records r;
    uint64_t nslots = get_le(&img[at + 60], 4), count = get_le(&img[at + 68], 4);
    bool by_record = (get_le(&img[at + 12], 4) & 1) != 0;
    r.first = at + 136 + static_cast<size_t>(nslots) * 8;
    size_t p = r.first;
    for (uint64_t k = 0; k < count; k++) {
        if (by_record) {
            r.at.push_back(p);
            p += 8 + static_cast<size_t>(get_le(&img[p], 8));
        } else {
            p += static_cast<size_t>(get_le(&img[at + 24], 8));
        }
    }
    r.end = p;
    return r;
}

/* stderr swallowed while a loop loads many damaged images (each load reports a line) */
struct quiet_stderr {
    FILE *sink = std::tmpfile();
    stderr_redirect r{};
    bool on = sink && stderr_redirect_begin(&r, fileno(sink));
    quiet_stderr() = default;
    quiet_stderr(const quiet_stderr &) = delete;
    quiet_stderr &operator=(const quiet_stderr &) = delete;
    ~quiet_stderr() {
        if (on) stderr_redirect_end(&r);
        if (sink) std::fclose(sink);
    }
};

static opl::options opts(uint32_t capacity, uint32_t max_capacity = 0, uint32_t salt = 0) {
    opl::options o = opl::options();
    o.capacity = capacity;
    o.max_capacity = max_capacity;
    o.salt = salt;
    return o;
}

/* ---- a type that counts its lives, saved through a serializer --------------- */

struct lives {
    static long made, ended;
    static long alive() { return made - ended; }
    static void reset() { made = ended = 0; }
};
long lives::made, lives::ended;

/* Each object holds heap memory (a string, a vector, a vector of strings): a leak or a
 * double destruction shows under ASan. */
struct counted {
    std::string name;
    std::vector<int> v;
    std::vector<std::string> tags;
    float x;
    counted(std::string n, std::vector<int> values, float f)
        : name(std::move(n)), v(std::move(values)), tags{name, "second tag"}, x(f) {
        lives::made++;
    }
    counted(counted &&o) noexcept
        : name(std::move(o.name)), v(std::move(o.v)), tags(std::move(o.tags)), x(o.x) {
        lives::made++;
    }
    counted(const counted &) = delete;
    counted &operator=(const counted &) = delete;
    ~counted() { lives::ended++; }
    bool operator==(const counted &o) const {
        return name == o.name && v == o.v && tags == o.tags && x == o.x;
    }
};

namespace opl {
template <> struct serializer<counted> {
    static bool save(writer &w, const counted &c) {
        return w.value(c.name) && w.value(c.v) && w.value(c.tags) && w.value(c.x);
    }
    /* "reject me" is a record this serializer refuses: a rejection after some objects */
    static bool load(reader &r, counted *mem) {
        std::string name;
        std::vector<int> v;
        std::vector<std::string> tags;
        float x;
        if (!r.value(name) || !r.value(v) || !r.value(tags) || !r.value(x)) return false;
        if (name == "reject me") return false;
#if OPOOL_HPP_EXCEPTIONS
        if (name == "throw") throw std::runtime_error("load threw");
#endif
        counted *c = ::new (mem) counted(std::move(name), std::move(v), x);
        c->tags = std::move(tags);
        return true;
    }
};
} // namespace opl

static counted make_counted(int k) {
    return counted("object " + std::to_string(k), std::vector<int>(static_cast<size_t>(k % 5), k),
                   static_cast<float>(k) * 0.5f);
}

/* Counts its lives; its serializer throws on 13 (exceptions only), after the elements
 * before it were built. */
struct boom {
    int v;
    explicit boom(int x) : v(x) { lives::made++; }
    boom(boom &&o) noexcept : v(o.v) { lives::made++; }
    boom(const boom &o) : v(o.v) { lives::made++; }
    boom &operator=(const boom &) = default;
    ~boom() { lives::ended++; }
};
/* 4 KiB an element, one byte in its record: a count that its record's bytes allow is
 * still far more memory than them */
struct wide {
    unsigned char b[4096];
};
/* A serializer that writes nothing (and so breaks the rule of one in a vector). */
struct silent {
    int x;
};
namespace opl {
template <> struct serializer<boom> {
    static bool save(writer &w, const boom &b) { return w.value(b.v); }
    static bool load(reader &r, boom *mem) {
        int v;
        if (!r.value(v)) return false;
#if OPOOL_HPP_EXCEPTIONS
        if (v == 13) throw std::runtime_error("boom");
#endif
        ::new (mem) boom(v);
        return true;
    }
};
template <> struct serializer<wide> {
    static bool save(writer &w, const wide &x) { return w.value(x.b[0]); }
    static bool load(reader &r, wide *mem) {
        unsigned char b;
        if (!r.value(b) || b != 1) return false;
        ::new (mem) wide{};
        mem->b[0] = b;
        return true;
    }
};
template <> struct serializer<silent> {
    static bool save(writer &, const silent &) { return true; }
    static bool load(reader &, silent *mem) {
        ::new (mem) silent{0};
        return true;
    }
};
} // namespace opl

/* ---- tests ------------------------------------------------------------------ */

TEST(the_guide_example_saves_and_loads_a_ship_with_a_string) {
    const char *path = "hpp_save_guide.opool";
    CHECK(guide_example(path) == OPOOL_OK);
    std::remove(path);
}

/* The lines of a text file, each without its leading and trailing blanks. */
static std::vector<std::string> trimmed_lines(const std::string &path) {
    std::vector<std::string> out;
    std::string line;
    for (unsigned char c : read_file(path.c_str())) {
        if (c != '\n') {
            line += static_cast<char>(c);
            continue;
        }
        size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t\r");
        out.push_back(a == std::string::npos ? "" : line.substr(a, b - a + 1));
        line.clear();
    }
    return out;
}

/* docs/GUIDE.md prints the example above: each of its code blocks there is a run of lines
 * of this file (indentation aside), so the two cannot drift apart. */
TEST(the_guide_prints_the_example_this_file_compiles) {
    std::string self = __FILE__; /* absolute: CMake compiles sources by their full path */
    size_t at = self.rfind("tests/cpp/");
    REQUIRE(at != std::string::npos);
    std::vector<std::string> guide = trimmed_lines(self.substr(0, at) + "docs/GUIDE.md");
    std::vector<std::string> here = trimmed_lines(self);
    size_t k = 0;
    while (k < guide.size() &&
           guide[k].find("test_hpp_save.cpp compiles this example") == std::string::npos)
        k++;
    REQUIRE(k < guide.size());
    for (int block = 0; block < 2; block++) {
        while (k < guide.size() && guide[k] != "```cpp") k++;
        REQUIRE(k < guide.size());
        std::vector<std::string> code;
        for (k++; k < guide.size() && guide[k] != "```"; k++) code.push_back(guide[k]);
        REQUIRE(!code.empty());
        bool found = false;
        for (size_t i = 0; !found && i + code.size() <= here.size(); i++)
            found = std::equal(code.begin(), code.end(), here.begin() + static_cast<long>(i));
        CHECK(found);
    }
}

/* The type: a string, a vector and a float, through its serializer; every handle
 * and the live-list order come back, and the next handles issued are the same. */
TEST(a_pool_of_strings_and_vectors_keeps_its_handles_and_live_order) {
    const char *path = "hpp_save_ships.opool";
    opl::options o = opts(8, 64, 0x40);
    opl::pool<ship> p(o);
    std::vector<opl::handle<ship>> hs;
    for (int k = 0; k < 20; k++) {
        auto e = p.emplace();
        REQUIRE(e.obj);
        e.obj->name = std::string(static_cast<size_t>(k) * 7, static_cast<char>('a' + k));
        e.obj->cargo.assign(static_cast<size_t>(k), k);
        e.obj->hull = static_cast<float>(k) + 0.25f;
        hs.push_back(e.h);
    }
    for (int k = 0; k < 20; k += 3) CHECK(p.erase(hs[static_cast<size_t>(k)]));
    std::vector<opl::handle<ship>> order;
    for (auto it : p.items()) order.push_back(it.h);

    REQUIRE(p.save_file(path) == OPOOL_OK);
    opl::pool<ship> q = opl::pool<ship>::load_file(o, path);
    REQUIRE(q && q.status() == OPOOL_OK && q.size() == p.size());
    std::vector<opl::handle<ship>> again;
    for (auto it : q.items()) again.push_back(it.h);
    CHECK(again == order);
    for (int k = 0; k < 20; k++) {
        opl::handle<ship> h = hs[static_cast<size_t>(k)];
        const ship *a = p.get(h), *b = q.get(h);
        CHECK((a == nullptr) == (b == nullptr));
        if (a && b) CHECK(a->name == b->name && a->cargo == b->cargo && a->hull == b->hull);
    }
    CHECK(q.emplace().h == p.emplace().h);

    /* a T with a serializer loads only as records: a desc of another size is refused */
    opl::pool<ship> other = opl::pool<ship>::load_file(opts(16), path);
    CHECK(!other && other.status() == OPOOL_EINVAL);
    std::remove(path);
}

/* The primary serializer takes strings, vectors of them and vectors of vectors. */
TEST(the_primary_serializer_saves_strings_and_nested_vectors) {
    opl::pool<std::string> s(opts(4));
    auto a = s.emplace(std::string(1000, 'x')), b = s.emplace();
    bytes img;
    REQUIRE(s.save(write_bytes, &img) == OPOOL_OK);
    opl::pool<std::string> s2 = opl::pool<std::string>::load(opts(4), read_bytes, &img);
    REQUIRE(s2);
    CHECK(*s2.get(a.h) == std::string(1000, 'x') && s2.get(b.h)->empty());

    using nest = std::vector<std::vector<std::string>>;
    opl::pool<nest> n(opts(4));
    auto c = n.emplace(nest{{"a", "bb"}, {}, {"", "cccc"}});
    bytes img2;
    REQUIRE(n.save(write_bytes, &img2) == OPOOL_OK);
    opl::pool<nest> n2 = opl::pool<nest>::load(opts(4), read_bytes, &img2);
    REQUIRE(n2);
    CHECK(*n2.get(c.h) == (nest{{"a", "bb"}, {}, {"", "cccc"}}));
}

/* A user's serializer: it is used even for a trivially copyable type (whose bytes would
 * otherwise be saved), and a type with one nests inside a vector. */
struct cell {
    int value;
    const int *cache; /* not saved: rebuilt on load */
};
static const int cell_cache = 7;
static int cell_saves;
namespace opl {
template <> struct serializer<cell> {
    static bool save(writer &w, const cell &c) {
        cell_saves++;
        uint8_t version = 2;
        return w.value(version) && w.value(c.value);
    }
    static bool load(reader &r, cell *mem) {
        uint8_t version;
        int v;
        if (!r.value(version) || version != 2 || !r.value(v)) return false;
        ::new (mem) cell{v, &cell_cache};
        return true;
    }
};
} // namespace opl

TEST(a_users_serializer_takes_over_even_a_trivially_copyable_type) {
    static_assert(std::is_trivially_copyable<cell>::value, "the point of this test");
    opl::pool<cell> p(opts(4));
    auto a = p.emplace(cell{41, nullptr});
    cell_saves = 0;
    bytes img;
    REQUIRE(p.save(write_bytes, &img) == OPOOL_OK);
    CHECK(cell_saves == 1);
    CHECK((get_le(&img.v[12], 4) & 1) == 1); /* flags bit 0: records, not the bytes */
    records rs = records_of(img.v, 0);
    CHECK(rs.at.size() == 1 && get_le(&img.v[rs.at[0]], 8) == 5); /* a version and an int */
    opl::pool<cell> q = opl::pool<cell>::load(opts(4), read_bytes, &img);
    REQUIRE(q);
    CHECK(q.get(a.h)->value == 41 && q.get(a.h)->cache == &cell_cache);

    opl::pool<std::vector<cell>> v(opts(2));
    auto b = v.emplace(std::vector<cell>{{1, nullptr}, {2, nullptr}});
    bytes img2;
    REQUIRE(v.save(write_bytes, &img2) == OPOOL_OK);
    opl::pool<std::vector<cell>> w = opl::pool<std::vector<cell>>::load(opts(2), read_bytes, &img2);
    REQUIRE(w && w.get(b.h)->size() == 2);
    CHECK((*w.get(b.h))[1].value == 2 && (*w.get(b.h))[1].cache == &cell_cache);
}

/* reader: every length is bounded by what is left of the record; a short record, an
 * invalid bool, bytes left over fail. */
TEST(a_reader_refuses_lengths_beyond_its_record) {
    unsigned char rec[16] = {0};
    put_le(rec, 8, 8); /* a string of 8 characters: exactly what is left */
    std::memcpy(rec + 8, "abcdefgh", 8);
    std::string s;
    opl::reader r(rec, sizeof rec);
    CHECK(r.value(s) && s == "abcdefgh" && r.left() == 0 && r.ok());
    put_le(rec, 9, 8); /* one more than is left */
    opl::reader r2(rec, sizeof rec);
    CHECK(!r2.value(s) && !r2.ok());
    put_le(rec, uint64_t(1) << 62, 8); /* hostile: nothing is allocated for it */
    std::vector<uint64_t> big;
    opl::reader r3(rec, sizeof rec);
    CHECK(!r3.value(big) && big.empty());
    put_le(rec, 2, 8); /* 2 strings need at least 16 bytes: 8 are left */
    std::vector<std::string> strings;
    opl::reader r4(rec, sizeof rec);
    CHECK(!r4.value(strings));
    opl::reader r5(rec, 7); /* short of a length */
    CHECK(!r5.value(s) && !r5.value(s));
    unsigned char two = 2;
    bool flag = false;
    opl::reader r6(&two, 1);
    CHECK(!r6.value(flag));
}

/* A count the record's bytes allow (one byte an element) reserves no more memory than
 * those bytes: a vector of elements with their own serializer grows as they are read. */
TEST(a_hostile_count_reserves_no_more_than_the_record_holds) {
    unsigned char rec[8 + 992];
    std::memset(rec, 0, sizeof rec);
    put_le(rec, 992, 8); /* 992 elements of one byte each: exactly what is left */
    std::vector<wide> v;
    opl::reader r(rec, sizeof rec);
    CHECK(!r.value(v)); /* the first element's byte is 0: rejected */
    CHECK(v.capacity() * sizeof(wide) <= sizeof rec);

    opl::pool<std::vector<wide>> p(opts(2));
    std::vector<wide> three(3);
    for (wide &w : three) w.b[0] = 1;
    auto a = p.emplace(three);
    bytes img;
    REQUIRE(p.save(write_bytes, &img) == OPOOL_OK);
    opl::pool<std::vector<wide>> q = opl::pool<std::vector<wide>>::load(opts(2), read_bytes, &img);
    REQUIRE(q && q.get(a.h)->size() == 3 && (*q.get(a.h))[2].b[0] == 1);
}

/* A serializer used in a vector must write a byte (the load's bound on the count): one that
 * writes nothing fails the save with OPOOL_EINVAL instead of an image that never loads. */
TEST(a_serializer_writing_nothing_in_a_vector_fails_the_save) {
    const char *path = "hpp_save_silent.opool";
    std::remove(path);
    opl::pool<std::vector<silent>> p(opts(2));
    auto a = p.emplace(std::vector<silent>(20));
    bytes img;
    CHECK(p.save(write_bytes, &img) == OPOOL_EINVAL);
    CHECK(p.save_file(path) == OPOOL_EINVAL);
    CHECK(read_file(path).empty()); /* no file made */
    CHECK(p.erase(a.h));
    (void)p.emplace(); /* an empty vector writes only its count */
    bytes img2;
    CHECK(p.save(write_bytes, &img2) == OPOOL_OK);
    opl::pool<std::vector<silent>> q =
        opl::pool<std::vector<silent>>::load(opts(2), read_bytes, &img2);
    CHECK(q && q.size() == 1);
}

/* load and load_file refuse the options the constructor refuses: a T with a destructor in a
 * pool without a live list could not be destroyed (the destructor would walk no list). */
TEST(a_load_refuses_a_live_list_left_out_for_a_t_with_a_destructor) {
    const char *path = "hpp_save_nolist.opool";
    opl::pool<std::string> s(opts(4));
    (void)s.emplace("x");
    bytes img;
    REQUIRE(s.save(write_bytes, &img) == OPOOL_OK);
    REQUIRE(s.save_file(path) == OPOOL_OK);
    opl::options o = opts(4);
    o.flags = OPOOL_NO_LIVE_LIST;
    opl::pool<std::string> made(o);
    CHECK(!made && made.status() == OPOOL_EINVAL);
    opl::pool<std::string> q = opl::pool<std::string>::load(o, read_bytes, &img);
    CHECK(!q && q.status() == OPOOL_EINVAL);
    opl::pool<std::string> f = opl::pool<std::string>::load_file(o, path);
    CHECK(!f && f.status() == OPOOL_EINVAL);
    opl::pool<std::string> e(o, [](opl::pool<std::string> &p, void *) { return p.live_handle(0); });
    CHECK(!e && e.status() == OPOOL_EINVAL);
    std::remove(path);
}

#if OPOOL_HPP_EXCEPTIONS
/* The primary serializer builds its T before reading into it: a throw from inside (an
 * element's serializer) ends that T, and the elements already in it, too. */
TEST(a_throw_inside_the_primary_serializer_ends_its_object) {
    lives::reset();
    bytes img;
    {
        opl::pool<std::vector<boom>> p(opts(4));
        std::vector<boom> v;
        v.emplace_back(1);
        v.emplace_back(2);
        v.emplace_back(13);
        REQUIRE(p.emplace(std::move(v)).obj);
        REQUIRE(p.save(write_bytes, &img) == OPOOL_OK);
    }
    CHECK(lives::alive() == 0);
    quiet_stderr quiet;
    bool thrown = false;
    try {
        opl::pool<std::vector<boom>> q =
            opl::pool<std::vector<boom>>::load(opts(4), read_bytes, &img);
    } catch (const std::runtime_error &) {
        thrown = true;
    }
    CHECK(thrown && lives::alive() == 0);
}
#endif

/* Every truncation and bit flip of an image fails the load with OPOOL_ECORRUPT and leaves
 * no object constructed (ASan: nothing leaked, nothing destroyed twice). Flips inside the
 * records, with the checksum made right again, reach the serializer. */
TEST(a_damaged_image_loads_nothing_and_leaks_nothing) {
    lives::reset();
    opl::options o = opts(16);
    std::vector<unsigned char> img;
    {
        opl::pool<counted> p(o);
        for (int k = 0; k < 9; k++) REQUIRE(p.emplace(make_counted(k)).obj);
        bytes b;
        REQUIRE(p.save(write_bytes, &b) == OPOOL_OK);
        img = b.v;
    }
    CHECK(lives::alive() == 0);
    quiet_stderr quiet;
    for (size_t cut = 0; cut < img.size(); cut++) {
        bytes part;
        part.v.assign(img.begin(), img.begin() + static_cast<long>(cut));
        opl::pool<counted> q = opl::pool<counted>::load(o, read_bytes, &part);
        CHECK(!q && q.status() == OPOOL_ECORRUPT);
        CHECK(lives::alive() == 0);
    }
    for (size_t at = 0; at < img.size(); at += 3) { /* the checksum catches these */
        bytes bad;
        bad.v = img;
        bad.v[at] ^= static_cast<unsigned char>(1u << (at % 8));
        opl::pool<counted> q = opl::pool<counted>::load(o, read_bytes, &bad);
        CHECK(!q && q.status() == OPOOL_ECORRUPT && lives::alive() == 0);
    }
    records rs = records_of(img, 0);
    REQUIRE(rs.at.size() == 9 && rs.end + 8 == img.size());
    int corrupt = 0, fine = 0, by_reader = 0;
    for (size_t at = rs.first; at < rs.end; at++) {
        for (int bit = 0; bit < 8; bit += 3) {
            bytes bad;
            bad.v = img;
            bad.v[at] ^= static_cast<unsigned char>(1u << bit);
            reseal(bad.v);
            {
                opl::pool<counted> q = opl::pool<counted>::load(o, read_bytes, &bad);
                if (q) {
                    fine++; /* a flip inside a character or a number: another value */
                    CHECK(q.size() == 9 && lives::alive() == 9);
                } else {
                    corrupt++;
                    if (std::strcmp(opool_last_load_error()->check, "load_object") == 0)
                        by_reader++; /* past the checksum: the reader refused it */
                    CHECK(lives::alive() == 0);
                }
            }
            CHECK(lives::alive() == 0);
        }
    }
    CHECK(corrupt > 0 && fine > 0 && by_reader > 0);

    /* every record cut short (its length and the checksum made right): the reader finds it
     * short, and the objects before it end */
    for (size_t k = 0; k < rs.at.size(); k++) {
        size_t len = static_cast<size_t>(get_le(&img[rs.at[k]], 8));
        for (size_t cut = 1; cut <= len; cut++) {
            bytes bad;
            bad.v = img;
            put_le(&bad.v[rs.at[k]], len - cut, 8);
            size_t end = rs.at[k] + 8 + len;
            bad.v.erase(bad.v.begin() + static_cast<long>(end - cut),
                        bad.v.begin() + static_cast<long>(end));
            reseal(bad.v);
            opl::pool<counted> q = opl::pool<counted>::load(o, read_bytes, &bad);
            CHECK(!q && q.status() == OPOOL_ECORRUPT && lives::alive() == 0);
            CHECK(std::strcmp(opool_last_load_error()->check, "load_object") == 0);
        }
    }

    /* a record with a byte its serializer leaves unread is corrupt too */
    bytes longer;
    longer.v = img;
    size_t last = rs.at.back();
    put_le(&longer.v[last], get_le(&longer.v[last], 8) + 1, 8);
    longer.v.insert(longer.v.begin() + static_cast<long>(rs.end), 0);
    reseal(longer.v);
    opl::pool<counted> q = opl::pool<counted>::load(o, read_bytes, &longer);
    CHECK(!q && q.status() == OPOOL_ECORRUPT && lives::alive() == 0);
    CHECK(std::strcmp(opool_last_load_error()->check, "load_object") == 0);
}

/* A record the serializer rejects after others were built: every object built ends. */
TEST(a_rejected_record_ends_every_object_already_loaded) {
    lives::reset();
    opl::options o = opts(16);
    bytes img;
    {
        opl::pool<counted> p(o);
        for (int k = 0; k < 6; k++) REQUIRE(p.emplace(make_counted(k)).obj);
        REQUIRE(p.emplace(counted("reject me", {}, 0)).obj);
        REQUIRE(p.save(write_bytes, &img) == OPOOL_OK);
    }
    quiet_stderr quiet;
    lives::reset();
    opl::pool<counted> q = opl::pool<counted>::load(o, read_bytes, &img);
    CHECK(!q && q.status() == OPOOL_ECORRUPT);
    CHECK(lives::made == 6 && lives::ended == 6);
    CHECK(std::strcmp(opool_last_load_error()->check, "load_object") == 0);
}

#if OPOOL_HPP_EXCEPTIONS
TEST(a_serializer_that_throws_fails_the_load_and_the_exception_goes_on) {
    lives::reset();
    opl::options o = opts(16);
    bytes img;
    {
        opl::pool<counted> p(o);
        for (int k = 0; k < 3; k++) REQUIRE(p.emplace(make_counted(k)).obj);
        REQUIRE(p.emplace(counted("throw", {}, 0)).obj);
        REQUIRE(p.save(write_bytes, &img) == OPOOL_OK);
    }
    lives::reset();
    quiet_stderr quiet;
    bool thrown = false;
    try {
        opl::pool<counted> q = opl::pool<counted>::load(o, read_bytes, &img);
    } catch (const std::runtime_error &) {
        thrown = true;
    }
    CHECK(thrown && lives::made == 3 && lives::ended == 3);
}
#endif

/* ---- worlds ----------------------------------------------------------------- */

struct point {
    float x, y;
};

static opl::pool<counted> quiet_counted(uint32_t capacity, uint32_t max_capacity) {
    opool_desc d = quiet_desc(0, capacity, 0x100);
    d.max_capacity = max_capacity;
    d.on_full = max_capacity > capacity ? OPOOL_FULL_GROW : OPOOL_FULL_FAIL;
    return opl::pool<counted>::from_desc(d);
}
static opl::pool<point> quiet_points(uint32_t capacity) {
    return opl::pool<point>::from_desc(quiet_desc(0, capacity, 0x200));
}

/* A world's contents as plain values, to compare a world before and after. */
struct world_view {
    std::vector<std::pair<uint64_t, std::string>> objects; /* live order */
    std::vector<std::pair<uint64_t, float>> points;
    std::vector<std::pair<uint64_t, std::string>> notes;
    std::vector<std::pair<uint64_t, int>> marks;
    uint32_t sizes[4];
    bool operator==(const world_view &o) const {
        return objects == o.objects && points == o.points && notes == o.notes && marks == o.marks &&
               std::memcmp(sizes, o.sizes, sizeof sizes) == 0;
    }
};
static world_view view(opl::pool<counted> &a, opl::pool<point> &b,
                       opl::side_table<counted, std::string> &notes,
                       opl::side_table<point, int> &marks) {
    world_view w;
    w.sizes[0] = a.size(), w.sizes[1] = b.size(), w.sizes[2] = notes.size();
    w.sizes[3] = marks.size();
    for (auto it : a.items()) {
        std::string all = it.obj.name + "|" + std::to_string(it.obj.v.size()) + "|" +
                          it.obj.tags[0] + "|" + std::to_string(it.obj.x);
        w.objects.push_back({it.h.raw().bits, all});
        if (const std::string *n = notes.get(it.h)) w.notes.push_back({it.h.raw().bits, *n});
    }
    for (auto it : b.items()) {
        w.points.push_back({it.h.raw().bits, it.obj.x + it.obj.y});
        if (const int *m = marks.get(it.h)) w.marks.push_back({it.h.raw().bits, *m});
    }
    return w;
}

TEST(a_world_of_two_pools_and_side_tables_round_trips) {
    const char *path = "hpp_save_world.opool";
    lives::reset();
    {
        opl::pool<counted> a = quiet_counted(4, 64);
        opl::pool<point> b = quiet_points(32);
        opl::side_table<counted, std::string> notes(a);
        opl::side_table<point, int> marks(b);
        REQUIRE(a && b && notes && marks);
        std::vector<opl::handle<counted>> ha;
        for (int k = 0; k < 12; k++) {
            auto e = a.emplace(make_counted(k));
            REQUIRE(e.obj);
            ha.push_back(e.h);
            if (k % 2) REQUIRE(notes.emplace(e.h, "note " + std::to_string(k)));
            auto f = b.emplace(point{static_cast<float>(k), 1});
            REQUIRE(f.obj && marks.emplace(f.h, k * 10));
        }
        CHECK(a.erase(ha[3]) && notes.erase(ha[5]));
        world_view saved = view(a, b, notes, marks);
        REQUIRE(opl::save_world_file(path, a, b, notes, marks) == OPOOL_OK);

        for (int k = 0; k < 5; k++) (void)a.emplace(make_counted(100 + k)); /* changes, then */
        CHECK(a.erase(ha[0]) && notes.emplace(ha[1], "changed") && b.erase(b.live_handle(0)));
        CHECK(!(view(a, b, notes, marks) == saved));
        REQUIRE(opl::load_world_file(path, a, b, notes, marks) == OPOOL_OK);
        CHECK(view(a, b, notes, marks) == saved);
        CHECK(a.size() == 11 && lives::alive() == 11); /* the old objects ended */
        CHECK(a.get(ha[0]) && *notes.get(ha[1]) == "note 1" && !a.get(ha[3]));
        CHECK(a.status() == OPOOL_OK && notes.status() == OPOOL_OK);

        /* parts in another order, another number, or twice: refused, nothing changes */
        CHECK(opl::load_world_file(path, b, a, notes, marks) == OPOOL_EINVAL);
        CHECK(opl::load_world_file(path, a, b, notes) == OPOOL_EINVAL);
        CHECK(opl::load_world_file(path, a, a, notes, marks) == OPOOL_EINVAL);
        CHECK(opl::save_world_file(path, a, a) == OPOOL_EINVAL);
        opl::pool<point> none;
        CHECK(opl::save_world_file(path, a, none) == OPOOL_EINVAL);
        CHECK(opl::load_world_file("no-such-world.opool", a, b, notes, marks) == OPOOL_ENOENT);
        CHECK(view(a, b, notes, marks) == saved);
    }
    CHECK(lives::alive() == 0);
    std::remove(path);
}

/* A table's values' pool is made from its pool as made, not as grown: a program that makes
 * the same pool and table loads the world whatever the saving one's pool did first. */
TEST(a_table_made_after_its_pool_grew_loads_into_a_fresh_program) {
    const char *path = "hpp_save_grown.opool";
    lives::reset();
    std::vector<opl::handle<counted>> hs;
    {
        opl::pool<counted> a(opts(4, 16));
        for (int k = 0; k < 10; k++) hs.push_back(a.emplace(make_counted(k)).h);
        REQUIRE(a.capacity() == 16);
        opl::side_table<counted, std::string> notes(a);
        REQUIRE(notes && notes.emplace(hs[9], "nine"));
        REQUIRE(opl::save_world_file(path, a, notes) == OPOOL_OK);
    }
    {
        opl::pool<counted> a(opts(4, 16));
        opl::side_table<counted, std::string> notes(a);
        REQUIRE(opl::load_world_file(path, a, notes) == OPOOL_OK);
        CHECK(a.size() == 10 && notes.get(hs[9]) && *notes.get(hs[9]) == "nine");
    }
    CHECK(lives::alive() == 0);
    std::remove(path);
}

/* A table's values are keyed to its pool's handles: loading a table without that pool
 * among the parts is refused before anything changes. */
TEST(a_world_load_refuses_a_table_without_its_pool) {
    const char *path = "hpp_save_orphan.opool";
    lives::reset();
    {
        opl::pool<counted> a = quiet_counted(8, 0);
        opl::pool<point> b = quiet_points(8);
        opl::side_table<counted, std::string> notes(a);
        auto e = a.emplace(make_counted(1));
        REQUIRE(e.obj && notes.emplace(e.h, "one"));
        REQUIRE(opl::save_world_file(path, b, notes) == OPOOL_OK);
        CHECK(opl::load_world_file(path, b, notes) == OPOOL_EINVAL);
        opl::pool<counted> other = quiet_counted(8, 0); /* a pool of its type, not its pool */
        CHECK(opl::load_world_file(path, other, notes) == OPOOL_EINVAL);
        CHECK(*notes.get(e.h) == "one" && notes.size() == 1);

        /* its pool anywhere among the parts will do */
        REQUIRE(opl::save_world_file(path, notes, a) == OPOOL_OK);
        CHECK(opl::load_world_file(path, notes, a) == OPOOL_OK);
        CHECK(*notes.get(e.h) == "one" && a.size() == 1);
    }
    CHECK(lives::alive() == 0);
    std::remove(path);
}

/* A pool keeps what made it, not a copy of the whole desc; what a world load rebuilds from
 * it makes the same pool (options, from_desc, the evict constructor). */
TEST(a_pool_keeps_what_made_it_in_little_room) {
    static_assert(sizeof(opl::pool<int>) <= 64, "options and two pointers, not a desc");
    const char *path = "hpp_save_made.opool";
    opl::options o = opts(4);
    o.name = "evicting";
    auto oldest = [](opl::pool<std::string> &p, void *) { return p.live_handle(0); };
    opl::pool<std::string> ev(o, oldest);
    for (int k = 0; k < 6; k++) REQUIRE(ev.emplace(std::to_string(k)).obj);
    opl::pool<point> b = quiet_points(8);
    REQUIRE(b.emplace(point{1, 2}).obj);
    REQUIRE(opl::save_world_file(path, ev, b) == OPOOL_OK);
    ev.clear();
    b.clear();
    REQUIRE(opl::load_world_file(path, ev, b) == OPOOL_OK);
    CHECK(ev.size() == 4 && b.size() == 1);
    REQUIRE(ev.emplace("6").obj); /* still evicts */
    CHECK(ev.size() == 4 && ev.stats().evictions == 3);
    std::remove(path);
}

/* Every truncation, bit flips, and damaged records (checksum made right) of a world file:
 * the load fails and every part is exactly as it was; nothing loaded stays constructed. */
TEST(a_damaged_world_leaves_every_part_as_it_was) {
    const char *path = "hpp_save_world_bad.opool";
    lives::reset();
    {
        opl::pool<counted> a = quiet_counted(16, 0);
        opl::pool<point> b = quiet_points(16);
        opl::side_table<counted, std::string> notes(a);
        opl::side_table<point, int> marks(b);
        for (int k = 0; k < 5; k++) {
            auto e = a.emplace(make_counted(k));
            REQUIRE(e.obj && notes.emplace(e.h, std::string(static_cast<size_t>(k), 'n')));
            auto f = b.emplace(point{1, static_cast<float>(k)});
            REQUIRE(f.obj && marks.emplace(f.h, k));
        }
        REQUIRE(opl::save_world_file(path, a, b, notes, marks) == OPOOL_OK);
        std::vector<unsigned char> img = read_file(path);
        REQUIRE(img.size() > 100);
        /* the parts now hold something else, which every failed load must keep */
        a.clear();
        (void)a.emplace(make_counted(77));
        (void)notes.emplace(a.live_handle(0), "kept");
        world_view now = view(a, b, notes, marks);
        long alive = lives::alive();

        quiet_stderr quiet; /* the tables' value pools report each failure */
        auto attempt = [&](const std::vector<unsigned char> &bad) {
            REQUIRE(write_file(path, bad));
            opool_status s = opl::load_world_file(path, a, b, notes, marks);
            CHECK(s == OPOOL_ECORRUPT);
            CHECK(view(a, b, notes, marks) == now && lives::alive() == alive);
        };
        for (size_t cut = 0; cut < img.size(); cut++)
            attempt(std::vector<unsigned char>(img.begin(), img.begin() + static_cast<long>(cut)));
        for (size_t at = 0; at < img.size(); at += 5) {
            std::vector<unsigned char> bad = img;
            bad[at] ^= 0x10;
            attempt(bad);
        }
        /* the notes' records (section 2): a string's length past its record */
        size_t at = 16;
        records ra = records_of(img, at);
        records rb = records_of(img, ra.end);
        records rn = records_of(img, rb.end);
        REQUIRE(rn.at.size() == 5);
        for (size_t k = 0; k < rn.at.size(); k++) {
            std::vector<unsigned char> bad = img;
            put_le(&bad[rn.at[k] + 8], get_le(&bad[rn.at[k] + 8], 8) + 1, 8);
            reseal(bad);
            attempt(bad);
        }
        /* the objects' records (section 0): the last one's name length, huge */
        std::vector<unsigned char> bad = img;
        put_le(&bad[ra.at.back() + 8], uint64_t(1) << 40, 8);
        reseal(bad);
        attempt(bad);
    }
    CHECK(lives::alive() == 0);
    std::remove(path);
}

/* ---- a reference model across save/load cycles ------------------------------- */

/* Random emplaces, erases and changes on a pool of strings-and-vectors, saved and loaded
 * every few steps (into memory or through a world file with a side table): the pool always
 * holds exactly the model's values under the model's handles, in the same live order. */
TEST(random_histories_across_save_and_load_keep_the_model) {
    const char *path = "hpp_save_model.opool";
    lives::reset();
    rng g = {0x5A7E};
    opl::options o = opts(8, 256);
    {
        opl::pool<counted> p(o);
        opl::side_table<counted, std::vector<std::string>> side(p);
        std::map<opl::handle<counted>, std::string> model;
        std::map<opl::handle<counted>, std::vector<std::string>> side_model;
        std::vector<opl::handle<counted>> order;
        auto check = [&] {
            CHECK(p.size() == model.size());
            for (auto &kv : model) {
                const counted *c = p.get(kv.first);
                CHECK(c && c->name == kv.second && c->tags.size() == 2);
                const std::vector<std::string> *s = side.get(kv.first);
                auto sm = side_model.find(kv.first);
                CHECK((s != nullptr) == (sm != side_model.end()));
                if (s && sm != side_model.end()) CHECK(*s == sm->second);
            }
        };
        for (int step = 0; step < 3000; step++) {
            uint32_t op = rng_below(&g, 20);
            if (op < 9) {
                int k = static_cast<int>(rng_below(&g, 100000));
                auto e = p.emplace(make_counted(k));
                if (e.obj) {
                    model[e.h] = e.obj->name;
                    side_model.erase(e.h); /* a slot reused: no value from its last object */
                    if (rng_below(&g, 2)) {
                        std::vector<std::string> v(rng_below(&g, 4), e.obj->name);
                        REQUIRE(side.emplace(e.h, v));
                        side_model[e.h] = v;
                    }
                }
            } else if (op < 17 && !model.empty()) {
                auto it = model.begin();
                std::advance(it,
                             static_cast<long>(rng_below(&g, static_cast<uint32_t>(model.size()))));
                CHECK(p.erase(it->first));
                side.erase(it->first);
                side_model.erase(it->first);
                model.erase(it);
            } else if (!model.empty()) {
                auto it = model.begin();
                std::advance(it,
                             static_cast<long>(rng_below(&g, static_cast<uint32_t>(model.size()))));
                counted *c = p.get(it->first);
                REQUIRE(c);
                c->name += "+";
                it->second = c->name;
            }
            if (step % 97 == 96) {
                order.clear();
                for (auto it : p.items()) order.push_back(it.h);
                if (step % 5 != 1) { /* in memory; every fifth through a (synced) file */
                    bytes img;
                    REQUIRE(p.save(write_bytes, &img) == OPOOL_OK);
                    opl::pool<counted> q = opl::pool<counted>::load(o, read_bytes, &img);
                    REQUIRE(q);
                    p = std::move(q); /* the table follows the pool object: its values stay */
                } else {
                    REQUIRE(opl::save_world_file(path, p, side) == OPOOL_OK);
                    side.clear();
                    p.clear();
                    REQUIRE(opl::load_world_file(path, p, side) == OPOOL_OK);
                }
                std::vector<opl::handle<counted>> again;
                for (auto it : p.items()) again.push_back(it.h);
                CHECK(again == order);
                check();
            }
        }
        check();
        CHECK(lives::alive() == static_cast<long>(model.size()));
    }
    CHECK(lives::alive() == 0);
    std::remove(path);
}

int main() {
    RUN(the_guide_example_saves_and_loads_a_ship_with_a_string);
    RUN(the_guide_prints_the_example_this_file_compiles);
    RUN(a_pool_of_strings_and_vectors_keeps_its_handles_and_live_order);
    RUN(the_primary_serializer_saves_strings_and_nested_vectors);
    RUN(a_users_serializer_takes_over_even_a_trivially_copyable_type);
    RUN(a_reader_refuses_lengths_beyond_its_record);
    RUN(a_hostile_count_reserves_no_more_than_the_record_holds);
    RUN(a_serializer_writing_nothing_in_a_vector_fails_the_save);
    RUN(a_load_refuses_a_live_list_left_out_for_a_t_with_a_destructor);
#if OPOOL_HPP_EXCEPTIONS
    RUN(a_throw_inside_the_primary_serializer_ends_its_object);
#endif
    RUN(a_damaged_image_loads_nothing_and_leaks_nothing);
    RUN(a_rejected_record_ends_every_object_already_loaded);
#if OPOOL_HPP_EXCEPTIONS
    RUN(a_serializer_that_throws_fails_the_load_and_the_exception_goes_on);
#endif
    RUN(a_world_of_two_pools_and_side_tables_round_trips);
    RUN(a_table_made_after_its_pool_grew_loads_into_a_fresh_program);
    RUN(a_world_load_refuses_a_table_without_its_pool);
    RUN(a_pool_keeps_what_made_it_in_little_room);
    RUN(a_damaged_world_leaves_every_part_as_it_was);
    RUN(random_histories_across_save_and_load_keep_the_model);
    return test_summary();
}
