/* Thin wrappers around the kernel: the system call, sysfs and procfs, and
 * turning perf_event_open's errno into a message that says what to do. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int hwc__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			 unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}

const char *hwc__sysfs_root(void)
{
	const char *root = getenv("HWC_SYSFS_ROOT");
	return root && *root ? root : "/sys";
}

int hwc__read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

int hwc__read_int_file(const char *path, long long *out)
{
	char buf[64], *end;
	int err = hwc__read_file(path, buf, sizeof(buf));
	if (err)
		return err;
	errno = 0;
	long long v = strtoll(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	*out = v;
	return 0;
}

bool hwc__cpu_in_list(const char *list, int cpu)
{
	for (const char *p = list; *p;) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return false;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			p = end;
		}
		if (cpu >= a && cpu <= b)
			return true;
		if (*p != ',')
			return false;
		p++;
	}
	return false;
}

HWC_EXPORT int hwc_paranoid(int *level)
{
	hwc__clear_error();
	long long v;
	int err = hwc__read_int_file("/proc/sys/kernel/perf_event_paranoid", &v);
	if (err)
		return hwc__fail(err, "cannot read /proc/sys/kernel/perf_event_paranoid: %s",
				 strerror(-err));
	*level = (int)v;
	return 0;
}

bool hwc__privileged(void)
{
	/* CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in the effective set. */
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return geteuid() == 0;
	unsigned long long caps = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return (caps & (1ULL << 38)) || (caps & (1ULL << 21));
}

HWC_EXPORT int hwc_online_cpus(int *cpus, size_t max)
{
	hwc__clear_error();
	char buf[4096];
	int err = hwc__read_file("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (err)
		return hwc__fail(err, "cannot read /sys/devices/system/cpu/online: %s",
				 strerror(-err));
	int n = 0;
	for (char *p = buf; *p;) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return hwc__fail(-EINVAL, "cannot parse the online CPU list '%s'", buf);
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			p = end;
		}
		for (long c = a; c <= b; c++, n++)
			if ((size_t)n < max)
				cpus[n] = (int)c;
		if (*p == ',')
			p++;
	}
	return n;
}

bool hwc__is_core_hw(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_HARDWARE || attr->type == PERF_TYPE_HW_CACHE ||
	       attr->type == PERF_TYPE_RAW;
}

int hwc__core_counters(const char **model, int *nfixed, bool *watchdog)
{
	int ngen = 0, nfix = 0;
	const char *m = hwc__pfm_host_model(&ngen, &nfix);
	if (model)
		*model = m;
	if (nfixed)
		*nfixed = m ? nfix : 0;
	if (watchdog)
		*watchdog = false;
	if (!m || ngen <= 0)
		return 0;
	long long wd = 0;
	/* The NMI watchdog holds one general counter while it runs. */
	if (hwc__read_int_file("/proc/sys/kernel/nmi_watchdog", &wd) == 0 && wd &&
	    hwc__core_pmu(NULL)) {
		ngen--;
		if (watchdog)
			*watchdog = true;
	}
	return ngen;
}

int hwc__fixed_counter_of(const struct perf_event_attr *attr)
{
	if (attr->type == PERF_TYPE_HARDWARE) {
		switch (attr->config) {
		case PERF_COUNT_HW_INSTRUCTIONS: return 0;
		case PERF_COUNT_HW_CPU_CYCLES: return 1;
		case PERF_COUNT_HW_REF_CPU_CYCLES: return 2;
		default: return -1;
		}
	}
	/* Raw PERFEVTSEL: only the plain event/umask pairs the fixed counters
	 * count; edge, invert, cmask or any-thread need a general counter. */
	if (attr->type != PERF_TYPE_RAW || (attr->config & ~0x3ffffULL))
		return -1;
	switch (attr->config & 0xffff) {
	case 0x00c0: return 0;
	case 0x003c: return 1;
	case 0x0300: return 2;
	default: return -1;
	}
}

