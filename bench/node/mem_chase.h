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

/* ns per load for `nr` repetitions into v[]. 0, or -1 with a message in err when the
 * chain does not visit every line exactly once (a broken permutation). */
int mem_chase_point(char *buf, size_t bytes, double seconds, uint64_t *rng, double *v,
                    int nr, char *err, size_t errlen);

#endif
