"""CUDA C for ``cupy.ElementwiseKernel`` from a scalar function's forward-mode code: one
kernel launch computes the value and every partial derivative of each element, running
only the branch each element takes."""

from __future__ import annotations

import ast
import copy
import re

from srcad.adjoints.registry import cuda_functions
from srcad.errors import UnsupportedConstructError

# the CUDA function of an op with a partials declaration is declared there
# (registry.partials(..., cuda=...)); these are the others': selections, rounding (no
# derivative), and math's names of NumPy's functions
_FUNCTIONS = {
    "asin": "asin", "acos": "acos", "atan": "atan", "atan2": "atan2", "abs": "fabs",
    "absolute": "fabs", "maximum": "fmax", "minimum": "fmin", "fmax": "fmax", "fmin": "fmin",
    "floor": "floor", "ceil": "ceil",
}  # fmt: skip
#: NumPy's other elementwise functions, as C expressions of their arguments
_TEMPLATES = {
    "acosh": "acosh({0})", "asinh": "asinh({0})", "atanh": "atanh({0})", "exp2": "exp2({0})",
    "trunc": "trunc({0})", "rint": "rint({0})", "reciprocal": "(1.0 / {0})",
    "negative": "(-{0})", "positive": "{0}", "conj": "{0}", "conjugate": "{0}",
    "deg2rad": "({0} * 0.017453292519943295)", "radians": "({0} * 0.017453292519943295)",
    "rad2deg": "({0} * 57.29577951308232)", "degrees": "({0} * 57.29577951308232)",
    "isnan": "isnan({0})", "isinf": "isinf({0})", "isfinite": "isfinite({0})",
    "signbit": "signbit({0})", "logical_not": "(!{0})",
    "logical_and": "({0} && {1})", "logical_or": "({0} || {1})",
    "logical_xor": "(!{0} != !{1})", "add": "({0} + {1})", "subtract": "({0} - {1})",
    "multiply": "({0} * {1})", "divide": "({0} / {1})", "true_divide": "({0} / {1})",
    "floor_divide": "srcad_floordiv({0}, {1})", "mod": "srcad_mod({0}, {1})",
    "remainder": "srcad_mod({0}, {1})", "equal": "({0} == {1})",
    "not_equal": "({0} != {1})",
    "greater": "({0} > {1})", "greater_equal": "({0} >= {1})", "less": "({0} < {1})",
    "less_equal": "({0} <= {1})",
    "logaddexp2": "(fmax({0}, {1}) + log2(1.0 + exp2(-fabs({0} - {1}))))",
}  # fmt: skip
# (``|``, ``&``, ``^`` in the code met so far combine masks: as logic on the truth values)
_OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.BitOr: "||",
    ast.BitAnd: "&&", ast.BitXor: "!=",
}  # fmt: skip
_CONSTANTS = {
    "pi": "3.141592653589793", "e": "2.718281828459045", "inf": "INFINITY", "nan": "NAN",
}  # fmt: skip
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
#: names a Python variable may have that mean something else in the kernel: CuPy's own
#: (``i``, ``n``; its type placeholder ``T``; the outputs), C++'s keywords and types, and
#: the C functions and macros the kernel calls
_C_WORDS = {
    "i", "n", "T", "out", "auto", "bool", "case", "char", "const", "default", "delete",
    "do", "double", "enum", "extern", "float", "goto", "inline", "int", "long", "new",
    "operator", "private", "protected", "public", "register", "short", "signed", "sizeof",
    "static", "struct", "switch", "template", "this", "throw", "typedef", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "true", "false",
    "INFINITY", "NAN", "log", "log2", "exp", "sqrt", "pow", "erf", "erfc", "tanh", "sinh",
    "cosh", "sin", "cos", "tan", "log1p", "expm1", "cbrt", "hypot", "copysign",
    "srcad_mod", "srcad_floordiv",
}  # fmt: skip


#: Python's float ``%`` and ``//`` (CPython's algorithm: exact where ``a - floor(a / b) *
#: b`` and ``floor(a / b)`` are not, as ``8.0 % 0.4`` and ``8.0 // 0.4``, whose quotient
#: rounds up to 20), for the kernel's preamble
PREAMBLE = """template <typename T> __device__ T srcad_mod(T a, T b) {
    T m = fmod(a, b);
    if (m != 0) { if ((b < 0) != (m < 0)) m += b; } else { m = copysign((T)0, b); }
    return m;
}
template <typename T> __device__ T srcad_floordiv(T a, T b) {
    T m = fmod(a, b);
    T d = (a - m) / b;
    if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
    if (d == 0) return copysign((T)0, a / b);
    T f = floor(d);
    return (d - f > 0.5) ? f + 1 : f;
}
"""


