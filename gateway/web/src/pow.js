/**
 * JavaScript's `**` as V8 computes it: fdlibm's `__ieee754_pow`, bit for bit, on every engine.
 *
 * The DSL's `pow` is V8's own copy of fdlibm's pow (`base::ieee754::legacy::pow`), which core
 * reproduces in core/json/_pow.py (`v8_pow`).  A browser's own `**` is not that everywhere:
 * some V8 builds call the C library's pow instead (Debian's Chromium does), which differs in
 * the last bit for some arguments (`10 ** 2.5` is 316.2277660168379 in V8's fdlibm,
 * 316.22776601683796 from glibc), and other engines have pows of their own.  So the
 * Client carries this port of core's port and never calls `**` or `Math.pow` for the DSL.
 * Doubles are IEEE doubles with the same round-to-nearest arithmetic in every engine, so the
 * same operations in the same order give the same bits; only the 32-bit word manipulation
 * needs spelling out (a DataView, so the byte order of the platform does not matter).
 *
 * Method (fdlibm): write x = 2**n * (1 + f); compute log2(x) in two pieces, the first with 29
 * trailing zero bits; form y * log2(x) = m + y' with |y'| <= 0.5 in simulated extra precision;
 * return 2**m * exp(y' * ln 2).  The algorithm and its constants are fdlibm's e_pow.c:
 *
 *     Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
 *     Developed at SunSoft, a Sun Microsystems, Inc. business.
 *     Permission to use, copy, modify, and distribute this software is freely granted,
 *     provided that this notice is preserved.
 */

/** One double's eight bytes, read and written big-endian: bytes 0..3 are the high word. */
const WORDS = new DataView(new ArrayBuffer(8));

const BP = [1.0, 1.5];
const DP_H = [0.0, 5.84962487220764160156e-01];
const DP_L = [0.0, 1.35003920212974897128e-08];
const TWO53 = 9007199254740992.0;
const HUGE = 1.0e300;
const TINY = 1.0e-300;
// (3/2) * (log(x) - 2s - 2/3 s**3) and exp's polynomial coefficients
const L = [5.99999999999994648725e-01, 4.28571428578550184252e-01, 3.33333329818377432918e-01,
  2.72728123808534006489e-01, 2.30660745775561754067e-01, 2.06975017800338417784e-01];
const P = [1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
  -1.65339022054652515390e-06, 4.13813679705723846039e-08];
const LG2 = 6.93147180559945286227e-01;
const LG2_H = 6.93147182464599609375e-01;
const LG2_L = -1.90465429995776804525e-09;
const OVT = 8.0085662595372944372e-17; // -(1024 - log2(overflow + 0.5 ulp))
const CP = 9.61796693925975554329e-01;
const CP_H = 9.61796700954437255859e-01;
const CP_L = -7.02846165095275826516e-09;
const IVLN2 = 1.44269504088896338700e+00;
const IVLN2_H = 1.44269502162933349609e+00;
const IVLN2_L = 1.92596299112661746887e-08;

/**
 * The high word of a double as a signed 32-bit int (sign, exponent, top of the fraction).
 * @param {number} x
 * @returns {number}
 */
function highWord(x) {
  WORDS.setFloat64(0, x);
  return WORDS.getInt32(0);
}

/**
 * The low word of a double, unsigned (0 to 2**32 - 1).
 * @param {number} x
 * @returns {number}
 */
function lowWord(x) {
  WORDS.setFloat64(0, x);
  return WORDS.getUint32(4);
}

/**
 * The double of two 32-bit words (each taken modulo 2**32, as C's unsigned words are).
 * @param {number} high
 * @param {number} low
 * @returns {number}
 */
function fromWords(high, low) {
  WORDS.setUint32(0, high >>> 0);
  WORDS.setUint32(4, low >>> 0);
  return WORDS.getFloat64(0);
}

/**
 * x with its low word cleared (its last 32 fraction bits zero).
 * @param {number} x
 * @returns {number}
 */
function lowCleared(x) {
  return fromWords(highWord(x), 0);
}

/**
 * Python's `math.ldexp(z, n)` (C's scalbn) for z near one and n <= 1023: z * 2**n rounded once,
 * also where the result is subnormal.  Below 2**-1022 the first step scales by 2**-969 exactly
 * (the product stays normal); the second, by a normal power of two, is the only rounding.
 * @param {number} z
 * @param {number} n
 * @returns {number}
 */
function scaled(z, n) {
  let y = z;
  let m = n;
  if (m < -1022) {
    y *= fromWords((0x3FF - 1022 + 53) << 20, 0); // 2**-969
    m += 1022 - 53;
    if (m < -1022) m = -1022; // below 2**-1990: zero either way
  }
  return y * fromWords((0x3FF + m) << 20, 0);
}

