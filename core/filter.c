// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "filter.h"
#include "layout.h"

#define MAX_COMPARISONS 64
#define MAX_DEPTH 16
#define MAX_LENGTH 512
#define MAX_NODES (2 * MAX_COMPARISONS + MAX_LENGTH)
#define MAX_STRING 256		/* the kernel's MAX_FILTER_STR_VAL */
#define MAX_NUMBER 24		/* the kernel's num_buf */

enum op { OP_GLOB, OP_NE, OP_EQ, OP_LE, OP_LT, OP_GE, OP_GT, OP_BAND };
static const char *const op_text[] = { "~", "!=", "==", "<=", "<", ">=", ">", "&" };

enum pred_kind { PRED_NUMBER, PRED_CPU, PRED_STATIC_STRING, PRED_DYN_STRING, PRED_REL_STRING };
enum match { MATCH_FULL, MATCH_FRONT, MATCH_MIDDLE, MATCH_END, MATCH_GLOB };

struct pred {
	uint8_t kind;
	uint8_t op;
	uint8_t match;
	bool invert;		/* != on numbers and strings, a "!" glob */
	bool is_signed;
	unsigned int offset, size;
	uint64_t value;
	unsigned int pattern_len;
	unsigned int pattern;	/* offset into the program's text */
};

enum node_kind { NODE_PRED, NODE_NOT, NODE_AND, NODE_OR };

struct node {
	uint8_t kind;
	uint16_t left, right;	/* NODE_PRED: left is the predicate */
};

struct program {
	unsigned int type;
	unsigned int root;
	struct node *nodes;
	struct pred *preds;
	char *text;
};

struct rt_filter {
	bool big_endian;
	size_t n;
	struct program programs[];	/* by type */
};

struct parser {
	const char *start, *p;
	struct tep_event *event;
	struct rt_why *why;
	unsigned int depth;
	unsigned int n_nodes, n_preds, text_len;
	struct node nodes[MAX_NODES];
	struct pred preds[MAX_COMPARISONS];
	char text[MAX_LENGTH + MAX_COMPARISONS];
};

static int error(struct parser *ps, const char *what)
{
	return rt_why_set(ps->why, -EINVAL, "%s:%s: %s at '%.20s'", ps->event->system,
			  ps->event->name, what, *ps->p ? ps->p : "(end)");
}

/* The kernel's isspace() and isalnum() on ASCII: bytes above 0x7f are refused first. */
static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void skip_space(struct parser *ps)
{
	while (is_space(*ps->p))
		ps->p++;
}

static int add_node(struct parser *ps, enum node_kind kind, unsigned int left,
		    unsigned int right)
{
	if (ps->n_nodes == MAX_NODES)
		return error(ps, "too complex");
	ps->nodes[ps->n_nodes] = (struct node){ .kind = kind, .left = left, .right = right };
	return (int)ps->n_nodes++;
}

/* The value of a digit in base 16 or less, or 16 for none. */
static unsigned int digit_value(char c)
{
	if (is_digit(c))
		return (unsigned int)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned int)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (unsigned int)(c - 'A' + 10);
	return 16;
}

