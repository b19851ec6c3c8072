/* PROCEXEC as FreeBSD 14 writes it, read through pmclog_read() alone:
 * pl_dynaddr is the load bias of a PIE executable and pl_baseaddr the
 * program interpreter's, so that a reader places a PIE program's samples
 * in its own functions (pc - pl_dynaddr against the ELF's symbols), as
 * FreeBSD's pmcstat does; MAP_IN's pl_start is what pmcstat subtracts the
 * text address from. */
#include "pmc_test.h"

#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

struct sym {
	char name[64];
	uint64_t lo, hi;
};

/* The function symbols of the ELF file PATH (64-bit), into OUT (up to MAX). */
static int functions(const char *path, struct sym *out, int max)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	Elf64_Ehdr eh;
	int n = 0;
	if (fread(&eh, sizeof(eh), 1, f) != 1 || eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	for (int i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, strsh;
		fseek(f, (long)(eh.e_shoff + (uint64_t)i * sizeof(sh)), SEEK_SET);
		if (fread(&sh, sizeof(sh), 1, f) != 1 || sh.sh_type != SHT_SYMTAB)
			continue;
		fseek(f, (long)(eh.e_shoff + (uint64_t)sh.sh_link * sizeof(strsh)), SEEK_SET);
		if (fread(&strsh, sizeof(strsh), 1, f) != 1)
			break;
		for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym) && n < max; k++) {
			Elf64_Sym s;
			fseek(f, (long)(sh.sh_offset + k * sizeof(s)), SEEK_SET);
			if (fread(&s, sizeof(s), 1, f) != 1)
				break;
			if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || !s.st_value || !s.st_size)
				continue;
			fseek(f, (long)(strsh.sh_offset + s.st_name), SEEK_SET);
			if (!fgets(out[n].name, sizeof(out[n].name), f))
				continue;
			out[n].name[strcspn(out[n].name, "\n")] = '\0';
			out[n].lo = s.st_value;
			out[n].hi = s.st_value + s.st_size;
			n++;
		}
	}
out:
	fclose(f);
	return n;
}

static bool is_pie(const char *path)
{
	FILE *f = fopen(path, "rb");
	Elf64_Ehdr eh;
	bool pie = f && fread(&eh, sizeof(eh), 1, f) == 1 && eh.e_type == ET_DYN;
	if (f)
		fclose(f);
	return pie;
}

/* The samples of a PIE program land in its own functions. */
static void test_samples_resolve(void)
{
	char *cmd[] = {workload("hotspots"), "10", NULL};
	if (!is_pie(cmd[0])) {
		SKIP_SUB("%s is not a PIE executable", cmd[0]);
		return;
	}
	struct sym syms[512];
	int nsyms = functions(cmd[0], syms, 512);
	CHECK_INT(nsyms, >, 3);
	FILE *log = tmpfile();
	CHECK_INT(pmc_configure_logfile(fileno(log)), ==, 0);
	pmc_id_t id = alloc_or_die("cpu-clock", PMC_MODE_TS, 0, PMC_CPU_ANY, 100000);
	pid_t child = run_attached(id, cmd);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	pmc_release(id);
	lseek(fileno(log), 0, SEEK_SET);
	void *parser = pmclog_open(fileno(log));
	struct pmclog_ev ev;
	bool exec_seen = false;
	uint64_t dynaddr = 0;
	int user = 0, in_hot = 0, execmaps = 0;
	while (pmclog_read(parser, &ev) == 0) {
		if (ev.pl_type == PMCLOG_TYPE_PROCEXEC && ev.pl_u.pl_x.pl_pid == child) {
			const struct pmclog_ev_procexec *x = &ev.pl_u.pl_x;
			CHECK_STR_CONTAINS(x->pl_pathname, "/hotspots");
			CHECK_U64(x->pl_dynaddr, !=, 0); /* a PIE is moved */
			CHECK_U64(x->pl_baseaddr, !=, 0); /* so is ld.so */
			CHECK_U64(x->pl_baseaddr, !=, x->pl_dynaddr);
			CHECK_U64(x->pl_dynaddr % 4096, ==, 0);
			exec_seen = true;
			dynaddr = x->pl_dynaddr;
		}
		/* The exec's maps are PROCEXEC's, as on FreeBSD. */
		if (exec_seen && ev.pl_type == PMCLOG_TYPE_MAP_IN && ev.pl_u.pl_mi.pl_pid == child &&
		    strstr(ev.pl_u.pl_mi.pl_pathname, "/hotspots"))
			execmaps++;
		if (!exec_seen || ev.pl_type != PMCLOG_TYPE_PCSAMPLE ||
		    ev.pl_u.pl_s.pl_pid != child || !ev.pl_u.pl_s.pl_usermode)
			continue;
		user++;
		uint64_t pc = ev.pl_u.pl_s.pl_pc - dynaddr;
		for (int i = 0; i < nsyms; i++)
			if (pc >= syms[i].lo && pc < syms[i].hi &&
			    (!strcmp(syms[i].name, "f1") || !strcmp(syms[i].name, "f2")))
				in_hot++;
	}
	CHECK_INT(ev.pl_state, ==, PMCLOG_EOF);
	CHECK(exec_seen);
	CHECK_INT(execmaps, ==, 0);
	CHECK_INT(user, >, 20);
	/* hotspots spends nearly all its time in f1 and f2. */
	CHECK_INT(in_hot, >=, user * 8 / 10);
	pmclog_close(parser);
	fclose(log);
}

