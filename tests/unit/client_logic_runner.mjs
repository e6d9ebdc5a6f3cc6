// Runs a batch of cases through the Client's protocol logic (gateway/web/src) for
// tests/unit/test_client_logic.py: reads {documents, cases} as JSON on stdin, writes one
// outcome per case as JSON on stdout.  Each case is [operation, ...arguments]; documents are
// referenced by index so that each is one object (the model cache is keyed by identity).
//
// An outcome is {ok: text} with the result's JSON text as JavaScript prints it (numbers as
// String(n), so -0 is "0"), DEL and every non-ASCII UTF-16 unit escaped as \uXXXX, so that
// the Python side can print the same text with json.dumps; or {error: [class, code]} for a UIError; or
// {crash: text} for anything else (a bug: the modules must throw only their own errors).

import { readFileSync } from 'node:fs';

const source = (name) => new URL(`../../gateway/web/src/${name}`, import.meta.url).href;
const { UIError } = await import(source('errors.js'));
const { evaluateExpression } = await import(source('expression.js'));
const state = await import(source('state.js'));
const { formatNumber, displayText } = await import(source('format.js'));

const { documents, cases } = JSON.parse(readFileSync(0, 'utf8'));

const OPERATIONS = {
  expr: (expr, scope, derived) => evaluateExpression(expr, scope, derived),
  initial: (doc) => state.initialState(documents[doc]),
  update: (doc, scope, key, value) => state.updateState(documents[doc], scope, key, value),
  derived: (doc, scope) => state.evaluateDerived(documents[doc], scope),
  resolve: (doc, scope, value) => state.resolveDocumentValue(documents[doc], scope, value),
  resolveValue: (value, scope, derived) => state.resolveValue(value, scope, derived),
  action: (doc, scope, action) => state.dispatchLocalAction(documents[doc], scope, action),
  format: (value, format, locale) => (format === null ? displayText(value) : formatNumber(value, format, locale)),
};

const ascii = (text) => text.replace(/[\x7f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);

function run([operation, ...args]) {
  try {
    return { ok: ascii(JSON.stringify(OPERATIONS[operation](...args))) };
  } catch (error) {
    if (error instanceof UIError) return { error: [error.constructor.name, error.code] };
    return { crash: String(error && error.stack) };
  }
}

process.stdout.write(JSON.stringify(cases.map(run)));
