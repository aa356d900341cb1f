/*
 * opool.hpp -- opool for C++17: pools of objects with constructors and
 * destructors, typed handles, range-for (namespace opl)
 *
 * ============================================================================
 * WHAT IT IS
 * ============================================================================
 * Thin templates over the C library (opool.h, opool_mt.h, opool_heap.h) that
 * give a pool of T the lifetime of T: emplace constructs in place, erase
 * runs ~T, and the pool's destructor runs ~T of every object still live.
 * The namespace is opl, not opool: in C++ that name is the C pool's type.
 * Every promise of the C headers holds (handles, ITERATION, EXHAUSTION,
 * save/load); this header says only what the templates add.
 *
 * ============================================================================
 * STEP BY STEP
 * ============================================================================
 *     struct ship { std::string name; opl::handle<ship> target; ... };
 *
 *     opl::pool<ship> ships({.capacity = 256, .name = "ships"});  // C++20 designators;
 *     if (!ships) ...;                                           // C++17: o.capacity = 256
 *
 *     auto [h, s] = ships.emplace("Rocinante");   // {null, nullptr} when full
 *     ship *same = ships.get(h);                  // nullptr once h is stale
 *     ships.erase(h);                             // ~ship, then the slot is free
 *
 *     for (ship &s : ships) ...;                  // every live ship once
 *     for (auto [h, s] : ships.items())           // with its handle; erasing
 *         if (s.hull <= 0) ships.erase(h);        // the current one is allowed
 *
 *     std::unordered_map<opl::handle<ship>, int> score;   // handles hash and compare
 *
 *     ships.save_file("ships.sav");               // any T with a serializer (below)
 *     auto again = opl::pool<ship>::load_file(o, "ships.sav");  // every handle as saved
 *     opl::save_world_file("world.sav", ships, names);          // pools and side tables,
 *     opl::load_world_file("world.sav", ships, names);          // all or none
 *
 * ============================================================================
 * WHAT EACH TYPE COSTS
 * ============================================================================
 * pool<T> holds the C pool's pointer (and the options it was made with, or
 * from_desc's desc on the heap, for load_world_file) and calls its inline
 * functions: for a trivially destructible T, emplace, erase and get compile
 * to what opool_alloc, opool_free and opool_get compile to, plus T's
 * constructor.
 * For a T with a destructor the wrapper runs ~T itself, before the free,
 * and installs no fini, so alloc and free stay on the inline fast path;
 * erase then costs one opool_get more. Only two paths end objects inside
 * the C library, and the wrapper covers both: the pool's own eviction
 * (the evict constructor) runs ~T of the victim before the C pool frees
 * it, and clear, retain and the destructor walk the live list first.
 *
 * mt_pool<T> installs a fini that runs ~T when T has a destructor: in a
 * shared pool only the free that wins the slot may destroy the object, and
 * the C pool runs fini in exactly that free. A fini keeps an opool_mt off
 * its caches' inline paths (opool_mt.h); a trivially destructible T keeps
 * them.
 *
 * ============================================================================
 * EXCEPTIONS
 * ============================================================================
 * Nothing here throws except T's (or V's) constructor, a serializer, and
 * heap_resource, which must (std::pmr). A constructor that throws leaves no
 * live slot: the slot is freed (its handle stale, counted as an alloc and a
 * free) and the exception goes on. A serializer that throws fails its save
 * or load (nothing loaded stays constructed), then the exception goes on. Builds with
 * -fno-exceptions and -fno-rtti: then heap_resource calls std::abort() where it would throw
 * std::bad_alloc.
 *
 * ============================================================================
 * LICENSE: zlib (see LICENSE)
 * ============================================================================
 */
#ifndef OPOOL_HPP
#define OPOOL_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#if !defined(_MSVC_LANG) || _MSVC_LANG < 201703L
#error "opool.hpp needs C++17 or later (opool.h alone serves C and C++11)"
#endif
#endif

/* The C headers' inline bodies are C: C++ warnings about C idioms (casts,
 * 0 for NULL) are silenced for them here, so a C++ build with those
 * warnings as errors includes opool.hpp first and stays clean. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wzero-as-null-pointer-constant"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuseless-cast"
#endif
#endif
#include "opool.h"
#include "opool_heap.h"
#include "opool_mt.h"
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__has_include)
#if __has_include(<memory_resource>)
#include <memory_resource>
#endif
#endif

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
#define OPOOL_HPP_EXCEPTIONS 1
#else
#define OPOOL_HPP_EXCEPTIONS 0
#endif

/* pool<T>'s emplace (with its steps: the alloc, the constructor and its
 * exception handling), erase and get compile into the caller, as the C
 * header's inline paths do: a constructor that may throw, or a destructor
 * to run, would otherwise leave them a call. */
#if defined(__GNUC__) || defined(__clang__)
#define OPOOL_HPP__HOT [[gnu::always_inline]]
#else
#define OPOOL_HPP__HOT
#endif

#define OPOOL_HPP__SAVABLE                                                                         \
    "opl: saving or loading a T (or a side table's V) needs a serializer: T trivially copyable, "  \
    "a std::string or std::vector of such, or a specialisation of opl::serializer<T>"

