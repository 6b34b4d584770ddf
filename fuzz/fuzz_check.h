/* fuzz_check.h - CHECK(c): a fuzz target's invariant; a failure prints the
 * condition and its place and aborts, which libFuzzer reports as a crash
 * with the input that caused it. */
#ifndef FERRY_FUZZ_CHECK_H
#define FERRY_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                                    \
    do {                                                                            \
        if (!(c)) {                                                                 \
            fprintf(stderr, "CHECK failed: %s at %s:%d\n", #c, __FILE__, __LINE__); \
            abort();                                                                \
        }                                                                           \
    } while (0)

#endif
