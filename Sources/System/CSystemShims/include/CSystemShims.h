#ifndef CUED_SYSTEM_SHIMS_H
#define CUED_SYSTEM_SHIMS_H
// Stand-ins for glibc symbols that Swift's Glibc module does not expose (they sit behind
// _GNU_SOURCE or in headers Glibc does not import). Each is one call; none keeps state.
#include <stdint.h>
#include <sys/types.h>

/// `eventfd(initval, EFD_CLOEXEC | flags)`; pass nonblocking != 0 for EFD_NONBLOCK.
int cued_eventfd(unsigned int initval, int nonblocking);

/// `signalfd` for the given signals (blocked in the calling thread first with `pthread_sigmask`), CLOEXEC|NONBLOCK.
/// Returns the fd or -1 with errno set. `signals` is a list of `count` signal numbers.
int cued_signalfd(const int *signals, int count);

/// Blocks the given signals in the calling thread (so that helper threads inherit the mask).
int cued_block_signals(const int *signals, int count);

/// `getsockopt(SO_PEERCRED)`: the peer's pid, uid and gid of a connected Unix socket.
int cued_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// `getsockopt(SO_PEERGROUPS)` (Linux 4.13): the peer's supplementary groups, at most `capacity`
/// of them. Returns the count, or -1 (errno ERANGE when there are more than `capacity`).
/// A shim because Swift's Glibc module does not export SO_PEERGROUPS.
int cued_peer_groups(int fd, gid_t *groups, int capacity);

/// `mallopt(M_ARENA_MAX, count)`: glibc's malloc.h is not in Swift's Glibc module.
int cued_limit_malloc_arenas(int count);

/// `accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)`.
int cued_accept(int fd);

/// `socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC [| SOCK_NONBLOCK], 0)`.
int cued_unix_stream_socket(int nonblocking);

/// `pthread_setname_np(pthread_self(), name)` (names longer than 15 bytes are cut).
void cued_set_thread_name(const char *name);

/// `sched_setscheduler(tid, SCHED_FIFO | SCHED_RESET_ON_FORK, priority)` for thread `tid` of this
/// process (any thread may ask for another); returns 0 or an errno value (EPERM without rights).
/// SCHED_RESET_ON_FORK is a glibc name only under _GNU_SOURCE.
int cued_set_thread_fifo(pid_t tid, int priority);

/// `gettid()`: the calling thread's kernel thread id (what RTKit and `sched_setscheduler` take);
/// glibc declares it only under _GNU_SOURCE.
pid_t cued_gettid(void);

/// `setpriority(PRIO_PROCESS, tid, nice)`: on Linux the nice level of thread `tid` alone (threads
/// it starts later inherit it); returns 0 or an errno value (EACCES to go below RLIMIT_NICE's floor).
int cued_set_thread_nice(pid_t tid, int nice);

/// `getpriority(PRIO_PROCESS, tid)` into `*nice`; returns 0 or an errno value (ESRCH: no such thread).
int cued_thread_nice(pid_t tid, int *nice);

/// `sched_getscheduler(tid)` without SCHED_RESET_ON_FORK, and `sched_getparam(tid)`'s priority:
/// the policy the kernel holds for thread `tid` (0 SCHED_OTHER, 1 SCHED_FIFO, 2 SCHED_RR), or -1 with errno.
int cued_thread_policy(pid_t tid, int *priority);

/// `pipe2(fds, O_CLOEXEC [| O_NONBLOCK])`: Swift's Glibc hides pipe2.
int cued_pipe(int fds[2], int nonblocking);

#endif