/* kstrtoull(s, 0): 0x hex, leading 0 octal, else decimal; all of s; no overflow. */
static int parse_unsigned(const char *s, uint64_t *out)
{
	unsigned int base = 10, d;
	uint64_t v = 0;
	const char *digits;

	if (s[0] == '0') {
		base = 8;
		if ((s[1] == 'x' || s[1] == 'X') && digit_value(s[2]) < 16) {
			base = 16;
			s += 2;
		}
	}
	for (digits = s; (d = digit_value(*s)) < base; s++) {
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (s == digits || *s)
		return -EINVAL;
	*out = v;
	return 0;
}

/* kstrtoll(s, 0) for signed fields, kstrtoull(s, 0) for the others. */
static int parse_number(const char *s, bool is_signed, uint64_t *out)
{
	uint64_t v;
	int ret;

	if (!is_signed)
		return parse_unsigned(s, out);
	if (s[0] == '-') {
		ret = parse_unsigned(s + 1, &v);
		if (!ret && (int64_t)(0 - v) > 0)
			ret = -ERANGE;
		*out = 0 - v;
		return ret;
	}
	ret = parse_unsigned(s, &v);
	if (!ret && (int64_t)v < 0)
		ret = -ERANGE;
	*out = v;
	return ret;
}

enum field_class { FIELD_NUMBER, FIELD_CPU, FIELD_COMM, FIELD_STATIC_STRING, FIELD_DYN_STRING,
		   FIELD_REL_STRING, FIELD_CHAR_POINTER };

/* The kernel's filter_assign_type(), from the type text tep keeps as the kernel wrote it. */
static enum field_class field_class(const struct tep_format_field *f)
{
	bool is_char = strstr(f->type, "char") != NULL;

	if (strstr(f->type, "__data_loc") && is_char)
		return FIELD_DYN_STRING;
	if (strstr(f->type, "__rel_loc") && is_char)
		return FIELD_REL_STRING;
	if (strchr(f->type, '[') && is_char)
		return FIELD_STATIC_STRING;
	if (!strcmp(f->type, "char *") || !strcmp(f->type, "const char *"))
		return FIELD_CHAR_POINTER;
	return FIELD_NUMBER;
}

static const struct tep_format_field *find_in(const struct tep_format_field *f, const char *name)
{
	for (; f; f = f->next)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

/* The kernel's order: the event's fields, its generic fields, the common fields. */
static int find_field(struct parser *ps, const char *name, const struct tep_format_field **field,
		      enum field_class *class)
{
	*field = find_in(ps->event->format.fields, name);
	if (!*field) {
		if (!strcmp(name, "CPU") || !strcmp(name, "cpu") || !strcmp(name, "common_cpu")) {
			*class = FIELD_CPU;
			return 0;
		}
		if (!strcmp(name, "COMM") || !strcmp(name, "comm")) {
			*class = FIELD_COMM;
			return 0;
		}
		*field = find_in(ps->event->format.common_fields, name);
	}
	if (!*field)
		return rt_why_set(ps->why, -EINVAL, "%s:%s has no field '%s'", ps->event->system,
				  ps->event->name, name);
	*class = field_class(*field);
	return 0;
}

/* What "~" does to its pattern (the kernel's filter_parse_regex()). */
static void parse_glob(struct parser *ps, struct pred *pr)
{
	char *pattern = ps->text + pr->pattern;
	unsigned int len = pr->pattern_len;

	pr->match = MATCH_FULL;
	pr->invert = pattern[0] == '!';
	if (pr->invert) {
		pattern++;
		len--;
	}
	if (is_digit(pattern[0]))
		goto done;
	for (unsigned int i = 0; i < len; i++) {
		if (pattern[i] == '*') {
			if (i == 0) {
				pr->match = MATCH_END;
			} else if (i == len - 1) {
				pr->match = pr->match == MATCH_END ? MATCH_MIDDLE : MATCH_FRONT;
				pattern[i] = '\0';
				break;
			} else {
				pr->match = MATCH_GLOB;
				goto done;
			}
		} else if (pattern[i] == '[' || pattern[i] == '?' || pattern[i] == '\\') {
			pr->match = MATCH_GLOB;
			goto done;
		}
	}
	if (pattern[0] == '*')
		pattern++;
done:
	pr->pattern = (unsigned int)(pattern - ps->text);
	pr->pattern_len = (unsigned int)strlen(pattern);
}

static int parse_string(struct parser *ps, struct pred *pr, enum field_class class,
			const struct tep_format_field *field)
{
	char quote = *ps->p++;
	const char *s = ps->p;
	size_t len;

	if (pr->op != OP_EQ && pr->op != OP_NE && pr->op != OP_GLOB)
		return error(ps, "a string takes ==, != or ~ only");
	if (class == FIELD_COMM)
		return error(ps, "COMM is the running task's name, which a record does not carry");
	if (class == FIELD_CHAR_POINTER)
		return error(ps, "a char pointer's string is not in the record");
	if (class == FIELD_NUMBER || class == FIELD_CPU)
		return error(ps, "a number field compares with a number");
	while (*ps->p && *ps->p != quote)
		ps->p++;
	if (!*ps->p)
		return error(ps, "missing the closing quote");
	len = (size_t)(ps->p - s);
	ps->p++;
	if (len >= MAX_STRING)
		return error(ps, "a string of 256 characters or more");
	pr->kind = class == FIELD_STATIC_STRING ? PRED_STATIC_STRING :
		   class == FIELD_DYN_STRING ? PRED_DYN_STRING : PRED_REL_STRING;
	pr->offset = (unsigned int)field->offset;
	pr->size = (unsigned int)field->size;
	pr->invert = pr->op == OP_NE;
	pr->match = MATCH_FULL;
	pr->pattern = ps->text_len;
	pr->pattern_len = (unsigned int)len;
	memcpy(ps->text + ps->text_len, s, len);
	ps->text[ps->text_len + len] = '\0';
	ps->text_len += (unsigned int)len + 1;
	if (pr->op == OP_GLOB)
		parse_glob(ps, pr);
	return 0;
}

static int parse_numeric(struct parser *ps, struct pred *pr, enum field_class class,
			 const struct tep_format_field *field)
{
	char number[MAX_NUMBER];
	const char *s = ps->p;
	size_t len;

	if (class != FIELD_NUMBER && class != FIELD_CPU)
		return error(ps, "a string field compares with a quoted string");
	if (pr->op == OP_GLOB)
		return error(ps, "~ takes a string field");
	if (*ps->p == '-')
		ps->p++;
	while (is_alnum(*ps->p))
		ps->p++;
	len = (size_t)(ps->p - s);
	if (len >= sizeof(number))
		return error(ps, "a number of 24 characters or more");
	memcpy(number, s, len);
	number[len] = '\0';
	pr->is_signed = class == FIELD_CPU || (field->flags & TEP_FIELD_IS_SIGNED);
	if (parse_number(number, pr->is_signed, &pr->value)) {
		ps->p = s;
		return error(ps, pr->is_signed ? "not a number" :
				 "not a number (the field is unsigned)");
	}
	if (class == FIELD_CPU) {
		pr->kind = PRED_CPU;
		return 0;
	}
	if (field->size != 1 && field->size != 2 && field->size != 4 && field->size != 8)
		return error(ps, "the kernel compares numbers of 1, 2, 4 or 8 bytes only");
	if (field->flags & TEP_FIELD_IS_DYNAMIC)
		return error(ps, "a dynamic array compares as its location, not its contents");
	pr->kind = PRED_NUMBER;
	pr->offset = (unsigned int)field->offset;
	pr->size = (unsigned int)field->size;
	pr->invert = pr->op == OP_NE;
	return 0;
}

static int parse_comparison(struct parser *ps)
{
	const struct tep_format_field *field = NULL;
	enum field_class class = FIELD_NUMBER;
	char name[64];
	const char *s;
	struct pred *pr;
	size_t len;
	int ret;

	skip_space(ps);
	s = ps->p;
	while (is_alnum(*ps->p) || *ps->p == '_')
		ps->p++;
	len = (size_t)(ps->p - s);
	if (!len)
		return error(ps, "expected a field name");
	if (len >= sizeof(name))
		return error(ps, "field name too long");
	memcpy(name, s, len);
	name[len] = '\0';
	ret = find_field(ps, name, &field, &class);
	if (ret)
		return ret;
	if (*ps->p == '.')
		return error(ps, "'.ustring' reads user memory, which a record does not carry");
	if (ps->n_preds == MAX_COMPARISONS)
		return error(ps, "more than 64 comparisons");
	pr = &ps->preds[ps->n_preds];
	*pr = (struct pred){ 0 };
	skip_space(ps);
	for (pr->op = 0; pr->op < sizeof(op_text) / sizeof(op_text[0]); pr->op++)
		if (!strncmp(ps->p, op_text[pr->op], strlen(op_text[pr->op])))
			break;
	if (pr->op == sizeof(op_text) / sizeof(op_text[0]))
		return error(ps, "expected an operator");
	ps->p += strlen(op_text[pr->op]);
	skip_space(ps);
	if (*ps->p == '"' || *ps->p == '\'')
		ret = parse_string(ps, pr, class, field);
	else if (is_digit(*ps->p) || *ps->p == '-')
		ret = parse_numeric(ps, pr, class, field);
	else
		ret = error(ps, "expected a number or a quoted string");
	if (ret)
		return ret;
	return add_node(ps, NODE_PRED, ps->n_preds++, 0);
}

static int parse_or(struct parser *ps);

static int parse_unary(struct parser *ps)
{
	int ret;

	skip_space(ps);
	if (++ps->depth > MAX_DEPTH)
		return error(ps, "nested too deep");
	if (ps->p[0] == '!' && ps->p[1] != '=' && ps->p[1] != '~') {
		ps->p++;
		ret = parse_unary(ps);
		if (ret >= 0)
			ret = add_node(ps, NODE_NOT, (unsigned int)ret, 0);
	} else if (*ps->p == '(') {
		ps->p++;
		ret = parse_or(ps);
		skip_space(ps);
		if (ret >= 0 && *ps->p++ != ')') {
			ps->p--;
			ret = error(ps, "expected ')'");
		}
	} else {
		ret = parse_comparison(ps);
	}
	ps->depth--;
	return ret;
}

static bool take(struct parser *ps, const char *two)
{
	skip_space(ps);
	if (ps->p[0] != two[0] || ps->p[1] != two[1])
		return false;
	ps->p += 2;
	return true;
}

static int parse_and(struct parser *ps)
{
	int left = parse_unary(ps), right;

	while (left >= 0 && take(ps, "&&")) {
		right = parse_unary(ps);
		left = right < 0 ? right : add_node(ps, NODE_AND, (unsigned int)left,
						    (unsigned int)right);
	}
	return left;
}

static int parse_or(struct parser *ps)
{
	int left = parse_and(ps), right;

	while (left >= 0 && take(ps, "||")) {
		right = parse_and(ps);
		left = right < 0 ? right : add_node(ps, NODE_OR, (unsigned int)left,
						    (unsigned int)right);
	}
	return left;
}

/* Parses @expr against @ev into @prog, in one allocation (prog->nodes). */
static int compile_one(struct parser *ps, const char *expr, struct tep_event *ev,
		       struct program *prog)
{
	size_t nodes_size, preds_size;
	int root;
	char *block;

	ps->start = ps->p = expr;
	ps->event = ev;
	ps->depth = ps->n_nodes = ps->n_preds = ps->text_len = 0;
	if (strlen(expr) > MAX_LENGTH)
		return error(ps, "longer than 512 characters");
	for (const char *c = expr; *c; c++)
		if ((unsigned char)*c > 0x7e) {
			ps->p = c;
			return error(ps, "only ASCII is accepted");
		}
	root = parse_or(ps);
	if (root < 0)
		return root;
	skip_space(ps);
	if (*ps->p)
		return error(ps, *ps->p == ')' ? "unmatched ')'" : "expected && or ||");
	nodes_size = ps->n_nodes * sizeof(struct node);
	nodes_size = (nodes_size + 7) & ~(size_t)7;
	preds_size = ps->n_preds * sizeof(struct pred);
	block = malloc(nodes_size + preds_size + ps->text_len + 1);
	if (!block)
		return -ENOMEM;
	prog->type = (unsigned int)ev->id;
	prog->root = (unsigned int)root;
	prog->nodes = (struct node *)block;
	prog->preds = (struct pred *)(block + nodes_size);
	prog->text = block + nodes_size + preds_size;
	memcpy(prog->nodes, ps->nodes, ps->n_nodes * sizeof(struct node));
	memcpy(prog->preds, ps->preds, preds_size);
	memcpy(prog->text, ps->text, ps->text_len);
	prog->text[ps->text_len] = '\0';
	return 0;
}

static int by_type(const void *a, const void *b)
{
	const struct program *x = a, *y = b;

	return (x->type > y->type) - (x->type < y->type);
}

void rt_filter_free(struct rt_filter *filter)
{
	if (!filter)
		return;
	for (size_t i = 0; i < filter->n; i++)
		free(filter->programs[i].nodes);
	free(filter);
}

int rt_filter_compile(const char *expr, struct tep_event *const *events, size_t n_events,
		      struct rt_filter **out, struct rt_why *why)
{
	struct parser *ps = malloc(sizeof(*ps));
	struct rt_filter *f;
	int ret = 0;

	*out = NULL;
	f = calloc(1, sizeof(*f) + n_events * sizeof(f->programs[0]));
	if (!ps || !f) {
		free(ps);
		free(f);
		return -ENOMEM;
	}
	ps->why = why;
	for (size_t i = 0; i < n_events && !ret; i++) {
		ret = compile_one(ps, expr, events[i], &f->programs[i]);
		if (!ret)
			f->n++;
	}
	free(ps);
	if (ret) {
		rt_filter_free(f);
		return ret;
	}
	f->big_endian = n_events && tep_is_file_bigendian(events[0]->tep);
	qsort(f->programs, f->n, sizeof(f->programs[0]), by_type);
	*out = f;
	return 0;
}

int rt_filter_check(const char *expr, struct tep_event *event, struct rt_why *why)
{
	struct rt_filter *f;
	int ret = rt_filter_compile(expr, &event, 1, &f, why);

	rt_filter_free(f);
	return ret;
}

/* Evaluation: the kernel's predicates, each read bounded by the record's end. */

struct input {
	const uint8_t *data;
	size_t len;
	unsigned int cpu;
	bool big_endian;
};

static bool read_number(const struct input *in, unsigned int offset, unsigned int size,
			uint64_t *value)
{
	uint64_t v = 0;

	if (offset > in->len || size > in->len - offset)
		return false;
	for (unsigned int i = 0; i < size; i++) {
		unsigned int at = in->big_endian ? i : size - 1 - i;

		v = v << 8 | in->data[offset + at];
	}
	*value = v;
	return true;
}

static int64_t sign_extend(uint64_t v, unsigned int size)
{
	unsigned int shift = 64 - 8 * size;

	return (int64_t)(v << shift) >> shift;
}

static bool match_number(const struct pred *pr, const struct input *in)
{
	uint64_t mask = pr->size == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * pr->size)) - 1;
	uint64_t field, value = pr->value & mask;
	int64_t sfield, svalue;

	if (!read_number(in, pr->offset, pr->size, &field))
		return false;
	switch (pr->op) {
	case OP_EQ:
	case OP_NE:
		return (field == value) != pr->invert;
	case OP_BAND:
		return (field & value) != 0;
	default:
		break;
	}
	if (!pr->is_signed) {
		switch (pr->op) {
		case OP_LT: return field < value;
		case OP_LE: return field <= value;
		case OP_GT: return field > value;
		default: return field >= value;
		}
	}
	sfield = sign_extend(field, pr->size);
	svalue = sign_extend(value, pr->size);
	switch (pr->op) {
	case OP_LT: return sfield < svalue;
	case OP_LE: return sfield <= svalue;
	case OP_GT: return sfield > svalue;
	default: return sfield >= svalue;
	}
}

