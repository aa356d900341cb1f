# opool -- the commands of the README. Needs only a C compiler, cmake (>= 3.20) and make;
# `make test` also wants clang (clang-14 on Debian 12) with its sanitizer runtime.
#
#   make test          the layout, every test three ways, then an install check (static and
#                      shared):
#                        format       make format-check: clang-format 14 finds nothing to change
#                        build/gcc    gcc, -O2 with assertions on (RelWithDebInfo minus NDEBUG)
#                        build/clang  clang, Release (-O3 -DNDEBUG; tests keep their asserts)
#                        build/asan   clang, Debug -O1, AddressSanitizer + UBSan
#                        build/tsan   clang, -O1, ThreadSanitizer: the concurrent tests (label mt;
#                                     re-configured first so a new test is built)
#                        spin         the Promela models of tests/spin (tests/spin/run.sh)
#                        eva          Frama-C's EVA over proof/eva_core.c: no handle, index
#                                     or pointer makes the core read or write outside its
#                                     memory (proof/run.sh eva; zero alarms, the harness's
#                                     assertions valid; two runs side by side); then the
#                                     WP cache's keys change where the proofs can
#                                     (proof/keys_check.sh)
#                        install      the static and shared installs, each used by CMake
#                                     and pkg-config consumers, and by a user's ASan and
#                                     TSan builds with gcc and clang (tests/user/check.sh)
#                      all with -Werror; stops at the first failure. With gcc alone (no
#                      clang, or no libclang-rt-14-dev) build/clang is skipped and build/asan
#                      uses gcc, and the summary says so; without clang the TSan stage is
#                      skipped, without spin the model check, without frama-c the EVA
#                      stage, without clang-format the layout check, each with a note.
#   make platforms     the cross builds, each built with -Werror and its whole test suite run
#                      under its emulator (not part of make test; .ci/run runs it after):
#                        build/i686     i686-linux-gnu-gcc, static, run natively where the
#                                       kernel can, else qemu-i386 (32-bit x86; see
#                                       cmake/toolchains/run-i386.sh)
#                        build/aarch64  aarch64-linux-gnu-gcc, qemu-aarch64 (64-bit ARM)
#                        build/mingw64  x86_64-w64-mingw32-gcc-posix, wine64 (Windows x86-64)
#                        build/wasm32   emscripten (emcmake), node (WebAssembly, the default
#                                       single-threaded build); then build/wasm32-threads,
#                                       wasm threads on, for the tests labelled mt; then
#                                       examples/web/check.sh: the particles page built
#                                       against build/wasm32's install, served from 127.0.0.1
#                                       to headless chromium, must show what the native
#                                       build of its simulation computes
#                      toolchains in cmake/toolchains/; aarch64's heaps reserve 256 MiB,
#                      not 4 GiB (qemu-user keeps bookkeeping for every reserved page:
#                      test_heap peaked at 23 GB); test_mt_stress at $(PLATFORM_STRESS)
#                      of its counts (wasm: $(WASM_STRESS)). PLATFORMS picks some; a missing
#                      toolchain is an error: make platform-deps installs them (apt-get)
#   make bench         Release build of bench/ and a run of opool_bench $(BENCH_ARGS) at object
#                      sizes 16, 64 and 256 (about 5 minutes; table, bench/out/core.csv and SVG
#                      charts): the pools (C, and Boost.Pool and plf::colony when found) and
#                      glibc malloc, then at each size the siblings it finds beside it, each in
#                      its own process and merged into that size's table
#                      (build/bench/opool_bench_<x>):
#                      mimalloc, jemalloc, tcmalloc (bench_core.c linked with each; skipped
#                      with a note if the library was not found) and slotmap (Rust's slotmap
#                      and slab crates, bench/slotmap; needs cargo, librust-slotmap-dev and
#                      librust-slab-dev). Their
#                      ratios are to opool_bench's reference medians of the same run; their
#                      checksums must match its subjects'. BENCH_ARGS=--no-peers: no siblings
#   make bench-quick   the same with --quick: every N at most 100K, fewer repetitions (under
#                      30 s): a check that everything runs and agrees, not a measurement
#   make bench-mt      bench/bench_mt.c, the concurrent pool against locked pools, DPDK's
#                      rte_mempool, Rust's sharded_slab (bench/sharded; needs cargo and
#                      librust-sharded-slab-dev) and mallocs ($(BENCH_MT_ARGS); --quick:
#                      under 30 s), then bench/bench_ladder.c: what each guarantee of the
#                      cache path costs
#   make bench-heap    bench/bench_heap.c, opool_heap against glibc, mimalloc, jemalloc,
#                      tcmalloc: time and RSS ($(BENCH_HEAP_ARGS); --quick: under 20 s), then
#                      make bench-replay
#   make bench-replay  bench/bench_replay.c: the allocation traces of real programs in
#                      bench/traces replayed against the same heaps: time, peak RSS, system
#                      calls ($(BENCH_REPLAY_ARGS), default --quick and --no-peers of
#                      BENCH_HEAP_ARGS; --quick: under 15 s)
#   make bench-deps    apt-get install (sudo when not root) the peers the benchmarks compare
#                      against, those not installed yet: $(BENCH_DEPS); without them the
#                      benchmarks still run and name the peers they lack
#   make build         one build in build/dev with $(CC) (make check: and its tests)
#   make format        clang-format -i on every source (format-check: report only)
#   make fuzz          libFuzzer builds (clang, -fsanitize=fuzzer,address,undefined) of the fuzz
#                      targets in build/fuzz, each run $(FUZZ_SECONDS) s (default 60) on its
#                      corpus fuzz/corpus/<target>, one after the other; new inputs go to
#                      build/fuzz/new-<target> (FUZZ_MERGE=1: those adding coverage are merged
#                      into the corpus after, a minimal set cover),
#                      findings to build/fuzz/<target>-crash-*. Prints executions and coverage.
#   make fuzz-cov      line coverage of src/ by the committed corpora (clang source-based
#                      coverage, llvm-cov report); FUZZ_COV_DIRS adds more input directories
#   make fuzz-corpus   regenerate the seed-* files of fuzz/corpus/{ops,load} (fuzz/gen_corpus.c;
#                      the heap seeds are committed inputs)
#   make proof         the machine-checked proofs of docs/PROOF.md (proof/run.sh): EVA, then WP
#                      with goals proven per function (needs frama-c-base, why3, z3, cvc4); fails
#                      on any alarm, unproven goal, aborted run or missing tool. WP replays the
#                      goals proof/wp-cache holds (a goal's text as the prover receives it: a
#                      change re-proves only the goals it changes) and records the new ones
#   make proof-fresh   the same with no cache: every goal proven from nothing
#   make proof-mutants seven bugs of proof/mutants/, each in a copy of the tree: each must make
#                      the proof fail (proof/mutants.sh)
#   make dist          regenerate src/opool_gdb_script.h (gdb's printers, tools/debugger/embed.cmake),
#                      then dist/opool.h, the single header (cmake -P tools/amalgamate.cmake)
#   make docs          regenerate docs/API.md from the header comments (cmake -P tools/apidoc.cmake)
#   make bench-tables  regenerate the figure tables of README.md, docs/BENCHMARKS.md and
#                      docs/DEBUGGING.md from docs/results/*.csv (python3
#                      tools/benchtables.py; the test bench_tables_up_to_date fails until
#                      you do)
#   make bench-publish copy the CSVs of the last runs (bench/out/core.csv, build/bench/mt.csv,
#                      bench/out/heap.csv, heap_soak.csv, replay.csv; those present) into
#                      docs/results, then make bench-tables. make bench, bench-mt and
#                      bench-heap end with it for their own CSVs (PUBLISH=0: they do not);
#                      make bench-quick never does
#   make clean         remove build/
#
# Variables: GCC, CLANG (the compilers of make test), CC (make build / make bench), JOBS (2),
# BENCH_ARGS, BENCH_MT_ARGS, BENCH_HEAP_ARGS, BENCH_REPLAY_ARGS, PUBLISH, PYTHON3, CMAKE, CTEST,
# FUZZ_SECONDS, FUZZ_MERGE, FUZZ_TARGETS, FUZZ_ARGS (more libFuzzer flags), FUZZ_COV_DIRS. Changing a
# compiler or an option reconfigures that build directory from scratch.