/* Where /proc/PID/maps puts file offset 0 of the first map whose path
 * contains PART; 0 when none. */
static uint64_t base_in_maps(pid_t pid, const char *part)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	uint64_t base = 0;
	while (f && !base && fgets(line, sizeof(line), f)) {
		unsigned long long lo, off;
		if (strstr(line, part) && sscanf(line, "%llx-%*x %*s %llx", &lo, &off) == 2 && !off)
			base = lo;
	}
	if (f)
		fclose(f);
	return base;
}

/* pl_baseaddr is where the kernel put ld.so, pl_dynaddr the program. */
static void test_bases(void)
{
	char *cmd[] = {workload("sleeper"), "100000", NULL}; /* 1 ms each: killed first */
	if (!is_pie(cmd[0])) {
		SKIP_SUB("%s is not a PIE executable", cmd[0]);
		return;
	}
	FILE *log = tmpfile();
	CHECK_INT(pmc_configure_logfile(fileno(log)), ==, 0);
	pmc_id_t id = alloc_or_die("cpu-clock", PMC_MODE_TS, 0, PMC_CPU_ANY, 100000);
	struct waiting w = spawn(exec_argv, cmd);
	CHECK_INT(pmc_attach(id, w.pid), ==, 0);
	CHECK_INT(pmc_start(id), ==, 0);
	release(w);
	/* Once the program runs, ld.so has mapped libc: the exec is over. */
	uint64_t exe = 0, ld = 0;
	for (int i = 0; i < 3000 && !(exe && ld && base_in_maps(w.pid, "libc")); i++) {
		exe = base_in_maps(w.pid, "/sleeper");
		ld = base_in_maps(w.pid, "/ld-");
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	CHECK_U64(exe, !=, 0);
	CHECK_U64(ld, !=, 0);
	CHECK_INT(pmc_flush_logfile(), ==, 0);
	kill(w.pid, SIGKILL);
	reap(w.pid);
	lseek(fileno(log), 0, SEEK_SET);
	void *parser = pmclog_open(fileno(log));
	struct pmclog_ev ev;
	int execs = 0;
	while (pmclog_read(parser, &ev) == 0)
		if (ev.pl_type == PMCLOG_TYPE_PROCEXEC && ev.pl_u.pl_x.pl_pid == w.pid) {
			execs++;
			CHECK_U64(ev.pl_u.pl_x.pl_dynaddr, ==, exe);
			CHECK_U64(ev.pl_u.pl_x.pl_baseaddr, ==, ld);
		}
	CHECK_INT(execs, ==, 1);
	pmclog_close(parser);
	CHECK_INT(pmc_close_logfile(), ==, 0);
	pmc_release(id);
	fclose(log);
}

int main(void)
{
	init_or_die();
	RUN(test_samples_resolve);
	RUN(test_bases);
	return check_exit();
}
