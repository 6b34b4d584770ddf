# ferry Makefile. Targets: all (build/ferry-server), run, cluster (N=2),
# cluster-stop, test, unit, clean, install, uninstall.
# Variables: CC (gcc|clang), SANITIZE (e.g. address,undefined), OPT,
# PREFIX (/usr/local) and DESTDIR (install, uninstall),
# LUA (yes: scripting with Debian's Lua 5.1, cjson and bit; no: a libc-only
# server whose scripting commands reply with an error),
# TLS (yes: tls-port and the tls-* settings with Debian's OpenSSL; no: they
# refuse to start). LUA=no TLS=no is a libc-only server.

CC       ?= cc
OPT      ?= -O2
SANITIZE ?=
BUILD    ?= build
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-missing-field-initializers
# server sources only: every non-static function has its prototype in a header, declared once
SRC_WARN := -Wmissing-prototypes -Wredundant-decls
CFLAGS   := $(CSTD) $(WARN) $(OPT) -g -Iinclude -MMD -MP $(EXTRA_CFLAGS)
LDFLAGS  := $(EXTRA_LDFLAGS)
LDLIBS   := -lm -pthread

SANFLAGS :=
ifneq ($(SANITIZE),)
  BUILD   := build/san
  SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
  CFLAGS  += $(SANFLAGS)
  LDFLAGS += -fsanitize=$(SANITIZE)
endif

# Lua's flags are asked of pkg-config only when a rule needs them (so
# `make test` can install the packages first)
LUA      ?= yes
LUA_SRCS := src/script/script_lua.c src/script/script_conv.c src/script/script_msgpack.c src/script/script_struct.c src/script/script_sandbox.c
ifeq ($(LUA),yes)
  LUA_PKGS    := lua5.1-cjson lua5.1-bitop lua5.1
  LUA_CFLAGS   = $(shell pkg-config --cflags $(LUA_PKGS))
  LUA_LIBS     = $(shell pkg-config --libs $(LUA_PKGS))
  SCRIPT_OFF  := src/script/script_nolua.c
else
  SCRIPT_OFF  := $(LUA_SRCS)
endif

# src/ by layer, lowest first: base (allocator, dict, encodings, buffers),
# keyspace (databases and value types), io (event loop, sockets, parser,
# clients, replies), commands (dispatch, the command groups, propagation),
# persist (RDB, AOF), repl (replication), cluster (Redis Cluster: slots, bus,
# nodes.conf), script (Lua), server (start-up, config, INFO).
LAYERS    := base keyspace io commands persist repl cluster script server
SRCS      := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
TLS      ?= yes
ifeq ($(TLS),yes)
  TLS_OFF  := src/io/tls_off.c
  TLS_LIBS := -lssl -lcrypto
else
  TLS_OFF  := src/io/tls.c