.NOTPARALLEL:
.DEFAULT_GOAL := build
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

CMAKE ?= cmake
CTEST ?= ctest
JOBS ?= 2
GCC ?= gcc
CLANG ?= $(shell command -v clang-14 >/dev/null 2>&1 && echo clang-14 || echo clang)
CLANG_FORMAT ?= $(shell command -v clang-format-14 || command -v clang-format || true)
BENCH_ARGS ?=

# The C++ compiler matching a C compiler (gcc-12 -> g++-12, clang-14 -> clang++-14), if installed.
cxx_for = $(shell p='$(1)'; case "$$p" in (*clang*) p="$${p/clang/clang++}";; (*gcc*) p="$${p/gcc/g++}";; (cc|*/cc) p=c++;; (*) p=;; esac; \
	[ -n "$$p" ] && command -v "$$p" >/dev/null 2>&1 && echo "$$p" || true)
GXX := $(call cxx_for,$(GCC))
CLANGXX := $(call cxx_for,$(CLANG))
DEV_CXX := $(call cxx_for,$(CC))

COMMON := -DOPOOL_WERROR=ON -DOPOOL_BUILD_TESTS=ON -DOPOOL_BUILD_EXAMPLES=ON
GCC_ARGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPOOL_ASSERTS=ON $(COMMON)
# The Relacy checks run in build/gcc only (tests/relacy/relacy.cmake says why).
CLANG_ARGS := -DCMAKE_BUILD_TYPE=Release -DOPOOL_TEST_RELACY=OFF $(COMMON)
ASAN_ARGS := -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g" "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" \
             -DOPOOL_SANITIZE=address,undefined $(COMMON)
BENCH_CMAKE_ARGS := -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
             "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
             -DOPOOL_BUILD_BENCH=ON -DOPOOL_BUILD_TESTS=OFF -DOPOOL_BUILD_EXAMPLES=OFF
DEV_ARGS := -DCMAKE_BUILD_TYPE=Debug $(COMMON)

# $(call configure,DIR,CC,CXX-or-empty,CMAKE-ARGS): a shell fragment that configures DIR,
# from scratch whenever the compiler or any argument differs from the last configure there.
# CC and CXX may be shell variables ($$cc); CMAKE-ARGS may use "double quotes", not single ones.
configure = cxx_=$(3); \
	eval 'set -- -G "Unix Makefiles" -DCMAKE_C_COMPILER=$(2) $${cxx_:+-DCMAKE_CXX_COMPILER=$$cxx_} $(4)'; \
	want=$$(printf '%s\n' "$$@"); \
	if [ ! -f $(1)/CMakeCache.txt ] || [ "$$(cat $(1)/.opool-configure 2>/dev/null)" != "$$want" ]; then \
		case "$(1)" in (build/?*) rm -rf "$(1)";; (*) echo "refusing to wipe $(1)"; exit 1;; esac; \
		echo "+ $(CMAKE) -S . -B $(1) $$(printf '%q ' "$$@")"; \
		$(CMAKE) -S . -B "$(1)" "$$@"; \
		printf '%s\n' "$$want" > "$(1)/.opool-configure"; \
	fi

# $(call build_and_test,DIR,CC,CXX,ARGS)
build_and_test = $(call configure,$(1),$(2),$(3),$(4)); \
	echo "+ $(CMAKE) --build $(1) -j$(JOBS)"; \
	$(CMAKE) --build $(1) -j$(JOBS); \
	echo "+ $(CTEST) --test-dir $(1) --output-on-failure -j$(JOBS)"; \
	$(CTEST) --test-dir $(1) --output-on-failure --no-tests=error -j$(JOBS) 2>&1 | tee $(1)/ctest.log