namespace opl {

/* ---- handles ------------------------------------------------------------ */

/* The handle of a T in a pool<T> or mt_pool<T>: 8 bytes, an opool_handle
 * underneath (raw()). Null by default; ==, != and < compare the bits (a
 * strict weak order, for std::set and std::map); std::hash is specialised.
 * Handles of different T never convert into each other; handle<T>(raw)
 * makes one from a C handle, explicitly. */
template <class T> class handle {
  public:
    constexpr handle() noexcept : h_{0} {}
    constexpr explicit handle(opool_handle h) noexcept : h_(h) {}
    constexpr opool_handle raw() const noexcept { return h_; }
    constexpr explicit operator bool() const noexcept { return h_.bits != 0; }
    constexpr uint32_t index() const noexcept { return static_cast<uint32_t>(h_.bits); }
    constexpr uint32_t generation() const noexcept { return static_cast<uint32_t>(h_.bits >> 32); }
    friend constexpr bool operator==(handle a, handle b) noexcept { return a.h_.bits == b.h_.bits; }
    friend constexpr bool operator!=(handle a, handle b) noexcept { return a.h_.bits != b.h_.bits; }
    friend constexpr bool operator<(handle a, handle b) noexcept { return a.h_.bits < b.h_.bits; }

  private:
    opool_handle h_;
};

/* A compact handle: 4 bytes, an opool_handle32 underneath; made by
 * pool<T>::compact and read back by pool<T>::expand (opool.h, compact
 * handles, gives the false-match bound). Null by default; compares and
 * hashes like handle<T>. */
template <class T> class handle32 {
  public:
    constexpr handle32() noexcept : h_{0} {}
    constexpr explicit handle32(opool_handle32 h) noexcept : h_(h) {}
    constexpr opool_handle32 raw() const noexcept { return h_; }
    constexpr explicit operator bool() const noexcept { return h_.bits != 0; }
    friend constexpr bool operator==(handle32 a, handle32 b) noexcept {
        return a.h_.bits == b.h_.bits;
    }
    friend constexpr bool operator!=(handle32 a, handle32 b) noexcept {
        return a.h_.bits != b.h_.bits;
    }
    friend constexpr bool operator<(handle32 a, handle32 b) noexcept {
        return a.h_.bits < b.h_.bits;
    }

  private:
    opool_handle32 h_;
};

static_assert(sizeof(handle<int>) == 8, "a handle is 8 bytes");
static_assert(sizeof(handle32<int>) == 4, "a compact handle is 4 bytes");

/* ---- options ------------------------------------------------------------ */

/* How to make a pool: an aggregate whose fields are all 0 (nullptr) unless
 * given, and zero fields are the defaults (as in opool_desc), so
 * `pool<T> p({.capacity = 256, .name = "ships"})` (C++20) names only what
 * it sets. object_size and object_align come from T.
 *   capacity      required, > 0: slots reserved at creation;
 *   max_capacity  above capacity: the pool grows up to it (OPOOL_FULL_GROW),
 *                 else it is fixed;
 *   flags         OPOOL_ZERO | OPOOL_POISON | OPOOL_RETIRE_ON_WRAP |
 *                 OPOOL_NO_LIVE_LIST (opool.h); OPOOL_ZERO fills the bytes
 *                 before T's constructor runs; OPOOL_NO_LIVE_LIST needs a
 *                 trivially destructible T (the pool keeps no list of its
 *                 objects to destroy them by), and its range-for, items() and
 *                 retain report OPOOL_EINVAL and visit nothing;
 *   salt          the generation origin (opool_desc.salt);
 *   name          the pool's name in the default report's lines (must
 *                 outlive the pool). */
struct options {
    uint32_t capacity = 0;
    uint32_t max_capacity = 0;
    uint32_t flags = 0;
    uint32_t salt = 0;
    const char *name = nullptr;
};

/* What emplace returns: the new object's handle and address, or {null,
 * nullptr} when the pool is full (or was not created). */
template <class T> struct emplaced {
    handle<T> h;
    T *obj;
};

/* What items() yields: a live object with its handle, for
 * `for (auto [h, obj] : p.items())`. */
template <class T> struct item {
    handle<typename std::remove_const<T>::type> h;
    T &obj;
};

namespace detail {

inline opool_desc desc_of(const options &o, size_t size, size_t align) noexcept {
    opool_desc d = opool_desc();
    d.object_size = size;
    d.object_align = align;
    d.capacity = o.capacity;
    d.max_capacity = o.max_capacity;
    d.on_full = o.max_capacity > o.capacity ? OPOOL_FULL_GROW : OPOOL_FULL_FAIL;
    d.flags = o.flags;
    d.salt = o.salt;
    d.name = o.name;
    return d;
}

template <class T, class... A> OPOOL_HPP__HOT inline T *construct(void *mem, A &&...args) {
    return ::new (mem) T(std::forward<A>(args)...);
}

/* Construct a T in mem, which free() gives back if the constructor throws. */
template <class T, class Free, class... A>
OPOOL_HPP__HOT inline T *construct_or_free(void *mem, Free free, A &&...args) {
#if OPOOL_HPP_EXCEPTIONS
    if constexpr (!std::is_nothrow_constructible<T, A...>::value) {
        try {
            return construct<T>(mem, std::forward<A>(args)...);
        } catch (...) {
            free();
            throw;
        }
    }
#else
    (void)free;
#endif
    return construct<T>(mem, std::forward<A>(args)...);
}

/* What an emplace returns once its alloc gave mem and h: {null, nullptr}
 * for no memory; else the T built there, free(h) giving the slot back if
 * the constructor throws. */
template <class T, class Free, class... A>
OPOOL_HPP__HOT inline emplaced<T> emplace_in(void *mem, opool_handle h, Free free, A &&...args) {
    if (OPOOL_UNLIKELY(mem == nullptr)) return {handle<T>(), nullptr};
    T *obj = construct_or_free<T>(
        mem, [&free, h] { free(h); }, std::forward<A>(args)...);
    return {handle<T>(h), obj};
}

/* The backward loop of opool.h (ITERATION) as an iterator: at is one past
 * the index it visits; an index left past the end by frees of other
 * objects is skipped, as OPOOL_FOREACH skips it. A forward iterator (C++20's
 * std::forward_iterator): copies walk the same objects, so views and the
 * ranges algorithms take a pool. For T &, a forward iterator of C++17 too;
 * for item<T>, which is a value holding a reference, an input iterator
 * there (iterator_category), a forward one to C++20 (iterator_concept). */
template <class T, class Value> class live_iterator {
    static constexpr bool ref_ = std::is_reference<Value>::value;

  public:
    using value_type = typename std::remove_cv<typename std::remove_reference<Value>::type>::type;
    using difference_type = std::ptrdiff_t;
    using iterator_category =
        typename std::conditional<ref_, std::forward_iterator_tag, std::input_iterator_tag>::type;
    using iterator_concept = std::forward_iterator_tag;
    using pointer = void;
    using reference = Value;

    live_iterator() noexcept = default;
    live_iterator(const opool *p, uint32_t at) noexcept : p_(p), at_(at) {}
    Value operator*() const noexcept {
        if constexpr (std::is_same<Value, T &>::value)
            return *static_cast<T *>(opool_live_object(p_, at_ - 1));
        else
            return Value{decltype(Value::h)(opool_live_handle(p_, at_ - 1)),
                         *static_cast<T *>(opool_live_object(p_, at_ - 1))};
    }
    live_iterator &operator++() noexcept {
        at_ = opool__live_next(p_, at_ - 1);
        return *this;
    }
    live_iterator operator++(int) noexcept {
        live_iterator was = *this;
        ++*this;
        return was;
    }
    /* the objects left to visit, this one included (a range's size) */
    uint32_t left() const noexcept { return at_; }
    friend bool operator==(const live_iterator &a, const live_iterator &b) noexcept {
        return a.at_ == b.at_;
    }
    friend bool operator!=(const live_iterator &a, const live_iterator &b) noexcept {
        return a.at_ != b.at_;
    }

  private:
    const opool *p_ = nullptr;
    uint32_t at_ = 0;
};

/* x as a size_t (its low bits where size_t is narrower), without a cast
 * that -Wuseless-cast names where they are one type */
template <class U> inline size_t to_size(U x) noexcept {
    if constexpr (sizeof(size_t) < sizeof(U))
        return static_cast<size_t>(x);
    else
        return x;
}

template <class It> struct range {
    It b, e;
    It begin() const noexcept { return b; }
    It end() const noexcept { return e; }
    uint32_t size() const noexcept { return b.left() - e.left(); }
    bool empty() const noexcept { return size() == 0; }
};

} // namespace detail

/* ---- saves of any T: serializer<T>, writer, reader ------------------------ */

/* A pool<T> saves its objects as their bytes when T is trivially copyable
 * (the C image's plain objects), and otherwise through serializer<T>: each
 * object becomes one record of the C image (opool_desc's save_object and
 * load_object, docs/FORMAT.md "Objects") that serializer<T>::save writes
 * through a writer and serializer<T>::load reads back through a reader.
 * The primary serializer<T> serves every T that writer::value takes;
 * specialise it for your own types (a specialisation also takes over from
 * the plain bytes of a trivially copyable T):
 *
 *     namespace opl {
 *     template <> struct serializer<ship> {
 *         static bool save(writer &w, const ship &s) {
 *             return w.value(s.name) && w.value(s.cargo) && w.value(s.hull);
 *         }
 *         static bool load(reader &r, ship *mem) {      // construct a ship at mem
 *             ship s;
 *             if (!r.value(s.name) || !r.value(s.cargo) || !r.value(s.hull)) return false;
 *             ::new (mem) ship(std::move(s));
 *             return true;
 *         }
 *     };
 *     }
 *
 * save returns false when the writer failed (the save then fails:
 * OPOOL_ECORRUPT, or OPOOL_EIO when the stream failed). A serializer whose
 * type is an element of a std::vector must write at least a byte for each
 * (the load bounds a count by the bytes left): one that writes nothing
 * fails the save with OPOOL_EINVAL. load constructs a
 * T at mem and returns true, or constructs nothing and returns false: the
 * record is corrupt, and the whole load fails with OPOOL_ECORRUPT, no
 * object left constructed (the objects already loaded are destroyed). A
 * load that returns true but read past its record, or left some of it
 * unread, is corrupt too (its T is destroyed). A serializer may throw: the
 * save or load fails as a whole, and the exception goes on once the C
 * library is left (nothing loaded stays constructed). */
class writer;
class reader;
template <class T> struct serializer;

namespace detail {

/* The primary serializer's mark: a specialisation lacks it. */
struct primary_serializer {};
struct world; /* save_world_file and load_world_file's access to pools and tables */

template <class X> struct is_string : std::false_type {};
template <class C, class Tr, class A>
struct is_string<std::basic_string<C, Tr, A>> : std::is_trivially_copyable<C> {};
template <class X> struct is_vector : std::false_type {};
template <class E, class A>
struct is_vector<std::vector<E, A>> : std::integral_constant<bool, !std::is_same<E, bool>::value> {
};

/* serializer<X> is the user's (a specialisation) */
template <class X> constexpr bool user_serializer() {
    return !std::is_base_of<primary_serializer, serializer<X>>::value;
}
/* X is saved as its bytes (inside a record, or as a pool's plain objects) */
template <class X> constexpr bool plain() {
    return std::is_trivially_copyable<X>::value && !user_serializer<X>();
}
/* writer::value and reader::value take X */
template <class X> constexpr bool valuable() {
    if constexpr (user_serializer<X>() || plain<X>() || is_string<X>::value)
        return true;
    else if constexpr (is_vector<X>::value)
        return valuable<typename X::value_type>();
    else
        return false;
}
/* a pool or table of X saves records through serializer<X> */
template <class X> constexpr bool by_serializer() { return !plain<X>() && valuable<X>(); }
/* the fewest bytes X's encoding takes: what bounds a hostile count */
template <class X> constexpr size_t least_bytes() {
    if constexpr (user_serializer<X>())
        return 1; /* a serializer used in a vector writes at least a byte (writer::value) */
    else if constexpr (plain<X>())
        return sizeof(X);
    else
        return 8; /* a length */
}

/* One save or load through serializers: what the C library's callbacks
 * cannot return through it. The objects a load has built (with their
 * destructors), so that when a later record is rejected every one of them
 * ends before the C library frees their memory; an exception a serializer
 * threw, carried past the C frames; and memory that ran out. Found through
 * a thread_local: the C library calls back on the calling thread. */
class io_scope {
  public:
    using end_fn = void (*)(void *);
    io_scope() noexcept : outer_(current()) { current() = this; }
    io_scope(const io_scope &) = delete;
    io_scope &operator=(const io_scope &) = delete;
    ~io_scope() {
        current() = outer_;
        std::free(built_);
    }
    static io_scope *&current() noexcept {
        static thread_local io_scope *now = nullptr;
        return now;
    }
    /* call(), the C save or load of a pool of X, inside a scope when X's
     * objects go through a serializer (plain bytes need none) */
    template <class X, class Call> static opool_status run(Call call) noexcept(plain<X>()) {
        if constexpr (by_serializer<X>()) {
            io_scope io;
            return io.result(call());
        } else {
            return call();
        }
    }

    /* obj was built and ends with end (nullptr: nothing to run); false when
     * memory ran out to remember it */
    bool built(void *obj, end_fn end) noexcept {
        if (end == nullptr) return true;
        if (n_ == cap_) {
            size_t cap = cap_ ? 2 * cap_ : 64;
            void *grown = cap <= SIZE_MAX / sizeof(entry)
                              ? std::realloc(built_, cap * sizeof(entry))
                              : nullptr;
            if (grown == nullptr) {
                nomem_ = true;
                return false;
            }
            built_ = static_cast<entry *>(grown);
            cap_ = cap;
        }
        built_[n_++] = entry{obj, end};
        return true;
    }
    /* a record was rejected: every object built so far ends, last first */
    void end_all() noexcept {
        while (n_ > 0) {
            n_--;
            built_[n_].end(built_[n_].obj);
        }
    }
    void caught() noexcept {
#if OPOOL_HPP_EXCEPTIONS
        if (!thrown_) thrown_ = std::current_exception();
#endif
    }
    /* a serializer broke its rule (nothing written for an element of a vector) */
    void misused() noexcept { misused_ = true; }
    /* the call's result as the C library gave it, but OPOOL_ENOMEM when it
     * failed for want of memory here, OPOOL_EINVAL for a serializer's misuse;
     * rethrows what a serializer threw */
    opool_status result(opool_status s) {
#if OPOOL_HPP_EXCEPTIONS
        if (thrown_) std::rethrow_exception(thrown_);
#endif
        if (s != OPOOL_ECORRUPT) return s;
        return nomem_ ? OPOOL_ENOMEM : misused_ ? OPOOL_EINVAL : s;
    }

