/* mem_chase.h - pointer-chase latency at one working-set size, on the calling thread.
 *
 * A random cyclic permutation with one pointer per 64-byte line (Sattolo's algorithm: one
 * cycle through every line), so hardware prefetchers cannot predict the next address;
 * followed for a calibrated number of loads. Each caller passes its own random state, so
 * several threads can build and chase their own chains at the same time (loaded latency).
 *
 * Cost: building touches every line once; timing about `seconds` per repetition.
 */
#ifndef HS_MEM_CHASE_H
#define HS_MEM_CHASE_H
#include <stddef.h>
#include <stdint.h>

/* Builds and checks the chain over `bytes` of buf and calibrates the loads of one
 * repetition to about `seconds`; returns the chain's start with *loads set, or NULL with
 * a message in err when the chain does not visit every line exactly once. */
void **mem_chase_build(char *buf, size_t bytes, double seconds, uint64_t *rng,
                       int64_t *loads, char *err, size_t errlen);

/* One timed repetition: follows `loads` pointers from *p (left where it stopped, so the
 * next repetition goes on) and returns ns per load. */
double mem_chase_time(void ***p, int64_t loads);

#endif
