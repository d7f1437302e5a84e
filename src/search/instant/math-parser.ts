import {
  CONSTANTS,
  DEGREE_NAMES,
  FUNCTIONS,
  KNOWN_NAMES,
  MATH_LIMITS,
  MathError,
  STEP,
  type Value,
  Work,
  add,
  divide,
  factorial,
  float,
  int,
  limbs,
  modulo,
  multiply,
  num,
  power,
} from './math-arithmetic.js';
import { formatNumber, groupDigits, isAsciiDigits } from './text.js';

/*
 * The maths evaluator's reading of an expression: a tokenizer, and a
 * recursive-descent parser that evaluates as it parses, over the operators,
 * functions and constants that math-arithmetic.ts allows.
 */

type Token = { t: 'num'; value: Value } | { t: 'id'; name: string } | { t: 'op'; op: string };

// Sticky: each is tried at the tokenizer's position (lastIndex), without a copy of the rest of the text.
const NUMBER_RE = /(?:0x[0-9a-f]+|0b[01]+|0o[0-7]+|(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)/iy;
const ID_RE = /[a-z_][a-z0-9_]*/iy;

/** The match of a sticky regex at `at`, or null. */
function matchAt(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at;
  return re.exec(text)?.[0] ?? null;
}

function readNumber(text: string): Value {
  // "0x…", "0b…", "0o…" in either case (what NUMBER_RE reads as an integer in another base).
  if (/^0[xbo]/i.test(text)) return int(BigInt(text.toLowerCase()));
  if (isAsciiDigits(text)) return int(BigInt(text));
  const x = Number(text);
  if (!Number.isFinite(x)) throw new MathError('overflow');
  return float(x);
}

/**
 * The tokens of `expr`, or null when it cannot be an expression: a character no token starts with,
 * or a name that no rule takes (neither a constant, a function nor a degree sign). The parser
 * consumes every token and refuses such a name wherever it stands, so null is the answer it would
 * give, found without parsing or throwing: it is the usual outcome, as most queries that reach the
 * evaluator are not maths ("best pizza 2024" reads as names and a number).
 */
export function tokenize(expr: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const ch = expr[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const n = matchAt(NUMBER_RE, expr, i);
    const id = n === null ? matchAt(ID_RE, expr, i) : null;
    if (n !== null) {
      tokens.push({ t: 'num', value: readNumber(n) });
      i += n.length;
    } else if (id !== null) {
      const name = id.toLowerCase();
      if (!KNOWN_NAMES.has(name)) return null;
      tokens.push({ t: 'id', name });
      i += id.length;
    } else if (expr.startsWith('**', i)) {
      tokens.push({ t: 'op', op: '^' });
      i += 2;
    } else if ('+-*/^%!(),°'.includes(ch)) {
      tokens.push({ t: 'op', op: ch });
      i++;
    } else {
      return null;
    }
    if (tokens.length > MATH_LIMITS.tokens) throw new MathError('expression too long');
  }
  return tokens;
}

class Parser {
  private pos = 0;
  private depth = 0;
  /** Whether anything beyond a lone number was seen (an operator, function or postfix). */
  operated = false;

  constructor(
    private readonly tokens: Token[],
    private readonly work: Work,
  ) {}

  parse(): Value {
    const v = this.expr();
    if (this.pos !== this.tokens.length) throw new MathError('unexpected input');
    return v;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private isOp(op: string, offset = 0): boolean {
    const t = this.tokens[this.pos + offset];
    return t?.t === 'op' && t.op === op;
  }

  private enter(): void {
    if (++this.depth > MATH_LIMITS.depth) throw new MathError('nested too deeply');
  }

  private expr(): Value {
    this.enter();
    let v = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const sign = this.isOp('+') ? 1 : -1;
      this.pos++;
      this.operated = true;
      v = add(v, this.term(), sign, this.work);
    }
    this.depth--;
    return v;
  }

  /** Whether the next token can start an operand (for implicit multiplication and percent vs modulo). */
  private startsOperand(offset = 0): boolean {
    const t = this.tokens[this.pos + offset];
    if (!t) return false;
    if (t.t === 'num' || t.t === 'id') return true;
    return t.op === '(';
  }

  private term(): Value {
    let v = this.unary();
    for (;;) {
      if (this.isOp('*') || this.isOp('/') || (this.isOp('%') && this.startsOperand(1))) {
        const op = (this.peek() as { op: string }).op;
        this.pos++;
        this.operated = true;
        const rhs = this.unary();
        v =
          op === '*' ? multiply(v, rhs, this.work) : op === '/' ? divide(v, rhs, this.work) : modulo(v, rhs, this.work);
      } else if (this.isOp('(') || this.peek()?.t === 'id') {
        // implicit multiplication: 2pi, 3(4+5), (1+2)(3+4)
        this.operated = true;
        v = multiply(v, this.unary(), this.work);
      } else {
        return v;
      }
    }
  }

  private unary(): Value {
    if (this.isOp('-') || this.isOp('+')) {
      const negative = this.isOp('-');
      this.pos++;
      this.enter();
      const v = this.unary();
      this.depth--;
      if (!negative) return v;
      if (!v.int) return float(-v.v);
      this.work.charge(limbs(v.bits) + STEP);
      return int(-v.v);
    }
    return this.power();
  }

  private power(): Value {
    const base = this.postfix();
    if (this.isOp('^')) {
      this.pos++;
      this.operated = true;
      this.enter();
      const exponent = this.unary();
      this.depth--;
      return power(base, exponent, this.work);
    }
    return base;
  }

  private postfix(): Value {
    let v = this.primary();
    for (;;) {
      if (this.isOp('!')) {
        this.pos++;
        this.operated = true;
        v = factorial(v, this.work);
      } else if (this.isOp('%') && !this.startsOperand(1)) {
        this.pos++;
        this.operated = true;
        v = divide(v, int(100n), this.work);
      } else if (
        this.isOp('°') ||
        (this.peek()?.t === 'id' && DEGREE_NAMES.has((this.peek() as { name: string }).name))
      ) {
        this.pos++;
        this.operated = true;
        v = float((num(v) * Math.PI) / 180);
      } else {
        return v;
      }
    }
  }

  private primary(): Value {
    const t = this.peek();
    if (!t) throw new MathError('unexpected end');
    if (t.t === 'num') {
      this.pos++;
      return t.value;
    }
    if (t.t === 'op' && t.op === '(') {
      this.pos++;
      const v = this.expr();
      if (!this.isOp(')')) throw new MathError('missing )');
      this.pos++;
      return v;
    }
    if (t.t === 'id') {
      this.pos++;
      if (Object.hasOwn(CONSTANTS, t.name)) {
        // a constant alone ("pi", "e") is a search, not a sum
        return float(CONSTANTS[t.name]!);
      }
      if (Object.hasOwn(FUNCTIONS, t.name)) {
        this.operated = true;
        const fn = FUNCTIONS[t.name]!;
        if (this.isOp('(')) {
          this.pos++;
          this.enter();
          const args: Value[] = [];
          if (!this.isOp(')')) {
            args.push(this.expr());
            while (this.isOp(',')) {
              this.pos++;
              args.push(this.expr());
            }
          }
          if (!this.isOp(')')) throw new MathError('missing )');
          this.pos++;
          this.depth--;
          return fn(args, this.work);
        }
        // "sqrt 16", "sin 30°"
        this.enter();
        const arg = this.postfix();
        this.depth--;
        return fn([arg], this.work);
      }
      throw new MathError(`unknown name ${t.name}`);
    }
    throw new MathError('unexpected token');
  }
}

export interface MathResult {
  result: string;
  raw: number;
}

/**
 * Evaluates an expression; throws MathError when it is not one, or is out of bounds. `work` counts
 * what it spends (a fresh one with the usual limit by default).
 */
export function evaluate(expr: string, work = new Work()): MathResult & { operated: boolean } {
  const tokens = tokenize(expr);
  if (tokens === null) throw new MathError('not an expression');
  return evaluateTokens(tokens, work);
}

/** evaluate, once the expression is read (the handler tokenizes first to pass over what is no expression). */
export function evaluateTokens(tokens: Token[], work = new Work()): MathResult & { operated: boolean } {
  const parser = new Parser(tokens, work);
  const value = parser.parse();
  if (value.int) {
    const raw = Number(value.v);
    if (!Number.isFinite(raw)) throw new MathError('overflow');
    return { result: groupDigits(value.v.toString()), raw, operated: parser.operated };
  }
  const raw = Object.is(value.v, -0) ? 0 : value.v;
  return { result: formatNumber(raw, 12), raw, operated: parser.operated };
}