  private:
    struct entry {
        void *obj;
        end_fn end;
    };
    io_scope *outer_;
    entry *built_ = nullptr;
    size_t n_ = 0, cap_ = 0;
    bool nomem_ = false;
    bool misused_ = false;
#if OPOOL_HPP_EXCEPTIONS
    std::exception_ptr thrown_;
#endif
};

template <class T> void end_object(void *obj) noexcept { static_cast<T *>(obj)->~T(); }

/* A T built in place that ends with the scope, a throw's included, unless kept. */
template <class T> class unless_kept {
  public:
    explicit unless_kept(T *obj) noexcept : obj_(obj) {}
    unless_kept(const unless_kept &) = delete;
    unless_kept &operator=(const unless_kept &) = delete;
    ~unless_kept() {
        if (obj_) obj_->~T();
    }
    T *get() const noexcept { return obj_; }
    void keep() noexcept { obj_ = nullptr; }

  private:
    T *obj_;
};

/* A T that a serializer built in storage of its own, ended with the scope. */
template <class T> class loaded {
  public:
    loaded() noexcept = default;
    loaded(const loaded &) = delete;
    loaded &operator=(const loaded &) = delete;
    ~loaded() {
        if (made_) get()->~T();
    }
    bool load(reader &r) {
        made_ = serializer<T>::load(r, reinterpret_cast<T *>(mem_));
        return made_;
    }
    T *get() noexcept { return std::launder(reinterpret_cast<T *>(mem_)); }

  private:
    alignas(T) unsigned char mem_[sizeof(T)];
    bool made_ = false;
};

} // namespace detail

/* What serializer<T>::save writes through: bytes of its own, or values
 * (below). Made by the save (it wraps the C library's write callback);
 * once a write fails every later one returns false. */
class writer {
  public:
    writer(opool_write_fn write, void *ctx) noexcept : write_(write), ctx_(ctx) {}

    /* n bytes from p; false when the stream failed (now or before) */
    bool bytes(const void *p, size_t n) noexcept {
        if (ok_ && n != 0 && write_(ctx_, p, n) != n) ok_ = false;
        if (ok_) written_ += n;
        return ok_;
    }

    /* x, in an encoding reader::value reads back: a trivially copyable X
     * as its bytes (bool as one byte); a std::string (of any trivially
     * copyable character) as a u64 little-endian length and its
     * characters; a std::vector (not of bool) as a u64 count and its
     * elements, each as value writes it (so vectors of strings, of
     * vectors, of types with a serializer nest); an X with a specialised
     * serializer<X> through it. false when the stream failed. */
    template <class X> bool value(const X &x) {
        static_assert(detail::valuable<X>(), OPOOL_HPP__SAVABLE);
        if constexpr (detail::user_serializer<X>()) {
            return serializer<X>::save(*this, x) && ok_;
        } else if constexpr (detail::is_string<X>::value) {
            return count(x.size()) && bytes(x.data(), x.size() * sizeof(typename X::value_type));
        } else if constexpr (detail::is_vector<X>::value) {
            using E = typename X::value_type;
            if (!count(x.size())) return false;
            if constexpr (detail::plain<E>()) {
                return bytes(x.data(), x.size() * sizeof(E));
            } else {
                for (const E &e : x) {
                    uint64_t before = written_;
                    if (!value(e)) return false;
                    /* a count of elements that take no bytes bounds nothing on load */
                    if (detail::user_serializer<E>() && written_ == before) {
                        empty_ = true;
                        return ok_ = false;
                    }
                }
                return true;
            }
        } else {
            return bytes(&x, sizeof x);
        }
    }

    /* the stream has not failed */
    bool ok() const noexcept { return ok_; }
    /* a serializer wrote nothing for an element of a vector (the save fails:
     * OPOOL_EINVAL) */
    bool empty_element() const noexcept { return empty_; }

  private:
    bool count(size_t n) noexcept {
        unsigned char b[8];
        uint64_t v = n;
        for (int k = 0; k < 8; k++) b[k] = static_cast<unsigned char>(v >> (8 * k));
        return bytes(b, sizeof b);
    }

    opool_write_fn write_;
    void *ctx_;
    uint64_t written_ = 0;
    bool ok_ = true;
    bool empty_ = false;
};

/* What serializer<T>::load reads from: one object's record, as the save
 * wrote it. Every read is bounded by what is left of the record: a read
 * past its end, or a length or count promising more than the record holds,
 * returns false and fails every later read (nothing is allocated for it). */
class reader {
  public:
    reader(const void *data, size_t size) noexcept
        : at_(static_cast<const unsigned char *>(data)), left_(size) {}

    /* the next n bytes of the record into p; false when fewer are left */
    bool bytes(void *p, size_t n) noexcept {
        if (!ok_ || n > left_) return ok_ = false;
        if (n != 0) std::memcpy(p, at_, n);
        at_ += n;
        left_ -= n;
        return true;
    }

    /* x, as writer::value wrote it (x is assigned: a string or vector
     * takes the loaded contents). false on a short or corrupt record: a
     * length beyond the record, a bool that is neither 0 nor 1, an X whose
     * serializer rejected its bytes. */
    template <class X> bool value(X &x) {
        static_assert(detail::valuable<X>(), OPOOL_HPP__SAVABLE);
        if constexpr (detail::user_serializer<X>()) {
            return through_serializer<X>([&x](X &&v) { x = std::move(v); });
        } else if constexpr (detail::is_string<X>::value) {
            using C = typename X::value_type;
            size_t n;
            if (!count(n, sizeof(C))) return false;
            x.resize(n);
            return bytes(&x[0], n * sizeof(C)); /* &x[0]: the buffer, for n 0 too */
        } else if constexpr (detail::is_vector<X>::value) {
            using E = typename X::value_type;
            size_t n;
            if (!count(n, detail::least_bytes<E>())) return false;
            if constexpr (detail::plain<E>()) {
                x.resize(n);
                return bytes(x.data(), n * sizeof(E));
            } else {
                x.clear();
                /* no more than the bytes left would hold: a hostile count grows the vector
                 * only as its elements are read */
                x.reserve(n < left_ / sizeof(E) ? n : left_ / sizeof(E));
                for (size_t k = 0; k < n; k++)
                    if (!element(x)) return false;
                return true;
            }
        } else if constexpr (std::is_same<X, bool>::value) {
            unsigned char b;
            if (!bytes(&b, 1) || b > 1) return ok_ = false;
            x = b != 0;
            return true;
        } else {
            return bytes(&x, sizeof x);
        }
    }

    /* bytes of the record not read yet */
    size_t left() const noexcept { return left_; }
    /* no read has failed */
    bool ok() const noexcept { return ok_; }

  private:
    /* a length or count, of items taking at least unit bytes each */
    bool count(size_t &n, size_t unit) noexcept {
        unsigned char b[8];
        if (!bytes(b, sizeof b)) return false;
        uint64_t v = 0;
        for (int k = 7; k >= 0; k--) v = v << 8 | b[k];
        if (v > left_ / unit) return ok_ = false;
        n = detail::to_size(v);
        return true;
    }
    /* an X that serializer<X> loads, moved into put(X &&) */
    template <class X, class Put> bool through_serializer(Put put) {
        detail::loaded<X> tmp;
        if (!tmp.load(*this) || !ok_) return ok_ = false;
        put(std::move(*tmp.get()));
        return true;
    }
    /* one more element of v, read as value reads it */
    template <class E, class A> bool element(std::vector<E, A> &v) {
        if constexpr (detail::user_serializer<E>()) {
            return through_serializer<E>([&v](E &&e) { v.push_back(std::move(e)); });
        } else {
            v.emplace_back();
            return value(v.back());
        }
    }

