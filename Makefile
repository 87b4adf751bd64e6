# gpuvet - build, test, install.
#
#   make run    install what is missing, build, run the quick profile here,
#               store the run and write gpuvet-report.html
#   make test   install what tests need, build, run every test (plain and
#               under AddressSanitizer + UndefinedBehaviorSanitizer), replay
#               the fuzz corpora: all on every core (tests/suite.py)
#   make check-quick  the C unit tests and a slice of the integration tests,
#               plain build only: the edit-compile-test loop (about 2 minutes)
#   make dist   the relocatable tarball, its SHA256SUMS and the .deb, in build/dist/
#               (packaging/README.md): what a rented machine runs without building
#
# Sources are found by wildcard: a new file in common/, benches/, runners/, results/,
# pricing/ or reports/ is built without touching this file.

CUDA      ?= /usr/local/cuda
CC        ?= gcc
NVCC      ?= $(CUDA)/bin/nvcc
PYTHON    ?= python3
SAN       ?=
BUILD     ?= $(if $(SAN),build-san,build)
# GPU architectures the CUDA benches are compiled for: T4, A100, A10/A10G,
# L4/L40S, H100/H200/H20, B200 (+ PTX for newer).
CUDA_ARCHS ?= 75 80 86 89 90 100

# NVML's header is not in the CUDA toolkit; PyPI's nvidia-nvml-dev has it.
PYSITE    := $(shell $(PYTHON) -c 'import sysconfig;print(sysconfig.get_paths()["purelib"])' 2>/dev/null)
NVML_INC  ?= $(PYSITE)/nvidia/cu13/include

WARN      := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
             -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wpointer-arith
comma     := ,
# float-cast-overflow (a double out of an int's range converted to it) is not
# part of GCC's -fsanitize=undefined (it is of clang's): named on its own
UBSAN     := undefined$(comma)float-cast-overflow
SANFLAGS  := $(if $(SAN),-fsanitize=address$(comma)$(UBSAN) -fno-omit-frame-pointer -fno-sanitize-recover=$(UBSAN))
CPPFLAGS  += -I. -isystem $(CUDA)/include -isystem $(NVML_INC) -D_GNU_SOURCE
CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 $(WARN) $(SANFLAGS) -pthread
NVCCFLAGS ?= -O2 -g
NVCCFLAGS += -std=c++17 -I. -I$(NVML_INC) \
             $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
             -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS)) \
             -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror,-Wno-unused-parameter$(if $(SAN),$(comma)-fsanitize=address$(comma)-fsanitize=undefined$(comma)-fno-omit-frame-pointer)
LDFLAGS   += $(SANFLAGS) -pthread -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64
LDLIBS    += -lsqlite3 -ljansson -lcsv -lcurl -lcrypto -lhwloc -luuid -licui18n -licuuc \
             -lyaml -lturbojpeg -lcudart_static -lstdc++ -ldl -lrt -lm