def _c_words() -> set[str]:
    """Every identifier the kernel may use for itself (see ``_C_WORDS``)."""
    texts = [*_FUNCTIONS.values(), *_TEMPLATES.values(), *cuda_functions().values()]
    return _C_WORDS | {w for t in texts for w in re.findall(r"[A-Za-z_]\w*", t)}


def _c_names(params: list[str], others: list[str], words: set[str]) -> dict[str, str]:
    """A name for each variable that CuPy and C++ (its ``words``) read as that variable:
    its own, else with ``_v`` added (parameters starting with ``_`` too: CuPy keeps
    those)."""
    taken = set(params) | set(others) | words
    names: dict[str, str] = {}
    for name in [*params, *others]:
        unsafe = (
            name in words
            or re.fullmatch(r"partial_\d+", name) is not None
            or (name.startswith("_") and name in params)
        )
        if not unsafe:
            continue
        new = _fresh((name.lstrip("_") or "v") + "_v", taken)
        taken.add(new)
        names[name] = new
    return names


def _fresh(base: str, taken: set[str]) -> str:
    """``base``, or ``base`` with a number added, whichever is not ``taken``."""
    new, k = base, 0
    while new in taken:
        k += 1
        new = f"{base}{k}"
    return new


class _Renamed(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            node.id = self.names[node.id]
        return node


class _Emit:
    def __init__(self, filename: str) -> None:
        self.filename = filename

    def error(self, what: str) -> UnsupportedConstructError:
        return UnsupportedConstructError(
            f"an elementwise kernel cannot contain {what}", filename=self.filename
        )

    def expr(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                return "true" if node.value else "false"
            if node.value is None:  # a result's placeholder before a branch sets it
                return "0.0"
            if isinstance(node.value, (int, float)):
                return repr(float(node.value))
            raise self.error(f"the constant {node.value!r}")
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left), self.expr(node.right)
            if isinstance(node.op, ast.Pow):
                return f"pow({left}, {right})"
            if isinstance(node.op, ast.Mod):
                # Python's: the sign of the divisor (C's fmod keeps the dividend's), exact
                return f"srcad_mod({left}, {right})"
            if isinstance(node.op, ast.FloorDiv):
                return f"srcad_floordiv({left}, {right})"
            op = _OPERATORS.get(type(node.op))
            if op is None:
                raise self.error(f"the operator {type(node.op).__name__}")
            return f"({left} {op} {right})"
        if isinstance(node, ast.Attribute) and node.attr in _CONSTANTS:
            return _CONSTANTS[node.attr]  # (np.pi, math.e, ...)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return f"(-{self.expr(node.operand)})"
            if isinstance(node.op, ast.UAdd):
                return self.expr(node.operand)
            if isinstance(node.op, (ast.Not, ast.Invert)):  # (``~mask``: a mask's negation)
                return f"(!{self.expr(node.operand)})"
        if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
            # (``a < x < b``: each pair, all of them holding)
            operands = [self.expr(node.left), *map(self.expr, node.comparators)]
            pairs = [
                f"({a} {_COMPARE[type(op)]} {b})"
                for a, op, b in zip(operands, node.ops, operands[1:])
            ]
            return pairs[0] if len(pairs) == 1 else "(" + " && ".join(pairs) + ")"
        if isinstance(node, ast.BoolOp):
            op = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + op.join(self.expr(v) for v in node.values) + ")"
        if isinstance(node, ast.IfExp):
            test, a, b = self.expr(node.test), self.expr(node.body), self.expr(node.orelse)
            return f"({test} ? {a} : {b})"
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.error(type(node).__name__)

    def call(self, node: ast.Call) -> str:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name.endswith("complex_checked"):
            # (a check that the value is real, of rules that are not for complex numbers:
            # the kernel's T is real)
            return self.expr(node.args[0])
        args = [self.expr(a) for a in node.args]
        if name == "zero_tangent":
            return "0.0"
        if name in ("broadcast_like", "kept_dtype", "real"):  # (T is the numbers' one type)
            return args[0]
        if name == "abs_slope":  # (sign(x) for real x)
            return f"(({args[0]} > 0) - ({args[0]} < 0))"
        if name == "unit_if_zero":
            return f"({args[0]} == 0.0 ? 1.0 : {args[0]})"
        if name == "float":
            return f"((double){args[0]})"
        if name in ("min", "max") and len(args) == 2:  # Python's, of two numbers
            return f"f{name}({args[0]}, {args[1]})"
        if name == "where":
            return f"({args[0]} ? {args[1]} : {args[2]})"
        if name == "sign":
            return f"(({args[0]} > 0) - ({args[0]} < 0))"
        if name == "logaddexp":
            a, b = args
            return f"(fmax({a}, {b}) + log1p(exp(-fabs({a} - {b}))))"
        if name == "square":
            return f"({args[0]} * {args[0]})"
        c = cuda_functions().get(name) or _FUNCTIONS.get(name)
        if c is None and name in _TEMPLATES:
            return _TEMPLATES[name].format(*args)
        if c is None:
            raise self.error(f"a call to {name}()")
        return f"{c}({', '.join(args)})"

    def block(self, stmts: list[ast.stmt], indent: str) -> list[str]:
        lines: list[str] = []
        for stmt in stmts:
            if isinstance(stmt, ast.Assign):
                target = stmt.targets[0]
                if not isinstance(target, ast.Name):
                    raise self.error("unpacking")
                lines.append(f"{indent}{target.id} = {self.expr(stmt.value)};")
            elif isinstance(stmt, ast.If):
                lines.append(f"{indent}if ({self.expr(stmt.test)}) {{")
                lines.extend(self.block(stmt.body, indent + "    "))
                if stmt.orelse:
                    lines.append(f"{indent}}} else {{")
                    lines.extend(self.block(stmt.orelse, indent + "    "))
                lines.append(f"{indent}}}")
            elif isinstance(stmt, ast.For) and _is_range(stmt.iter):
                bounds = [self.expr(a) for a in stmt.iter.args]
                start, stop = ("0", bounds[0]) if len(bounds) == 1 else bounds[:2]
                step = bounds[2] if len(bounds) == 3 else "1"
                var = stmt.target.id
                lines.append(
                    f"{indent}for (int {var} = (int){start}; {var} < (int){stop}; "
                    f"{var} += (int){step}) {{"
                )
                lines.extend(self.block(stmt.body, indent + "    "))
                lines.append(f"{indent}}}")
            elif isinstance(stmt, ast.Pass):
                continue
            else:
                raise self.error(type(stmt).__name__)
        return lines


def _is_range(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", "") == "range"


def kernel_parts(expanded: ast.FunctionDef, name: str, filename: str) -> dict[str, str]:
    """``in_params``, ``out_params``, ``operation`` and ``name`` of the kernel for
    ``expanded`` (see components.py), and ``device``: the same code as a standalone CUDA
    function (to compile with nvcc)."""
    primals = [a.arg for a in expanded.args.args]
    body = [
        s
        for s in expanded.body
        if not (
            isinstance(s, ast.Assign)
            and isinstance(s.value, ast.Call)
            and getattr(s.value.func, "id", "") in ("array_namespace", "math_namespace")
        )
    ]
    ret = body.pop()
    module = ast.Module(body=body, type_ignores=[])
    stored = [
        n.id for n in ast.walk(module) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]
    words = _c_words()
    names = _c_names(primals, [n for n in dict.fromkeys(stored) if n not in primals], words)
    if names:
        renamed = _Renamed(names)
        module = renamed.visit(copy.deepcopy(ast.Module(body=[*body, ret], type_ignores=[])))
        *body, ret = module.body
        module = ast.Module(body=body, type_ignores=[])
        primals = [names.get(p, p) for p in primals]
        stored = [names.get(n, n) for n in stored]
    value, partials = ret.value.elts
    emit = _Emit(filename)
    loops = {s.target.id for s in ast.walk(module) if isinstance(s, ast.For)}
    locals_ = [n for n in dict.fromkeys(stored) if n not in primals and n not in loops]
    # a parameter the code assigns (in a branch: ``y = y + x``) is a local copy: CuPy's
    # in_params, and the device function's, are const
    taken = {*primals, *stored, *words}  # (loop variables are stored names)
    copied = {}
    for p in primals:
        if p in stored:
            copied[p] = new = _fresh(f"{p}_in", taken)
            taken.add(new)
    params = [copied.get(p, p) for p in primals]
    lines = [f"T {p} = {copied[p]};" for p in primals if p in copied]
    lines += [f"T {local} = 0;" for local in locals_]
    lines.extend(emit.block(body, ""))
    lines.append(f"out = {emit.expr(value)};")
    count = len(partials.elts)
    for k, partial in enumerate(partials.elts):
        lines.append(f"partial_{k} = {emit.expr(partial)};")
    operation = "\n".join(lines)
    in_params = ", ".join(f"T {p}" for p in params)
    out_params = ", ".join(["T out", *(f"T partial_{k}" for k in range(count))])
    device = (
        PREAMBLE + "template <typename T>\n"
        f"__device__ void {name}({', '.join(f'const T {p}' for p in params)}, T& out"
        + "".join(f", T& partial_{k}" for k in range(count))
        + ") {\n"
        + "\n".join("    " + line for line in lines)
        + "\n}\n"
        + f"template __device__ void {name}<double>("
        + ", ".join(["const double"] * len(primals) + ["double&"] * (count + 1))
        + ");\n"
    )
    return {
        "in_params": in_params,
        "out_params": out_params,
        "operation": operation,
        "name": name,
        "device": device,
    }