    const unsigned char *at_;
    size_t left_;
    bool ok_ = true;
};

/* The primary template: any T that writer::value and reader::value take
 * (a trivially copyable T, a std::string, a std::vector of such). */
template <class T> struct serializer : detail::primary_serializer {
    static bool save(writer &w, const T &obj) { return w.value(obj); }
    static bool load(reader &r, T *mem) {
        static_assert(detail::valuable<T>(), OPOOL_HPP__SAVABLE);
        detail::unless_kept<T> obj(::new (static_cast<void *>(mem)) T());
        if (!r.value(*obj.get())) return false;
        obj.keep();
        return true;
    }
};

namespace detail {

/* The C library's save_object and load_object for a pool (or a side table)
 * whose T goes through serializer<T>. user is the desc's: not used. */
template <class T>
bool save_object(const void *obj, opool_write_fn write, void *wctx, void *) noexcept {
    writer w(write, wctx);
#if OPOOL_HPP_EXCEPTIONS
    try {
#endif
        if (serializer<T>::save(w, *static_cast<const T *>(obj)) && w.ok()) return true;
        if (io_scope *s = io_scope::current(); s && w.empty_element()) s->misused();
        return false;
#if OPOOL_HPP_EXCEPTIONS
    } catch (...) {
        if (io_scope *s = io_scope::current()) s->caught();
        return false;
    }
#endif
}

template <class T> bool load_object(void *mem, const void *data, size_t size, void *) noexcept {
    io_scope *s = io_scope::current();
    reader r(data, size);
    bool made = false;
#if OPOOL_HPP_EXCEPTIONS
    try {
#endif
        made = serializer<T>::load(r, static_cast<T *>(mem));
#if OPOOL_HPP_EXCEPTIONS
    } catch (...) {
        if (s) s->caught();
    }
#endif
    io_scope::end_fn end = std::is_trivially_destructible<T>::value ? nullptr : &end_object<T>;
    /* a record read whole, no byte more, is the object; anything else ends it */
    if (made && r.ok() && r.left() == 0 && (s == nullptr || s->built(mem, end))) return true;
    if (made && end) end(mem);
    if (s) s->end_all(); /* the C library frees them next, running nothing */
    return false;
}

/* d saves and loads T's objects through serializer<T>, when T needs it */
template <class T> void serialize_with(opool_desc &d) noexcept {
    if constexpr (by_serializer<T>()) {
        d.save_object = &save_object<T>;
        d.load_object = &load_object<T>;
    }
}

} // namespace detail

/* ---- pool<T> ------------------------------------------------------------ */

/* A move-only owner of one C pool of T. Flags, when not 0, are desc flags
 * fixed at compile time, as OPOOL_TYPED_FIXED's (opool_typed.h): every pool
 * of the type is made with Flags | OPOOL_FIXED added to its options' flags
 * (OPOOL_EINVAL for options that grow it, or ask OPOOL_NO_LIVE_LIST that
 * Flags lacks), and emplace, get, contains and erase compile only what
 * Flags leaves possible. Creation failures do not throw:
 * test the pool (explicit operator bool) and read status() for why
 * (OPOOL_EINVAL: capacity 0, above OPOOL_MAX_CAPACITY, max_capacity below
 * capacity, unknown flags, OPOOL_NO_LIVE_LIST with a T that is not
 * trivially destructible, alignof(T) above 4096; OPOOL_ENOMEM). A pool
 * that was not created (or was moved from) is empty and full: emplace
 * gives {null, nullptr}, get nullptr, erase false. Thread-safety: one
 * thread at a time per pool, as the C pool. */
template <class T, uint32_t Flags = 0> class pool {
    static_assert(!std::is_reference<T>::value && !std::is_const<T>::value,
                  "opl::pool<T>: T is an object type, not const");
    /* the flags every pool of the type gets, and what the inline paths know
     * of it (opool_abi.h); 0 and 0 when options decide at run time */
    static constexpr uint32_t fixed_ = Flags ? Flags | OPOOL_FIXED : 0;
    static constexpr unsigned known_ = Flags ? OPOOL__KNOWN_OF(Flags) : 0;
    static_assert(!(Flags & OPOOL_NO_LIVE_LIST) || std::is_trivially_destructible<T>::value,
                  "opl::pool<T, Flags>: without a live list (OPOOL_NO_LIVE_LIST) the pool cannot "
                  "find its objects to destroy them: T must be trivially destructible");

  public:
    using value_type = T;
    using iterator = detail::live_iterator<T, T &>;
    using const_iterator = detail::live_iterator<const T, const T &>;
    /* the evict constructor's chooser: a live handle of p, the victim */
    using evict_fn = handle<T> (*)(pool &p, void *user);

    pool() noexcept = default;

    /* Create the C pool (opool_create with object_size sizeof(T),
     * object_align alignof(T) and o's fields). O(capacity). */
    explicit pool(const options &o) noexcept {
        opool_desc d = detail::desc_of(o, sizeof(T), alignof(T));
        status_ = fix(d) && destructible(d) ? opool_create(&p_, &d) : OPOOL_EINVAL;
        if (p_) made_ = o;
    }

    /* A pool made from a whole opool_desc, for what options lacks
     * (allocator, report, user, OPOOL_FULL_GROW's limits as given): a named
     * function, not a constructor, so that braces given to the options
     * constructor can never mean a desc. Its object_size and object_align
     * are T's (0 in d means T's; anything else but T's is OPOOL_EINVAL).
     * The wrapper owns the objects' lives, so d must have no init, fini,
     * evict (use the evict constructor), save_object or load_object
     * (serializer<T> gives those): OPOOL_EINVAL otherwise. */
    [[nodiscard]] static pool from_desc(const opool_desc &d) noexcept {
        pool p;
        opool_desc c = d;
        bool sized = (c.object_size == 0 || c.object_size == sizeof(T)) &&
                     (c.object_align == 0 || c.object_align == alignof(T));
        if (!sized || c.init || c.fini || c.evict || c.on_full == OPOOL_FULL_EVICT ||
            c.save_object || c.load_object || !fix(c) || !destructible(c))
            return p;
        c.object_size = sizeof(T);
        c.object_align = alignof(T);
        p.status_ = opool_create(&p.p_, &c);
        if (p.p_ == nullptr) return p;
        /* its allocator, report and user, which options lack, for a world load */
        p.whole_ = new (std::nothrow) opool_desc(c);
        if (p.whole_ == nullptr) {
            opool_destroy(p.p_);
            p.p_ = nullptr;
            p.status_ = OPOOL_ENOMEM;
        }
        return p;
    }

    /* A pool that, when full, erases the object evict names and reuses its
     * slot (OPOOL_FULL_EVICT): ~T runs on the victim, its handles go stale,
     * stats().evictions counts it. evict runs inside emplace, on a full
     * pool; returning anything but a live handle makes that emplace fail
     * ({null, nullptr}, counted and reported as full). max_capacity is
     * ignored (an evicting pool does not grow). evict runs inside the C
     * library: it must not throw (a throw ends the program, std::terminate).
     * OPOOL_ENOMEM also when the chooser's record (24 bytes) cannot be
     * allocated. */
    pool(const options &o, evict_fn evict, void *user = nullptr) noexcept {
        if (evict == nullptr) {
            status_ = OPOOL_EINVAL;
            return;
        }
        ev_ = new (std::nothrow) evictor{evict, user, this};
        if (ev_ == nullptr) {
            status_ = OPOOL_ENOMEM;
            return;
        }
        opool_desc d = evicting(detail::desc_of(o, sizeof(T), alignof(T)));
        status_ = fix(d) && destructible(d) ? opool_create(&p_, &d) : OPOOL_EINVAL;
        if (status_ != OPOOL_OK)
            release_evictor();
        else
            made_ = o;
    }

    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;
    pool(pool &&o) noexcept
        : p_(o.p_), ev_(o.ev_), whole_(o.whole_), made_(o.made_), status_(o.status_) {
        o.p_ = nullptr;
        o.ev_ = nullptr;
        o.whole_ = nullptr;
        o.status_ = OPOOL_EINVAL;
        if (ev_) ev_->self = this;
    }
    pool &operator=(pool &&o) noexcept {
        if (this != &o) {
            reset();
            p_ = o.p_;
            ev_ = o.ev_;
            whole_ = o.whole_;
            made_ = o.made_;
            status_ = o.status_;
            o.p_ = nullptr;
            o.ev_ = nullptr;
            o.whole_ = nullptr;
            o.status_ = OPOOL_EINVAL;
            if (ev_) ev_->self = this;
        }
        return *this;
    }

    /* ~T of every live object (last live-list entry first), then
     * opool_destroy. */
    ~pool() { reset(); }

    /* true when the pool exists (created, not moved from) */
    explicit operator bool() const noexcept { return p_ != nullptr; }
    /* why creation or loading failed; OPOOL_OK for a pool that exists */
    opool_status status() const noexcept { return status_; }

    /* Construct a T from args in a new slot (opool_alloc, then placement
     * new). {null, nullptr} when the pool is full and its policy cannot make
     * room (counted and reported as opool_alloc says); T's constructor does
     * not run then. A constructor that throws: the slot is freed and the
     * exception goes on. O(1) plus T's constructor; inline. */
    template <class... A> [[nodiscard]] OPOOL_HPP__HOT emplaced<T> emplace(A &&...args) {
        opool_handle h;
        void *mem = opool__alloc_as(p_, &h, OPOOL__SITE, known_);
        return detail::emplace_in<T>(
            mem, h, [this](opool_handle x) { (void)opool__free_as(p_, x, known_); },
            std::forward<A>(args)...);
    }

    /* Construct a T from args at exactly h, index and generation (to
     * rebuild objects from a format of your own: afterwards get(h) is the
     * object); opool_alloc_at. nullptr, and T's constructor does not run,
     * when h's slot is live, retired or beyond the pool's reach, or h is
     * null. A constructor that throws: the slot is freed and the exception
     * goes on. O(1) plus growth and T's constructor. */
    template <class... A> [[nodiscard]] T *emplace_at(handle<T> h, A &&...args) {
        void *mem = opool_alloc_at(p_, h.raw());
        if (mem == nullptr) return nullptr;
        return detail::construct_or_free<T>(
            mem, [this, h] { (void)opool__free_as(p_, h.raw(), known_); },
            std::forward<A>(args)...);
    }

    /* The object of h, nullptr unless h is live in this pool. O(1); inline. */
    [[nodiscard]] OPOOL_HPP__HOT T *get(handle<T> h) noexcept {
        return static_cast<T *>(opool__get_as(p_, h.raw(), known_));
    }
    [[nodiscard]] OPOOL_HPP__HOT const T *get(handle<T> h) const noexcept {
        return static_cast<const T *>(opool__get_as(p_, h.raw(), known_));
    }
    bool contains(handle<T> h) const noexcept {
        return opool__get_as(p_, h.raw(), known_) != nullptr;
    }

    /* Run ~T of h's object, then free its slot: true. false, and no object
     * changes, when h is not live (stale, foreign, null: opool_free's
     * rejection, counted and reported as it says). O(1); inline. */
    OPOOL_HPP__HOT bool erase(handle<T> h) noexcept {
        if constexpr (!std::is_trivially_destructible<T>::value) {
            if (T *obj = get(h)) obj->~T();
        }
        return opool__free_as(p_, h.raw(), known_) == OPOOL_OK;
    }

    /* Erase the object at obj (a pointer into this pool): as erase of its
     * handle; false for any other pointer (opool_free_object's rejection,
     * counted and reported as it says), and for nullptr. O(chunks)
     * (opool_handle_of). */
    bool erase(const T *obj) noexcept {
        if (obj == nullptr) return false;
        handle<T> h = handle_of(*obj);
        if (!h) /* no live object's start: the C pool says what it was */
            return opool_free_object(p_, const_cast<void *>(static_cast<const void *>(obj))) ==
                   OPOOL_OK;
        return erase(h);
    }

    /* ~T of every live object, then opool_clear (the next emplaces take
     * slots 0, 1, 2, ... as in a fresh pool). O(capacity). */
    void clear() noexcept {
        destroy_all();
        opool_clear(p_);
    }

    /* Visit every live object once (the backward loop: objects emplaced
     * meanwhile are not visited) and erase each for which keep(T &,
     * handle<T>) returns false; keep may erase its own object. Returns how
     * many it erased. If keep throws, the objects erased so far stay erased
     * and the rest stay live. O(count) plus keep and the erasures. */
    template <class F> uint32_t retain(F keep) {
        uint32_t erased = 0;
        for (uint32_t i = opool__live_count(p_); i-- > 0;) {
            T *obj = static_cast<T *>(opool_live_object(p_, i));
            if (obj == nullptr) continue; /* past the end after erasures inside keep */
            handle<T> h(opool_live_handle(p_, i));
            if (!keep(*obj, h) && erase(h)) erased++;
        }
        return erased;
    }

    uint32_t size() const noexcept { return opool_count(p_); }
    bool empty() const noexcept { return size() == 0; }
    uint32_t capacity() const noexcept { return opool_capacity(p_); }
    opool_stats stats() const noexcept {
        opool_stats s;
        opool_get_stats(p_, &s);
        return s;
    }

    /* A picture of the pool as SVG; opool_draw_svg. */
    opool_status draw_svg(opool_write_fn write, void *ctx) const noexcept {
        return p_ ? opool_draw_svg(p_, write, ctx) : OPOOL_EINVAL;
    }

    /* Reorder the live list by slot (memory order); opool_sort. */
    void sort() noexcept { opool_sort(p_); }
    /* Give back grown chunks holding no object; opool_shrink. No object ends. */
    uint32_t shrink() noexcept { return opool_shrink(p_); }

    /* The handle of the live object obj (the start of an object of this
     * pool), null otherwise. O(chunks). */
    handle<T> handle_of(const T &obj) const noexcept {
        return handle<T>(opool_handle_of(p_, &obj));
    }
    /* The i-th entry of the live list (opool_live_handle), null past the end. */
    handle<T> live_handle(uint32_t i) const noexcept { return handle<T>(opool_live_handle(p_, i)); }

    /* Compact handles (opool_handle_compact / opool_handle_expand). */
    handle32<T> compact(handle<T> h) const noexcept {
        return handle32<T>(opool_handle_compact(p_, h.raw()));
    }
    handle<T> expand(handle32<T> c) const noexcept {
        return handle<T>(opool_handle_expand(p_, c.raw()));
    }

    /* Range-for over the live objects with the C backward loop's promise
     * (opool.h, ITERATION): every object live when the loop starts is
     * visited exactly once; erasing the current one is allowed; objects
     * emplaced inside are not visited. Erasing others inside follows the
     * same rules as in C. clear, sort, shrink and load between loops. */
    iterator begin() noexcept { return iterator(p_, opool__live_count(p_)); }
    iterator end() noexcept { return iterator(p_, 0); }
    const_iterator begin() const noexcept { return const_iterator(p_, opool__live_count(p_)); }
    const_iterator end() const noexcept { return const_iterator(p_, 0); }

    /* The same loop, yielding item<T>{handle, T &}. */
    detail::range<detail::live_iterator<T, item<T>>> items() noexcept {
        return {{p_, opool__live_count(p_)}, {p_, 0}};
    }
    detail::range<detail::live_iterator<const T, item<const T>>> items() const noexcept {
        return {{p_, opool__live_count(p_)}, {p_, 0}};
    }

    /* Save and load (opool_save, opool_load and their _file forms, with the
     * same results), for any T with a serializer: a trivially copyable T
     * as its bytes, any other through serializer<T> (above), one record per
     * object. Every handle, the live-list order, the generations and the
     * statistics come back. load and load_file give a pool whose status()
     * says how it went; the options must be those the saved pool was made
     * with (capacity, max_capacity), or OPOOL_EINVAL (also for an image of
     * records loaded as bytes, or the reverse: a serializer specialised or
     * dropped since the save). A corrupt image, a record a serializer
     * rejects included, is OPOOL_ECORRUPT with no T left constructed;
     * OPOOL_ENOMEM also when the load could not keep track of the objects
     * it built. A serializer that throws: the save or load fails, nothing
     * loaded stays constructed, the exception goes on. Cost: as the C
     * calls, plus the serializer, plus 16 bytes per object held during a
     * load of a T that is not trivially destructible. The options are
     * refused (OPOOL_EINVAL) as the constructor refuses them. */
    opool_status save(opool_write_fn write, void *ctx) const noexcept(detail::plain<T>()) {
        return saved([&] { return opool_save(p_, write, ctx); });
    }
    opool_status save_file(const char *path) const noexcept(detail::plain<T>()) {
        return saved([&] { return opool_save_file(p_, path); });
    }
    static pool load(const options &o, opool_read_fn read, void *ctx) noexcept(detail::plain<T>()) {
        return loaded(
            o, [&](opool **out, const opool_desc *d) { return opool_load(out, d, read, ctx); });
    }
    static pool load_file(const options &o, const char *path) noexcept(detail::plain<T>()) {
        return loaded(
            o, [&](opool **out, const opool_desc *d) { return opool_load_file(out, d, path); });
    }

    /* The C pool underneath, for everything the C API has (NULL when the
     * pool does not exist). Freeing through it skips ~T. */
    opool *c_pool() const noexcept { return p_; }

  private:
    template <class, class> friend class side_table; /* it follows p_ (side_table::rebind) */
    friend struct detail::world;                     /* it saves p_ and replaces it */

    struct evictor {
        evict_fn choose;
        void *user;
        pool *self;
    };

    /* The C pool's evict: the user's choice, destroyed here (the C pool
     * then frees the slot without a fini). */
    static opool_handle evict_trampoline(opool *, void *user) noexcept {
        evictor *e = static_cast<evictor *>(user);
        handle<T> victim = e->choose(*e->self, e->user);
        if constexpr (!std::is_trivially_destructible<T>::value) {
            if (T *obj = e->self->get(victim)) obj->~T();
        }
        return victim.raw();
    }

    /* save and save_file: the C save, in a scope for T's serializer */
    template <class Save> opool_status saved(Save save) const noexcept(detail::plain<T>()) {
        static_assert(detail::valuable<T>(), OPOOL_HPP__SAVABLE);
        if (p_ == nullptr) return OPOOL_EINVAL;
        return detail::io_scope::run<T>(save);
    }
    /* load and load_file: the pool the C load makes from o, as the
     * constructor would make it */
    template <class Load>
    static pool loaded(const options &o, Load load) noexcept(detail::plain<T>()) {
        static_assert(detail::valuable<T>(), OPOOL_HPP__SAVABLE);
        pool p;
        opool_desc d = detail::desc_of(o, sizeof(T), alignof(T));
        if (!fix(d) || !destructible(d)) return p;
        p.status_ = detail::io_scope::run<T>([&] { return load(&p.p_, &d); });
        if (p.p_) p.made_ = o;
        return p;
    }

    /* What made p_, for a world load that makes its successor: the whole
     * desc of from_desc, else rebuilt from the options. */
    opool_desc made() const noexcept {
        if (whole_) return *whole_;
        opool_desc d = detail::desc_of(made_, sizeof(T), alignof(T));
        if (ev_) d = evicting(d);
        (void)fix(d);
        return d;
    }
    /* d as the evict constructor makes it: no growth, the wrapper's chooser */
    opool_desc evicting(opool_desc d) const noexcept {
        d.max_capacity = 0;
        d.on_full = OPOOL_FULL_EVICT;
        d.evict = &pool::evict_trampoline;
        d.user = ev_;
        return d;
    }

    /* Give d the type's fixed flags and T's serializer: false when d asks
     * a live list be kept out that the compiled paths keep (its growth
     * fails at create). */
    static bool fix(opool_desc &d) noexcept {
        if (fixed_ != 0 && (d.flags & ~fixed_ & OPOOL_NO_LIVE_LIST)) return false;
        d.flags |= fixed_;
        detail::serialize_with<T>(d);
        return true;
    }

    /* Whether a pool of d can destroy its objects: through its live list, or
     * there is nothing to run (OPOOL_NO_LIVE_LIST keeps no list). */
    static bool destructible(const opool_desc &d) noexcept {
        return std::is_trivially_destructible<T>::value || !(d.flags & OPOOL_NO_LIVE_LIST);
    }

    void destroy_all() noexcept {
        if constexpr (!std::is_trivially_destructible<T>::value) {
            for (uint32_t i = size(); i-- > 0;) static_cast<T *>(opool_live_object(p_, i))->~T();
        }
    }

    void release_evictor() noexcept {
        delete ev_;
        ev_ = nullptr;
    }

    void reset() noexcept {
        clear(); /* a container that ends with objects: no leak to report */
        opool_destroy(p_);
        p_ = nullptr;
        release_evictor();
        delete whole_;
        whole_ = nullptr;
    }

    opool *p_ = nullptr;
    evictor *ev_ = nullptr;
    opool_desc *whole_ = nullptr; /* from_desc's desc: what made p_ (made()) */
    options made_ = options();    /* else the options that made p_ */
    opool_status status_ = OPOOL_EINVAL;
};

/* ---- side_table<T, V> --------------------------------------------------- */

/* Values V kept for some objects of a pool<T>, keyed by their handles, like
 * a component store. get(h) gives h's value only while h's object is live
 * in the pool. The values live in a pool of their own, each in the slot of
 * its object's index (opool_alloc_at with the object's handle), so they
 * never move while they live, whatever V is (a std::string, a vector), and
 * get is two generation compares. Memory: sizeof(V) rounded to its
 * alignment, plus 12 bytes, per slot up to the highest index holding a
 * value (the whole capacity of a fixed pool, reserved at construction).
 *
 * ~V runs when a value is erased, replaced (emplace again for the same
 * object, or for a new object in the slot of an erased one), pruned, or
 * the table is destroyed. A value whose object was erased from the pool
 * without erase here stays (get no longer gives it) until one of those:
 * prune() drops them all at once. The table keeps the address of the C
 * pool underneath: it must not outlive it (moving the pool<T> elsewhere is
 * fine; destroying it, or assigning another pool to it, is not).
 * Thread-safety: one thread at a time, with the pool. */
template <class T, class V> class side_table {
  public:
    using value_type = V;

    template <uint32_t F> explicit side_table(pool<T, F> &p) noexcept : objects_(&p.p_) {
        if (p.c_pool() == nullptr) {
            status_ = OPOOL_EINVAL;
            return;
        }
        /* the pool as made, not as grown: a program that makes the same pool and table
         * makes the same values' pool, whatever the pool did before */
        opool_desc made = p.made();
        uint32_t limit = made.on_full == OPOOL_FULL_GROW ? made.max_capacity : 0;
        opool_desc d = values_desc(made.capacity, limit);
        status_ = opool_create(&values_, &d);
        if (values_) {
            capacity_ = made.capacity;
            max_capacity_ = limit;
        }
    }
    side_table(const side_table &) = delete;
    side_table &operator=(const side_table &) = delete;
    side_table(side_table &&o) noexcept
        : objects_(o.objects_), values_(o.values_), status_(o.status_), capacity_(o.capacity_),
          max_capacity_(o.max_capacity_) {
        o.values_ = nullptr;
        o.status_ = OPOOL_EINVAL;
    }
    side_table &operator=(side_table &&o) noexcept {
        if (this != &o) {
            reset();
            objects_ = o.objects_;
            values_ = o.values_;
            status_ = o.status_;
            capacity_ = o.capacity_;
            max_capacity_ = o.max_capacity_;
            o.values_ = nullptr;
            o.status_ = OPOOL_EINVAL;
        }
        return *this;
    }
    ~side_table() { reset(); }

    explicit operator bool() const noexcept { return values_ != nullptr; }
    opool_status status() const noexcept { return status_; }

    /* The table follows the pool object it was made with: a pool loaded
     * into it (`ships = opl::pool<ship>::load_file(o, path)`) keeps the
     * table's values for the same handles. A pool moved to another object
     * takes the table along with rebind(p); its values stay. The pool must
     * outlive the table's use of it. O(1). */
    template <uint32_t F> void rebind(pool<T, F> &p) noexcept { objects_ = &p.p_; }

    /* Construct h's value from args, replacing (~V) any value h's object
     * had. nullptr when h's object is not live in the pool or the table
     * cannot grow to its index (no memory); V's constructor does not run
     * then. A constructor that throws leaves h without a value. O(1) plus
     * growth. */
    template <class... A> [[nodiscard]] V *emplace(handle<T> h, A &&...args) {
        if (!opool_valid(*objects_, h.raw())) return nullptr;
        drop(opool_handle_at(values_, h.index())); /* this object's, or an earlier one's */
        void *mem = opool_alloc_at(values_, h.raw());
        if (mem == nullptr) return nullptr;
        return detail::construct_or_free<V>(
            mem, [this, h] { (void)opool_free(values_, h.raw()); }, std::forward<A>(args)...);
    }

    /* h's value, nullptr unless h's object is live and has one. O(1). */
    [[nodiscard]] V *get(handle<T> h) noexcept {
        return opool_valid(*objects_, h.raw()) ? static_cast<V *>(opool_get(values_, h.raw()))
                                               : nullptr;
    }
    [[nodiscard]] const V *get(handle<T> h) const noexcept {
        return opool_valid(*objects_, h.raw()) ? static_cast<const V *>(opool_get(values_, h.raw()))
                                               : nullptr;
    }
    bool contains(handle<T> h) const noexcept { return get(h) != nullptr; }

    /* ~V of h's value: true; false when there is none (erased already, or
     * never emplaced). Also for an h whose object is gone, whose value
     * then still lived. O(1). */
    bool erase(handle<T> h) noexcept { return drop(h.raw()); }

    /* ~V of every value whose object is no longer live; how many. O(values). */
    uint32_t prune() noexcept {
        uint32_t n = 0;
        for (uint32_t i = opool_count(values_); i-- > 0;) {
            opool_handle h = opool_live_handle(values_, i);
            if (h.bits != 0 && !opool_valid(*objects_, h) && drop(h)) n++;
        }
        return n;
    }

    /* ~V of every value. */
    void clear() noexcept {
        destroy_all();
        opool_clear(values_);
    }

    /* Values held, those of erased objects not yet pruned or replaced included. */
    uint32_t size() const noexcept { return opool_count(values_); }

  private:
    friend struct detail::world; /* it saves values_ and replaces it */

    /* the values' pool: one slot per index of the objects' pool */
    static opool_desc values_desc(uint32_t capacity, uint32_t max_capacity) noexcept {
        options o = options();
        o.capacity = capacity;
        o.max_capacity = max_capacity;
        opool_desc d = detail::desc_of(o, sizeof(V), alignof(V));
        detail::serialize_with<V>(d);
        return d;
    }

    bool drop(opool_handle h) noexcept {
        V *v = static_cast<V *>(opool_get(values_, h));
        if (v == nullptr) return false;
        v->~V();
        return opool_free(values_, h) == OPOOL_OK;
    }
    void destroy_all() noexcept {
        if constexpr (!std::is_trivially_destructible<V>::value) {
            for (uint32_t i = opool_count(values_); i-- > 0;)
                static_cast<V *>(opool_live_object(values_, i))->~V();
        }
    }
    void reset() noexcept {
        clear();
        opool_destroy(values_);
        values_ = nullptr;
    }

    opool *const *objects_; /* the pool object's C pool: it may be replaced (a load) */
    opool *values_ = nullptr;
    opool_status status_ = OPOOL_EINVAL;
    uint32_t capacity_ = 0, max_capacity_ = 0; /* what made values_ (values_desc) */
};

/* ---- worlds: pools and side tables in one image --------------------------- */

namespace detail {
struct world {
    template <class T, uint32_t F> static const opool *saved(const pool<T, F> &p) noexcept {
        static_assert(valuable<T>(), OPOOL_HPP__SAVABLE);
        return p.p_;
    }
    template <class T, class V> static const opool *saved(const side_table<T, V> &t) noexcept {
        static_assert(valuable<V>(), OPOOL_HPP__SAVABLE);
        return t.values_;
    }
    /* the desc that made the part (false: the part does not exist) */
    template <class T, uint32_t F> static bool desc(const pool<T, F> &p, opool_desc &d) noexcept {
        d = p.made();
        return p.p_ != nullptr;
    }
    template <class T, class V>
    static bool desc(const side_table<T, V> &t, opool_desc &d) noexcept {
        d = side_table<T, V>::values_desc(t.capacity_, t.max_capacity_);
        return t.values_ != nullptr;
    }
    /* the pool object a part's handles are keyed to: a table's pool; none for a pool */
    template <class T, uint32_t F> static const void *keyed_to(const pool<T, F> &) noexcept {
        return nullptr;
    }
    template <class T, class V> static const void *keyed_to(const side_table<T, V> &t) noexcept {
        return t.objects_;
    }
    /* what a table keyed to the part holds: a pool's; none for a table */
    template <class T, uint32_t F> static const void *key(const pool<T, F> &p) noexcept {
        return &p.p_;
    }
    template <class T, class V> static const void *key(const side_table<T, V> &) noexcept {
        return nullptr;
    }
    /* the part's contents ended, c in their place */
    template <class T, uint32_t F> static void adopt(pool<T, F> &p, opool *c) noexcept {
        p.clear();
        opool_destroy(p.p_);
        p.p_ = c;
        p.status_ = OPOOL_OK;
    }
    template <class T, class V> static void adopt(side_table<T, V> &t, opool *c) noexcept {
        t.clear();
        opool_destroy(t.values_);
        t.values_ = c;
        t.status_ = OPOOL_OK;
    }
};
} // namespace detail

/* Save pools (pool<T>) and side tables (side_table<T, V>) as one image,
 * atomically (opool_save_many_file: a temporary file beside path, synced,
 * renamed over it; a crash or a full disk part-way leaves the previous
 * file as it was). The image is a C world image (docs/FORMAT.md, "Worlds
 * of opool.hpp"): one section per part, in argument order, a side table's
 * being the pool of its values. Each part's objects are saved as its
 * save() would (T and V through serializer). OPOOL_EINVAL: a part that
 * does not exist (not created, moved from), the same part twice, path
 * NULL or empty; else as opool_save_many_file. A serializer that throws:
 * the save fails (path untouched) and the exception goes on. Cost: the
 * sum of the parts' saves, plus the fsyncs. */
template <class... X> opool_status save_world_file(const char *path, const X &...parts) {
    static_assert(sizeof...(X) > 0, "opl::save_world_file: at least one pool or side table");
    const opool *c[] = {detail::world::saved(parts)...};
    for (const opool *p : c)
        if (p == nullptr) return OPOOL_EINVAL;
    detail::io_scope io;
    return io.result(opool_save_many_file(c, sizeof...(X), path));
}

/* Load what save_world_file saved into the same parts, in the same order:
 * pools made with the options (or desc) they were saved with and side
 * tables bound to them. All or none: on success every part's contents are
 * replaced (the old objects and values end, ~T and ~V, and the parts hold
 * the image's, every handle as saved; a table stays bound to its pool
 * object); on any failure every part is as it was and nothing loaded stays
 * constructed. OPOOL_EINVAL: a part that does not exist, the same part
 * twice, a side table without its pool among the parts, or an image of
 * other parts (their number, sizes or geometry: a part made with other
 * options); OPOOL_ENOENT: no file at path; OPOOL_EIO;
 * OPOOL_ECORRUPT: a damaged image, or a record a serializer rejected;
 * OPOOL_ENOMEM. The check that failed is recorded (opool_last_load_error,
 * its pool the part's index) and reported through the report of the part
 * concerned. A serializer that throws: as a failure, then the exception
 * goes on. Cost: as opool_load_many_file plus the serializers and the
 * destruction of the old contents. */
template <class... X> [[nodiscard]] opool_status load_world_file(const char *path, X &...parts) {
    static_assert(sizeof...(X) > 0, "opl::load_world_file: at least one pool or side table");
    constexpr uint32_t n = sizeof...(X);
    opool_desc d[n];
    bool exist = true;
    uint32_t i = 0;
    ((exist = detail::world::desc(parts, d[i++]) && exist), ...);
    const void *at[] = {static_cast<const void *>(&parts)...};
    const void *keyed_to[] = {detail::world::keyed_to(parts)...};
    const void *key[] = {detail::world::key(parts)...};
    for (uint32_t a = 0; a < n; a++) {
        bool has_pool = keyed_to[a] == nullptr;
        for (uint32_t b = 0; b < n; b++) {
            if (b > a && at[a] == at[b]) exist = false;
            if (key[b] != nullptr && key[b] == keyed_to[a]) has_pool = true;
        }
        if (!has_pool) exist = false; /* a table's values keyed to handles of a pool not loaded */
    }
    if (!exist) return OPOOL_EINVAL;
    opool *out[n] = {};
    opool_status s;
    {
        detail::io_scope io;
        s = io.result(opool_load_many_file(out, d, n, path));
    }
    if (s != OPOOL_OK) return s;
    i = 0;
    (detail::world::adopt(parts, out[i++]), ...);
    return OPOOL_OK;
}

/* ---- mt_pool<T> and mt_cache<T> ------------------------------------------ */

namespace detail {
/* Set while a thread frees the slot of a T whose constructor threw: the
 * fini it runs then must not destroy what was never built. */
inline bool &fini_skipped() noexcept {
    static thread_local bool skip = false;
    return skip;
}
template <class T> void run_destructor(void *obj, void *) noexcept {
    if (!fini_skipped()) static_cast<T *>(obj)->~T();
}
template <class Rep, class Period>
inline uint64_t timeout_ns(std::chrono::duration<Rep, Period> d) noexcept {
    if (d <= d.zero()) return 0;
    if (d == std::chrono::duration<Rep, Period>::max()) return OPOOL_WAIT_FOREVER;
    using ns = std::chrono::duration<double, std::nano>;
    double n = std::chrono::duration_cast<ns>(d).count();
    return n >= 1.8e19 ? OPOOL_WAIT_FOREVER : static_cast<uint64_t>(n);
}
/* The concurrent pool's report: the default, but for the objects still live
 * at destroy, which mt_pool's destructor ends on purpose (no leak). */
inline void mt_report(opool_mt *p, opool_status what, opool_handle h, void *user) {
    if (what != OPOOL_ELEAK) opool_mt_default_report(p, what, h, user);
}

/* Free a slot whose object was never constructed, without its fini. */
template <class Free> inline void free_unbuilt(Free free) noexcept {
    fini_skipped() = true;
    free();
    fini_skipped() = false;
}
} // namespace detail

/* The concurrent pool (opool_mt.h) with T's lifetime: emplace constructs,
 * and ~T runs in the free that wins the slot (erase, a cache's erase, the
 * pool's destructor for what is still live). Created from options like
 * pool<T> (max_capacity above capacity: it grows, opool_mt.h's GROWTH; the
 * evict constructor does not apply). Every call but the destructor is
 * thread-safe; keeping an object alive while another thread uses it is the
 * caller's protocol, as in C. No iteration (the C pool has no live list). */
template <class T> class mt_pool {
  public:
    using value_type = T;

    mt_pool() noexcept = default;
    explicit mt_pool(const options &o) noexcept {
        opool_desc d = detail::desc_of(o, sizeof(T), alignof(T));
        if constexpr (!std::is_trivially_destructible<T>::value)
            d.fini = &detail::run_destructor<T>;
        d.report_mt = &detail::mt_report;
        status_ = opool_mt_create(&p_, &d);
    }
    mt_pool(const mt_pool &) = delete;
    mt_pool &operator=(const mt_pool &) = delete;
    mt_pool(mt_pool &&o) noexcept : p_(o.p_), status_(o.status_) {
        o.p_ = nullptr;
        o.status_ = OPOOL_EINVAL;
    }
    mt_pool &operator=(mt_pool &&o) noexcept {
        if (this != &o) {
            opool_mt_destroy(p_);
            p_ = o.p_;
            status_ = o.status_;
            o.p_ = nullptr;
            o.status_ = OPOOL_EINVAL;
        }
        return *this;
    }
    /* ~T of every live object; no other thread may use the pool or its caches */
    ~mt_pool() { opool_mt_destroy(p_); }

    explicit operator bool() const noexcept { return p_ != nullptr; }
    opool_status status() const noexcept { return status_; }

    /* As pool<T>::emplace, over opool_mt_alloc. Lock-free. */
    template <class... A> [[nodiscard]] OPOOL_HPP__HOT emplaced<T> emplace(A &&...args) {
        opool_handle h;
        void *mem = opool_mt_alloc(p_, &h);
        return detail::emplace_in<T>(mem, h, unbuilt(), std::forward<A>(args)...);
    }
    /* emplace, but while the pool is full wait up to timeout for a slot
     * (opool_mt_alloc_wait; zero or negative: do not wait; the duration
     * type's max(), or above 2^64 ns: no limit). */
    template <class Rep, class Period, class... A>
    emplaced<T> emplace_wait(std::chrono::duration<Rep, Period> timeout, A &&...args) {
        opool_handle h;
        void *mem = opool_mt_alloc_wait(p_, &h, detail::timeout_ns(timeout));
        return detail::emplace_in<T>(mem, h, unbuilt(), std::forward<A>(args)...);
    }

    /* ~T and free, in the free that wins (of two threads erasing one
     * handle, exactly one gets true). false for a stale, foreign or null
     * handle (counted, reported as opool_mt_free says). Lock-free. */
    bool erase(handle<T> h) noexcept { return opool_mt_free(p_, h.raw()) == OPOOL_OK; }
    [[nodiscard]] T *get(handle<T> h) const noexcept {
        return static_cast<T *>(opool_mt_get(p_, h.raw()));
    }
    bool contains(handle<T> h) const noexcept { return opool_mt_valid(p_, h.raw()); }
    uint32_t size() const noexcept { return opool_mt_count(p_); }
    uint32_t capacity() const noexcept { return opool_mt_capacity(p_); }
    opool_mt_stats stats() const noexcept {
        opool_mt_stats s;
        opool_mt_get_stats(p_, &s);
        return s;
    }
    opool_mt *c_pool() const noexcept { return p_; }

  private:
    /* gives back the slot of a T whose constructor threw */
    auto unbuilt() noexcept {
        return
            [this](opool_handle h) { detail::free_unbuilt([&] { (void)opool_mt_free(p_, h); }); };
    }

    opool_mt *p_ = nullptr;
    opool_status status_ = OPOOL_EINVAL;
};

/* One thread's cache of an mt_pool<T> (opool_mt_cache): emplace and erase
 * without touching shared lines while it has slots. One thread at a time
 * per cache; the pool must outlive it. size: 2 .. OPOOL_MT_CACHE_MAX
 * (0: 64). */
template <class T> class mt_cache {
  public:
    explicit mt_cache(mt_pool<T> &p, uint32_t size = 0) noexcept {
        status_ = opool_mt_cache_create_ex(&c_, p.c_pool(), size ? size : 64);
    }
    mt_cache(const mt_cache &) = delete;
    mt_cache &operator=(const mt_cache &) = delete;
    mt_cache(mt_cache &&o) noexcept : c_(o.c_), status_(o.status_) {
        o.c_ = nullptr;
        o.status_ = OPOOL_EINVAL;
    }
    mt_cache &operator=(mt_cache &&o) noexcept {
        if (this != &o) {
            opool_mt_cache_destroy(c_);
            c_ = o.c_;
            status_ = o.status_;
            o.c_ = nullptr;
            o.status_ = OPOOL_EINVAL;
        }
        return *this;
    }
    /* Gives the parked slots back; objects emplaced through it stay live. */
    ~mt_cache() { opool_mt_cache_destroy(c_); }

    explicit operator bool() const noexcept { return c_ != nullptr; }
    opool_status status() const noexcept { return status_; }

    template <class... A> [[nodiscard]] OPOOL_HPP__HOT emplaced<T> emplace(A &&...args) {
        opool_handle h;
        void *mem = opool_mt_cache_alloc(c_, &h);
        return detail::emplace_in<T>(mem, h, unbuilt(), std::forward<A>(args)...);
    }
    template <class Rep, class Period, class... A>
    emplaced<T> emplace_wait(std::chrono::duration<Rep, Period> timeout, A &&...args) {
        opool_handle h;
        void *mem = opool_mt_cache_alloc_wait(c_, &h, detail::timeout_ns(timeout));
        return detail::emplace_in<T>(mem, h, unbuilt(), std::forward<A>(args)...);
    }
    /* Any live handle of the pool, whichever thread emplaced it. */
    bool erase(handle<T> h) noexcept { return opool_mt_cache_free(c_, h.raw()) == OPOOL_OK; }
    void flush() noexcept { opool_mt_cache_flush(c_); }
    opool_mt_cache *c_cache() const noexcept { return c_; }

  private:
    auto unbuilt() noexcept {
        return [this](opool_handle h) {
            detail::free_unbuilt([&] { (void)opool_mt_cache_free(c_, h); });
        };
    }

    opool_mt_cache *c_ = nullptr;
    opool_status status_ = OPOOL_EINVAL;
};

/* ---- allocator<T> -------------------------------------------------------- */

namespace detail {
/* A free the heap rejected (a double free, a pointer it does not hold) from
 * deallocate, which cannot return a status: the heap has reported it to its
 * report callback; this says it on stderr as well, once per call. */
inline void heap_rejected(const opool_heap *h, const void *p, opool_status s) noexcept {
    std::fprintf(stderr, "opool: heap %p: deallocate(%p) rejected: %s\n",
                 static_cast<const void *>(h), p,
                 s == OPOOL_ESTALE ? "freed twice" : "not a block of this heap");
}
} // namespace detail

/* A standard allocator (std::allocator_traits: rebind, equality,
 * propagation) over an opool_heap it does not own, for std::vector,
 * std::map, std::unordered_map and the storages of libraries that take an
 * allocator type (EnTT's): `opl::allocator<int> a(heap);
 * std::vector<int, opl::allocator<int>> v(a);`. Two allocators are equal
 * when they use the same heap; copies, moves and swaps of containers take
 * the allocator with them. allocate(n) is opool_heap_alloc(n * sizeof(T))
 * (std::bad_alloc when it fails or n * sizeof(T) overflows; std::abort()
 * under -fno-exceptions); a T aligned beyond what the heap's blocks give
 * (16 bytes for classes that are multiples of 16, as the defaults are; 8
 * otherwise) goes to the aligned operator new instead. deallocate frees the
 * block; a block the heap rejects (freed twice, not its own) is reported by
 * the heap's report callback and on stderr. An arena's containers may be
 * dropped without deallocating (OPOOL_HEAP_ARENA, opool_heap_clear).
 * Thread-safety: the heap's (one thread at a time); made from a
 * shared_heap, any thread (each call holds the heap's mutex). */
/* An opool_heap that threads share: the heap and a mutex that every call
 * made through it, or through an allocator made from it, holds (an
 * opool_heap alone is one thread's at a time). Uncontended, a call costs
 * the heap's and a lock and unlock; contended, the threads take turns. For
 * blocks that one thread makes and frees, one heap per thread costs no
 * lock. Move-only; the blocks die with it. */
class shared_heap {
  public:
    explicit shared_heap(const opool_heap_desc *desc = nullptr) noexcept
        : status_(opool_heap_create(&h_, desc)) {
        if (desc && desc->class_sizes)
            for (uint32_t k = 0; k < desc->class_count; k++)
                if (desc->class_sizes[k] % 16 != 0) align16_ = false;
    }
    shared_heap(const shared_heap &) = delete;
    shared_heap &operator=(const shared_heap &) = delete;
    ~shared_heap() { opool_heap_destroy(h_); }