/**
 * 0: y is not an integer, 1: an odd integer, 2: an even integer (asked for x < 0 only).
 * @param {number} ly y's low word (unsigned)
 * @param {number} iy y's high word without the sign
 * @returns {number}
 */
function oddEven(ly, iy) {
  if (iy >= 0x43400000) return 2;
  if (iy < 0x3FF00000) return 0;
  const k = (iy >> 20) - 0x3FF;
  if (k > 20) {
    // `>>>` and the final `>>> 0`: the low word is unsigned, C's `ly>>(52-k)` on a __uint32_t
    const j = ly >>> (52 - k);
    return ((j << (52 - k)) >>> 0) === ly ? 2 - (j & 1) : 0;
  }
  if (ly === 0) {
    const j = iy >> (20 - k);
    return (j << (20 - k)) === iy ? 2 - (j & 1) : 0;
  }
  return 0;
}

/**
 * `x ** y` with V8's (fdlibm's) result for every pair of doubles.
 * @param {number} x
 * @param {number} y
 * @returns {number}
 */
export function v8Pow(x, y) {
  const hx = highWord(x);
  const lx = lowWord(x);
  const hy = highWord(y);
  const ly = lowWord(y);
  const ix = hx & 0x7FFFFFFF;
  const iy = hy & 0x7FFFFFFF;
  if (iy === 0 && ly === 0) return 1.0;
  if (ix > 0x7FF00000 || (ix === 0x7FF00000 && lx !== 0) || iy > 0x7FF00000 || (iy === 0x7FF00000 && ly !== 0)) {
    return x + y;
  }
  const yisint = hx < 0 ? oddEven(ly, iy) : 0;
  const special = specialY(x, y, hx, hy, ix, lx, iy, ly);
  if (special !== null) return special;
  const ax = Math.abs(x);
  if (lx === 0 && (ix === 0x7FF00000 || ix === 0 || ix === 0x3FF00000)) { // x is +-0, +-inf, +-1
    let z = hy < 0 ? 1.0 / ax : ax; // JavaScript's `/` is C's: 1 / +-0 is +-Infinity
    if (hx < 0) {
      if (((ix - 0x3FF00000) | yisint) === 0) return NaN; // (-1) ** non-integer
      if (yisint === 1) z = -z;
    }
    return z;
  }
  const n = (hx >> 31) + 1;
  if ((n | yisint) === 0) return NaN; // (x < 0) ** non-integer
  const s = (n | (yisint - 1)) === 0 ? -1.0 : 1.0;
  /** @type {[number, number]} */
  let t;
  if (iy > 0x41E00000) { // |y| > 2**31
    const limit = hugeY(s, hy, ix, iy);
    if (limit !== null) return limit;
    t = log2NearOne(ax);
  } else {
    t = log2(ax, ix);
  }
  return exp2(s, y, t[0], t[1]);
}

/**
 * The result when y alone decides it (+-inf, +-1, 2, 0.5 for x >= +0), else null.
 * @param {number} x
 * @param {number} y
 * @param {number} hx
 * @param {number} hy
 * @param {number} ix
 * @param {number} lx
 * @param {number} iy
 * @param {number} ly
 * @returns {number | null}
 */
function specialY(x, y, hx, hy, ix, lx, iy, ly) {
  if (ly !== 0) return null;
  if (iy === 0x7FF00000) { // y is +-inf
    if (ix === 0x3FF00000 && lx === 0) return y - y; // (+-1) ** +-inf is NaN
    if (ix >= 0x3FF00000) return hy >= 0 ? y : 0.0;
    return hy < 0 ? -y : 0.0;
  }
  if (iy === 0x3FF00000) return hy < 0 ? 1.0 / x : x; // y is +-1
  if (hy === 0x40000000) return x * x; // y is 2
  if (hy === 0x3FE00000 && hx >= 0) return Math.sqrt(x); // y is 0.5, x >= +0
  return null;
}

/**
 * The over- or underflow of |y| > 2**31, or null when x is within 2**-20 of one.
 * @param {number} s
 * @param {number} hy
 * @param {number} ix
 * @param {number} iy
 * @returns {number | null}
 */
function hugeY(s, hy, ix, iy) {
  if (iy > 0x43F00000) { // |y| > 2**64
    if (ix <= 0x3FEFFFFF) return hy < 0 ? HUGE * HUGE : TINY * TINY;
    if (ix >= 0x3FF00000) return hy > 0 ? HUGE * HUGE : TINY * TINY;
  }
  if (ix < 0x3FEFFFFF) return hy < 0 ? s * HUGE * HUGE : s * TINY * TINY;
  if (ix > 0x3FF00000) return hy > 0 ? s * HUGE * HUGE : s * TINY * TINY;
  return null;
}

/**
 * log2(ax) as t1 + t2 for |1 - ax| <= 2**-20: x - x**2/2 + x**3/3 - x**4/4.
 * @param {number} ax
 * @returns {[number, number]}
 */