have = command -v $(1) >/dev/null 2>&1
need = $(call have,$(1)) || { echo "error: $(1) not found ($(2))" >&2; exit 1; }
# Can compiler $(1) build and link a program with -fsanitize=address,undefined?
can_sanitize = $(call have,$(1)) && printf 'int main(void) { return 0; }\n' | \
	$(1) -x c -fsanitize=address,undefined -o build/.sanitize-probe - >/dev/null 2>&1

.PHONY: platforms platform-deps
.PHONY: test test-format test-gcc test-clang test-asan test-tsan test-spin test-eva test-install proof proof-fresh proof-mutants bench bench-quick bench-build bench-deps \
        build check format format-check clean help fuzz fuzz-build fuzz-cov fuzz-corpus

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

# ---- make test ----

# Stages run one after the other and the first failure stops everything. Without clang
# (a machine with only gcc) build/clang is skipped and build/asan uses gcc, with a notice.
test:
	@mkdir -p build; : > build/test-times.txt; : > build/test-notes.txt; \
	rm -f build/*/ctest.log build/install-check.count; \
	for stage in format gcc clang asan tsan spin eva install; do \
		t0=$$(date +%s); \
		$(MAKE) --no-print-directory test-$$stage; \
		echo "$$stage $$(( $$(date +%s) - t0 ))" >> build/test-times.txt; \
	done; \
	total=0; \
	for log in build/gcc/ctest.log build/clang/ctest.log build/asan/ctest.log build/tsan/ctest.log; do \
		[ -f "$$log" ] || continue; \
		n=$$(sed -n 's/.* tests passed, 0 tests failed out of \([0-9][0-9]*\).*/\1/p' "$$log"); \
		total=$$(( total + $${n:-0} )); \
	done; \
	total=$$(( total + $$(cat build/install-check.count) + $$(cat build/spin.count 2>/dev/null || echo 0) )); \
	echo; echo "== make test: seconds per stage"; \
	while read -r stage secs; do printf '   %-8s %4ss\n' "$$stage" "$$secs"; done < build/test-times.txt; \
	if [ -s build/test-notes.txt ]; then echo "== notes"; sed 's/^/   /' build/test-notes.txt; fi; \
	echo "opool: $$total passed, 0 failed"

test-gcc:
	@$(call need,$(GCC),apt-get install gcc); \
	echo "== build/gcc: $(GCC), -O2 with assertions"; \
	$(call build_and_test,build/gcc,$(GCC),$(GXX),$(GCC_ARGS))

test-clang:
	@mkdir -p build; \
	if ! $(call have,$(CLANG)); then \
		echo "build/clang skipped: $(CLANG) not found (apt-get install clang-14)" | tee -a build/test-notes.txt; \
		exit 0; \
	fi; \
	echo "== build/clang: $(CLANG), Release"; \
	$(call build_and_test,build/clang,$(CLANG),$(CLANGXX),$(CLANG_ARGS))

test-asan:
	@mkdir -p build; cc=$(CLANG); cxx=$(CLANGXX); \
	if ! { $(call can_sanitize,$(CLANG)); }; then \
		echo "build/asan uses $(GCC): $(CLANG) cannot link -fsanitize=address,undefined (apt-get install clang-14 libclang-rt-14-dev)" | tee -a build/test-notes.txt; \
		cc=$(GCC); cxx=$(GXX); \
	fi; \
	rm -f build/.sanitize-probe; \
	echo "== build/asan: $$cc, Debug -O1, address,undefined"; \
	$(call build_and_test,build/asan,$$cc,$$cxx,$(ASAN_ARGS))

# ThreadSanitizer over the concurrent tests only (CTest label mt): the rest of the suite is
# single-threaded and already runs three ways.
TSAN_ARGS := -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-O1 -g" "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" \
             -DOPOOL_SANITIZE=thread $(COMMON)
test-tsan:
	@mkdir -p build; \
	if ! { $(call have,$(CLANG)) && printf 'int main(void) { return 0; }\n' | \
			$(CLANG) -x c -fsanitize=thread -o build/.tsan-probe - >/dev/null 2>&1; }; then \
		echo "build/tsan skipped: $(CLANG) cannot link -fsanitize=thread (apt-get install clang-14 libclang-rt-14-dev)" | tee -a build/test-notes.txt; \
		exit 0; \
	fi; \
	rm -f build/.tsan-probe; \
	echo "== build/tsan: $(CLANG), Debug -O1, thread (tests labelled mt)"; \
	$(call configure,build/tsan,$(CLANG),$(CLANGXX),$(TSAN_ARGS)); \
	$(CMAKE) -S . -B build/tsan > /dev/null; \
	targets=$$($(CTEST) --test-dir build/tsan -N -L mt | sed -n 's/^ *Test *#[0-9]*: *\([A-Za-z0-9_]*\).*/\1/p' | sort -u); \
	echo "+ $(CMAKE) --build build/tsan -j$(JOBS) --target $$targets"; \
	$(CMAKE) --build build/tsan -j$(JOBS) --target $$targets; \
	echo "+ $(CTEST) --test-dir build/tsan -L mt --output-on-failure"; \
	$(CTEST) --test-dir build/tsan -L mt --output-on-failure --no-tests=error 2>&1 | tee build/tsan/ctest.log

# The Promela models (tests/spin/*.pml): each run by tests/spin/run.sh, which checks that
# the safe models verify and that the broken ones (the untagged head) fail as they must.
# Every source as clang-format 14 lays it out (.clang-format): the layout is part of the code
# review, so a drift fails here rather than in a later diff. Another clang-format version lays
# some lines out differently: the stage then runs, but says which version it used.
test-format:
	@mkdir -p build; \
	if [ -z "$(CLANG_FORMAT)" ]; then \
		echo "format check skipped: clang-format not found (apt-get install clang-format-14)" | tee -a build/test-notes.txt; \
		exit 0; \
	fi; \
	case "$$($(CLANG_FORMAT) --version)" in (*" 14."*) ;; \
		(*) echo "format check with $$($(CLANG_FORMAT) --version), not clang-format 14" | tee -a build/test-notes.txt;; \
	esac; \
	echo "== format: $(CLANG_FORMAT) --dry-run --Werror on $(words $(FORMAT_FILES)) files"; \
	$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES)

