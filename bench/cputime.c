/* Runs a command and reports the CPU time it used, user + system, of all
 * its threads, in microseconds (wait4's rusage; Linux accounts the sum
 * from the scheduler's runtime, so it is finer than the clock tick that
 * /usr/bin/time reports in). For bench/whole.sh.
 *
 * Usage: cputime OUT_FILE COMMAND [ARGS...]
 * The command's standard output goes to OUT_FILE; the time, in
 * microseconds, is printed on standard output. Exits with the command's
 * status (1 if it was killed by a signal).
 */
#define _DEFAULT_SOURCE

#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: cputime OUT_FILE COMMAND [ARGS...]\n");
    return 2;
  }
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(argv[1]);
    return 2;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 2;
  }
  if (pid == 0) {
    dup2(fd, 1);
    close(fd);
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    _exit(127);
  }
  close(fd);
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("wait4");
    return 2;
  }
  long us = (long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L +
            (long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  printf("%ld\n", us);
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 1;
}
