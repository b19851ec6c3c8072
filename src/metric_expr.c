/* perf's metric expression language: a recursive-descent parser into a
 * tree, an evaluator, and the walk that finds the events an expression
 * needs (see metric_expr.h).  The semantics follow perf's expr.y: NaN for
 * unknown values and division by zero, "A if C else B" taking A whenever C
 * is not zero (NaN included), & | ^ with perf's constant short cuts. */
#include "metric_expr.h"

#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum op {
	N_NUM, N_ID, N_SOURCE_COUNT, N_HAS_EVENT, N_CPUID, N_LITERAL, N_NEG,
	N_OR, N_XOR, N_AND, N_LT, N_GT, N_ADD, N_SUB, N_MUL, N_DIV, N_MOD,
	N_MIN, N_MAX, N_D_RATIO, N_IF,
};

/* Bounds on the recursion of the parser and of the walks of the tree:
 * parentheses, function calls, unary minuses and else-ifs nested (perf's
 * metrics nest 8 deep), and the tree's depth, operators chained included
 * (theirs chain some 60). */
#define MAX_NESTING 64
#define MAX_DEPTH 256

struct node {
	enum op op;
	int depth;           /* of the tree under it, itself included */
	double num;          /* N_NUM */
	char *str;           /* identifiers and literals */
	struct node *a, *b;  /* operands; N_IF: a if b else c */
	struct node *c;
};

struct hwc__mexpr {
	struct node *root;
};

/* ------------------------------------------------------------ lexer */

enum tok {
	T_END, T_NUM, T_ID, T_LITERAL, T_IF, T_ELSE, T_MIN, T_MAX, T_D_RATIO,
	T_SOURCE_COUNT, T_HAS_EVENT, T_CPUID, T_CHAR,
};

static const struct {
	const char *word;
	enum tok tok;
} keywords[] = {
	{ "if", T_IF }, { "else", T_ELSE }, { "min", T_MIN }, { "max", T_MAX },
	{ "d_ratio", T_D_RATIO }, { "source_count", T_SOURCE_COUNT },
	{ "has_event", T_HAS_EVENT }, { "strcmp_cpuid_str", T_CPUID },
};

struct parser {
	const char *text, *p;
	int runtime;
	enum tok tok;
	char ch;          /* T_CHAR */
	double num;       /* T_NUM */
	char *str;        /* T_ID, T_LITERAL: owned until taken */
	const char *at;   /* where the token starts */
	int err;
	int nesting;      /* levels entered (enter()) and not left */
};

/* The parse error at the current token: WHAT, a printf format. */
static int fail_at(struct parser *ps, const char *what, ...) __attribute__((format(printf, 2, 3)));
static int fail_at(struct parser *ps, const char *what, ...)
{
	if (ps->err)
		return ps->err;
	char why[256];
	va_list ap;
	va_start(ap, what);
	vsnprintf(why, sizeof(why), what, ap);
	va_end(ap);
	/* A long text (perf's go past 1000 characters) cut to the part about
	 * the column, so that the detail keeps what is wrong. */
	size_t len = strlen(ps->text), col = (size_t)(ps->at - ps->text);
	size_t from = len > 160 && col > 40 ? col - 40 : 0;
	size_t n = len - from > 160 ? 120 : len - from;
	ps->err = hwc__fail(-EINVAL, "metric expression \"%s%.*s%s\": %s at column %zu",
			    from ? "..." : "", (int)n, ps->text + from, from + n < len ? "..." : "",
			    why, col + 1);
	return ps->err;
}

/* Going one level deeper (into primary(), or an else-if): false with the
 * error past MAX_NESTING. */
static bool enter(struct parser *ps)
{
	if (ps->nesting < MAX_NESTING) {
		ps->nesting++;
		return true;
	}
	fail_at(ps, "nested more than %d deep (parentheses, function calls, unary minuses, "
		    "else-ifs)", MAX_NESTING);
	return false;
}

static bool is_sym_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == ':' || c == '@' ||
	       c == '?';
}

/* Length of perf's number ([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)? at S. */
static size_t number_len(const char *s)
{
	size_t n = strspn(s, "0123456789");
	if (s[n] == '.') {
		size_t frac = strspn(s + n + 1, "0123456789");
		if (n || frac)
			n += 1 + frac;
	}
	if (!n)
		return 0;
	if (s[n] == 'e') {
		size_t m = n + 1 + (s[n + 1] == '-');
		size_t exp = strspn(s + m, "0123456789");
		if (exp)
			n = m + exp;
	}
	return n;
}