test-spin:
	@mkdir -p build; rm -f build/spin.count; \
	if ! $(call have,spin); then \
		echo "spin skipped: spin not found (apt-get install spin)" | tee -a build/test-notes.txt; \
		echo 0 > build/spin.count; exit 0; \
	fi; \
	echo "== spin: tests/spin"; \
	tests/spin/run.sh build/spin

# EVA (Frama-C) over the core: proof/eva_core.c calls every function taking a handle or an
# index with every value, on pools of several shapes; any alarm fails (docs/PROOF.md).
test-eva:
	@mkdir -p build; \
	if ! $(call have,frama-c); then \
		echo "eva skipped: frama-c not found (apt-get install frama-c-base)" | tee -a build/test-notes.txt; \
		exit 0; \
	fi; \
	proof/run.sh eva build/proof && \
	if $(call have,why3) && $(call have,cvc4) && $(call have,z3); then proof/keys_check.sh build/proof-keys; \
	else echo "keys skipped: why3, cvc4 or z3 not found (apt-get install why3 z3 cvc4)" | tee -a build/test-notes.txt; fi

proof:
	@$(call need,frama-c,apt-get install frama-c-base why3 z3 cvc4); \
	proof/run.sh build/proof

# The same from nothing: every WP goal sent to the provers, the cache neither read nor written.
proof-fresh:
	@$(call need,frama-c,apt-get install frama-c-base why3 z3 cvc4); \
	OPOOL_WP_FRESH=1 proof/run.sh build/proof-fresh

# The seven bugs of proof/mutants/, each applied to a copy of the tree: the proof must fail
# on every one, in the halves each names (proof/mutants.sh, docs/PROOF.md).
proof-mutants:
	@$(call need,frama-c,apt-get install frama-c-base why3 z3 cvc4); \
	proof/mutants.sh build/proof-mutants

# Install the library twice and link a consumer (cmake/consumer/main.c) against each install
# only, with find_package(opool) and with pkg-config, and run it:
#   static  the gcc build (build/gcc) into build/install;
#   shared  a BUILD_SHARED_LIBS=ON build of the library alone (build/shared) into
#           build/install-shared: its SONAME must be libopool.so.<SOVERSION> and the
#           consumers must load it (NEEDED), not a static copy;
# then a third consumer that builds opool from this source tree with add_subdirectory. With
# pkg-config, each install is also used as a user's sanitizer build uses it
# (tests/user/check.sh: ASan sees a write after free, TSan a race and no false one).
# The shared build is configured as a packager would (CTest's BUILD_TESTING=OFF) and built
# whole: it must build and register no test.
SHARED_ARGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_SHARED_LIBS=ON -DOPOOL_WERROR=ON \
               -DBUILD_TESTING=OFF -DOPOOL_BUILD_EXAMPLES=OFF