    explicit operator bool() const noexcept { return h_ != nullptr; }
    opool_status status() const noexcept { return status_; }
    opool_heap *c_heap() const noexcept { return h_; }
    std::mutex &mutex() const noexcept { return m_; }
    /* its blocks are aligned to 16 (every class a multiple of 16), else to 8 */
    bool aligned16() const noexcept { return align16_; }

    void *alloc(std::size_t size) noexcept {
        std::lock_guard<std::mutex> hold(m_);
        return opool_heap_alloc(h_, size);
    }
    opool_status free(void *p) noexcept {
        std::lock_guard<std::mutex> hold(m_);
        return opool_heap_free(h_, p);
    }

  private:
    opool_heap *h_ = nullptr;
    opool_status status_;
    bool align16_ = true;
    mutable std::mutex m_;
};

template <class T> class allocator {
    static constexpr bool over_aligned_ = alignof(T) > 16;

  public:
    using value_type = T;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    using is_always_equal = std::false_type;

    explicit allocator(opool_heap *heap) noexcept : h_(heap) {}
    /* Over a heap that threads share: every allocate and deallocate holds its mutex. */
    explicit allocator(shared_heap &heap) noexcept : h_(heap.c_heap()), m_(&heap.mutex()) {}
    template <class U>
    allocator(const allocator<U> &o) noexcept : h_(o.c_heap()), m_(o.c_mutex()) {}

    [[nodiscard]] T *allocate(std::size_t n) {
        if (n > SIZE_MAX / sizeof(T)) return fail();
        if constexpr (over_aligned_)
            return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
        if (m_ != nullptr) {
            std::lock_guard<std::mutex> hold(*m_);
            return take(n);
        }
        return take(n);
    }
    void deallocate(T *p, std::size_t n) noexcept {
        (void)n;
        if constexpr (over_aligned_) {
            ::operator delete(p, std::align_val_t(alignof(T)));
        } else if (m_ != nullptr) {
            std::lock_guard<std::mutex> hold(*m_);
            give(p);
        } else {
            give(p);
        }
    }

    opool_heap *c_heap() const noexcept { return h_; }
    std::mutex *c_mutex() const noexcept { return m_; }
    template <class U> friend bool operator==(const allocator &a, const allocator<U> &b) noexcept {
        return a.c_heap() == b.c_heap();
    }
    template <class U> friend bool operator!=(const allocator &a, const allocator<U> &b) noexcept {
        return a.c_heap() != b.c_heap();
    }

  private:
    T *take(std::size_t n) {
        void *p = opool_heap_alloc(h_, n * sizeof(T));
        if (p == nullptr) return fail();
        if (reinterpret_cast<uintptr_t>(p) % alignof(T) != 0) { /* classes not multiples of 16 */
            (void)opool_heap_free(h_, p);
            return fail();
        }
        return static_cast<T *>(p);
    }
    void give(T *p) noexcept {
        opool_status s = opool_heap_free(h_, p);
        if (OPOOL_UNLIKELY(s != OPOOL_OK)) detail::heap_rejected(h_, p, s);
    }

    [[noreturn]] static T *fail() {
#if OPOOL_HPP_EXCEPTIONS
        throw std::bad_alloc();
#else
        std::abort();
#endif
    }

    opool_heap *h_;
    std::mutex *m_ = nullptr;
};

/* ---- heap_resource ------------------------------------------------------- */

#if defined(__cpp_lib_memory_resource) || (defined(_LIBCPP_VERSION) && _LIBCPP_VERSION >= 16000)
#define OPOOL_HPP_PMR 1
/* Only where the standard library has <memory_resource> (libstdc++ 9 and
 * later, libc++ 16 and later: not Debian's emscripten 3.1, whose libc++ is
 * older); OPOOL_HPP_PMR says whether it is there.
 * A std::pmr::memory_resource over an opool_heap, so std::pmr containers
 * (vector, string, unordered_map, ...) take their memory from size
 * classes. Requests aligned to 8 (16, when every class size is a multiple
 * of 16, as the default classes are) go to the heap; more strictly
 * aligned ones to upstream (std::pmr::new_delete_resource() unless given).
 * A heap that cannot serve a request (a full OPOOL_HEAP_FIXED class, no
 * memory) throws std::bad_alloc, as the standard asks (std::abort() under
 * -fno-exceptions). Default-constructed: a heap that grows. The heap, and
 * every block in it, dies with the resource; containers using it must go
 * first; heap_resource(shared_heap &) uses a heap that threads share
 * instead (not owned), holding its mutex in every call. As an arena
 * (heap_resource(opl::arena), or OPOOL_HEAP_ARENA in
 * the desc) it is meant to die with blocks in it, and reports no leak;
 * release() frees every block at once and keeps the resource, as
 * std::pmr::monotonic_buffer_resource's does (opool_heap_clear: a
 * container still holding blocks must not be used after it). Upstream's
 * blocks are upstream's: release() and the destructor leave them.
 * Thread-safety: one thread at a time, as the heap, but over a
 * shared_heap. */
struct arena_t {
    explicit arena_t() = default;
};
inline constexpr arena_t arena{}; /* heap_resource(opl::arena): a heap dropped whole */

class heap_resource : public std::pmr::memory_resource {
  public:
    heap_resource() noexcept : heap_resource(nullptr) {}
    explicit heap_resource(arena_t, std::pmr::memory_resource *upstream = nullptr) noexcept
        : heap_resource(&arena_desc(), upstream) {}
    explicit heap_resource(const opool_heap_desc *desc,
                           std::pmr::memory_resource *upstream = nullptr) noexcept
        : upstream_(upstream ? upstream : std::pmr::new_delete_resource()) {
        status_ = opool_heap_create(&h_, desc);
        align16_ = true;
        if (desc && desc->class_sizes)
            for (uint32_t k = 0; k < desc->class_count; k++)
                if (desc->class_sizes[k] % 16 != 0) align16_ = false;
    }
    /* Over a heap that threads share (not owned: it must outlive the
     * resource): every call holds the heap's mutex, so containers of
     * several threads may use one resource. */
    explicit heap_resource(shared_heap &heap,
                           std::pmr::memory_resource *upstream = nullptr) noexcept
        : h_(heap.c_heap()), status_(heap.status()),
          upstream_(upstream ? upstream : std::pmr::new_delete_resource()),
          align16_(heap.aligned16()), m_(&heap.mutex()) {}
    heap_resource(const heap_resource &) = delete;
    heap_resource &operator=(const heap_resource &) = delete;
    ~heap_resource() override {
        if (m_ == nullptr) opool_heap_destroy(h_);
    }