/* Length of an identifier at S: symbol characters and \-escapes. */
static size_t symbol_len(const char *s)
{
	size_t n = 0;
	for (;;) {
		if (s[n] == '\\' && s[n + 1])
			n += 2;
		else if (is_sym_char(s[n]))
			n++;
		else
			return n;
	}
}

/* The identifier S[0..N) with its escapes removed and each ? made RUNTIME. */
static char *identifier(const char *s, size_t n, int runtime)
{
	char rt[16];
	int rtlen = snprintf(rt, sizeof(rt), "%d", runtime);
	char *out = malloc(n * (size_t)rtlen + 1), *d = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\')
			*d++ = s[++i];
		else if (s[i] == '?')
			d = stpcpy(d, rt);
		else
			*d++ = s[i];
	}
	*d = 0;
	return out;
}

static int next(struct parser *ps)
{
	free(ps->str);
	ps->str = NULL;
	while (isspace((unsigned char)*ps->p))
		ps->p++;
	ps->at = ps->p;
	const char *s = ps->p;
	if (!*s) {
		ps->tok = T_END;
		return 0;
	}
	if (*s == '#') {
		size_t n = 1 + strspn(s + 1, "0123456789abcdefghijklmnopqrstuvwxyz"
					  "ABCDEFGHIJKLMNOPQRSTUVWXYZ_.-");
		if (n == 1)
			return fail_at(ps, "'#' without a literal's name");
		ps->str = strndup(s, n);
		if (!ps->str)
			return ps->err = hwc__fail(-ENOMEM, "out of memory");
		if (!hwc__mexpr_literal_known(ps->str))
			return fail_at(ps, "unknown literal");
		ps->tok = T_LITERAL;
		ps->p += n;
		return 0;
	}
	size_t num = number_len(s), sym = symbol_len(s);
	if (num && num >= sym) {
		char buf[64];
		if (num >= sizeof(buf))
			return fail_at(ps, "number too long");
		memcpy(buf, s, num);
		buf[num] = 0;
		errno = 0;
		ps->num = strtod(buf, NULL);
		if (errno)
			return fail_at(ps, "number out of range");
		ps->tok = T_NUM;
		ps->p += num;
		return 0;
	}
	if (sym) {
		ps->p += sym;
		for (size_t i = 0; i < HWC_ARRAY_SIZE(keywords); i++) {
			if (strlen(keywords[i].word) == sym && !memcmp(s, keywords[i].word, sym)) {
				ps->tok = keywords[i].tok;
				return 0;
			}
		}
		if (sym == 3 && !memcmp(s, "NaN", 3)) {
			ps->tok = T_NUM;
			ps->num = NAN;
			return 0;
		}
		ps->str = identifier(s, sym, ps->runtime);
		if (!ps->str)
			return ps->err = hwc__fail(-ENOMEM, "out of memory");
		ps->tok = T_ID;
		return 0;
	}
	if (strchr("|^&<>-+*/%(),", *s)) {
		ps->tok = T_CHAR;
		ps->ch = *s;
		ps->p++;
		return 0;
	}
	return fail_at(ps, "unexpected character");
}

/* ------------------------------------------------------------ parser */

static void node_free(struct node *n)
{
	if (!n)
		return;
	node_free(n->a);
	node_free(n->b);
	node_free(n->c);
	free(n->str);
	free(n);
}

static int depth_of(const struct node *n)
{
	return n ? n->depth : 0;
}

/* A node over A and B (and C), or NULL with the error set. */
static struct node *node_new3(struct parser *ps, enum op op, struct node *a, struct node *b,
			      struct node *c)
{
	int depth = 1 + (depth_of(a) > depth_of(b) ? depth_of(a) : depth_of(b));
	if (depth_of(c) >= depth)
		depth = depth_of(c) + 1;
	struct node *n = depth > MAX_DEPTH ? NULL : calloc(1, sizeof(*n));
	if (!n) {
		if (depth > MAX_DEPTH)
			fail_at(ps, "more than %d operators chained, or values nested", MAX_DEPTH);
		else
			ps->err = hwc__fail(-ENOMEM, "out of memory");
		node_free(a);
		node_free(b);
		node_free(c);
		return NULL;
	}
	*n = (struct node){ .op = op, .depth = depth, .a = a, .b = b, .c = c };
	return n;
}

static struct node *node_new(struct parser *ps, enum op op, struct node *a, struct node *b)
{
	return node_new3(ps, op, a, b, NULL);
}

static bool is_char(const struct parser *ps, char c)
{
	return ps->tok == T_CHAR && ps->ch == c;
}

static int expect_char(struct parser *ps, char c)
{
	if (!is_char(ps, c))
		return fail_at(ps, "expected '%c'", c);
	return next(ps);
}

