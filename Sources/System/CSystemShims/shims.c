#define _GNU_SOURCE
#include "CSystemShims.h"
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int cued_eventfd(unsigned int initval, int nonblocking) {
  return eventfd(initval, EFD_CLOEXEC | (nonblocking ? EFD_NONBLOCK : 0));
}

static int fill_set(sigset_t *set, const int *signals, int count) {
  sigemptyset(set);
  for (int i = 0; i < count; i++) {
    if (sigaddset(set, signals[i]) != 0) return -1;
  }
  return 0;
}

int cued_block_signals(const int *signals, int count) {
  sigset_t set;
  if (fill_set(&set, signals, count) != 0) return -1;
  int rc = pthread_sigmask(SIG_BLOCK, &set, NULL);
  if (rc != 0) { errno = rc; return -1; }
  return 0;
}

int cued_signalfd(const int *signals, int count) {
  sigset_t set;
  if (fill_set(&set, signals, count) != 0) return -1;
  int rc = pthread_sigmask(SIG_BLOCK, &set, NULL);
  if (rc != 0) { errno = rc; return -1; }
  return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int cued_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
  *pid = cred.pid; *uid = cred.uid; *gid = cred.gid;
  return 0;
}

int cued_peer_groups(int fd, gid_t *groups, int capacity) {
#ifdef SO_PEERGROUPS
  socklen_t len = (socklen_t)(sizeof(gid_t) * (size_t)capacity);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0) return -1;
  return (int)(len / sizeof(gid_t));
#else
  (void)fd; (void)groups; (void)capacity;
  errno = ENOPROTOOPT;
  return -1;
#endif
}

int cued_accept(int fd) {
  return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

int cued_unix_stream_socket(int nonblocking) {
  return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
}

void cued_set_thread_name(const char *name) {
  char shortName[16];
  strncpy(shortName, name, sizeof shortName - 1);
  shortName[sizeof shortName - 1] = 0;
  pthread_setname_np(pthread_self(), shortName);
}

int cued_set_thread_fifo(pid_t tid, int priority) {
  struct sched_param param;
  memset(&param, 0, sizeof param);
  param.sched_priority = priority;
  return sched_setscheduler(tid, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) == 0 ? 0 : errno;
}

int cued_set_thread_nice(pid_t tid, int nice) {
  return setpriority(PRIO_PROCESS, (id_t)tid, nice) == 0 ? 0 : errno;
}

int cued_thread_nice(pid_t tid, int *nice) {
  errno = 0;
  int value = getpriority(PRIO_PROCESS, (id_t)tid);
  if (value == -1 && errno != 0) return errno;
  *nice = value;
  return 0;
}

pid_t cued_gettid(void) {
  return (pid_t)syscall(SYS_gettid);
}

int cued_thread_policy(pid_t tid, int *priority) {
  int policy = sched_getscheduler(tid);
  if (policy < 0) return -1;
  struct sched_param param;
  if (sched_getparam(tid, &param) != 0) return -1;
  *priority = param.sched_priority;
  return policy & ~SCHED_RESET_ON_FORK;
}

int cued_pipe(int fds[2], int nonblocking) {
  return pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0));
}

int cued_limit_malloc_arenas(int count) {
  return mallopt(M_ARENA_MAX, count);
}