    explicit operator bool() const noexcept { return h_ != nullptr; }
    opool_status status() const noexcept { return status_; }
    opool_heap *c_heap() const noexcept { return h_; }
    /* Every block of the heap freed at once (opool_heap_clear). */
    void release() noexcept {
        lock hold(m_);
        (void)opool_heap_clear(h_);
    }

  protected:
    void *do_allocate(std::size_t bytes, std::size_t align) override {
        if (!from_heap(align)) return upstream_->allocate(bytes, align);
        void *p;
        {
            lock hold(m_);
            p = opool_heap_alloc(h_, bytes);
        }
        if (p == nullptr) {
#if OPOOL_HPP_EXCEPTIONS
            throw std::bad_alloc();
#else
            std::abort();
#endif
        }
        return p;
    }
    void do_deallocate(void *p, std::size_t bytes, std::size_t align) override {
        if (!from_heap(align)) {
            upstream_->deallocate(p, bytes, align);
            return;
        }
        opool_status s;
        {
            lock hold(m_);
            s = opool_heap_free(h_, p);
        }
        if (OPOOL_UNLIKELY(s != OPOOL_OK)) detail::heap_rejected(h_, p, s);
    }
    bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override {
        return this == &o;
    }

  private:
    bool from_heap(std::size_t align) const noexcept { return align <= (align16_ ? 16u : 8u); }
    static const opool_heap_desc &arena_desc() noexcept {
        static const opool_heap_desc d = [] {
            opool_heap_desc a = opool_heap_desc();
            a.flags = OPOOL_HEAP_ARENA;
            return a;
        }();
        return d;
    }