static struct node *if_expr(struct parser *ps);
static struct node *binary(struct parser *ps, int level);
static struct node *primary(struct parser *ps);

/* NAME '(' ID ')': the functions of one event. */
static struct node *id_function(struct parser *ps, enum op op)
{
	if (next(ps) || expect_char(ps, '('))
		return NULL;
	if (ps->tok != T_ID) {
		fail_at(ps, "expected an event name");
		return NULL;
	}
	struct node *n = node_new(ps, op, NULL, NULL);
	if (!n)
		return NULL;
	n->str = ps->str;
	ps->str = NULL;
	if (next(ps) || expect_char(ps, ')')) {
		node_free(n);
		return NULL;
	}
	return n;
}

/* NAME '(' A ',' B ')' */
static struct node *two_args(struct parser *ps, enum op op)
{
	if (next(ps) || expect_char(ps, '('))
		return NULL;
	struct node *a = if_expr(ps), *b = NULL;
	if (!a)
		return NULL;
	if (expect_char(ps, ',') || !(b = if_expr(ps)) || expect_char(ps, ')')) {
		node_free(a);
		node_free(b);
		return NULL;
	}
	return node_new(ps, op, a, b);
}

static struct node *primary_in(struct parser *ps)
{
	struct node *n;
	switch (ps->tok) {
	case T_NUM:
		n = node_new(ps, N_NUM, NULL, NULL);
		if (n)
			n->num = ps->num;
		break;
	case T_ID:
	case T_LITERAL:
		n = node_new(ps, ps->tok == T_ID ? N_ID : N_LITERAL, NULL, NULL);
		if (n) {
			n->str = ps->str;
			ps->str = NULL;
		}
		break;
	case T_MIN:
		return two_args(ps, N_MIN);
	case T_MAX:
		return two_args(ps, N_MAX);
	case T_D_RATIO:
		return two_args(ps, N_D_RATIO);
	case T_SOURCE_COUNT:
		return id_function(ps, N_SOURCE_COUNT);
	case T_HAS_EVENT:
		return id_function(ps, N_HAS_EVENT);
	case T_CPUID:
		return id_function(ps, N_CPUID);
	case T_CHAR:
		if (ps->ch == '-') {
			if (next(ps))
				return NULL;
			struct node *a = primary(ps);
			return a ? node_new(ps, N_NEG, a, NULL) : NULL;
		}
		if (ps->ch == '(') {
			if (next(ps))
				return NULL;
			n = if_expr(ps);
			if (n && expect_char(ps, ')')) {
				node_free(n);
				return NULL;
			}
			return n;
		}
		fail_at(ps, "expected a value");
		return NULL;
	case T_END:
		fail_at(ps, "unexpected end");
		return NULL;
	default:
		fail_at(ps, "expected a value");
		return NULL;
	}
	if (n && next(ps)) {
		node_free(n);
		return NULL;
	}
	return n;
}

static struct node *primary(struct parser *ps)
{
	if (!enter(ps))
		return NULL;
	struct node *n = primary_in(ps);
	ps->nesting--;
	return n;
}

/* Binary operators, loosest first, all left-associative (perf's %left). */
static const struct {
	const char *chars;
	enum op ops[3];
} levels[] = {
	{ "|", { N_OR } },
	{ "^", { N_XOR } },
	{ "&", { N_AND } },
	{ "<>", { N_LT, N_GT } },
	{ "+-", { N_ADD, N_SUB } },
	{ "*/%", { N_MUL, N_DIV, N_MOD } },
};

static struct node *binary(struct parser *ps, int level)
{
	if (level == (int)HWC_ARRAY_SIZE(levels))
		return primary(ps);
	struct node *left = binary(ps, level + 1);
	while (left && ps->tok == T_CHAR && strchr(levels[level].chars, ps->ch)) {
		enum op op = levels[level].ops[strchr(levels[level].chars, ps->ch) - levels[level].chars];
		struct node *right = NULL;
		if (next(ps) || !(right = binary(ps, level + 1))) {
			node_free(left);
			return NULL;
		}
		left = node_new(ps, op, left, right);
	}
	return left;
}

/* A if COND else B, the else branch chaining further ifs. */
static struct node *if_expr(struct parser *ps)
{
	struct node *a = binary(ps, 0);
	if (!a || ps->tok != T_IF)
		return a;
	struct node *cond = NULL, *b = NULL;
	if (next(ps) || !(cond = binary(ps, 0))) {
		node_free(a);
		return NULL;
	}
	if (ps->tok != T_ELSE) {
		fail_at(ps, "expected 'else'");
		node_free(a);
		node_free(cond);
		return NULL;
	}
	if (!next(ps) && enter(ps)) {
		b = if_expr(ps);
		ps->nesting--;
	}
	if (!b) {
		node_free(a);
		node_free(cond);
		return NULL;
	}
	return node_new3(ps, N_IF, a, cond, b);
}

