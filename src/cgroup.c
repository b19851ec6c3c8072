/* Cgroups for perf_event: find the hierarchy perf_event belongs to (the
 * cgroup v1 perf_event controller's when one is mounted, else the unified
 * cgroup2 one) from /proc/self/mountinfo, resolve a cgroup name in it, and
 * open the directory whose descriptor perf_event_open takes with
 * PERF_FLAG_PID_CGROUP. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* Whether the comma list OPTS holds WORD. */
static bool has_option(const char *opts, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* The mount point of the hierarchy perf_event counts cgroups of, in BUF. */
static int find_root(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return hwc__fail(-errno, "cannot read /proc/self/mountinfo: %s", strerror(errno));
	char line[4096], v2[4096] = "", v1[4096] = "";
	while (fgets(line, sizeof(line), f)) {
		/* id parent major:minor root mountpoint options [tags] - fstype source superopts */
		char *sep = strstr(line, " - ");
		char mnt[4096], fstype[64], super[1024] = "";
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", fstype, super) < 1)
			continue;
		unescape(mnt);
		if (strcmp(fstype, "cgroup2") == 0 && !v2[0])
			snprintf(v2, sizeof(v2), "%s", mnt);
		else if (strcmp(fstype, "cgroup") == 0 && has_option(super, "perf_event") && !v1[0])
			snprintf(v1, sizeof(v1), "%s", mnt);
	}
	fclose(f);
	/* A controller bound to a v1 hierarchy is absent from the unified one. */
	const char *root = v1[0] ? v1 : v2;
	if (!root[0])
		return hwc__fail(-ENODEV, "no cgroup hierarchy that perf_event can use is mounted "
					  "(no cgroup2 file system, nor a cgroup v1 one with the "
					  "perf_event controller, in /proc/self/mountinfo); mount one: "
					  "`mount -t cgroup2 none /sys/fs/cgroup`");
	if (strlen(root) >= size)
		return hwc__fail(-ENAMETOOLONG, "the cgroup mount point %s is longer than %zu bytes",
				 root, size - 1);
	snprintf(buf, size, "%s", root);
	return 0;
}

/* Is PATH inside the directory ROOT (or ROOT itself)? */
static bool inside(const char *path, const char *root)
{
	size_t n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		n--;
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0' || n == 1);
}

/* A directory of a cgroup file system (either version)? */
static bool cgroup_dir(const char *path)
{
	struct stat st;
	struct statfs fs;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && statfs(path, &fs) == 0 &&
	       (fs.f_type == CGROUP2_SUPER_MAGIC || fs.f_type == CGROUP_SUPER_MAGIC);
}

/* Does PATH have a ".." component (a way out of the hierarchy)? */
static bool climbs(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return true;
	return false;
}

HWC_EXPORT int hwc_cgroup_path(const char *cgroup, char *buf, size_t size)
{
	hwc__clear_error();
	char root[4096];
	int err = find_root(root, sizeof(root));
	if (err)
		return err;
	if (!cgroup)
		return hwc__fail(-EINVAL, "no cgroup given");
	if (climbs(cgroup))
		return hwc__fail(-EINVAL, "cgroup '%s': a cgroup path cannot contain '..'", cgroup);
	if (cgroup[0] == '/' && !inside(cgroup, root) && cgroup_dir(cgroup))
		return hwc__fail(-EBADF, "perf_event cannot count cgroup '%s': it is on a cgroup "
					 "hierarchy without the perf_event controller (cgroup v1); "
					 "the cgroups perf_event can count are under %s",
				 cgroup, root);
	const char *rel = cgroup;
	int n;
	if (cgroup[0] == '/' && inside(cgroup, root)) {
		n = snprintf(buf, size, "%s", cgroup);
	} else {
		/* Relative to the hierarchy's root, as perf -G takes it:
		 * "/" and "" are the root cgroup. */
		while (*rel == '/')
			rel++;
		n = snprintf(buf, size, "%s%s%s", root, *rel ? "/" : "", rel);
	}
	if (n < 0 || (size_t)n >= size)
		return hwc__fail(-ENAMETOOLONG, "the cgroup path '%s' is too long", cgroup);
	struct stat st;
	if (stat(buf, &st) < 0) {
		err = -errno;
		if (err == -ENOENT || err == -ENOTDIR)
			return hwc__fail(-ENOENT, "no cgroup '%s': %s does not exist (cgroups perf_event "
						  "can count are under %s)",
					 cgroup, buf, root);
		return hwc__fail(err, "cannot use cgroup '%s': %s: %s", cgroup, buf, strerror(-err));
	}
	if (!cgroup_dir(buf))
		return hwc__fail(-ENOTDIR, "'%s' is not a cgroup: %s is not a directory of a cgroup "
					   "file system (cgroups perf_event can count are under %s)",
				 cgroup, buf, root);
	return 0;
}

int hwc__cgroup_open(const char *cgroup)
{
	char path[4096];
	int err = hwc_cgroup_path(cgroup, path, sizeof(path));
	if (err)
		return err;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return hwc__fail(-errno, "cannot open cgroup '%s' (%s): %s", cgroup, path,
				 strerror(errno));
	return fd;
}

int hwc__events_open_cgroups(struct hwc__events *s, const struct hwc_target *t)
{
	if (t->kind == HWC_TARGET_CGROUP && !t->cgroup)
		return hwc__fail(-EINVAL, "a cgroup target needs a cgroup");
	for (size_t e = 0; e < s->n; e++) {
		const char *cg = s->e[e].ev->cgroup ? s->e[e].ev->cgroup
			       : t->kind == HWC_TARGET_CGROUP ? t->cgroup : NULL;
		if (!cg)
			continue;
		if (!hwc__cpu_wide(t->kind))
			return hwc__fail(-EINVAL, "'%s' counts in cgroup '%s', which needs a "
						  "system-wide target (every CPU, or a CPU list)",
					 s->e[e].ev->name, cg);
		int fd = hwc__cgroup_open(cg);
		if (fd < 0)
			return fd;
		s->e[e].cgroup_fd = fd;
	}
	return 0;
}