test-install:
	@echo "== install check: build/install (static), build/install-shared (shared)"; \
	$(call configure,build/gcc,$(GCC),$(GXX),$(GCC_ARGS)); \
	$(CMAKE) --build build/gcc -j$(JOBS) --target opool; \
	$(call configure,build/shared,$(GCC),,$(SHARED_ARGS)); \
	$(CMAKE) --build build/shared -j$(JOBS); \
	built=$$(find build/shared -maxdepth 1 -type f -perm -u+x ! -name '*.so*' -printf '%f '); \
	registered=$$($(CTEST) --test-dir build/shared -N | sed -n 's/^Total Tests: //p'); \
	if [ -n "$$built" ] || [ "$${registered:-0}" != 0 ]; then \
		echo "install check: -DBUILD_TESTING=OFF built '$$built' and registered $$registered tests" >&2; exit 1; \
	fi; \
	echo "   -DBUILD_TESTING=OFF: the library alone, no test registered"; \
	rm -rf build/install build/install-shared build/consumer; \
	checks=0; \
	have_pc=0; command -v pkg-config >/dev/null 2>&1 && have_pc=1; \
	for kind in static shared; do \
		if [ $$kind = static ]; then bdir=build/gcc; prefix=build/install; lib='lib*/libopool.a'; \
		else bdir=build/shared; prefix=build/install-shared; lib='lib*/libopool.so'; fi; \
		echo "-- $$kind: $$prefix"; \
		$(CMAKE) --install $$bdir --prefix "$(CURDIR)/$$prefix" >/dev/null; \
		for f in $(wildcard include/*.h) "$$lib" 'lib*/cmake/opool/opoolConfig.cmake' \
		         'lib*/cmake/opool/opoolConfigVersion.cmake' 'lib*/cmake/opool/opoolTargets.cmake' \
		         'lib*/pkgconfig/opool.pc'; do \
			found=$$(cd $$prefix && compgen -G "$$f" | head -n1 || true); \
			if [ -z "$$found" ]; then echo "install check: missing $$f in $$prefix" >&2; exit 1; fi; \
			echo "   installed $$found"; \
		done; \
		libdir=$$(dirname "$$(compgen -G "$$prefix/$$lib" | head -n1)"); \
		if [ $$kind = shared ]; then \
			soname=$$(objdump -p "$$libdir/libopool.so" | sed -n 's/^ *SONAME *//p'); \
			echo "   SONAME $$soname"; \
			case "$$soname" in (libopool.so.[0-9]*) ;; (*) echo "install check: SONAME '$$soname' is not versioned" >&2; exit 1;; esac; \
			[ -e "$$libdir/$$soname" ] || { echo "install check: $$libdir/$$soname missing" >&2; exit 1; }; \
		fi; \
		checks=$$((checks + 1)); \
		$(CMAKE) -S cmake/consumer -B build/consumer/cmake-$$kind -G "Unix Makefiles" \
			-DCMAKE_C_COMPILER=$(GCC) $(if $(GXX),-DCMAKE_CXX_COMPILER=$(GXX)) \
			-DCMAKE_PREFIX_PATH="$(CURDIR)/$$prefix" \
			-DOPOOL_EXPECT_PREFIX="$(CURDIR)/$$prefix" >/dev/null; \
		$(CMAKE) --build build/consumer/cmake-$$kind >/dev/null; \
		programs=build/consumer/cmake-$$kind/consumer; \
		echo "   find_package consumer ($$kind):"; build/consumer/cmake-$$kind/consumer; \
		checks=$$((checks + 1)); \
		if [ -x build/consumer/cmake-$$kind/consumer_cpp ]; then \
			programs="$$programs build/consumer/cmake-$$kind/consumer_cpp"; \
			echo "   find_package consumer, C++ ($$kind):"; build/consumer/cmake-$$kind/consumer_cpp; \
			checks=$$((checks + 1)); \
		fi; \
		if [ $$have_pc = 1 ]; then \
			flags=$$(PKG_CONFIG_PATH="$(CURDIR)/$$libdir/pkgconfig" pkg-config --cflags --libs opool); \
			echo "   pkg-config --cflags --libs opool ($$kind): $$flags"; \
			$(GCC) -std=c11 -Wall -Wextra -Wpedantic -Werror cmake/consumer/main.c $$flags \
				-o build/consumer/pc_consumer_$$kind; \
			programs="$$programs build/consumer/pc_consumer_$$kind"; \
			echo "   pkg-config consumer ($$kind):"; \
			LD_LIBRARY_PATH="$(CURDIR)/$$libdir" build/consumer/pc_consumer_$$kind; \
			checks=$$((checks + 1)); \
		fi; \
		if [ $$have_pc = 1 ]; then \
			echo "   sanitizer builds against the $$kind install (tests/user/check.sh):"; \
			GCC=$(GCC) CLANG=$(CLANG) tests/user/check.sh $$kind "$(CURDIR)/$$prefix" build/user-sanitizers.count; \
			checks=$$((checks + $$(cat build/user-sanitizers.count))); \
		fi; \
		for prog in $$programs; do \
			needed=$$(objdump -p "$$prog" | sed -n 's/^ *NEEDED *\(libopool.*\)/\1/p'); \
			if [ $$kind = shared ] && [ "$$needed" != "$$soname" ]; then \
				echo "install check: $$prog does not load $$soname (NEEDED: '$$needed')" >&2; exit 1; \
			elif [ $$kind = static ] && [ -n "$$needed" ]; then \
				echo "install check: $$prog loads $$needed, linked against the static install" >&2; exit 1; \
			fi; \
		done; \
	done; \
	[ $$have_pc = 1 ] || echo "   pkg-config not installed: pkg-config consumers skipped"; \
	$(CMAKE) -S cmake/consumer -B build/consumer/subdir -G "Unix Makefiles" \
		-DCMAKE_C_COMPILER=$(GCC) -DOPOOL_SOURCE_DIR="$(CURDIR)" >/dev/null; \
	$(CMAKE) --build build/consumer/subdir -j$(JOBS) >/dev/null; \
	echo "   add_subdirectory consumer:"; build/consumer/subdir/consumer; \
	checks=$$((checks + 1)); \
	echo "$$checks" > build/install-check.count; \
	echo "install check: $$checks passed, 0 failed"

# ---- make platforms ----

PLATFORMS ?= i686 aarch64 mingw64 wasm32
PLATFORM_STRESS ?= 0.25
WASM_STRESS ?= 0.02
PLATFORM_ARGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPOOL_ASSERTS=ON $(COMMON)
# The Debian packages of the four (their C libraries come as dependencies); for the web page
# (examples/web/check.sh), chromium to run it and python3 to serve it.
PLATFORM_DEPS := gcc-i686-linux-gnu g++-i686-linux-gnu gcc-aarch64-linux-gnu \
                 g++-aarch64-linux-gnu qemu-user mingw-w64 wine64 wine emscripten chromium python3
# Debian's emscripten runs its JavaScript tools with node, which must find Debian's node
# modules (acorn) when node is not Debian's own; a shell needs the same setting to run emcc
# (docs/BUILDING.md, "WebAssembly").
export NODE_PATH := $(NODE_PATH)$(if $(NODE_PATH),:)/usr/share/nodejs
# The threaded wasm build runs the tests labelled mt but this one: wasm's waiting and barriers
# are already the portable ones (no futex, no membarrier), so it would repeat test_mt_stress.
WASM_MT_SKIP := '^test_mt_stress_portable$$'
# $(call wasm_configure,DIR,CMAKE-ARGS): as configure, with emcmake (emscripten's toolchain).
wasm_configure = want="emcmake $(2)"; \
	if [ ! -f $(1)/CMakeCache.txt ] || [ "$$(cat $(1)/.opool-configure 2>/dev/null)" != "$$want" ]; then \
		rm -rf $(1); \
		emcmake $(CMAKE) -S . -B $(1) -G "Unix Makefiles" $(2); \
		echo "$$want" > $(1)/.opool-configure; \
	fi
# Wine: quiet, and its prefix kept under build/, made first (wineboot) and used once by one
# program before the tests run in parallel: on a fresh prefix, two tests starting wine at
# once raced to start its server ("wine: chdir to /tmp/wine-.../server-...").
export WINEDEBUG := -all

platform-deps:
	@sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	missing=(); \
	for p in $(PLATFORM_DEPS); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q '^install ok installed$$' || missing+=("$$p"); \
	done; \
	if (( $${#missing[@]} == 0 )); then echo "platform-deps: all installed"; exit 0; fi; \
	echo "+ $$sudo apt-get install $${missing[*]}"; \
	$$sudo apt-get update -q; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$${missing[@]}"

platforms:
	@mkdir -p build; : > build/platform-times.txt; \
	export WINEPREFIX="$(CURDIR)/build/wineprefix"; \
	for t in $(PLATFORMS); do \
		t0=$$(date +%s); dir=build/$$t; \
		case $$t in \
		(i686|aarch64) tc=cmake/toolchains/$$t-linux-gnu.cmake; cc=$$t-linux-gnu-gcc; run=qemu-$${t/i686/i386};; \
		(mingw64) tc=cmake/toolchains/x86_64-w64-mingw32.cmake; cc=x86_64-w64-mingw32-gcc-posix; run=wine;; \
		(wasm32) tc=; cc=emcc; run="node chromium python3";; \
		(*) echo "make platforms: unknown platform $$t (known: i686 aarch64 mingw64 wasm32)" >&2; exit 1;; \
		esac; \
		for tool in $$cc $$run; do \
			command -v $$tool >/dev/null 2>&1 || { echo "error: $$tool not found (make platform-deps)" >&2; exit 1; }; \
		done; \
		stress=$(PLATFORM_STRESS); [ $$t != wasm32 ] || stress=$(WASM_STRESS); \
		extra=; [ $$t != aarch64 ] || extra=-DCMAKE_C_FLAGS=-DOPOOL_HEAP_SPAN=0x10000000; \
		echo "== $$dir: $$cc, run by $${run%% *}"; \
		if [ $$t = wasm32 ]; then \
			$(call wasm_configure,$$dir,$(PLATFORM_ARGS) -DOPOOL_STRESS_SCALE=$$stress -DOPOOL_WASM_THREADS=OFF); \
		else \
			$(call configure,$$dir,$$cc,,-DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/$$tc $(PLATFORM_ARGS) -DOPOOL_STRESS_SCALE=$$stress $$extra); \
		fi; \
		$(CMAKE) --build $$dir -j$(JOBS); \
		if [ $$t = mingw64 ]; then \
			wineboot --init >/dev/null 2>&1 || true; \
			wineserver -w; \
			wine $$dir/test_typed.exe >/dev/null; \
			wineserver -w; \
		fi; \
		$(CTEST) --test-dir $$dir --output-on-failure --no-tests=error -j$(JOBS) 2>&1 | tee $$dir/ctest.log; \
		echo "$$t $$(( $$(date +%s) - t0 )) $$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' $$dir/ctest.log)" >> build/platform-times.txt; \
		if [ $$t = wasm32 ]; then \
			t0=$$(date +%s); dir=build/wasm32-threads; \
			echo "== $$dir: emcc with wasm threads (OPOOL_WASM_THREADS=ON), the tests labelled mt, run by node"; \
			$(call wasm_configure,$$dir,$(PLATFORM_ARGS) -DOPOOL_STRESS_SCALE=$$stress -DOPOOL_WASM_THREADS=ON); \
			targets=$$($(CTEST) --test-dir $$dir -N -L mt -E $(WASM_MT_SKIP) | sed -n 's/^ *Test *#[0-9]*: *\([A-Za-z0-9_]*\).*/\1/p' | sort -u); \
			$(CMAKE) --build $$dir -j$(JOBS) --target $$targets; \
			$(CTEST) --test-dir $$dir -L mt -E $(WASM_MT_SKIP) --output-on-failure --no-tests=error -j$(JOBS) 2>&1 | tee $$dir/ctest.log; \
			echo "wasm32-mt $$(( $$(date +%s) - t0 )) $$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' $$dir/ctest.log)" >> build/platform-times.txt; \
			t0=$$(date +%s); \
			echo "== examples/web: the page, built against build/wasm32's install, in headless chromium"; \
			CC=$(GCC) examples/web/check.sh build/wasm32 build/wasm32-web; \
			echo "web-page $$(( $$(date +%s) - t0 )) 1" >> build/platform-times.txt; \
		fi; \
	done; \
	echo; echo "== make platforms: seconds and tests per platform"; \
	while read -r t secs n; do printf '   %-8s %4ss  %s tests passed\n' "$$t" "$$secs" "$$n"; done < build/platform-times.txt

# ---- make bench ----

bench-build:
	@$(call need,$(CC),set CC to a C compiler); \
	$(call configure,build/bench,$(CC),$(DEV_CXX),$(BENCH_CMAKE_ARGS)); \
	$(CMAKE) --build build/bench -j$(JOBS); \
	test -x build/bench/opool_bench || { echo "error: no build/bench/opool_bench (is there a bench/bench_core.c?)" >&2; exit 1; }

# opool_bench runs its siblings (allocator builds, Rust slotmap) itself: see the top of this file.
bench: bench-build
	build/bench/opool_bench $(BENCH_ARGS)
	@if [ "$(PUBLISH)" = 1 ]; then $(MAKE) --no-print-directory bench-publish BENCH_RESULTS=bench/out/core.csv; fi

bench-quick: bench-build
	build/bench/opool_bench --quick $(BENCH_ARGS)

# The peers, as Debian packages (the one list: .ci/run calls this target). In-process in
# opool_bench (bench/bench_peers.cpp): Boost.Pool (libboost-dev) and plf::colony
# (libplf-colony-dev). Allocator builds: mimalloc, jemalloc, tcmalloc (libgoogle-perftools-dev).
# The Rust peers: cargo and the slotmap and slab crates' Debian sources, and bench_mt's
# sharded_slab (librust-sharded-slab-dev, which pulls in its one dependency,
# librust-lazy-static-dev). bench_mt's DPDK rte_mempool (libdpdk-dev) and Concurrency Kit
# stack (libck-dev).
BENCH_DEPS := libboost-dev libplf-colony-dev libmimalloc-dev libjemalloc-dev \
              libgoogle-perftools-dev cargo librust-slotmap-dev librust-slab-dev \
              librust-sharded-slab-dev libdpdk-dev libck-dev
bench-deps:
	@$(call need,apt-get,bench-deps installs Debian packages); \
	missing=(); \
	for p in $(BENCH_DEPS); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q '^install ok installed$$' || missing+=("$$p"); \
	done; \
	if (( $${#missing[@]} == 0 )); then echo "bench-deps: all installed: $(BENCH_DEPS)"; exit 0; fi; \
	sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	echo "+ $$sudo apt-get install $${missing[*]}"; \
	$$sudo apt-get update -q; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$${missing[@]}"

# bench/bench_mt.c, the concurrent benchmark: build/bench/bench_mt runs the pool subjects and
# glibc malloc, then Rust's bench_mt_sharded_slab and each allocator build bench_mt_<allocator>
# found beside it, and prints one table (CSV: build/bench/mt.csv). 4-8 minutes;
# BENCH_MT_ARGS=--quick: under 30 s.
BENCH_MT_ARGS ?=
.PHONY: bench-mt
bench-mt: bench-build
	@test -x build/bench/bench_mt || { echo "error: no build/bench/bench_mt (is there a bench/bench_mt.c?)" >&2; exit 1; }
	build/bench/bench_mt $(BENCH_MT_ARGS)
	build/bench/bench_ladder $(if $(findstring --quick,$(BENCH_MT_ARGS)),--quick)
	@if [ "$(PUBLISH)" = 1 ]; then $(MAKE) --no-print-directory bench-publish BENCH_RESULTS=build/bench/mt.csv; fi

# bench/bench_heap.c, opool_heap against the mallocs: build/bench/bench_heap runs opool_heap and
# glibc malloc, then each allocator build bench_heap_<allocator> found beside it, then the RSS
# soak, one process per subject; one table (CSV: bench/out/heap.csv and heap_soak.csv).
# About 2 minutes; BENCH_HEAP_ARGS=--quick: under 20 s.
BENCH_HEAP_ARGS ?=
.PHONY: bench-heap
bench-heap: bench-build
	@test -x build/bench/bench_heap || { echo "error: no build/bench/bench_heap (is there a bench/bench_heap.c?)" >&2; exit 1; }
	build/bench/bench_heap $(BENCH_HEAP_ARGS)
	@$(MAKE) --no-print-directory bench-replay-run
	@if [ "$(PUBLISH)" = 1 ]; then $(MAKE) --no-print-directory bench-publish \
		BENCH_RESULTS="bench/out/heap.csv bench/out/heap_soak.csv bench/out/replay.csv"; fi

# bench/bench_replay.c: each trace of bench/traces (bench/traces/README.md) replayed against
# opool_heap and glibc, then each allocator build bench_replay_<allocator>, one process per
# trace and subject (CSV: bench/out/replay.csv). About 2 minutes; --quick: a prefix of each.
# First bench/trace/check.sh: the tracer still records threads, fork and exec as it should.
BENCH_REPLAY_ARGS ?= $(filter --quick --no-peers,$(BENCH_HEAP_ARGS))
.PHONY: bench-replay bench-replay-run
bench-replay: bench-build bench-replay-run
bench-replay-run:
	@test -x build/bench/bench_replay || { echo "error: no build/bench/bench_replay (is there a bench/bench_replay.c?)" >&2; exit 1; }
	bench/trace/check.sh build/bench
	build/bench/bench_replay $(BENCH_REPLAY_ARGS)

# ---- fuzzing ----

FUZZ_SECONDS ?= 60
FUZZ_MERGE ?= 0
FUZZ_ARGS ?=
FUZZ_COV_DIRS ?=
LLVM_PROFDATA ?= $(shell command -v llvm-profdata-14 || command -v llvm-profdata || echo llvm-profdata-14)
LLVM_COV ?= $(shell command -v llvm-cov-14 || command -v llvm-cov || echo llvm-cov-14)
# fuzz_load needs opool_load in the library (save/load is its own module)
FUZZ_HAVE_LOAD := $(shell grep -qsE 'opool_status[[:space:]]+opool_load[[:space:]]*.opool[[:space:]]*[*][*]' src/*.c && echo 1)
FUZZ_TARGETS ?= ops heap $(if $(FUZZ_HAVE_LOAD),load)
FUZZ_SRC = $(wildcard src/*.c tests/support/*.c)
FUZZ_DEPS = $(FUZZ_SRC) $(wildcard src/*.h include/*.h fuzz/*.h) tests/model.h Makefile
FUZZ_CFLAGS = -std=c11 -g -fno-omit-frame-pointer -Wall -Wextra -Wpedantic -Werror \
              -Iinclude -Isrc -Itests -Itests/support -Ifuzz $(if $(FUZZ_HAVE_LOAD),-DOPOOL_FUZZ_HAVE_LOAD=1)

build/fuzz/fuzz_%: fuzz/%.c $(FUZZ_DEPS)
	@$(call need,$(CLANG),apt-get install clang-14 libclang-rt-14-dev); mkdir -p build/fuzz
	$(CLANG) $(FUZZ_CFLAGS) -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(FUZZ_SRC) $< -o $@

build/fuzz-cov/fuzz_%: fuzz/%.c fuzz/driver.c $(FUZZ_DEPS)
	@$(call need,$(CLANG),apt-get install clang-14); mkdir -p build/fuzz-cov
	$(CLANG) $(FUZZ_CFLAGS) -O0 -fprofile-instr-generate -fcoverage-mapping \
		$(FUZZ_SRC) $< fuzz/driver.c -o $@

build/fuzz/gen_corpus: fuzz/gen_corpus.c $(FUZZ_DEPS)
	@mkdir -p build/fuzz
	$(GCC) $(FUZZ_CFLAGS) -O1 $(FUZZ_SRC) $< -o $@

fuzz-build: $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)

# One target at a time (each gets the whole machine). libFuzzer's output goes to
# build/fuzz/<target>.log; a finding stops everything and shows the end of that log.
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		new=build/fuzz/new-$$t; mkdir -p "$$new" fuzz/corpus/$$t; \
		before=$$(ls fuzz/corpus/$$t | wc -l); extra=""; \
		case $$t in (load) extra=-use_value_profile=1;; esac; \
		echo "== fuzz_$$t: $(FUZZ_SECONDS) s on fuzz/corpus/$$t ($$before files); new inputs in $$new"; \
		if ! build/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -timeout=30 \
				-rss_limit_mb=2560 -artifact_prefix=build/fuzz/$$t- $$extra $(FUZZ_ARGS) \
				"$$new" fuzz/corpus/$$t > build/fuzz/$$t.log 2>&1; then \
			tail -n 60 build/fuzz/$$t.log; \
			echo "fuzz_$$t FAILED: reproduce with build/fuzz/fuzz_$$t FILE (artifact above)" >&2; \
			exit 1; \
		fi; \
		grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' build/fuzz/$$t.log | sed 's/^/   /'; \
		execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' build/fuzz/$$t.log); \
		rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' build/fuzz/$$t.log); \
		cov=$$(sed -n 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 edges, \2 features/p' build/fuzz/$$t.log); \
		echo "   fuzz_$$t: $$execs executions ($$rate/s), final coverage $$cov, $$(ls "$$new" | wc -l) new inputs"; \
		if [ "$(FUZZ_MERGE)" = 1 ]; then \
			build/fuzz/fuzz_$$t -set_cover_merge=1 fuzz/corpus/$$t "$$new" > build/fuzz/$$t-merge.log 2>&1 || \
				{ tail -n 20 build/fuzz/$$t-merge.log; exit 1; }; \
			echo "   merged: fuzz/corpus/$$t $$before -> $$(ls fuzz/corpus/$$t | wc -l) files"; \
		fi; \
	done

# Source-based coverage of src/ by the corpora, replayed through fuzz/driver.c.
fuzz-cov: $(FUZZ_TARGETS:%=build/fuzz-cov/fuzz_%)
	@rm -f build/fuzz-cov/*.profraw; \
	objects=""; \
	for t in $(FUZZ_TARGETS); do \
		LLVM_PROFILE_FILE=build/fuzz-cov/$$t-%p.profraw build/fuzz-cov/fuzz_$$t fuzz/corpus/$$t \
			$(FUZZ_COV_DIRS) >/dev/null; \
		objects="$$objects -object build/fuzz-cov/fuzz_$$t"; \
	done; \
	$(LLVM_PROFDATA) merge -sparse build/fuzz-cov/*.profraw -o build/fuzz-cov/corpus.profdata; \
	$(LLVM_COV) report -instr-profile=build/fuzz-cov/corpus.profdata $${objects# -object } \
		$(FUZZ_SRC) include/opool_abi.h include/opool_abi_heap.h | tee build/fuzz-cov/report.txt; \
	echo "per line: $(LLVM_COV) show -instr-profile=build/fuzz-cov/corpus.profdata $${objects# -object } src/FILE.c"

fuzz-corpus: build/fuzz/gen_corpus
	@for t in $(filter ops load,$(FUZZ_TARGETS)); do \
		mkdir -p fuzz/corpus/$$t; rm -f fuzz/corpus/$$t/seed-*; \
		build/fuzz/gen_corpus $$t fuzz/corpus/$$t; \
	done

# ---- everyday ----

build:
	@$(call need,$(CC),set CC to a C compiler); \
	$(call configure,build/dev,$(CC),$(DEV_CXX),$(DEV_ARGS)); \
	$(CMAKE) --build build/dev -j$(JOBS)

check: build
	$(CTEST) --test-dir build/dev --output-on-failure -j$(JOBS)

FORMAT_FILES = $(wildcard include/*.h include/*.hpp src/*.c src/*.h proof/*.c proof/*.h tests/*.c tests/*.h tests/*.cpp tests/cpp/*.cpp tests/relacy/*.cpp tests/user/*.c \
                          tests/support/*.[ch] tests/debugger/*.c tests/debugger/*.cpp bench/*.c bench/*.h bench/*.cpp examples/*.c examples/web/*.c \
                          examples/*.h fuzz/*.c fuzz/*.h cmake/consumer/*.c cmake/consumer/*.cpp examples/*.cpp)

format:
	@if [ -z "$(CLANG_FORMAT)" ]; then echo "clang-format not found: nothing formatted"; exit 0; fi; \
	$(CLANG_FORMAT) -i $(FORMAT_FILES)

format-check:
	@if [ -z "$(CLANG_FORMAT)" ]; then echo "clang-format not found: nothing checked"; exit 0; fi; \
	$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES)

.PHONY: dist
dist:
	$(CMAKE) -P tools/debugger/embed.cmake
	$(CMAKE) -P tools/amalgamate.cmake

.PHONY: docs
docs:
	$(CMAKE) -P tools/apidoc.cmake

# ---- published figures: docs/results ----

# Every figure of README.md, docs/BENCHMARKS.md and docs/DEBUGGING.md comes from one results
# file of docs/results, named above its table (tools/benchtables.py). A run is published by
# copying its CSV there.
PYTHON3 ?= python3
PUBLISH ?= 1
BENCH_RESULTS ?= bench/out/core.csv build/bench/mt.csv bench/out/heap.csv \
                 bench/out/heap_soak.csv bench/out/replay.csv
.PHONY: bench-tables bench-publish
bench-tables:
	$(PYTHON3) tools/benchtables.py

bench-publish:
	@mkdir -p docs/results; n=0; \
	for f in $(BENCH_RESULTS); do \
		if [ -f "$$f" ]; then cp "$$f" docs/results/; echo "bench-publish: $$f -> docs/results/"; n=$$((n + 1)); fi; \
	done; \
	[ $$n -gt 0 ] || { echo "error: no results to publish: run make bench, bench-mt or bench-heap" >&2; exit 1; }
	@$(MAKE) --no-print-directory bench-tables

clean:
	rm -rf build
