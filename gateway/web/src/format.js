/**
 * Display text of values: plain slots and a Result's `format` (seed 000 §3, §5 ResultFormat).
 *
 * Choices the seed leaves open (README, Decisions, "Client number formatting"):
 * - `digits` (default 2) is both the minimum and the maximum fraction digits, so 5 with
 *   digits 2 shows "5.00" and a currency never falls back to its own default digits.
 * - Rounding is Intl's (half away from zero on the shortest decimal text of the double), as
 *   the seed asks for Intl.NumberFormat: 1.005 shows "1.01" with digits 2 although the DSL's
 *   `round(1.005, 2)` (toFixed on the exact binary value) is 1.  Display digits never change
 *   a value (seed 000 §3); an author who needs the DSL's rounding writes `round` explicitly.
 * - `signDisplay: "negative"`: -0 and negatives that round to zero show "0.00", not "-0.00",
 *   as JSON and `String(-0)` print zero.
 * - The locale is the page's (the caller passes it, e.g. `document.documentElement.lang`);
 *   undefined means the browser's default locale.
 */

import { scalarText } from './expression.js';

/** @typedef {import('./expression.js').Scalar} Scalar */
/** @typedef {{style: 'decimal' | 'currency' | 'percent', currency?: 'CNY' | 'USD' | 'EUR', digits?: number}} ResultFormat */

export const DEFAULT_DIGITS = 2;

/** Building an Intl.NumberFormat is costly and a page formats the same few formats often. */
const formatters = new Map();

/**
 * The text of a scalar in a plain slot (Text, Heading, Badge, Error, unformatted Result):
 * `String(v)` with null as the empty string, the same text `concat` makes.
 * @param {Scalar} value
 * @returns {string}
 */
export function displayText(value) {
  return scalarText(value);
}

/**
 * A number as a Result with `format` shows it; `percent` is a ratio (0.05 -> "5.00%").
 * @param {Scalar} value a formatted Result's value is statically a number
 * @param {ResultFormat} format a format core has validated
 * @param {string | string[]} [locale] the page's locale
 * @returns {string}
 */
export function formatNumber(value, format, locale) {
  // core proves a formatted value is always a number; anything else is shown, not formatted
  if (typeof value !== 'number') return displayText(value);
  return formatter(format, locale).format(value);
}

/** @param {ResultFormat} format @param {string | string[] | undefined} locale @returns {Intl.NumberFormat} */
function formatter(format, locale) {
  const digits = format.digits ?? DEFAULT_DIGITS;
  const key = JSON.stringify([locale ?? null, format.style, format.currency ?? null, digits]);
  let cached = formatters.get(key);
  if (!cached) {
    cached = new Intl.NumberFormat(locale, {
      style: format.style,
      ...(format.style === 'currency' ? { currency: format.currency } : {}),
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
      signDisplay: 'negative',
    });
    formatters.set(key, cached);
  }
  return cached;
}