C_SRCS    := $(filter-out runners/main.c,$(wildcard common/*.c platform/*.c benches/*.c results/*.c pricing/*.c judge/*.c reports/*.c runners/*.c))
CU_SRCS   := $(wildcard benches/*.cu)
OBJS      := $(C_SRCS:%.c=$(BUILD)/obj/%.o) $(CU_SRCS:%.cu=$(BUILD)/obj/%.cu.o)
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TESTS     := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)

# Debian packages needed to build and run (and, for tests, the test servers).
APT_BUILD := gcc make libsqlite3-dev sqlite3 libjansson-dev libcsv-dev libcurl4-openssl-dev libssl-dev libyaml-dev libicu-dev \
             libhwloc-dev hwloc uuid-dev fio libturbojpeg0-dev pkg-config python3 python3-pip libfabric-dev
# the cluster tests: fi_pingpong (the fabric's peer), OpenMPI's and Slurm's launchers, namespaces and tc;
# the bare-system test: a minimal Debian root (mmdebstrap, tests/integration/test_dist.py)
APT_TEST  := clang libclang-rt-14-dev chromium nginx prometheus shellcheck time man-db groff-base \
             libfabric-bin openmpi-bin slurm-wlm munge iproute2 mmdebstrap
# make dist: fio's build (libaio's header; dpkg-source unpacks Debian's source package), the
# download, readelf and objdump, dpkg-shlibdeps for the .deb's dependencies
APT_DIST  := libaio-dev dpkg-dev curl ca-certificates xz-utils binutils
PIP_BUILD := nvidia-nvml-dev
PIP_TEST  := pytest pytest-xdist moto[server] pyyaml kubernetes-validate

.PHONY: all run test check check-quick test-build test-build-plain test-build-san deps deps-test fuzz \
        fuzz-build fuzz-build-ub fuzz-lib fuzz-lib-ub fuzz-replay fuzz-replay-only fuzz-long clean install docs \
        deps-dist dist dist-build
all: $(BUILD)/gpuvet

# each link names its commit and time (common/version.h): build_info.c is written then
$(BUILD)/gpuvet: $(BUILD)/obj/runners/main.o $(BUILD)/libgpuvet.a
	sh packaging/build_info.sh $(BUILD)/gen/build_info.c 0
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $(BUILD)/gen/build_info.o $(BUILD)/gen/build_info.c
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/obj/runners/main.o $(BUILD)/gen/build_info.o $(BUILD)/libgpuvet.a $(LDLIBS)

$(BUILD)/libgpuvet.a: $(OBJS)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libgpuvet.a $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libgpuvet.a $(LDLIBS)

# programs the GPU sessions run on a device machine (tests/gpu/bundle.sh carries them), built
# here with the unit tests so they never rot unseen
GPU_DRIVERS := $(patsubst tests/gpu/%.c,$(BUILD)/tests/gpu/%,$(wildcard tests/gpu/*.c))
$(BUILD)/tests/gpu/%: tests/gpu/%.c $(BUILD)/libgpuvet.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libgpuvet.a $(LDLIBS)

# the fault-injection shim (tests/fault/gvfault.c), preloaded into the real binary by tests;
# built without sanitizers whatever SAN says
$(BUILD)/tests/gvfault.so: tests/fault/gvfault.c
	@mkdir -p $(@D)
	$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -o $@ $< -ldl

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
# files compiled in (common/embed.h GV_EMBED): each object depends on what it embeds
$(BUILD)/obj/pricing/catalog_data.o: $(wildcard pricing/catalog/*.csv)
$(BUILD)/obj/benches/host_decode.o: $(wildcard benches/host_jpeg/*.jpg)
$(BUILD)/obj/reports/html.o: $(wildcard reports/assets/*)
$(BUILD)/obj/judge/policy.o: judge/policies/default.yaml
$(BUILD)/obj/judge/cost_published.o: judge/published/cost_published.csv
$(BUILD)/obj/judge/cluster_rate.o: judge/published/network.csv

# ---- set-up on a fresh machine ----
# Installs only what is missing; apt-get needs root (or sudo).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call apt_install,$(APT_BUILD))
	@[ -f "$(NVML_INC)/nvml.h" ] || $(PYTHON) -m pip install -q $(PIP_BUILD) \
	  || $(PYTHON) -m pip install -q --break-system-packages $(PIP_BUILD)

deps-dist: deps
	$(call apt_install,$(APT_DIST))

deps-test: deps deps-dist
	$(call apt_install,$(APT_TEST))
	@$(PYTHON) -c 'import pytest, xdist, moto, yaml, kubernetes_validate' 2>/dev/null || $(PYTHON) -m pip install -q $(PIP_TEST) \
	  || $(PYTHON) -m pip install -q --break-system-packages $(PIP_TEST)

# ---- the README's two commands ----
run: deps
	$(MAKE) all
	$(BUILD)/gpuvet run --profile quick --report gpuvet-report.html

# make test: the three builds at once, then the plain suite, the sanitizer suite and the fuzz
# replay side by side, each suite over pytest-xdist workers; prints each part's wall time
# (logs in build/suite/) and one closing count
test: deps-test
	$(PYTHON) tests/suite.py full

check-quick: deps-test
	$(PYTHON) tests/suite.py quick

# everything the suites run, built at once under one job server (make -jN test-build); the
# tarball too, which tests/integration/test_dist.py unpacks on a bare Debian root
test-build: test-build-plain test-build-san fuzz-build dist-build
test-build-plain: all $(TESTS) $(BUILD)/tests/gvfault.so $(GPU_DRIVERS)
test-build-san:
	$(MAKE) --no-print-directory SAN=1 test-build-plain

# the plain suite alone (SAN=1: under the sanitizers), on every core; the plain one with the tarball
check: test-build-plain $(if $(SAN),,dist-build)
	GPUVET_BIN=$(abspath $(BUILD)/gpuvet) GPUVET_TEST_DIR=$(abspath $(BUILD)/tests) \
	  $(PYTHON) -m pytest -q -p no:cacheprovider -n $$(( $$(nproc) * 2 )) --dist worksteal tests

# ---- fuzzing (libFuzzer, clang) ----
# UBSan's findings stop the target (-fno-sanitize-recover) as ASan's do, so a
# fuzz run counts them as crashes.  build-fuzz-ub holds the same targets
# without ASan (about 2-3x the executions a second where the inputs are large,
# as fuzz_flags' fingerprints): for long runs, whose kept corpus make test
# then replays under ASan (tests/fuzz/long.sh, FUZZ_BIN_DIR=build-fuzz-ub).
FUZZ_BUILD := build-fuzz
FUZZ_BINS  := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -O1 -g -fno-sanitize-recover=undefined
fuzz-build: $(FUZZ_BINS)
# the library once (its own sub-make), then every target links against it: safe under -j
fuzz-lib:
	$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD)/lib CC=clang \
	  CFLAGS='$(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined' $(FUZZ_BUILD)/lib/libgpuvet.a
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c fuzz-lib
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -std=c11 $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< \
	  $(FUZZ_BUILD)/lib/libgpuvet.a -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64 $(LDLIBS)
fuzz-build-ub: $(FUZZ_SRCS:tests/fuzz/%.c=build-fuzz-ub/%)
fuzz-lib-ub:
	$(MAKE) --no-print-directory BUILD=build-fuzz-ub/lib CC=clang \
	  CFLAGS='$(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,undefined' build-fuzz-ub/lib/libgpuvet.a
build-fuzz-ub/fuzz_%: tests/fuzz/fuzz_%.c fuzz-lib-ub
	@mkdir -p $(@D)
	clang $(CPPFLAGS) -std=c11 $(FUZZ_CFLAGS) -fsanitize=fuzzer,undefined -o $@ $< \
	  build-fuzz-ub/lib/libgpuvet.a -L$(CUDA)/lib64 -Wl,-rpath,$(CUDA)/lib64 $(LDLIBS)
# make test replays each corpus and fuzzes 10 s per target (new inputs go to
# build-fuzz/work, never into the repository); `make fuzz` fuzzes FUZZ_SECONDS each
fuzz-replay: fuzz-build
	$(MAKE) --no-print-directory fuzz-replay-only
fuzz-replay-only:
	@for f in $(FUZZ_BINS); do n=$$(basename $$f); w=$(FUZZ_BUILD)/work/$$n; mkdir -p $$w tests/fuzz/corpus/$$n; \
	  echo "fuzz: $$n (10 s)"; ASAN_OPTIONS=detect_leaks=1 $$f -max_total_time=10 -timeout=10 -rss_limit_mb=2048 \
	  $$w tests/fuzz/corpus/$$n >$(FUZZ_BUILD)/$$n.log 2>&1 || { tail -40 $(FUZZ_BUILD)/$$n.log; exit 1; }; done
fuzz: fuzz-build
	@for f in $(FUZZ_BINS); do n=$$(basename $$f); mkdir -p $(FUZZ_BUILD)/work/$$n; \
	  $$f -max_total_time=$(FUZZ_SECONDS) $(FUZZ_BUILD)/work/$$n tests/fuzz/corpus/$$n || exit 1; done
# `make fuzz-long` runs each target FUZZ_RUNS times and merges what adds coverage into its kept corpus
FUZZ_RUNS ?= 10000000
fuzz-long: fuzz-build
	sh tests/fuzz/long.sh $(FUZZ_RUNS)

# the man page, from the commands' option tables (runners/opts.h), as --help is
$(BUILD)/gpuvet.1: $(BUILD)/gpuvet
	env -u GPUVET_TEST_BENCHES $(BUILD)/gpuvet help man > $@.tmp && mv $@.tmp $@

# docs/options.md: the hand-written part, then the tables (tests/test_manpage.py checks they agree);
# docs/cost.md: the hand-written part, then the published check (tests/integration/test_cost_published.py)
docs: $(BUILD)/gpuvet
	sed '/^<!-- generated by `gpuvet help markdown`/,$$d' docs/options.md > docs/options.md.tmp
	env -u GPUVET_TEST_BENCHES $(BUILD)/gpuvet help markdown >> docs/options.md.tmp
	mv docs/options.md.tmp docs/options.md
	sed '/^<!-- generated by `gpuvet cost --published --markdown`/,$$d' docs/cost.md > docs/cost.md.tmp
	GPUVET_NO_METADATA=1 $(BUILD)/gpuvet cost --published --markdown >> docs/cost.md.tmp
	mv docs/cost.md.tmp docs/cost.md
	sed '/^<!-- generated by `gpuvet help flags`/,$$d' docs/flags.md > docs/flags.md.tmp
	$(BUILD)/gpuvet help flags >> docs/flags.md.tmp
	mv docs/flags.md.tmp docs/flags.md
	GPUVET_BIN=$(BUILD)/gpuvet tests/bench/report_screenshot.sh   # the README's picture and its manifest

PREFIX ?= /usr/local
install: all $(BUILD)/gpuvet.1
	install -D -m 0755 $(BUILD)/gpuvet $(DESTDIR)$(PREFIX)/bin/gpuvet
	install -D -m 0644 $(BUILD)/gpuvet.1 $(DESTDIR)$(PREFIX)/share/man/man1/gpuvet.1

# ---- the relocatable tarball and the .deb (packaging/README.md) ----
# The version is the one common/util.h defines; fio's source and build, the bare Debian root of
# the tests, are cached in GPUVET_CACHE, which `make clean` keeps (its downloads need the network).
VERSION      := $(shell sed -n 's/^\#define GPUVET_VERSION "\(.*\)"/\1/p' common/util.h)
DIST         := build/dist
GPUVET_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gpuvet
export GPUVET_CACHE
# the release binary: the same objects, linked to look in its own ../lib first, before the
# machine's CUDA (DT_RPATH, not RUNPATH: the carried libraries' own needs are found there too)
DIST_LDFLAGS := -pthread -L$(CUDA)/lib64 -Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN/../lib' \
                -Wl,-rpath,$(CUDA)/lib64

dist: deps-dist
	$(MAKE) --no-print-directory dist-build

# always made again (a few seconds; fio's build is cached): the tarball names this commit
dist-build: all build/gpuvet.1
	@[ -z "$(SAN)" ] || { echo "make dist: a release is the plain build (SAN unset)" >&2; exit 1; }
	@mkdir -p $(DIST)/work
	sh packaging/build_info.sh $(DIST)/work/build_info.c 1
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $(DIST)/work/build_info.o $(DIST)/work/build_info.c
	$(CC) $(DIST_LDFLAGS) -o $(DIST)/work/gpuvet build/obj/runners/main.o $(DIST)/work/build_info.o \
	  build/libgpuvet.a $(LDLIBS)
	sh packaging/dist.sh $(VERSION) $(DIST)/work/gpuvet build/gpuvet.1 $(DIST) $(CUDA)

clean:
	rm -rf build build-san build-fuzz build-fuzz-ub