static bool match_cpu(const struct pred *pr, const struct input *in)
{
	int cpu = (int)in->cpu, value = (int)(uint32_t)pr->value;

	switch (pr->op) {
	case OP_EQ: return cpu == value;
	case OP_NE: return cpu != value;
	case OP_LT: return cpu < value;
	case OP_LE: return cpu <= value;
	case OP_GT: return cpu > value;
	case OP_GE: return cpu >= value;
	default: return false;	/* "&": the kernel's CPU predicate has none */
	}
}

/* strncmp() on a string that ends at @avail bytes if no NUL comes first. */
static int bounded_strncmp(const char *s, size_t avail, const char *pattern, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char a = i < avail ? (unsigned char)s[i] : 0, b = (unsigned char)pattern[i];

		if (a != b)
			return a - b;
		if (!a)
			return 0;
	}
	return 0;
}

/*
 * glob(7) as the kernel's glob_match_len(): the string ends at @len or at a
 * NUL. One "*" is enough to backtrack to: later text can only move forward.
 */
static bool glob(const char *pat, const char *str, size_t len)
{
	const char *star = NULL;
	size_t at = 0, star_at = 0;

	for (;;) {
		unsigned char c = at < len ? (unsigned char)str[at] : 0;
		unsigned char d = (unsigned char)*pat++;
		bool ok;

		at++;
		if (d == '?') {
			ok = c != 0;
		} else if (d == '*') {
			if (!*pat)
				return true;
			star = pat;
			star_at = --at;
			continue;
		} else if (d == '[') {
			const char *cls = pat + (*pat == '!');
			bool hit = false, literal = false;
			unsigned char lo = (unsigned char)*cls++, hi;

			do {
				hi = lo;
				if (!lo) {
					literal = true;
					break;
				}
				if (cls[0] == '-' && cls[1] != ']') {
					hi = (unsigned char)cls[1];
					if (!hi) {
						literal = true;
						break;
					}
					cls += 2;
				}
				hit |= lo <= c && c <= hi;
			} while ((lo = (unsigned char)*cls++) != ']');
			if (literal) {
				ok = c == '[';
			} else {
				ok = hit != (*pat == '!');
				if (ok)
					pat = cls;
			}
		} else {
			if (d == '\\')
				d = (unsigned char)*pat++;
			if (c == d && !d)
				return true;
			ok = c == d;
		}
		if (ok)
			continue;
		if (!c || !star)
			return false;
		pat = star;
		at = ++star_at;
	}
}

