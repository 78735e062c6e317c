// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * log.h's one decision: a "<N>" priority prefix only when stderr is the
 * stream JOURNAL_STREAM names (device:inode, systemd's rule), so a daemon
 * started by a unit and then given another stderr (a file, a pipe) writes
 * plain lines. Each case runs in a child, as rt_log decides once a process.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "log.h"

/* What rt_log writes with stderr on a new file and JOURNAL_STREAM as env says. */
static char *logged(const char *dir, const char *env)
{
	char path[256], stream[64];
	struct stat st;
	size_t len;
	pid_t pid;
	int fd, status;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || fstat(fd, &st))
		return NULL;
	/* "self": the file itself, as systemd would name the journal's socket. */
	if (!strcmp(env, "self"))
		snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
	else
		snprintf(stream, sizeof(stream), "%s", env);
	pid = fork();
	if (pid == 0) {
		if (dup2(fd, STDERR_FILENO) < 0)
			_exit(2);
		if (*stream)
			setenv("JOURNAL_STREAM", stream, 1);
		else
			unsetenv("JOURNAL_STREAM");
		rt_log(LOG_WARNING, "x=%d", 1);
		_exit(0);
	}
	close(fd);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return NULL;
	return read_whole_file(path, &len);
}

static void expect(const char *dir, const char *env, const char *want)
{
	char *got = logged(dir, env);

	CHECK_STR(got, want);
	free(got);
}

int main(void)
{
	char dir[] = "/tmp/test-log.XXXXXX";
	char other[64], path[256];
	struct stat st;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* Another file's device and inode: stderr is no longer the journal's stream. */
	if (stat(dir, &st)) {
		perror(dir);
		return 1;
	}
	snprintf(other, sizeof(other), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	expect(dir, "self", "<4>x=1\n");
	expect(dir, other, "ringtapd: x=1\n");
	expect(dir, "", "ringtapd: x=1\n");
	expect(dir, "garbage", "ringtapd: x=1\n");
	snprintf(path, sizeof(path), "%s/stderr", dir);
	unlink(path);
	rmdir(dir);
	return check_exit("test-log");
}
