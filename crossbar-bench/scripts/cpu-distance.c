// How far apart the machine's first two CPUs are: the round trip of one cache line between a
// thread on CPU 0 and one on CPU 1, in nanoseconds.
//
//   cc -O2 -pthread -o cpu-distance crossbar-bench/scripts/cpu-distance.c
//   ./cpu-distance          one figure (the median of 9 rounds of 200,000 trips: ~0.1-0.6 s)
//   ./cpu-distance --watch  one figure a second until killed, light enough to run beside a
//                           benchmark: the quickest of five bursts of 500 trips (a burst in which
//                           the other side was not running is left out)
//
// Why: on a virtual machine the host may run the two virtual CPUs on cores that share a cache
// (~50-70 ns here) or on cores that do not (~320-350 ns), and it moves them every minute or so.
// A relay that reads on one core and writes on the other pays that distance for every cache line
// that crosses: fan-out to 100 ran at half its rate in the far placement (docs/benchmarks.md,
// "The machine's two CPUs, near and far"). compare.sh records it through each run so that
// ratios.py compares runs made in the same placement.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Alignas(64) atomic_int ball;   // 1: CPU 0 served; 0: CPU 1 returned it
static _Alignas(64) atomic_int stop;
static sem_t serve;                    // posted before each burst: the other side wakes for it

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    fprintf(stderr, "cpu-distance: cannot run on CPU %d\n", cpu);
    exit(2);
  }
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static void *other_side(void *unused) {
  (void) unused;
  pin(1);
  while (sem_wait(&serve) == 0 && !atomic_load_explicit(&stop, memory_order_relaxed)) {
    // Serve until some 50 us pass without a trip, then sleep until the next burst: between
    // bursts CPU 1 is left to what else runs there.
    for (long idle = 0; idle < 100000; idle++) {
      if (atomic_load_explicit(&ball, memory_order_acquire) == 1) {
        atomic_store_explicit(&ball, 0, memory_order_release);
        idle = 0;
      }
    }
  }
  return NULL;
}

/**
 * One burst: ns per round trip, or -1 if it overran its deadline (a side was not running). A trip
 * waiting longer than 20 us wakes the other side again, in case it went to sleep while this side
 * was not running.
 */
static double burst(int trips, double deadline_ns) {
  sem_post(&serve);
  double start = now_ns();
  int overran = 0;
  for (int i = -50; i < trips; i++) {
    if (i == 0) {
      start = now_ns(); // the first 50 trips woke the other side and warmed the line
    }
    atomic_store_explicit(&ball, 1, memory_order_release);
    double trip = 0;
    int woken = 0;
    for (long spins = 1; atomic_load_explicit(&ball, memory_order_acquire) != 0; spins++) {
      if ((spins & 1023) != 0) {
        continue; // the clock only now and then: a trip is ~50-350 ns, fewer spins than this
      }
      double t = now_ns();
      if (trip == 0) {
        trip = t;
      } else if (!woken && t - trip > 20e3) {
        sem_post(&serve);
        woken = 1;
      }
      if (t - start > deadline_ns) {
        overran = 1;
      }
    }
    if (overran) {
      return -1;
    }
  }
  return (now_ns() - start) / trips;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int watch = argc > 1 && strcmp(argv[1], "--watch") == 0;
  pthread_t thread;
  sem_init(&serve, 0, 0);
  pthread_create(&thread, NULL, other_side, NULL);
  pin(0);
  if (!watch) {
    enum { ROUNDS = 9 };
    double ns[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
      while ((ns[r] = burst(200000, 1e9)) < 0) {
      }
    }
    qsort(ns, ROUNDS, sizeof ns[0], by_value);
    printf("%.0f\n", ns[ROUNDS / 2]);
  } else {
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (;;) {
      double best = -1;
      for (int b = 0; b < 5; b++) {
        double ns = burst(500, 2e6);
        if (ns > 0 && (best < 0 || ns < best)) {
          best = ns;
        }
        usleep(1000);
      }
      if (best > 0) {
        printf("%.0f\n", best);
      }
      usleep(990000);
    }
  }
  atomic_store(&stop, 1);
  sem_post(&serve);
  pthread_join(thread, NULL);
  return 0;
}
