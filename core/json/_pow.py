"""JavaScript's `**` as V8 computes it: fdlibm's `__ieee754_pow`, bit for bit.

V8 (Node.js 20 and the engines of its time) evaluates `Math.pow` and `**` with its own copy
of fdlibm's pow (`base::ieee754::legacy::pow`), not the C library's.  The two differ in the
last bit for some arguments (`10 ** 2.5` is 316.2277660168379 in V8, 316.22776601683796 from
glibc), and a document's derived values must print as the client computes them, so the DSL's
`pow` follows fdlibm.  Python floats are IEEE doubles with the same round-to-nearest
arithmetic, so the same operations in the same order give the same bits; only the 32-bit
word manipulation needs spelling out.  (Newer V8 builds may call the C library instead:
README, "Where the seeds left a choice".)

Method (fdlibm): write x = 2**n * (1 + f); compute log2(x) in two pieces, the first with 29
trailing zero bits; form y * log2(x) = m + y' with |y'| <= 0.5 in simulated extra precision;
return 2**m * exp(y' * ln 2).  The algorithm and its constants are fdlibm's e_pow.c:

    Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
    Developed at SunSoft, a Sun Microsystems, Inc. business.
    Permission to use, copy, modify, and distribute this software is freely granted,
    provided that this notice is preserved.
"""

from __future__ import annotations

import math
import struct

_DOUBLE = struct.Struct("<d")
_BITS = struct.Struct("<Q")

_BP = (1.0, 1.5)
_DP_H = (0.0, 5.84962487220764160156e-01)
_DP_L = (0.0, 1.35003920212974897128e-08)
_TWO53 = 9007199254740992.0
_HUGE, _TINY = 1.0e300, 1.0e-300
# (3/2) * (log(x) - 2s - 2/3 s**3) and exp's polynomial coefficients
_L = (5.99999999999994648725e-01, 4.28571428578550184252e-01, 3.33333329818377432918e-01,
      2.72728123808534006489e-01, 2.30660745775561754067e-01, 2.06975017800338417784e-01)
_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
      -1.65339022054652515390e-06, 4.13813679705723846039e-08)
_LG2, _LG2_H, _LG2_L = 6.93147180559945286227e-01, 6.93147182464599609375e-01, -1.90465429995776804525e-09
_OVT = 8.0085662595372944372e-17  # -(1024 - log2(overflow + 0.5 ulp))
_CP, _CP_H, _CP_L = 9.61796693925975554329e-01, 9.61796700954437255859e-01, -7.02846165095275826516e-09
_IVLN2, _IVLN2_H, _IVLN2_L = 1.44269504088896338700e+00, 1.44269502162933349609e+00, 1.92596299112661746887e-08


def _words(x: float) -> tuple[int, int]:
    """(high word as a signed 32-bit int, low word unsigned) of a double."""
    bits = _BITS.unpack(_DOUBLE.pack(x))[0]
    return _int32(bits >> 32), bits & 0xFFFFFFFF


def _double(high: int, low: int) -> float:
    return float(_DOUBLE.unpack(_BITS.pack(((high & 0xFFFFFFFF) << 32) | (low & 0xFFFFFFFF)))[0])


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _low_cleared(x: float) -> float:
    return _double(_words(x)[0], 0)


def _divide(a: float, b: float) -> float:
    """C's a / b: a zero divisor gives a signed infinity (or NaN), not an exception."""
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _odd_even(ly: int, iy: int) -> int:
    """0: y is not an integer, 1: an odd integer, 2: an even integer (asked for x < 0 only)."""
    if iy >= 0x43400000:
        return 2
    if iy < 0x3FF00000:
        return 0
    k = (iy >> 20) - 0x3FF
    if k > 20:
        j = ly >> (52 - k)
        return 2 - (j & 1) if (j << (52 - k)) == ly else 0
    if ly == 0:
        j = iy >> (20 - k)
        return 2 - (j & 1) if (j << (20 - k)) == iy else 0
    return 0


def v8_pow(x: float, y: float) -> float:
    """`x ** y` with V8's (fdlibm's) result for every pair of doubles."""
    hx, lx = _words(x)
    hy, ly = _words(y)
    ix, iy = hx & 0x7FFFFFFF, hy & 0x7FFFFFFF
    if (iy | ly) == 0:
        return 1.0
    if ix > 0x7FF00000 or (ix == 0x7FF00000 and lx) or iy > 0x7FF00000 or (iy == 0x7FF00000 and ly):
        return x + y
    yisint = _odd_even(ly, iy) if hx < 0 else 0
    special = _special_y(x, y, hx, hy, ix, lx, iy, ly)
    if special is not None:
        return special
    ax = abs(x)
    if lx == 0 and ix in (0x7FF00000, 0, 0x3FF00000):  # x is +-0, +-inf, +-1
        z = _divide(1.0, ax) if hy < 0 else ax
        if hx < 0:
            if ((ix - 0x3FF00000) | yisint) == 0:
                return math.nan  # (-1) ** non-integer
            if yisint == 1:
                z = -z
        return z
    n = (hx >> 31) + 1
    if (n | yisint) == 0:
        return math.nan  # (x < 0) ** non-integer
    s = -1.0 if (n | (yisint - 1)) == 0 else 1.0
    if iy > 0x41E00000:  # |y| > 2**31
        limit = _huge_y(s, hy, ix, iy)
        if limit is not None:
            return limit
        t1, t2 = _log2_near_one(ax)
    else:
        t1, t2 = _log2(ax, ix)
    return _exp2(s, y, t1, t2)