static bool match_string(const struct pred *pr, const struct input *in, const char *text)
{
	const char *pattern = text + pr->pattern;
	int plen = (int)pr->pattern_len, len;
	const char *str;
	size_t avail;
	uint64_t loc;
	bool hit;

	if (pr->kind == PRED_STATIC_STRING) {
		if (pr->offset > in->len || pr->size > in->len - pr->offset)
			return false;
		str = (const char *)in->data + pr->offset;
		len = (int)pr->size;
	} else {
		uint32_t start, n;

		if (!read_number(in, pr->offset, 4, &loc) ||
		    !rt_data_loc((uint32_t)loc, pr->offset, pr->kind == PRED_REL_STRING, in->len,
				 &start, &n))
			return false;
		str = (const char *)in->data + start;
		len = (int)n;
	}
	avail = in->len - (size_t)((const uint8_t *)str - in->data);
	switch (pr->match) {
	case MATCH_FULL:
		if (!len)
			hit = !bounded_strncmp(str, avail, pattern, (size_t)plen + 1);
		else
			hit = len >= plen && !bounded_strncmp(str, avail, pattern, (size_t)len);
		break;
	case MATCH_FRONT:
		hit = !(len && len < plen) && !bounded_strncmp(str, avail, pattern, (size_t)plen);
		break;
	case MATCH_MIDDLE:
		if (!len)
			hit = !plen || memmem(str, strnlen(str, avail), pattern, (size_t)plen);
		else
			hit = !plen || memmem(str, (size_t)len, pattern, (size_t)plen);
		break;
	case MATCH_END:
		hit = len - 1 >= plen && !memcmp(str + len - 1 - plen, pattern, (size_t)plen);
		break;
	default:
		hit = glob(pattern, str, (size_t)len);
		break;
	}
	return hit != pr->invert;
}

static bool eval(const struct program *prog, unsigned int i, const struct input *in)
{
	const struct node *n = &prog->nodes[i];
	const struct pred *pr;

	switch (n->kind) {
	case NODE_NOT:
		return !eval(prog, n->left, in);
	case NODE_AND:
		return eval(prog, n->left, in) && eval(prog, n->right, in);
	case NODE_OR:
		return eval(prog, n->left, in) || eval(prog, n->right, in);
	default:
		break;
	}
	pr = &prog->preds[n->left];
	switch (pr->kind) {
	case PRED_NUMBER:
		return match_number(pr, in);
	case PRED_CPU:
		return match_cpu(pr, in);
	default:
		return match_string(pr, in, prog->text);
	}
}

bool rt_filter_match(const struct rt_filter *filter, unsigned int type, const uint8_t *data,
		     size_t len, unsigned int cpu)
{
	struct input in = { .data = data, .len = len, .cpu = cpu,
			    .big_endian = filter->big_endian };
	size_t lo = 0, hi = filter->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct program *p = &filter->programs[mid];

		if (p->type == type)
			return eval(p, p->root, &in);
		if (p->type < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return true;
}