int hwc__mexpr_parse(const char *text, int runtime, struct hwc__mexpr **out)
{
	struct parser ps = { .text = text, .p = text, .at = text, .runtime = runtime };
	struct node *root = NULL;
	*out = NULL;
	if (!next(&ps) && (root = if_expr(&ps)) && ps.tok != T_END)
		fail_at(&ps, "unexpected text");
	free(ps.str);
	if (ps.err) {
		node_free(root);
		return ps.err;
	}
	struct hwc__mexpr *e = malloc(sizeof(*e));
	if (!e) {
		node_free(root);
		return hwc__fail(-ENOMEM, "out of memory");
	}
	e->root = root;
	*out = e;
	return 0;
}

void hwc__mexpr_free(struct hwc__mexpr *e)
{
	if (e) {
		node_free(e->root);
		free(e);
	}
}

/* ------------------------------------------------------------ literals */

bool hwc__mexpr_literal_known(const char *name)
{
	/* perf's expr__get_literal: two compare without case. */
	static const char *const exact[] = {
		"#num_cpus", "#num_cpus_online", "#core_wide", "#num_packages",
		"#num_dies", "#num_cores", "#slots", "#has_pmem",
	};
	for (size_t i = 0; i < HWC_ARRAY_SIZE(exact); i++)
		if (!strcmp(name, exact[i]))
			return true;
	return !strcasecmp(name, "#smt_on") || !strcasecmp(name, "#system_tsc_freq");
}

static double literal(const struct hwc__mexpr_env *env, const char *name, int *err)
{
	double v = env->literal ? env->literal(env->arg, name) : NAN;
	if (isnan(v) && !*err)
		*err = hwc__fail(-EINVAL, "the literal %s has no value on this machine", name);
	return v;
}

/* ------------------------------------------------------------ evaluation */

static bool is_zero(double v)
{
	return fpclassify(v) == FP_ZERO;
}

/* perf's & | ^ on values that may be unknown (not finite). */
static double logical(enum op op, double a, double b)
{
	bool ka = isfinite(a), kb = isfinite(b);
	if (ka && kb) {
		if (op == N_OR)
			return !(is_zero(a) && is_zero(b));
		if (op == N_AND)
			return !is_zero(a) && !is_zero(b);
		return is_zero(a) != is_zero(b);
	}
	if (op == N_XOR)
		return NAN;
	if (ka || kb) {
		double k = ka ? a : b, other = ka ? b : a;
		if (op == N_OR)
			return is_zero(k) ? other : 1;
		return is_zero(k) ? 0 : other;
	}
	return NAN;
}

static double arith(enum op op, double a, double b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	switch (op) {
	case N_LT: return a < b;
	case N_GT: return a > b;
	case N_ADD: return a + b;
	case N_SUB: return a - b;
	default: return a * b;
	}
}

/* perf's (long)A % (long)B, less its undefined cases: NaN when either is
 * unknown (NaN) or past long's range (infinity too), 0 for LONG_MIN % -1;
 * a divisor whose integer part is 0 (0.5 too, which perf's conversion
 * makes 0) is an error. */
static double modulo(double a, double b, int *err)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (b > -1 && b < 1) {
		if (!*err)
			*err = hwc__fail(-EINVAL, "metric expression: %% by zero (%g as an integer)", b);
		return NAN;
	}
	if (!(a >= -0x1p63 && a < 0x1p63 && b >= -0x1p63 && b < 0x1p63))
		return NAN;
	long x = (long)a, y = (long)b;
	return y == -1 ? 0 : (double)(x % y);
}