    /* the shared heap's mutex held for a scope; nothing for a heap of its own */
    struct lock {
        std::mutex *m;
        explicit lock(std::mutex *mu) noexcept : m(mu) {
            if (m) m->lock();
        }
        ~lock() {
            if (m) m->unlock();
        }
        lock(const lock &) = delete;
        lock &operator=(const lock &) = delete;
    };

    opool_heap *h_ = nullptr;
    opool_status status_ = OPOOL_EINVAL;
    std::pmr::memory_resource *upstream_;
    bool align16_ = true;
    std::mutex *m_ = nullptr; /* a shared heap's (not owned), or none */
};
#else
#define OPOOL_HPP_PMR 0
#endif

} // namespace opl

/* Handles hash by their bits (mixed, so that neighbouring slots spread). */
namespace std {
template <class T> struct hash<opl::handle<T>> {
    size_t operator()(opl::handle<T> h) const noexcept {
        uint64_t x = h.raw().bits * 0x9E3779B97F4A7C15ull;
        return opl::detail::to_size(x ^ (x >> 32));
    }
};
template <class T> struct hash<opl::handle32<T>> {
    size_t operator()(opl::handle32<T> h) const noexcept {
        uint32_t x = h.raw().bits * 0x9E3779B1u;
        return x;
    }
};
} // namespace std

#endif /* OPOOL_HPP */
