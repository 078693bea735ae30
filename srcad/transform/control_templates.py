"""The shapes of control flow and tapes in generated code, written as the code they make.

Each function is a template that :func:`srcad.transform.templates.fill` instantiates: a
parameter standing alone as a statement (``body``) is a list of statements spliced in, any
other parameter an expression (a ``str`` is a name), and the builtins and runtime helpers
they call are bound in the generated function's globals. A template of one ``return`` is
an expression. srcad/transform/reverse_control.py says when each is used (reverse.py uses
the recording of overwritten values, forward.py the tapes'); templates are parsed, never
run.
"""

# (a parameter standing alone, B018 to ruff, is where its statements go; a loop's target
# and a flag are names the code generated reads, B007 and F841)
# ruff: noqa: B018, B007, F841

from srcad.runtime.inplace import restore, saved

# ---- the primal code: loops that count the turns they ran


def counting_for(target, iterable, body, counter):
    for target in iterable:
        counter = counter + 1
        body


def counting_while(test, body, counter):
    while test:
        body
        counter = counter + 1


# ---- the backward code: branches and loops reversed


def same_branch(test, body, orelse):
    if test:
        body
    else:
        orelse


def undone_for(target, turns, body):
    for target in reversed(turns):
        body


def undone_while(index, trips, body):
    for index in range(trips):
        body


def not_stopped(flag):
    flag = False


# ---- the turns of a range that ran (a loop that stopped on a flag): range(start, stop, step)
# cut to its first ``count`` turns


def first_turns(count):
    return range(count)


def first_turns_from(start, count):
    return range(start, start + count)


def first_turns_by(start, count, step):
    return range(start, start + count * step, step)


# ---- tapes of generated code differentiated again: each push pairs with a pop


def push(tape, value):
    tape.push(value)


def pop(tape):
    tape.pop()


def pop_into(name, tape):
    name = tape.pop()


def popped(tape):
    return tape.pop()


# ---- values a loop or branch overwrites that the backward code reads: pushed before the
# assignment (push above), popped back just after its adjoint (pop_into above); an array
# updated in place saves only the part the update overwrites, and puts it back


def push_saved(tape, array, index):
    tape.push(saved(array, index))


def restore_popped(tape, array, index):
    restore(array, index, tape.pop())
