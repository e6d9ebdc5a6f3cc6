/**
 * The Client's error classes, mirroring core/errors.py.
 *
 * Each carries a stable machine-readable `code` equal to the one core raises for the same
 * failure, so the page can show one text per code and the differential test can compare the
 * two implementations by code, not by message (messages are the page's own and never echo
 * model- or user-written text).
 */

/** Base of every error the Client's protocol logic throws. */
export class UIError extends Error {
  /**
   * @param {string} message
   * @param {string} code
   */
  constructor(message, code) {
    super(message);
    this.name = new.target.name;
    /** @type {string} */
    this.code = code;
  }
}

/** An expression failed at run time (core's UIExpressionError; default code "expression"). */
export class ExpressionError extends UIError {
  /** @param {string} message @param {string} [code] */
  constructor(message, code = 'expression') {
    super(message, code);
  }
}

/** A state or state update is invalid (core's UIStateError; default code "state"). */
export class StateError extends UIError {
  /** @param {string} message @param {string} [code] */
  constructor(message, code = 'state') {
    super(message, code);
  }
}

/** A local action cannot run (core's UIActionError; default code "action"). */
export class ActionError extends UIError {
  /** @param {string} message @param {string} [code] */
  constructor(message, code = 'action') {
    super(message, code);
  }
}