endif
# backend files are #included by event.c, not compiled alone; one script engine, one TLS layer
SRCS      := $(filter-out src/io/event_epoll.c src/io/event_kqueue.c $(SCRIPT_OFF) $(TLS_OFF),$(SRCS))
OBJS      := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
LIB_OBJS  := $(filter-out $(BUILD)/obj/server/main.o,$(OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
SERVER    := $(BUILD)/ferry-server
BENCH_SRCS := $(wildcard bench/*.c)
BENCH     := $(BUILD)/ferry-bench
# the null server (bench/null/): no data, fixed replies; bounds what any server reaches here
NULLSRV_SRCS := $(wildcard bench/null/*.c)
NULLSRV   := $(BUILD)/ferry-null-server

.PHONY: all run test unit clean deps integration fuzz fuzz-replay install uninstall
.SECONDARY:
all: $(SERVER) $(if $(BENCH_SRCS),$(BENCH)) $(if $(NULLSRV_SRCS),$(NULLSRV))

# the load generator is a separate program (libc only, plus OpenSSL for --tls
# unless TLS=no); it shares no code with the server
$(BENCH): $(BENCH_SRCS) $(wildcard bench/*.h) | $(BUILD)/obj
	$(CC) $(CSTD) $(WARN) $(OPT) -g -Ibench $(if $(TLS_LIBS),-DFB_TLS) $(EXTRA_CFLAGS) -o $@ $(BENCH_SRCS) $(LDFLAGS) -lm $(TLS_LIBS)

$(NULLSRV): $(NULLSRV_SRCS) $(wildcard bench/null/*.h) | $(BUILD)/obj
	$(CC) $(CSTD) $(WARN) $(OPT) -g -Ibench/null $(EXTRA_CFLAGS) $(SANFLAGS) -o $@ $(NULLSRV_SRCS) $(LDFLAGS)

$(SERVER): $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(LUA_LIBS) $(TLS_LIBS)

$(BUILD)/obj/%.o: src/%.c | $(BUILD)/obj
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(EXTRA_LUA) $(SRC_WARN) -c -o $@ $<

$(BUILD)/obj $(BUILD)/tests:
	mkdir -p $@

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS) | $(BUILD)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LIB_OBJS) $(LDFLAGS) -lcriterion $(LDLIBS) $(LUA_LIBS) $(TLS_LIBS)

# ---- fuzzing (clang libFuzzer + ASan/UBSan) ----------------------------------
FUZZ_SECONDS ?= 30
FUZZ_CC      ?= clang
FUZZ_DIR     := build/fuzz
# the Lua engine's files alone are compiled with Lua's headers
LUA_OBJS := $(foreach d,$(BUILD)/obj $(FUZZ_DIR)/obj,$(LUA_SRCS:src/%.c=$(d)/%.o))
$(LUA_OBJS): EXTRA_LUA = $(LUA_CFLAGS)
$(LUA_OBJS): | lua-check
.PHONY: lua-check
lua-check:
	@pkg-config --exists $(LUA_PKGS) || { echo "Lua 5.1 with cjson and bit not found: run scripts/install-deps.sh --build (or build with LUA=no)" >&2; exit 1; }
FUZZ_FLAGS   := $(CSTD) -O1 -g -Iinclude -MMD -MP -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_SRCS    := $(wildcard fuzz/fuzz_*.c)
FUZZ_BINS    := $(FUZZ_SRCS:fuzz/%.c=$(FUZZ_DIR)/%)
FUZZ_OBJS    := $(filter-out $(FUZZ_DIR)/obj/server/main.o,$(SRCS:src/%.c=$(FUZZ_DIR)/obj/%.o))

$(FUZZ_DIR)/obj/%.o: src/%.c | $(FUZZ_DIR)/obj
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(EXTRA_LUA) -c -o $@ $<

$(FUZZ_DIR)/obj:
	mkdir -p $@

$(FUZZ_DIR)/%: fuzz/%.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS) $(LUA_LIBS) $(TLS_LIBS)

# Runs every target for FUZZ_SECONDS, starting from (a scratch copy of) its seed corpus.
fuzz: $(FUZZ_BINS)
	@set -e; for b in $(FUZZ_BINS); do n=$$(basename $$b | sed 's/^fuzz_//'); \
	  work=$$(mktemp -d); if [ -d fuzz/corpus/$$n ]; then cp -r fuzz/corpus/$$n/. $$work/; fi; \
	  echo "== fuzz $$n for $(FUZZ_SECONDS)s"; \
	  if ! $$b -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/ $$work > $(FUZZ_DIR)/$$n.log 2>&1; then \
	    tail -40 $(FUZZ_DIR)/$$n.log; rm -rf $$work; exit 1; fi; \
	  grep -E "^stat::number_of_executed_units" $(FUZZ_DIR)/$$n.log; rm -rf $$work; done

# Replays every input of every seed corpus (fuzz/corpus/<name>/, for target
# fuzz_<name>) once, deterministically; fails on the first crash or CHECK.
fuzz-replay: $(FUZZ_BINS)
	@set -e; for b in $(FUZZ_BINS); do n=$$(basename $$b | sed 's/^fuzz_//'); \
	  if [ ! -d fuzz/corpus/$$n ]; then echo "== replay $$n: no corpus"; continue; fi; \
	  cnt=$$(find fuzz/corpus/$$n -type f | wc -l); echo "== replay $$n: $$cnt inputs"; \
	  if ! find fuzz/corpus/$$n -type f -print0 | xargs -0 $$b -runs=1 > $(FUZZ_DIR)/$$n.replay.log 2>&1; then \
	    tail -40 $(FUZZ_DIR)/$$n.replay.log; exit 1; fi; done

# ---- benchmarks (issue: throughput model) -------------------------------------
.PHONY: bench bench-smoke bench-persistence bench-aof bench-streams bench-commands bench-scripting bench-acl bench-repl bench-values bench-tls bench-cluster
bench: deps $(SERVER) $(BENCH) $(NULLSRV)
	.venv/bin/python scripts/bench_all.py

# RDB load time, dump size and BGSAVE under load, ferry vs redis-server (issue 12)
bench-persistence: deps $(SERVER)
	.venv/bin/python scripts/persistence.py

# AOF: SET/INCR rps with appendfsync everysec/always, fsyncs and bytes per op,
# replay of 1M writes at start-up, BGREWRITEAOF of 1M keys, ferry vs redis-server
bench-aof: deps $(SERVER)
	.venv/bin/python scripts/aof.py --trials 5

# Streams (XADD, XRANGE, consumer groups), keyspace notifications and bytes per stream entry, ferry vs redis-server (issue 15)
bench-streams: deps $(SERVER)
	.venv/bin/python scripts/streams.py --trials 3

# Bitmaps, HyperLogLog, GEO and SORT throughput and memory, ferry vs redis-server (issue 16)
bench-commands: deps $(SERVER)
	.venv/bin/python scripts/commands_bench.py --trials 3

# EVALSHA throughput and script cache memory, ferry vs redis-server (issue 13)
bench-scripting: deps $(SERVER)
	.venv/bin/python scripts/scripting.py

# SET/GET rps as a restricted ACL user vs the default user, ferry and redis-server (target >= 0.95x)
bench-acl: deps $(SERVER)
	.venv/bin/python scripts/acl_bench.py --trials 3 --ferry $(SERVER)

# SET rps with 0/1/2 replicas, replication lag under load, full-sync time of 1M keys (disk/diskless), ferry vs redis-server
bench-repl: deps $(SERVER)
	.venv/bin/python scripts/repl_bench.py --trials 3 --ferry $(SERVER)

# GET/SET of 64 B..64 KB values at P=1/16/100: redis-server, ferry and the null-server ceiling,
# alternating, pinned, medians of 3 (issue 19; ~10 min) -> results/bench/values.csv
bench-values: deps $(SERVER) $(BENCH) $(NULLSRV)
	.venv/bin/python scripts/values_bench.py

# TLS throughput (ferry-bench and redis-benchmark --tls) and handshakes, ferry vs redis-server (issue #20)
bench-tls: deps $(SERVER) $(BENCH)
	.venv/bin/python scripts/tls_bench.py --ferry $(SERVER)

# SET/GET at P=16/100: a 2-node ferry cluster (scripts/ferry-cluster) vs one ferry node, a 2-node
# redis-server cluster and redis-server io-threads 2; redis-benchmark [--cluster] and redis-py (issue #21; ~5 min)
bench-cluster: deps $(SERVER)
	.venv/bin/python scripts/cluster_bench.py --ferry $(SERVER)

bench-smoke: $(SERVER) $(BENCH) $(NULLSRV)
	@.venv/bin/python scripts/bench_smoke.py

# Regenerates every figure and table from the checked-in CSVs only (no server).
.PHONY: reproduce analysis-test
reproduce: deps
	.venv/bin/python analysis/reproduce.py --results results

analysis-test:
	@.venv/bin/python -m pytest -q -p no:cacheprovider analysis/tests

run:
	@scripts/install-deps.sh --build
	@$(MAKE) --no-print-directory $(SERVER)
	./$(SERVER) --port 6379

# N ferry nodes (default 2) as one Redis Cluster on ports 7000.., node i pinned
# to core i % ncores (scripts/ferry-cluster); `make cluster-stop` stops them
N ?= 2
.PHONY: cluster cluster-stop
cluster:
	@scripts/install-deps.sh --build
	@$(MAKE) --no-print-directory $(SERVER)
	scripts/ferry-cluster start $(N) --port 7000 --server $(SERVER)

cluster-stop:
	scripts/ferry-cluster stop --port 7000

deps:
	@scripts/install-deps.sh

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t --jobs 2 || exit 1; done

# the libc-only build (LUA=no TLS=no) that test_scripting_nolua.py and test_tls.py run
NOLUA_SERVER := build/nolua/ferry-server
ifneq ($(SERVER),$(NOLUA_SERVER))
$(NOLUA_SERVER): $(SRCS) $(wildcard include/*.h) src/script/script_nolua.c src/io/tls_off.c
	@$(MAKE) --no-print-directory LUA=no TLS=no BUILD=build/nolua SANITIZE= $(NOLUA_SERVER)
endif

integration: $(SERVER) $(BENCH) $(NULLSRV) $(if $(filter yes,$(LUA)),$(NOLUA_SERVER))
	@FERRY_SERVER=$(abspath $(SERVER)) FERRY_SERVER_NOLUA=$(abspath $(NOLUA_SERVER)) \
	  FERRY_SERVER_NOTLS=$(abspath $(NOLUA_SERVER)) .venv/bin/python -m pytest -q -x tests/integration

# The AOF's kill -9 trials at length (make test runs 20 of each kind).
.PHONY: soak-aof
soak-aof: deps $(SERVER)
	@AOF_KILL_TRIALS=$(or $(TRIALS),200) FERRY_SERVER=$(abspath $(SERVER)) \
	  .venv/bin/python -m pytest -q -p no:timeout tests/integration/test_aof.py -k "kill9 and ferry"

# The whole suite: plain build, then the same unit and integration tests
# under ASan/UBSan, then every fuzz corpus replayed input by input, then a
# short run of every fuzz target from its corpus.
test: deps
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory integration
	@$(MAKE) --no-print-directory bench-smoke
	@$(MAKE) --no-print-directory analysis-test
	@if ls results/bench/sweep_*.csv >/dev/null 2>&1; then $(MAKE) --no-print-directory reproduce; fi
	@$(MAKE) --no-print-directory SANITIZE=address,undefined unit integration
	@$(MAKE) --no-print-directory fuzz-replay
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)

TEST_FUZZ_SECONDS ?= 10

# The server is one self-contained binary (no data files, nothing read from
# the build tree), so installing it is one copy. The binary is a
# prerequisite: an up-to-date build is installed as it is, never rebuilt.
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL ?= install
BINDIR   = $(DESTDIR)$(PREFIX)/bin

install: $(SERVER)
	$(INSTALL) -d $(BINDIR)
	$(INSTALL) -m 755 $(SERVER) $(BINDIR)/ferry-server

uninstall:
	rm -f $(BINDIR)/ferry-server

clean:
	rm -rf build

-include $(OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) $(UNIT_BINS:=.d)
