/*
 * forkwatch.h - the plain-C limit programs (climit, collimit, p2plimit)
 * fork their ranks, which then spin on shared flags: if one dies, no
 * other may be left spinning for it. A child dies with its parent
 * (PR_SET_PDEATHSIG); the parent ends when a child dies abnormally (a
 * SIGCHLD handler), which then takes the other children with it. Include
 * after _GNU_SOURCE.
 */
#ifndef FORKWATCH_H
#define FORKWATCH_H

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* fork_watch_sigchld ends the parent when a child died of a signal or
 * exited nonzero; a child that exited 0 is left for the parent's waitpid
 * (WNOWAIT). Async-signal-safe calls only. */
static void fork_watch_sigchld(int sig)
{
	siginfo_t info;
	(void)sig;
	memset(&info, 0, sizeof info);
	if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0 &&
	    !(info.si_code == CLD_EXITED && info.si_status == 0)) {
		static const char msg[] = "forkwatch: a forked rank died; ending the program\n";
		ssize_t r = write(2, msg, sizeof msg - 1);
		(void)r;
		_exit(1);
	}
}

/* fork_watch_parent installs the handler; call it before forking. */
static inline void fork_watch_parent(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fork_watch_sigchld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
}

/* fork_watch_child runs in a child right after fork: parent is the pid
 * that forked it (getpid() before the fork). */
static inline void fork_watch_child(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* the parent died before the prctl */
		_exit(1);
}

#endif