static double eval(const struct node *n, const struct hwc__mexpr_env *env, int *err)
{
	double a, b;
	switch (n->op) {
	case N_NUM:
		return n->num;
	case N_ID:
	case N_SOURCE_COUNT:
		return env->id_value ? env->id_value(env->arg, n->str, n->op == N_SOURCE_COUNT)
				     : NAN;
	case N_HAS_EVENT:
		return env->has_event ? env->has_event(env->arg, n->str) : 0;
	case N_CPUID:
		return env->cpuid_match ? env->cpuid_match(env->arg, n->str) : 0;
	case N_LITERAL:
		return literal(env, n->str, err);
	case N_NEG:
		return -eval(n->a, env, err);
	case N_IF:
		return is_zero(eval(n->b, env, err)) ? eval(n->c, env, err) : eval(n->a, env, err);
	default:
		break;
	}
	a = eval(n->a, env, err);
	b = eval(n->b, env, err);
	switch (n->op) {
	case N_OR:
	case N_AND:
	case N_XOR:
		return logical(n->op, a, b);
	case N_DIV:
		return is_zero(b) ? NAN : a / b;
	case N_MOD:
		return modulo(a, b, err);
	case N_D_RATIO:
		return is_zero(b) ? 0 : a / b;
	case N_MIN:
		return a < b ? a : b;
	case N_MAX:
		return a > b ? a : b;
	default:
		return arith(n->op, a, b);
	}
}

int hwc__mexpr_eval(const struct hwc__mexpr *e, const struct hwc__mexpr_env *env, double *out)
{
	int err = 0;
	*out = eval(e->root, env, &err);
	return err;
}

/* ------------------------------------------------------------ needed events */

/* The identifiers found so far; a discarded operand's are cut off the end. */
struct idlist {
	const char **id;
	size_t n, cap;
	int err;
};

static void id_push(struct idlist *l, const char *id)
{
	if (l->err)
		return;
	if (hwc__reserve(&l->id, &l->cap, l->n + 1, sizeof(*l->id))) {
		l->err = -ENOMEM;
		return;
	}
	l->id[l->n++] = id;
}

/* perf's compute_ids pass: a node's value when it is a constant, else NaN
 * ("any value": its identifiers are in L). */
static double collect(const struct node *n, const struct hwc__mexpr_env *env, struct idlist *l)
{
	size_t mark = l->n;
	double a, b, c;
	switch (n->op) {
	case N_NUM:
		return n->num;
	case N_ID:
	case N_SOURCE_COUNT:
		id_push(l, n->str);
		return NAN;
	case N_HAS_EVENT:
		return env->has_event ? env->has_event(env->arg, n->str) : 0;
	case N_CPUID:
		return env->cpuid_match ? env->cpuid_match(env->arg, n->str) : 0;
	case N_LITERAL:
		return literal(env, n->str, &l->err);
	case N_NEG:
		return -collect(n->a, env, l);
	case N_IF:
		c = collect(n->b, env, l);
		if (is_zero(c)) {
			l->n = mark;
			return collect(n->c, env, l);
		}
		if (isfinite(c)) {
			l->n = mark;
			return collect(n->a, env, l);
		}
		a = collect(n->a, env, l);
		b = collect(n->c, env, l);
		if (a == b) {    /* both the same constant: nothing needed */
			l->n = mark;
			return a;
		}
		return NAN;
	default:
		break;
	}
	a = collect(n->a, env, l);
	b = collect(n->b, env, l);
	bool ka = isfinite(a), kb = isfinite(b);
	switch (n->op) {
	case N_OR:
	case N_AND:
		if (ka && kb)
			return logical(n->op, a, b);
		if (ka || kb) {
			double k = ka ? a : b;
			if (is_zero(k) == (n->op == N_OR))
				return NAN; /* 0 | X and 1 & X are X */
			l->n = mark;
			return n->op == N_OR ? 1 : 0;
		}
		return NAN;
	case N_XOR:
		return ka && kb ? logical(n->op, a, b) : NAN;
	case N_DIV:
		if (is_zero(b)) {
			l->n = mark;
			return NAN;
		}
		return ka && kb ? a / b : NAN;
	case N_MOD: /* a constant divisor of integer part 0 is an error, whatever A is */
		if (kb && b > -1 && b < 1)
			return modulo(0, b, &l->err);
		return ka && kb ? modulo(a, b, &l->err) : NAN;
	case N_D_RATIO:
		if (is_zero(b)) {
			l->n = mark;
			return 0;
		}
		return ka && kb ? a / b : NAN;
	case N_MIN:
	case N_MAX:
		return NAN; /* perf asks for both operands' events even when constant */
	default:
		return ka && kb ? arith(n->op, a, b) : NAN;
	}
}

int hwc__mexpr_ids(const struct hwc__mexpr *e, const struct hwc__mexpr_env *env,
		   int (*add)(void *arg, const char *id), void *arg)
{
	struct idlist l = { 0 };
	collect(e->root, env, &l);
	int err = l.err == -ENOMEM ? hwc__fail(-ENOMEM, "out of memory") : l.err;
	for (size_t i = 0; !err && i < l.n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(l.id[i], l.id[j]);
		if (!seen)
			err = add(arg, l.id[i]);
	}
	free(l.id);
	return err;
}
