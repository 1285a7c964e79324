// sigwake's mutation operators, as Coccinelle finds their sites: each rule prints
// one line per site, "SITE <operator> <function> <line> <col> <line> <col> [<text>]",
// the span to be changed (lines 1-based, columns 0-based, end exclusive).
// harness/sigwake/mutagen.py keeps the sites inside the path's functions and
// writes one mutant per change it makes there.

// A relational operator, swapped: the span is what lies between its operands.
@op_relational@
expression E1, E2;
binary operator b = {==, !=, <, <=, >, >=};
position p1, p2;
@@
E1@p1 b E2@p2

@script:python@
p1 << op_relational.p1;
p2 << op_relational.p2;
b << op_relational.b;
@@
print("SITE relational %s %s %s %s %s %s" % (p1[0].current_element, p1[0].line_end, p1[0].column_end,
      p2[0].line, p2[0].column, b.strip()))

// An if's condition, negated or dropped (always taken).
@op_condition@
expression E;
statement S1, S2;
position p;
@@
(
if (E@p) S1 else S2
|
if (E@p) S1
)

@script:python@
p << op_condition.p;
@@
print("SITE condition %s %s %s %s %s" % (p[0].current_element, p[0].line, p[0].column, p[0].line_end,
      p[0].column_end))

// One side of && or ||, dropped.
@op_logical@
expression E1, E2;
binary operator b = {&&, ||};
position p1, p2;
@@
E1@p1 b E2@p2

@script:python@
p1 << op_logical.p1;
p2 << op_logical.p2;
@@
print("SITE logical %s %s %s %s %s %s %s %s %s" % (p1[0].current_element, p1[0].line, p1[0].column,
      p1[0].line_end, p1[0].column_end, p2[0].line, p2[0].column, p2[0].line_end, p2[0].column_end))

// A statement that is a call or an assignment, deleted.
@op_statement@
expression E;
position p;
@@
E@p;

@script:python@
p << op_statement.p;
@@
print("SITE statement %s %s %s %s %s" % (p[0].current_element, p[0].line, p[0].column, p[0].line_end,
      p[0].column_end))

// A whole-number constant, off by one.
@op_bound@
constant C;
position p;
@@
C@p

@script:python@
p << op_bound.p;
c << op_bound.C;
@@
if c.isdigit():
    print("SITE bound %s %s %s %s %s" % (p[0].current_element, p[0].line, p[0].column, p[0].line_end,
          p[0].column_end))

// A constant of a family (si_code reasons, poll bits, pid types, owner kinds), swapped with a sibling.
@op_sibling@
identifier I = {POLL_IN, POLL_OUT, POLL_MSG, POLL_ERR, POLL_PRI, POLL_HUP, POLLIN, POLLOUT, POLLRDNORM, POLLHUP,
                POLLERR, POLLPRI, EPOLLIN, EPOLLOUT, EPOLLRDNORM, EPOLLHUP, EPOLLERR, PIDTYPE_PID, PIDTYPE_TGID,
                PIDTYPE_PGID, PIDTYPE_SID, F_OWNER_TID, F_OWNER_PID, F_OWNER_PGRP, SIGIO, SIGURG};
position p;
@@
I@p

@script:python@
p << op_sibling.p;
i << op_sibling.I;
@@
print("SITE sibling %s %s %s %s %s %s" % (p[0].current_element, p[0].line, p[0].column, p[0].line_end,
      p[0].column_end, i))

// A parent hop (an inherited event to the event it was inherited from), dropped.
@op_redirection@
expression E;
position p;
@@
E@p->parent

@script:python@
p << op_redirection.p;
@@
print("SITE redirection %s %s %s %s %s" % (p[0].current_element, p[0].line, p[0].column, p[0].line_end,
      p[0].column_end))
