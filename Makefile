# Tether — build, test, install. `make demo` and `make test` are the README's two commands.
PREFIX     ?= /usr/local
CC         ?= cc
BUILD      := build
LIBDIR     := $(abspath $(BUILD)/lib)
# The library's file names: the versioned file, its SONAME (MAJOR; what programs record as NEEDED),
# and the link name -ltether finds; both names are symlinks, in build/lib and in an install.
VERSION    := $(shell sed -n 's/^\#define TETHER_VERSION "\(.*\)"/\1/p' include/tether.h)
SONAME     := libtether.so.$(firstword $(subst ., ,$(VERSION)))
REALNAME   := libtether.so.$(VERSION)
LIB        := $(LIBDIR)/libtether.so
SWIFT_REL  := .build-release
CFLAGS_T   := -std=c11 -Wall -Wextra -Werror -g -O1 -Iinclude -ITests/c -pthread
LDFLAGS_T  := -L$(LIBDIR) -ltether -Wl,-rpath,$(LIBDIR) -pthread -lm
ASAN       := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
C_TESTS    := $(patsubst Tests/c/%.c,%,$(wildcard Tests/c/test_*.c))
C_EXAMPLES := $(patsubst examples/c/%.c,%,$(wildcard examples/c/*.c))
PYTHON     ?= python3
# The Python tests run in venvs that `make test` makes (Tests/setup/venv.sh) with the pinned
# Tests/requirements.txt: build/venv with $(PYTHON), build/venv-python3.N with the oldest and the
# newest other CPython 3.9+ found (Tests/setup/pythons.sh; PYTHONS=all: every one found).
VENV       := $(BUILD)/venv
VPY        := $(abspath $(VENV))/bin/python
PYTHONS    ?= ends
OTHER_PYS   = $(shell sh Tests/setup/pythons.sh $(PYTHONS) $(PYTHON))
# -rs: each skip and its reason (in make test's summary); no cache folder in the source tree.
PYTEST_OPTS := -q -rs -p no:cacheprovider
# ThreadSanitizer: the library built instrumented (Swift runtime linked dynamically,
# as a TSan runtime cannot live in a shared library) and the C tests built with the
# toolchain's own clang, so executable and library share one TSan runtime.
TSAN_SCRATCH := .build-tsan
TSAN_LIBDIR  := $(abspath $(TSAN_SCRATCH)/release)
TSAN_CC      := $(dir $(shell readlink -f $$(command -v swift)))clang
TSAN_RTDIR    = $(dir $(shell $(TSAN_CC) -print-file-name=libclang_rt.tsan-x86_64.so))
TSAN         := -fsanitize=thread -shared-libsan

.PHONY: all build demo test test-setup test-pythons test-conformance test-conformance-model test-conformance-c test-conformance-swift test-conformance-python test-swift test-c test-c-asan test-examples test-abi test-compile-fail test-readme test-install test-packaging test-python test-fuzz fuzz fuzz-diff install clean bench \
        test-tsan test-swift-tsan test-c-tsan

all: build

# The release library: Swift runtime and libffi linked in statically; and the
# headers' declarations as plain C for cffi's cdef and other FFI generators.
CDEF       := $(BUILD)/tether_cdef.h
build: $(LIB) $(CDEF)
$(LIB): Package.swift $(shell find Sources -type f) include/tether.h include/tether_binding.h
	TETHER_STATIC=1 swift build -c release --product tether --scratch-path $(SWIFT_REL) -Xlinker -soname=$(SONAME)
	mkdir -p $(LIBDIR)
	cp $(SWIFT_REL)/release/libtether.so $(LIBDIR)/$(REALNAME).tmp  # never rewrite a loaded .so in place
	mv -f $(LIBDIR)/$(REALNAME).tmp $(LIBDIR)/$(REALNAME)
	ln -sfn $(REALNAME) $(LIBDIR)/$(SONAME)
	ln -sfn $(SONAME) $(LIB)

$(CDEF): include/tether.h include/tether_binding.h tools/make_cdef.py
	mkdir -p $(BUILD)
	$(PYTHON) tools/make_cdef.py $(CC) include > $@.tmp && mv -f $@.tmp $@

demo: $(BUILD)/examples/cycles
	$(BUILD)/examples/cycles

$(BUILD)/examples/%: examples/c/%.c include/tether.h include/tether_binding.h $(LIB)
	mkdir -p $(dir $@)
	$(CC) $(CFLAGS_T) $< -o $@ $(LDFLAGS_T)

$(BUILD)/tests/%: Tests/c/%.c $(wildcard Tests/c/*.h) include/tether.h include/tether_binding.h $(LIB)
	mkdir -p $(dir $@)
	$(CC) $(CFLAGS_T) $< -o $@ $(LDFLAGS_T)

$(BUILD)/tests-asan/%: Tests/c/%.c $(wildcard Tests/c/*.h) include/tether.h include/tether_binding.h $(LIB)
	mkdir -p $(dir $@)
	$(CC) $(CFLAGS_T) $(ASAN) $< -o $@ $(LDFLAGS_T)

$(BUILD)/tests-tsan/%: Tests/c/%.c $(wildcard Tests/c/*.h) include/tether.h include/tether_binding.h $(TSAN_LIBDIR)/libtether.so
	mkdir -p $(dir $@)
	$(TSAN_CC) $(CFLAGS_T) $(TSAN) $< -o $@ -L$(TSAN_LIBDIR) -ltether -Wl,-rpath,$(TSAN_LIBDIR) -Wl,-rpath,$(TSAN_RTDIR) -pthread -lm

$(TSAN_LIBDIR)/libtether.so: Package.swift $(shell find Sources -type f)
	swift build -c release --product tether --sanitize=thread --scratch-path $(TSAN_SCRATCH)

SUITES := test-swift test-c test-c-asan test-conformance test-examples test-abi test-compile-fail \
          test-readme test-install test-packaging test-python test-pythons test-fuzz

# Every suite runs (to the end, even after one failed), then a summary counts what passed,
# failed and was skipped, and why (Tests/tally.py). test-setup first: what the suites need.
test: test-setup
	@MAKE="$(MAKE)" PYTHON="$(PYTHON)" bash Tests/run_suites.sh $(SUITES)

# What the suites need on a fresh machine: Debian packages (installed when root, else the
# apt-get command to run) and the test venvs with Tests/requirements.txt.
test-setup:
	@sh Tests/setup/system.sh $(PYTHON)
	@$(MAKE) --no-print-directory $(VENV)/ready $(foreach v,$(OTHER_PYS),$(BUILD)/venv-$(notdir $(v))/ready)

$(VENV)/ready: Tests/requirements.txt Tests/setup/venv.sh
	@sh Tests/setup/venv.sh $(PYTHON) $(VENV)

$(BUILD)/venv-%/ready: Tests/requirements.txt Tests/setup/venv.sh
	@sh Tests/setup/venv.sh $(filter %/$*,$(OTHER_PYS)) $(BUILD)/venv-$*

test-swift:
	swift test

# The conformance corpus (conformance/scenarios.json) on every path: the Swift core, the C ABI
# plain and under ASan+UBSan, each also with every container traced (-t: the library's traced runs), Python. Every path compares its trace with the same data, and the
# data with the reference model (conformance/model.py: the design's semantics in plain Python, no
# library).
test-conformance: test-conformance-model test-conformance-swift test-conformance-c test-conformance-python

test-conformance-model:
	$(PYTHON) conformance/model.py --check

$(BUILD)/conformance.lines: conformance/scenarios.json conformance/tolines.py
	mkdir -p $(dir $@)
	$(PYTHON) conformance/tolines.py $< $@

$(BUILD)/tests/conformance: Tests/conformance/runner.c include/tether.h $(LIB)
	mkdir -p $(dir $@)
	$(CC) $(CFLAGS_T) $< -o $@ $(LDFLAGS_T)

$(BUILD)/tests-asan/conformance: Tests/conformance/runner.c include/tether.h $(LIB)
	mkdir -p $(dir $@)
	$(CC) $(CFLAGS_T) $(ASAN) $< -o $@ $(LDFLAGS_T)

test-conformance-c: $(BUILD)/conformance.lines $(BUILD)/tests/conformance $(BUILD)/tests-asan/conformance
	$(BUILD)/tests/conformance $(BUILD)/conformance.lines
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:max_free_fill_size=4096 \
	  $(BUILD)/tests-asan/conformance $(BUILD)/conformance.lines
	$(BUILD)/tests/conformance -t $(BUILD)/conformance.lines
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:max_free_fill_size=4096 \
	  $(BUILD)/tests-asan/conformance -t $(BUILD)/conformance.lines

test-conformance-swift:
	swift test --filter ConformanceTests

test-conformance-python: $(LIB) $(VENV)/ready
	TETHER_LIBRARY=$(LIB) $(VPY) -m pytest $(PYTEST_OPTS) bindings/python/tests/test_conformance.py

# Every test file runs even when an earlier one fails; the target fails if any did.
test-c: $(addprefix $(BUILD)/tests/,$(C_TESTS))
	@failed=""; for t in $(C_TESTS); do echo "== $$t"; $(BUILD)/tests/$$t || failed="$$failed $$t"; done; \
	  if [ -n "$$failed" ]; then echo "failed:$$failed"; exit 1; fi

# AddressSanitizer + LeakSanitizer + UBSan over the same C tests: any report fails.
# Freed memory is overwritten (max_free_fill_size), so the library, which is not
# instrumented, fails visibly when it reads what it freed too early.
test-c-asan: $(addprefix $(BUILD)/tests-asan/,$(C_TESTS))
	@failed=""; for t in $(C_TESTS); do echo "== $$t (asan)"; \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:max_free_fill_size=4096 $(BUILD)/tests-asan/$$t || failed="$$failed $$t"; done; \
	  if [ -n "$$failed" ]; then echo "failed (asan):$$failed"; exit 1; fi

# ThreadSanitizer over the Swift core's tests, every C test and the conformance
# corpus (against the instrumented library): any report fails (TSan exits with 66). The library's
# locks are pthread mutexes (Lock.swift) and its lock-free paths use atomics, so
# TSan sees every synchronization.
test-tsan: test-swift-tsan test-c-tsan

test-swift-tsan:
	swift test --sanitize=thread --scratch-path $(TSAN_SCRATCH)

test-c-tsan: $(addprefix $(BUILD)/tests-tsan/,$(C_TESTS)) $(BUILD)/tests-tsan/conformance $(BUILD)/conformance.lines
	@failed=""; for t in $(C_TESTS); do echo "== $$t (tsan)"; \
	  TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1 $(BUILD)/tests-tsan/$$t || failed="$$failed $$t"; done; \
	  echo "== conformance corpus (tsan)"; \
	  TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1 $(BUILD)/tests-tsan/conformance $(BUILD)/conformance.lines || failed="$$failed conformance"; \
	  if [ -n "$$failed" ]; then echo "failed (tsan):$$failed"; exit 1; fi

$(BUILD)/tests-tsan/conformance: Tests/conformance/runner.c include/tether.h $(TSAN_LIBDIR)/libtether.so
	mkdir -p $(dir $@)
	$(TSAN_CC) $(CFLAGS_T) $(TSAN) $< -o $@ -L$(TSAN_LIBDIR) -ltether -Wl,-rpath,$(TSAN_LIBDIR) -Wl,-rpath,$(TSAN_RTDIR) -pthread -lm

test-examples: $(addprefix $(BUILD)/examples/,$(C_EXAMPLES))
	@failed=""; for e in $(C_EXAMPLES); do \
	  if $(BUILD)/examples/$$e > /dev/null; then echo "ok   example $$e"; else echo "FAIL example $$e"; failed="$$failed $$e"; fi; done; \
	  if [ -n "$$failed" ]; then exit 1; fi

# The shipped library: self-contained (NEEDED) and exporting tether_* only.
test-abi: $(LIB)
	sh Tests/abi/check_library.sh $(LIB)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Iinclude Tests/abi/header_cxx.cpp -o $(BUILD)/header_cxx -L$(LIBDIR) -ltether -Wl,-rpath,$(LIBDIR)
	$(BUILD)/header_cxx && echo "ok   tether.h compiles and links as C++"

# TETHER_REGISTERn: the compiler (C and C++) rejects a factory whose prototype disagrees with its slots.
test-compile-fail:
	sh Tests/compile_fail/run.sh $(CC) $(CXX)

# The README's quick start (first ```c and ```python blocks) compiles and runs as printed.
test-readme: $(LIB)
	$(PYTHON) Tests/docs/check_readme.py $(CC) $(LIBDIR) $(PYTHON)

# Installs into a temporary prefix and builds an example with pkg-config against it.
test-install: $(LIB)
	sh Tests/abi/check_install.sh

# The wheel (tags, contents, auditwheel, a fresh venv, install-time errors, rebuilds) and the
# CMake package (find_package against a temporary install).
test-packaging: $(LIB) $(VENV)/ready
	PYTHON=$(VPY) sh Tests/packaging/check_wheel.sh
	sh Tests/packaging/check_cmake.sh

test-python: $(LIB) $(CDEF) $(VENV)/ready
	TETHER_LIBRARY=$(LIB) TETHER_CDEF=$(abspath $(CDEF)) $(VPY) -m pytest $(PYTEST_OPTS) bindings/python/tests --ignore=bindings/python/tests/test_conformance.py
	$(VPY) -m pytest $(PYTEST_OPTS) Tests/setup  # make test's own set-up and summary

# The whole Python suite again on the oldest and newest other CPython 3.9+ found (PYTHONS=all:
# on each one), each in its own venv.
test-pythons: $(LIB) $(CDEF)
	@failed=""; for py in $(OTHER_PYS); do v=$(BUILD)/venv-$$(basename $$py); \
	  $(MAKE) --no-print-directory $$v/ready || { failed="$$failed $$py"; continue; }; \
	  echo "== the Python suite on $$($$v/bin/python --version)"; \
	  TETHER_LIBRARY=$(LIB) TETHER_CDEF=$(abspath $(CDEF)) $$v/bin/python -m pytest $(PYTEST_OPTS) bindings/python/tests \
	    || failed="$$failed $$py"; done; \
	  if [ -n "$$failed" ]; then echo "the Python suite failed on:$$failed"; exit 1; fi

# The API fuzzer (fuzz/README.md), built with the clang of the Swift toolchain that
# builds the library: it has libFuzzer, which the system compiler may lack. Without one,
# Debian's clang and lld (which `make test-setup` then installs).
SWIFT_CLANG   = $(dir $(realpath $(shell command -v swift)))clang
FUZZ_CC      ?= $(if $(wildcard $(SWIFT_CLANG)),$(SWIFT_CLANG),clang)
FUZZ_BIN     := $(BUILD)/fuzz/api_fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
# Patterns of known, not yet fixed bugs the fuzzer steers around (issue 16 item numbers).
FUZZ_AVOID   ?=
FUZZ_RUN     := FUZZ_AVOID=$(FUZZ_AVOID) $(FUZZ_BIN) -timeout=20 -max_len=4096 -artifact_prefix=$(BUILD)/fuzz/

# The conformance runner is linked in for the differential mode (FUZZ_DIFF=1).
$(FUZZ_BIN): fuzz/api_fuzz.c fuzz/factories.h Tests/conformance/runner.c include/tether.h include/tether_binding.h $(LIB)
	mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -Wall -Wextra -Werror -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -fuse-ld=lld -Iinclude -DCONFORMANCE_EMBED $< Tests/conformance/runner.c -o $@ $(LDFLAGS_T)

# Runs for FUZZ_SECONDS in FUZZ_JOBS processes from the checked-in seeds; inputs it
# adds go to build/fuzz/corpus, a crashing one to build/fuzz/crash-*.
fuzz: $(FUZZ_BIN)
	mkdir -p $(BUILD)/fuzz/corpus
	$(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) -jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS) -print_final_stats=1 \
	  $(BUILD)/fuzz/corpus fuzz/corpus

# CI: every seed once, then a short run from them, with a fixed seed so that a failing CI run
# can be replayed (FUZZ_SEED=0: a random one); `make fuzz` explores with random seeds.
FUZZ_SEED    ?= 1
test-fuzz: $(FUZZ_BIN)
	$(FUZZ_RUN) -runs=0 fuzz/corpus
	rm -rf $(BUILD)/fuzz/short && mkdir -p $(BUILD)/fuzz/short
	$(FUZZ_RUN) -seed=$(FUZZ_SEED) -max_total_time=30 -print_final_stats=1 $(BUILD)/fuzz/short fuzz/corpus
	rm -rf $(BUILD)/fuzz/diff-short
	$(MAKE) --no-print-directory fuzz-diff FUZZ_DIFF_LIMIT=-runs=1500 FUZZ_DIFF_SEED=$(FUZZ_SEED) DIFF_CORPUS=$(BUILD)/fuzz/diff-short

# The differential mode (fuzz/README.md): explores FUZZ_SECONDS from fuzz/corpus-diff (new inputs go
# to DIFF_CORPUS), then logs every input's scenario with the library's trace and has the reference
# model check each one.
DIFF_CORPUS    ?= $(BUILD)/fuzz/diff-corpus
FUZZ_DIFF_SEED ?= 0
FUZZ_DIFF_LIMIT ?= -max_total_time=$(FUZZ_SECONDS)   # test-fuzz: a number of runs, the same on any machine
fuzz-diff: $(FUZZ_BIN)
	mkdir -p $(DIFF_CORPUS)
	rm -rf $(BUILD)/fuzz/diff-logs && mkdir -p $(BUILD)/fuzz/diff-logs
	FUZZ_DIFF=1 $(FUZZ_RUN) -seed=$(FUZZ_DIFF_SEED) $(FUZZ_DIFF_LIMIT) -print_final_stats=1 \
	  $(DIFF_CORPUS) fuzz/corpus-diff
	FUZZ_DIFF=1 FUZZ_DIFF_LOG=$(BUILD)/fuzz/diff-logs $(FUZZ_RUN) -runs=0 fuzz/corpus-diff $(DIFF_CORPUS)
	$(PYTHON) conformance/model.py --replay $(BUILD)/fuzz/diff-logs/*.lines

# KEEP_SYMBOLS=1 installs the library unstripped (symbols and debug info, for debuggers and profilers).
# Stripped but for the two Swift runtime symbols share/tether.supp names (valgrind).
STRIP_CMD  := $(if $(filter 1,$(KEEP_SYMBOLS)),true,strip -s -w -K '_ZN5swift25ConcurrentReadableHashMap*' -K '_ZN5swift22MetadataCacheEntryBase*')

install: $(LIB) $(CDEF)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/Tether $(DESTDIR)$(PREFIX)/share/tether
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/$(REALNAME)
	$(STRIP_CMD) $(DESTDIR)$(PREFIX)/lib/$(REALNAME)
	ln -sfn $(REALNAME) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sfn $(SONAME) $(DESTDIR)$(PREFIX)/lib/libtether.so
	install -m 0644 share/tether.supp $(DESTDIR)$(PREFIX)/share/tether/tether.supp
	install -m 0644 include/tether.h include/tether_binding.h $(CDEF) $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@VERSION@|$(VERSION)|g' tether.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/tether.pc
	sed -e 's|@VERSION@|$(VERSION)|g' cmake/TetherConfig.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/Tether/TetherConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|g' cmake/TetherConfigVersion.cmake.in > $(DESTDIR)$(PREFIX)/lib/cmake/Tether/TetherConfigVersion.cmake

# Every benchmark, then README.md's performance table from this run (benchmarks/readme_table.py).
bench: $(LIB)
	sh benchmarks/run.sh
	$(PYTHON) benchmarks/readme_table.py

clean:
	rm -rf $(BUILD) $(SWIFT_REL) $(TSAN_SCRATCH) .build
