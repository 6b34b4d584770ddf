# ferry Makefile. Targets: all (build/ferry-server), run, test, unit, clean.
# Variables: CC (gcc|clang), SANITIZE (e.g. address,undefined), OPT.

CC       ?= cc
OPT      ?= -O2
SANITIZE ?=
BUILD    ?= build
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS   := $(CSTD) $(WARN) $(OPT) -g -Iinclude -MMD -MP $(EXTRA_CFLAGS)
LDFLAGS  := $(EXTRA_LDFLAGS)
LDLIBS   := -lm

ifneq ($(SANITIZE),)
  BUILD   := build/san
  CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=$(SANITIZE)
endif

SRCS      := $(wildcard src/*.c)
# backend files are #included by event.c, not compiled alone
SRCS      := $(filter-out src/event_epoll.c src/event_kqueue.c,$(SRCS))
OBJS      := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
LIB_OBJS  := $(filter-out $(BUILD)/obj/main.o,$(OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
SERVER    := $(BUILD)/ferry-server

.PHONY: all run test unit clean deps integration
all: $(SERVER)

$(SERVER): $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/%.o: src/%.c | $(BUILD)/obj
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj $(BUILD)/tests:
	mkdir -p $@

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS) | $(BUILD)/tests
	$(CC) $(CFLAGS) -o $@ $< $(LIB_OBJS) $(LDFLAGS) -lcriterion $(LDLIBS)

run: $(SERVER)
	./$(SERVER) --port 6379

deps:
	@scripts/install-deps.sh

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t --jobs 2 || exit 1; done

integration: $(SERVER)
	@FERRY_SERVER=$(abspath $(SERVER)) .venv/bin/python -m pytest -q -x tests/integration

test: deps
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory integration

clean:
	rm -rf build

-include $(OBJS:.o=.d)
