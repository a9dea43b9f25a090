// cshim_guard_shared_mapping: survives the truncation of a file this process maps shared (see
// the header). The handler runs on the faulting thread, synchronously; everything it touches is
// async-signal-safe: atomics, the raw `mmap` system call (no sanitizer interceptor, no errno
// worries beyond its own), `sigaction` to hand an unknown fault back.
#define _GNU_SOURCE 1

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "CSystemShim.h"

enum { guardCapacity = 4096 };

// A guard is published by storing its fields, then incrementing `guardCount` (release); the
// handler reads `guardCount` (acquire) and only the guards below it. Registration is serialised
// by `registrationLock`; the handler takes no lock.
static void *guardStart[guardCapacity];
static size_t guardLength[guardCapacity];
static atomic_int guardLost[guardCapacity];
static atomic_int guardCount;
static pthread_mutex_t registrationLock = PTHREAD_MUTEX_INITIALIZER;
static int handlerInstalled;
static struct sigaction previousAction;

static void handOn(int signal, siginfo_t *info, void *context) {
    if (previousAction.sa_flags & SA_SIGINFO) {
        if (previousAction.sa_sigaction != NULL) {
            previousAction.sa_sigaction(signal, info, context);
            return;
        }
    } else if (previousAction.sa_handler != SIG_DFL && previousAction.sa_handler != SIG_IGN) {
        previousAction.sa_handler(signal);
        return;
    }
    // Default (or ignored, which cannot work for a fault): restore the default action; the
    // faulting instruction runs again on return and the signal terminates the process as usual.
    struct sigaction fallback = { 0 };
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(signal, &fallback, NULL);
}

static void onBusError(int signal, siginfo_t *info, void *context) {
    char *address = (char *)info->si_addr;
    int count = atomic_load_explicit(&guardCount, memory_order_acquire);
    for (int index = 0; index < count; index++) {
        char *start = (char *)guardStart[index];
        if (address < start || address >= start + guardLength[index]) continue;
        long result = syscall(SYS_mmap, start, guardLength[index], PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (result == (long)(intptr_t)start) {
            atomic_store_explicit(&guardLost[index], 1, memory_order_release);
            return;  // the access runs again, on the private zeros
        }
        break;
    }
    handOn(signal, info, context);
}

int cshim_guard_shared_mapping(void *start, size_t length) {
    if (start == NULL || length == 0) return -1;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || ((uintptr_t)start % (uintptr_t)page) != 0) return -1;
    size_t rounded = (length + (size_t)page - 1) / (size_t)page * (size_t)page;
    int number = -1;
    pthread_mutex_lock(&registrationLock);
    if (!handlerInstalled) {
        struct sigaction action = { 0 };
        action.sa_sigaction = onBusError;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        if (sigaction(SIGBUS, &action, &previousAction) == 0) handlerInstalled = 1;
    }
    int count = atomic_load_explicit(&guardCount, memory_order_relaxed);
    if (handlerInstalled && count < guardCapacity) {
        guardStart[count] = start;
        guardLength[count] = rounded;
        atomic_store_explicit(&guardLost[count], 0, memory_order_relaxed);
        atomic_store_explicit(&guardCount, count + 1, memory_order_release);
        number = count;
    }
    pthread_mutex_unlock(&registrationLock);
    return number;
}

int cshim_shared_mapping_lost(int number) {
    if (number < 0 || number >= guardCapacity) return 1;
    return atomic_load_explicit(&guardLost[number], memory_order_acquire);
}