def _special_y(x: float, y: float, hx: int, hy: int, ix: int, lx: int, iy: int, ly: int) -> float | None:
    if ly != 0:
        return None
    if iy == 0x7FF00000:  # y is +-inf
        if ((ix - 0x3FF00000) | lx) == 0:
            return y - y  # (+-1) ** +-inf is NaN
        if ix >= 0x3FF00000:
            return y if hy >= 0 else 0.0
        return -y if hy < 0 else 0.0
    if iy == 0x3FF00000:  # y is +-1
        return _divide(1.0, x) if hy < 0 else x
    if hy == 0x40000000:  # y is 2
        return x * x
    if hy == 0x3FE00000 and hx >= 0:  # y is 0.5, x >= +0
        return math.sqrt(x)
    return None


def _huge_y(s: float, hy: int, ix: int, iy: int) -> float | None:
    """The over- or underflow of |y| > 2**31, or None when x is within 2**-20 of one."""
    if iy > 0x43F00000:  # |y| > 2**64
        if ix <= 0x3FEFFFFF:
            return _HUGE * _HUGE if hy < 0 else _TINY * _TINY
        if ix >= 0x3FF00000:
            return _HUGE * _HUGE if hy > 0 else _TINY * _TINY
    if ix < 0x3FEFFFFF:
        return s * _HUGE * _HUGE if hy < 0 else s * _TINY * _TINY
    if ix > 0x3FF00000:
        return s * _HUGE * _HUGE if hy > 0 else s * _TINY * _TINY
    return None


def _log2_near_one(ax: float) -> tuple[float, float]:
    """log2(ax) as t1 + t2 for |1 - ax| <= 2**-20: x - x**2/2 + x**3/3 - x**4/4."""
    t = ax - 1.0
    w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25))
    u = _IVLN2_H * t
    v = t * _IVLN2_L - w * _IVLN2
    t1 = _low_cleared(u + v)
    return t1, v - (t1 - u)


def _log2(ax: float, ix: int) -> tuple[float, float]:
    """log2(ax) as t1 (29 trailing zero bits) + t2."""
    n = 0
    if ix < 0x00100000:  # subnormal
        ax *= _TWO53
        n -= 53
        ix = _words(ax)[0]
    n += (ix >> 20) - 0x3FF
    j = ix & 0x000FFFFF
    ix = j | 0x3FF00000
    if j <= 0x3988E:
        k = 0  # |x| < sqrt(3/2)
    elif j < 0xBB67A:
        k = 1  # |x| < sqrt(3)
    else:
        k = 0
        n += 1
        ix -= 0x00100000
    ax = _double(ix, _words(ax)[1])
    # ss = s_h + s_l = (x - 1) / (x + 1) or (x - 1.5) / (x + 1.5)
    u = ax - _BP[k]
    v = 1.0 / (ax + _BP[k])
    ss = u * v
    s_h = _low_cleared(ss)
    t_h = _double(((ix >> 1) | 0x20000000) + 0x00080000 + (k << 18), 0)
    t_l = ax - (t_h - _BP[k])
    s_l = v * ((u - s_h * t_h) - s_h * t_l)
    s2 = ss * ss
    r = s2 * s2 * (_L[0] + s2 * (_L[1] + s2 * (_L[2] + s2 * (_L[3] + s2 * (_L[4] + s2 * _L[5])))))
    r += s_l * (s_h + ss)
    s2 = s_h * s_h
    t_h = _low_cleared(3.0 + s2 + r)
    t_l = r - ((t_h - 3.0) - s2)
    u = s_h * t_h
    v = s_l * t_h + t_l * ss
    p_h = _low_cleared(u + v)
    p_l = v - (p_h - u)
    z_h = _CP_H * p_h
    z_l = _CP_L * p_h + p_l * _CP + _DP_L[k]
    t = float(n)
    t1 = _low_cleared(((z_h + z_l) + _DP_H[k]) + t)
    return t1, z_l - (((t1 - t) - _DP_H[k]) - z_h)


def _exp2(s: float, y: float, t1: float, t2: float) -> float:
    """s * 2 ** (y * (t1 + t2)), with fdlibm's over- and underflow thresholds."""
    y1 = _low_cleared(y)
    p_l = (y - y1) * t1 + y * t2
    p_h = y1 * t1
    z = p_l + p_h
    j, i = _words(z)
    if j >= 0x40900000:  # z >= 1024
        if ((j - 0x40900000) | i) != 0 or p_l + _OVT > z - p_h:
            return s * _HUGE * _HUGE
    elif (j & 0x7FFFFFFF) >= 0x4090CC00 and (  # z <= -1075
            (j & 0xFFFFFFFF) != 0xC090CC00 or i != 0 or p_l <= z - p_h):
        return s * _TINY * _TINY
    i = j & 0x7FFFFFFF
    k = (i >> 20) - 0x3FF
    n = 0
    if i > 0x3FE00000:  # |z| > 0.5: n = [z + 0.5]
        n = j + (0x00100000 >> (k + 1))
        k = ((n & 0x7FFFFFFF) >> 20) - 0x3FF
        t = _double(n & ~(0x000FFFFF >> k), 0)
        n = ((n & 0x000FFFFF) | 0x00100000) >> (20 - k)
        if j < 0:
            n = -n
        p_h -= t
    t = _low_cleared(p_l + p_h)
    u = t * _LG2_H
    v = (p_l - (t - p_h)) * _LG2 + t * _LG2_L
    z = u + v
    w = v - (z - u)
    t = z * z
    t1 = z - t * (_P[0] + t * (_P[1] + t * (_P[2] + t * (_P[3] + t * _P[4]))))
    r = (z * t1) / ((t1 - 2.0) - (w + z * w))
    z = 1.0 - (r - z)
    high, low = _words(z)
    j = _int32(high + _int32(n << 20))
    if (j >> 20) <= 0:
        return s * math.ldexp(z, n)  # a subnormal result
    return s * _double(j, low)