function log2NearOne(ax) {
  const t = ax - 1.0;
  const w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25));
  const u = IVLN2_H * t;
  const v = t * IVLN2_L - w * IVLN2;
  const t1 = lowCleared(u + v);
  return [t1, v - (t1 - u)];
}

/**
 * log2(absolute) as t1 (29 trailing zero bits) + t2.
 * @param {number} absolute |x|, neither zero, infinite nor NaN
 * @param {number} high its high word
 * @returns {[number, number]}
 */
function log2(absolute, high) {
  let ax = absolute;
  let ix = high;
  let n = 0;
  if (ix < 0x00100000) { // subnormal
    ax *= TWO53;
    n -= 53;
    ix = highWord(ax);
  }
  n += (ix >> 20) - 0x3FF;
  const j = ix & 0x000FFFFF;
  ix = j | 0x3FF00000;
  let k;
  if (j <= 0x3988E) {
    k = 0; // |x| < sqrt(3/2)
  } else if (j < 0xBB67A) {
    k = 1; // |x| < sqrt(3)
  } else {
    k = 0;
    n += 1;
    ix -= 0x00100000;
  }
  ax = fromWords(ix, lowWord(ax));
  // ss = s_h + s_l = (x - 1) / (x + 1) or (x - 1.5) / (x + 1.5)
  let u = ax - BP[k];
  let v = 1.0 / (ax + BP[k]);
  const ss = u * v;
  const sH = lowCleared(ss);
  let tH = fromWords(((ix >> 1) | 0x20000000) + 0x00080000 + (k << 18), 0);
  let tL = ax - (tH - BP[k]);
  const sL = v * ((u - sH * tH) - sH * tL);
  let s2 = ss * ss;
  let r = s2 * s2 * (L[0] + s2 * (L[1] + s2 * (L[2] + s2 * (L[3] + s2 * (L[4] + s2 * L[5])))));
  r += sL * (sH + ss);
  s2 = sH * sH;
  tH = lowCleared(3.0 + s2 + r);
  tL = r - ((tH - 3.0) - s2);
  u = sH * tH;
  v = sL * tH + tL * ss;
  const pH = lowCleared(u + v);
  const pL = v - (pH - u);
  const zH = CP_H * pH;
  const zL = CP_L * pH + pL * CP + DP_L[k];
  const t = n;
  const t1 = lowCleared(((zH + zL) + DP_H[k]) + t);
  return [t1, zL - (((t1 - t) - DP_H[k]) - zH)];
}

/**
 * s * 2 ** (y * (t1 + t2)), with fdlibm's over- and underflow thresholds (t1 is reused for
 * exp's polynomial, as in fdlibm).
 * @param {number} s
 * @param {number} y
 * @param {number} t1
 * @param {number} t2
 * @returns {number}
 */
function exp2(s, y, t1, t2) {
  const y1 = lowCleared(y);
  const pL = (y - y1) * t1 + y * t2;
  let pH = y1 * t1;
  let z = pL + pH;
  const j = highWord(z);
  let i = lowWord(z);
  if (j >= 0x40900000) { // z >= 1024
    if (((j - 0x40900000) | i) !== 0 || pL + OVT > z - pH) return s * HUGE * HUGE;
  } else if ((j & 0x7FFFFFFF) >= 0x4090CC00 && ( // z <= -1075
    (j >>> 0) !== 0xC090CC00 || i !== 0 || pL <= z - pH)) {
    return s * TINY * TINY;
  }
  i = j & 0x7FFFFFFF;
  let k = (i >> 20) - 0x3FF;
  let n = 0;
  if (i > 0x3FE00000) { // |z| > 0.5: n = [z + 0.5]
    n = j + (0x00100000 >> (k + 1));
    k = ((n & 0x7FFFFFFF) >> 20) - 0x3FF;
    const t = fromWords(n & ~(0x000FFFFF >> k), 0);
    n = ((n & 0x000FFFFF) | 0x00100000) >> (20 - k);
    if (j < 0) n = -n;
    pH -= t;
  }
  let t = lowCleared(pL + pH);
  const u = t * LG2_H;
  const v = (pL - (t - pH)) * LG2 + t * LG2_L;
  z = u + v;
  const w = v - (z - u);
  t = z * z;
  t1 = z - t * (P[0] + t * (P[1] + t * (P[2] + t * (P[3] + t * P[4]))));
  const r = (z * t1) / ((t1 - 2.0) - (w + z * w));
  z = 1.0 - (r - z);
  const high = (highWord(z) + (n << 20)) | 0; // both words are 32-bit: the sum wraps as C's int does
  if ((high >> 20) <= 0) return s * scaled(z, n); // a subnormal result
  return s * fromWords(high, lowWord(z));
}