static uid_t owner_of(pid_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

int hwc__explain_open_error(int err, const struct hwc_event *ev, pid_t pid, int cpu)
{
	const struct perf_event_attr *a = &ev->attr;
	int paranoid = 2;
	hwc_paranoid(&paranoid);
	bool priv = hwc__privileged();
	const char *n = ev->name;

	switch (-err) {
	case EACCES:
	case EPERM:
		if (paranoid > 2 && !priv)
			return hwc__fail(err,
					 "cannot open '%s': permission denied: perf_event_paranoid is %d, "
					 "which forbids all use by unprivileged users; run as root or "
					 "`sysctl kernel.perf_event_paranoid=2`",
					 n, paranoid);
		if (pid > 0 && owner_of(pid) != (uid_t)-1 && owner_of(pid) != geteuid() && !priv)
			return hwc__fail(err,
					 "cannot open '%s' on pid %d: permission denied: the process "
					 "belongs to uid %u and you are uid %u; run as that user or as "
					 "root (CAP_PERFMON and ptrace access are needed)",
					 n, (int)pid, (unsigned)owner_of(pid), (unsigned)geteuid());
		if (cpu >= 0 && paranoid > 0 && !priv)
			return hwc__fail(err,
					 "cannot open '%s' on CPU %d: permission denied: system-wide "
					 "counting needs root or CAP_PERFMON while perf_event_paranoid is "
					 "%d; run as root or `sysctl kernel.perf_event_paranoid=0`",
					 n, cpu, paranoid);
		if (!a->exclude_kernel && paranoid > 1 && !priv)
			return hwc__fail(err,
					 "cannot open '%s': permission denied: perf_event_paranoid is %d, "
					 "so this user may count user space only; add ':u' to the event, "
					 "run as root, or `sysctl kernel.perf_event_paranoid=1`",
					 n, paranoid);
		if (pid > 0)
			return hwc__fail(err,
					 "cannot open '%s' on pid %d: permission denied (ptrace access "
					 "to the process is needed; see /proc/sys/kernel/yama/ptrace_scope)",
					 n, (int)pid);
		return hwc__fail(err, "cannot open '%s': permission denied (perf_event_paranoid is %d)",
				 n, paranoid);
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (hwc__is_core_hw(a) && !hwc__core_pmu(NULL))
			return hwc__fail(err,
					 "'%s' is not supported on this machine: the kernel exposes no "
					 "hardware PMU (no core PMU in %s/bus/event_source/devices), as on "
					 "virtual machines without PMU pass-through; software events still work",
					 n, hwc__sysfs_root());
		if (-err == EOPNOTSUPP)
			return hwc__fail(err,
					 "'%s' is not supported on this machine: the PMU cannot do what "
					 "the event asks (exclude bits, precise, or sampling)",
					 n);
		if (a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE)
			return hwc__fail(err, "'%s' is not supported on this machine: its PMU (%s) "
					      "has no event that Linux counts as this one (type %u, "
					      "config %#llx%s); `hwc list` shows the events it has",
					 n, a->config >> 32 ? ev->pmu : hwc__core_pmu(NULL), a->type,
					 (unsigned long long)a->config,
					 a->config >> 32 ? ": the PMU's type in bits 63-32, perf's extended "
							   "type" : "");
		return hwc__fail(err, "'%s' is not supported on this machine: the kernel does not "
				      "know this event (type %u, config %#llx)",
				 n, a->type, (unsigned long long)a->config);
	case ESRCH:
		return hwc__fail(err, "cannot open '%s': no process or thread with id %d", n, (int)pid);
	case EINVAL:
		if (cpu >= 0) {
			int cpus[1];
			int ncpu = hwc_online_cpus(cpus, 0);
			long conf = sysconf(_SC_NPROCESSORS_CONF);
			if (cpu >= conf || ncpu <= 0)
				return hwc__fail(err, "cannot open '%s': CPU %d does not exist "
						      "(this machine has %ld CPUs)",
						 n, cpu, conf);
		}
		/* An uncore PMU (it has a cpumask: the CPUs that read it) counts
		 * a CPU's share of the machine, never a task's. */
		char mask_path[1024], mask[256];
		snprintf(mask_path, sizeof(mask_path), "%s/bus/event_source/devices/%s/cpumask",
			 hwc__sysfs_root(), ev->pmu);
		if (cpu < 0 && *ev->pmu && !strchr(ev->pmu, '/') &&
		    hwc__read_file(mask_path, mask, sizeof(mask)) == 0)
			return hwc__fail(err, "cannot open '%s': PMU '%s' counts per CPU (its cpumask "
					      "is %s), not per task: count system-wide, with -a or -C",
					 n, ev->pmu, mask);
		/* The core PMU's own events (armv8_pmuv3/inst_retired/, cpu/.../)
		 * are hardware events too. */
		uint32_t core_type = 0;
		bool core = hwc__is_core_hw(a) || (hwc__core_pmu(&core_type) && a->type == core_type);
		/* msr, power and uncore PMUs count everything or nothing.  The
		 * exclude bits are the user's, or the user-only fallback's. */
		if (ev->source == HWC_SRC_PMU && !core &&
		    (a->exclude_user || a->exclude_kernel || a->exclude_hv)) {
			if (!ev->explicit_priv)
				return hwc__fail(err,
						 "cannot open '%s': perf_event_paranoid is %d, so this "
						 "user may count user space only, and PMU '%s' cannot "
						 "exclude the kernel; run as root or `sysctl "
						 "kernel.perf_event_paranoid=1`",
						 n, paranoid, ev->pmu);
			return hwc__fail(err,
					 "cannot open '%s': PMU '%s' rejected it; such PMUs usually "
					 "cannot exclude user, kernel or hypervisor counting: drop the "
					 "u/k/h modifiers",
					 n, ev->pmu);
		}
		if (!ev->leader && (a->pinned || a->exclusive))
			return hwc__fail(err, "cannot open '%s': only a group's leader may be %s; "
					      "drop its '%c' modifier or make it lead the group",
					 n, a->pinned ? "pinned (D)" : "exclusive (e)",
					 a->pinned ? 'D' : 'e');
		char fit[240] = "";
		struct hwc_cpu_info ci;
		/* The kernel refuses a member that would make its group larger
		 * than the PMU's counters: groups count all together or not at all. */
		if (!ev->leader && core && hwc_cpu_info(&ci) == 0 && ci.counters > 0)
			snprintf(fit, sizeof(fit), "; a group's hardware events must all fit the PMU's "
						   "counters at once, and it has %d general-purpose "
						   "and %d fixed ones (hwc info): split the group, or "
						   "make it weak, {...}:W, to count its events apart",
				 ci.counters, ci.fixed);
		else if (!ev->leader)
			snprintf(fit, sizeof(fit), "; a group may not fit the PMU's counters: split "
						   "it, or make it weak, {...}:W, to count its events "
						   "apart");
		return hwc__fail(err,
				 "cannot open '%s': the kernel rejected its attributes (type %u, "
				 "config %#llx%s)",
				 n, a->type, (unsigned long long)a->config, fit);
	case EMFILE:
	case ENFILE:
		return hwc__fail(err, "cannot open '%s': too many open files; raise the limit "
				      "with `ulimit -n`",
				 n);
	case EBUSY:
		return hwc__fail(err, "cannot open '%s': the counter is in exclusive use by "
				      "another user (another tool, or the NMI watchdog)",
				 n);
	default:
		return hwc__fail(err, "cannot open '%s': %s", n, strerror(-err));
	}
}
